"""Shrink a large tool output to what the future is likely to use (pure).

Kept: the head and the tail (what the command was, how it ended) and the lines naming a term
in play (core.working_set: files written, the plan item, open errors, identifiers of the last turns),
each with a line of context. Every run of cut lines becomes one marker line; a note at the end
says how much was cut, names what the cut lines define or mention (so the reader knows what it
can get back) and gives the `ctx recover` command. The whole output always goes to cold
storage first (services.dropping): recovery is exact.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Collection, Sequence

from .. import records as R
from .redact import nameable
from .working_set import call_values, terms_of

MIN_CHARS = 1000        # smaller outputs are not worth a marker and a note
HEAD_LINES = 6
TAIL_LINES = 4
CONTEXT_LINES = 1
# The most names a shrink note lists from its cut lines: an index of what `ctx recover` gets
# back, in order of first appearance (nothing about what comes later chooses them), its tokens
# counted against the budget like any kept text. Measured with ../shared/eval/drop_eval.py
# --mode free50 (15 runs cut at 40/60/80 %, 20 at 30/50/70/90 %, 15 ending in "continue"):
# fewer names lose runs to dropping the oldest (40: a "continue" run, whose needed name was
# the 41st to 50th; 30: one standard run; 20: two); with no names (recall 0.865) or only what
# the cut lines define, an outline (0.872-0.876), dropping does no better than dropping the
# oldest (0.885, against 0.930 with 60): the names used next are mostly ones the cut lines
# mention, not define.
NAMES_MAX = 60
SHRUNK_FLAG = "shrunk"
REMINDER_START, REMINDER_END = "<system-reminder>", "</system-reminder>"


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
    keep = [False] * n
    for i in range(min(HEAD_LINES, end)):
        keep[i] = True
    for i in range(max(0, end - TAIL_LINES), end):
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
    for i, ln in enumerate(lines):
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


def _names(cut: str, kept: str) -> tuple:
    """What the cut lines name and the kept text does not: paths, file names, identifiers,
    in order of first appearance, at most NAMES_MAX."""
    found = _distinct(terms_of(cut))
    have = terms_of(kept)
    pos = {}
    for t in found:
        if t in have or len(t) < 5:
            continue
        k = cut.find(t)
        pos[t] = k if k >= 0 else len(cut)
    return tuple(sorted(pos, key=lambda t: (pos[t], t))[:NAMES_MAX])


def _distinct(terms: set) -> set:
    """The names worth listing: a file name that ends a listed path says nothing more (the
    path names it), so it does not take a place in a capped list; a key or a piece of one is no
    name (`nameable`), and a secret cut out must not come back in the list."""
    bases = {t.rstrip("/").rsplit("/", 1)[-1] for t in terms if "/" in t}
    return {t for t in terms if ("/" in t or t not in bases) and nameable(t)}


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
    """A tool's output (a tool result, or an observation a harness sends as a user message)."""
    if rec.get("kind") != "message" or not isinstance(rec.get("content"), str):
        return False
    if R.is_protected(rec):
        return False
    return rec.get("role") == "tool" or (rec.get("role") == "user" and "observation" in R.flags(rec))


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
