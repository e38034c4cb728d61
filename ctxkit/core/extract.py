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


def latest_request(records: Sequence[dict]) -> str:
    """The newest real request, brief (core.requests is the one definition)."""
    from .requests import brief, last_request

    t = last_request(records)
    return brief(t, MAX_LEN) if t else ""


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


def summarize(span: Sequence[dict], task_from: Sequence[dict] | None = None, budget: int | None = None,
              count=None) -> Context:
    """Fill the template from a span: distill typed facts, then write them (within `budget`
    tokens when given, else every bullet the facts support)."""
    from .distill import distill
    from .writeup import everything, write

    d = distill(span, task_from)
    if budget is None or count is None:
        return everything(d)
    return write(d, budget, count)
