"""Shrink a large tool output to what the future is likely to use (pure).

Kept: the head and the tail (what the command was, how it ended) and the lines naming a term
in play (core.working_set: files written, the plan item, open errors, identifiers of the last turns),
each with a line of context. Every run of cut lines becomes one marker line; a note at the end
says how much was cut, names what the cut lines mention, the most used first (so the reader
knows what it can get back) and gives the `ctx recover` command. A background task's output
keeps its metadata wrapper on one line, and the head and tail kept are its own. The whole
output always goes to cold storage first (services.dropping): recovery is exact.
"""
from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass
from typing import Collection, Sequence

from .. import records as R
from .working_set import PATHISH, TEXT_CAP, TOKEN, call_values, terms_of

MIN_CHARS = 1000        # smaller outputs are not worth a marker and a note
HEAD_LINES = 6
TAIL_LINES = 4
CONTEXT_LINES = 1
# The most names a shrink note lists from its cut lines: an index of what `ctx recover` gets
# back, the names the cut lines use most first (then first seen first; nothing about what comes
# later chooses them), its tokens counted against the budget like any kept text. Measured with
# ../shared/eval/drop_eval.py --mode free50 (15 runs cut at 40/60/80 %, 20 at 30/50/70/90 %, 15
# ending in "continue"): fewer names lose runs to dropping the oldest (40: a "continue" run,
# whose needed name was the 41st to 50th; 30: one standard run; 20: two); with no names (recall
# 0.865) or only what the cut lines define, an outline (0.872-0.876), dropping does no better
# than dropping the oldest (0.885, against 0.930 with 60): the names used next are mostly ones
# the cut lines mention, not define. Listed in order of first appearance, a long read's
# vocabulary is crowded out by its first lines (its imports and aliases): on a 595-line file
# read the name used next, on its lines 335 and 351, was not among the 60, and dropping lost
# to dropping the oldest; most used first, it is (0.934 instead of 0.930 on the 15 runs,
# 8 wins instead of 6, and one loss fewer on the 20).
NAMES_MAX = 60
SHRUNK_FLAG = "shrunk"
REMINDER_START, REMINDER_END = "<system-reminder>", "</system-reminder>"
# A background task's result (Claude Code's TaskOutput, or the <task-notification> the harness
# sends as a user message when a background command or agent ends) wraps the output in metadata,
# one tag a line (<retrieval_status>, <task_id>, <task_type>, <status>, <exit_code>...), before
# <output> or <result>. A shrink keeps that wrapper as one line and the output's own head and tail.
WRAP_TAG = re.compile(r"\s*<([A-Za-z][\w-]*)>[^<\n]*</\1>\s*$")   # <task_id>be613ab</task_id>
WRAP_OPEN = re.compile(r"\s*<([A-Za-z][\w-]*)>\s*$")             # <task-notification>
BODY_OPEN = re.compile(r"\s*<(output|result)>")
WRAP_LINES = 24         # the most lines of metadata before the output opens
TASK_NOTIFICATION = re.compile(r"\s*<task-notification>")


@dataclass(frozen=True)
class Shrunk:
    text: str           # the kept lines and the cut markers (the note is added by `with_note`)
    kept: int
    total: int
    names: tuple        # what the cut lines name, first seen first


def _matcher(in_play: Collection[str]):
    words = sorted((t for t in in_play if len(t) >= 4), key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"(?<![\w])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w])")


def shrink_text(text: str, in_play: Collection[str], matcher=None) -> Shrunk | None:
    """The lines worth keeping of a large output, or None when it is small or nothing would go."""
    if not isinstance(text, str) or len(text) < MIN_CHARS:
        return None
    lines = text.split("\n")
    n = len(lines)
    if n <= HEAD_LINES + TAIL_LINES + 4:
        return None
    rx = matcher if matcher is not None else _matcher(in_play)
    end = _output_end(lines)
    start, stop = _body(lines, end)     # the output itself, inside a background task's wrapper
    keep = [False] * n
    for i in (*range(start), *range(stop, end)):
        keep[i] = True                  # the wrapper: its metadata and closing tags
    for i in range(start, min(start + HEAD_LINES, stop)):
        keep[i] = True
    for i in range(max(start, stop - TAIL_LINES), stop):
        keep[i] = True
    if rx is not None:
        for i, ln in enumerate(lines[:end]):
            if len(ln) <= 2000 and rx.search(ln):
                for j in range(max(0, i - CONTEXT_LINES), min(end, i + CONTEXT_LINES + 1)):
                    keep[j] = True
    kept = sum(keep)
    if kept >= n - 2:
        return None
    out, cut, cut_lines = [], 0, []
    if start:                           # the wrapper's metadata on one line
        out.append(" ".join(ln.strip() for ln in lines[:start] if ln.strip()))
    for i, ln in enumerate(lines):
        if i < start:
            continue
        if keep[i]:
            if cut:
                out.append(f"[… {cut} lines cut …]")
                cut = 0
            out.append(ln)
        else:
            cut += 1
            cut_lines.append(ln)
    if cut:
        out.append(f"[… {cut} lines cut …]")
    kept_text = "\n".join(out)
    return Shrunk(kept_text, kept, n, _names("\n".join(cut_lines), kept_text))


def _output_end(lines: list[str]) -> int:
    """Where the output itself ends: before a reminder block the harness appends to every
    result (Claude Code's `<system-reminder>` after each file read), so the tail kept is the
    output's own last lines."""
    k = len(lines)
    while k and not lines[k - 1].strip():
        k -= 1
    if not k or lines[k - 1].strip() != REMINDER_END:
        return len(lines)
    for i in range(k - 1, -1, -1):
        if lines[i].lstrip().startswith(REMINDER_START):
            j = i
            while j and not lines[j - 1].strip():
                j -= 1
            return j
    return len(lines)


