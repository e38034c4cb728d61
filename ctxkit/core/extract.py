"""The extractive summarizer (pure, deterministic, no model): seed 001's template filled
from patterns, roles and position."""
from __future__ import annotations

import re
from typing import Sequence

from .. import records as R
from .artifacts import trail
from .context_md import Context, Item, file_items
from .hygiene import clean, is_meta
from .score import DECISION

SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|\n+")
FACT = re.compile(r"\b(found|discovered|turns out|confirmed|is located|lives in|uses|is configured|is set to|"
                  r"contains|returns|defaults to|depends on|requires|the cause|root cause|because)\b", re.I)
PENDING = re.compile(r"\b(todo|next step|next,|still need|need to|needs to|remaining|not yet|pending|"
                     r"follow[- ]up|will need|have to|should also)\b", re.I)
ERROR_LINE = re.compile(r"(error|exception|traceback|failed|failure|fatal|panic|cannot|can't|unable|not found|"
                        r"denied|refused|timed out|timeout)", re.I)
RESOLVED = re.compile(r"\b(fixed|resolved|solved|now passes|passes now|works now|is working|succeeded)\b", re.I)
MAX_LEN = 200
MAX_ITEMS = 10


def sentences(text: str) -> list[str]:
    text = re.sub(r"```.*?```", " ", text or "", flags=re.S)  # code blocks are not sentences
    out = []
    for s in SENT.split(text):
        if s.lstrip().startswith("|"):
            continue  # markdown table rows are layout, not sentences
        s = re.sub(r"^[#>*\-\s\d.)]+", "", s).strip()
        s = re.sub(r"\*\*|__", "", s)
        if 12 <= len(s):
            out.append(s if len(s) <= MAX_LEN else s[: MAX_LEN - 1].rstrip() + "…")
    return out


def _real_user(r: dict) -> bool:
    fl = R.flags(r)
    return r.get("kind") == "message" and r.get("role") == "user" and not \
        ({"meta", "orphan_result", "demo"} & set(fl)) and bool((r.get("content") or "").strip())


def latest_request(records: Sequence[dict]) -> str:
    for r in reversed(records):
        if _real_user(r):
            text = clean(r["content"])
            text = re.sub(r"<[^>]+>", " ", text)
            first = next((s for s in sentences(text)), text.strip())
            first = " ".join(first.split())
            return first if len(first) <= MAX_LEN else first[: MAX_LEN - 1] + "…"
    return ""


def error_lines(records: Sequence[dict]) -> list[tuple[int, str]]:
    """(record index, first error line) for tool results that failed."""
    out = []
    for i, r in enumerate(records):
        fmt = (r.get("source") or {}).get("format")
        # SWE-agent returns command output as user turns that follow an action
        observation = fmt == "swe-agent" and r.get("role") == "user" and i > 0 and \
            records[i - 1].get("role") == "assistant"
        if r.get("role") != "tool" and not observation:
            continue
        text = r.get("content") or ""
        flagged = "error" in R.flags(r)
        # Claude Code marks failed tool results (is_error); there a file that merely mentions
        # "error" is not one. Other formats have no such mark: look at the output's head.
        trusted = (r.get("source") or {}).get("format") in ("claude-code",)
        head = "\n".join(text.splitlines()[:8])
        if not flagged and (trusted or not re.search(
                r"Traceback|^\w*Error:|^ERROR|FAILED|Exception:|exit code [1-9]|command not found", head, re.M)):
            continue
        line = next((ln.strip() for ln in text.splitlines() if ERROR_LINE.search(ln) and ln.strip()), "")
        if not line:
            line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        if line:
            out.append((i, line if len(line) <= MAX_LEN else line[: MAX_LEN - 1] + "…"))
    return out


def _pick(cands: list[str], n: int = MAX_ITEMS) -> list[Item]:
    seen, out = set(), []
    for c in reversed(cands):  # newest first, then restore order
        k = re.sub(r"\W+", " ", c.lower()).strip()
        if k in seen or is_meta(c):
            continue
        seen.add(k)
        out.append(Item(text=c))
        if len(out) >= n:
            break
    return list(reversed(out))


def summarize(span: Sequence[dict], task_from: Sequence[dict] | None = None) -> Context:
    """Fill the template from a span of records."""
    ctx = Context()
    ctx.task = latest_request(task_from if task_from is not None else span)
    decisions, facts, pending = [], [], []
    for r in span:
        if r.get("kind") not in ("message", "summary") or r.get("role") == "tool":
            continue
        if {"thinking", "reasoning"} & set(R.flags(r)):
            continue
        for s in sentences(clean(r.get("content") or "")):
            if s.endswith(":") or len(s.split()) < 5 or is_meta(s):
                continue  # lead-ins, fragments and commentary are not facts
            if DECISION.search(s):
                decisions.append(s)
            elif PENDING.search(s):
                pending.append(s)
            elif r.get("role") == "assistant" and FACT.search(s):
                facts.append(s)
    errs = error_lines(span)
    later_text = [clean(r.get("content") or "") for r in span]
    errors = []
    for i, line in errs:
        after = " ".join(later_text[i + 1:])
        errors.append(line + (" — resolved later" if RESOLVED.search(after) else ""))
    ctx.sections["Decisions"] = _pick(decisions)
    ctx.sections["Facts"] = _pick(facts)
    ctx.sections["Pending"] = [Item(text=i.text, done=False) for i in _pick(pending)]
    ctx.sections["Errors"] = _pick(errors)
    ctx.sections["Files"] = file_items(trail(span))
    return ctx