def _body(lines: list[str], end: int) -> tuple[int, int]:
    """Where the output itself starts and stops in `lines[:end]`: inside a background task's
    wrapper (metadata tags a line each, then <output> or <result> ... its closing tag and at most
    TAIL_LINES closing lines), else the whole of it."""
    tags = 0
    for i, ln in enumerate(lines[:min(end, WRAP_LINES)]):
        m = BODY_OPEN.match(ln)
        if m and tags >= 2:
            rest = ln[m.end():].strip()
            start = i if rest else i + 1
            close = f"</{m.group(1)}>"
            for j in range(end - 1, start - 1, -1):
                t = lines[j].strip()
                if t.endswith(close):
                    stop = j if t == close else j + 1
                    closing = sum(1 for x in lines[stop:end] if x.strip())
                    return (start, stop) if closing <= TAIL_LINES else (0, end)
            return 0, end
        if WRAP_TAG.match(ln) or WRAP_OPEN.match(ln):
            tags += 1
        elif ln.strip():
            break
    return 0, end


def _names(cut: str, kept: str) -> tuple:
    """What the cut lines name and the kept text does not: paths, file names, identifiers,
    the most used first (first seen first among equals), at most NAMES_MAX."""
    found = _distinct(terms_of(cut))
    have = terms_of(kept)
    seen = cut[:TEXT_CAP]     # where terms_of found them
    uses = Counter(TOKEN.findall(seen))
    uses.update(re.sub(r"^(?:\./)+", "", p.rstrip(".,;:-")) for p in PATHISH.findall(seen) if "/" in p)
    pos = {}
    for t in found:
        if t in have or len(t) < 5:
            continue
        k = seen.find(t)
        pos[t] = k if k >= 0 else len(seen)
    return tuple(sorted(pos, key=lambda t: (-uses[t], pos[t], t))[:NAMES_MAX])


def _distinct(terms: set) -> set:
    """The names worth listing: a file name that ends a listed path says nothing more (the
    path names it), so it does not take a place in a capped list."""
    bases = {t.rstrip("/").rsplit("/", 1)[-1] for t in terms if "/" in t}
    return {t for t in terms if "/" in t or t not in bases}


STUB_NAMES_MAX = 40
TOKENS_PER_NAME = 80    # a stub lists one name per this many tokens of its chunk


def names_of(group: Sequence[dict], tokens: int) -> tuple:
    """What a dropped chunk names, for its stub: paths, file names and identifiers from its
    tool calls and text first, then its tool outputs, first seen first; more for a bigger chunk."""
    cap = min(STUB_NAMES_MAX, tokens // TOKENS_PER_NAME)
    if cap <= 0:
        return ()
    said, got = [], []
    for r in group:
        if "thinking" in R.flags(r) or "reasoning" in R.flags(r):
            continue
        (got if r.get("role") == "tool" else said).append((r.get("content") or "")[:20_000])
        for c in r.get("tool_calls") or ():
            said.append(call_values(c)[:20_000])
    text = "\n".join(said + got)
    pos = {t: text.find(t) for t in _distinct(terms_of(text)) if len(t) >= 5}
    return tuple(sorted(pos, key=lambda t: (pos[t] if pos[t] >= 0 else len(text), t))[:cap])


def note(s: Shrunk, chunk_id: str, session: str) -> str:
    cmd = f"ctx recover --chunk-id {shlex.quote(chunk_id)} --session {shlex.quote(session)}"
    names = f"; the cut lines name: {', '.join(s.names)}" if s.names else ""
    return (f"[ctx shrunk this output: kept {s.kept} of {s.total} lines (head, tail, lines naming what is in "
            f"play){names}. Whole output: {cmd}]")


def shrinkable(rec: dict) -> bool:
    """A tool's output (a tool result, or an observation or a background task's notification a
    harness sends as a user message)."""
    if rec.get("kind") != "message" or not isinstance(rec.get("content"), str):
        return False
    if R.is_protected(rec):
        return False
    if rec.get("role") == "tool":
        return True
    return rec.get("role") == "user" and ("observation" in R.flags(rec)
                                          or bool(TASK_NOTIFICATION.match(rec["content"])))


def shrink_group(group: Sequence[dict], in_play: Collection[str], matcher=None) -> list[tuple[int, Shrunk]]:
    """(index, Shrunk) for each record of a chunk worth shrinking."""
    out = []
    for i, r in enumerate(group):
        if shrinkable(r):
            s = shrink_text(r["content"], in_play, matcher)
            if s is not None:
                out.append((i, s))
    return out


def apply(group: Sequence[dict], shrunk: Sequence[tuple[int, Shrunk]], chunk_id: str, session: str,
          cold_path: str | None) -> list[dict]:
    """The chunk with its large outputs shrunk; each shrunk record says where the whole is."""
    out = [dict(r) for r in group]
    for i, s in shrunk:
        r = out[i]
        r["content"] = s.text + "\n" + note(s, chunk_id, session)
        R.add_flag(r, SHRUNK_FLAG)
        meta = dict(r["meta"]) if isinstance(r.get("meta"), dict) else {}
        meta["shrunk"] = {"chunk_id": chunk_id, "kept_lines": s.kept, "lines": s.total,
                          "cold_storage_path": cold_path}
        r["meta"] = meta
    return out
