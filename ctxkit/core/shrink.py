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
from .redact import nameable
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
# A command's result headed by what it did, a "Key: value" a line, then "Output:" (Codex's shell
# and exec_command results): the head kept is the output's own, the header one line.
HEADER = re.compile(r"[A-Z][A-Za-z ]{2,30}: \S.{0,60}$")
HEADER_LINES = 6


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
    """The lines worth keeping of a large output, or None when it is small or nothing would go.
    An output of too few lines to cut keeps, of each line longer than LONG_LINE (minified JSON,
    base64), its head, tail and the words in play, so a one-line output shrinks too."""
    if not isinstance(text, str) or len(text) < MIN_CHARS:
        return None
    lines = text.split("\n")
    n = len(lines)
    rx = matcher if matcher is not None else _matcher(in_play)
    keep, start = [True] * n, 0
    few = n <= HEAD_LINES + TAIL_LINES + 4     # too few lines to cut: its long lines are cut instead
    if not few:
        keep, start = _lines_kept(lines, rx)
    kept = sum(keep)
    if kept >= n - 2:
        keep, kept, start = [True] * n, n, 0
    out, cut, cut_lines = [], 0, []
    if start:                           # the wrapper's metadata on one line
        out.append(" ".join(ln.strip() for ln in lines[:start] if ln.strip()))
    for i, ln in enumerate(lines):
        if i < start:
            continue
        if keep[i]:
            if cut:
                out.append(_cut_marker(cut))
                cut = 0
            if few and len(ln) > LONG_LINE:
                ln, gone = _line_kept(ln, rx)
                cut_lines += gone
            out.append(ln)
        else:
            cut += 1
            cut_lines.append(ln)
    if cut:
        out.append(_cut_marker(cut))
    if not cut_lines:
        return None
    kept_text = "\n".join(out)
    return Shrunk(kept_text, kept, n, _names("\n".join(cut_lines), kept_text))


def _cut_marker(n: int) -> str:
    return f"[… {n} line{'s' if n != 1 else ''} cut …]"


def _lines_kept(lines: list[str], rx) -> tuple[list[bool], int]:
    """Which lines a shrink keeps: the head and tail of the output itself (inside a background
    task's wrapper, with the wrapper), the lines naming what is in play with a line either side;
    and where the output itself starts (after the wrapper's metadata)."""
    n = len(lines)
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
            if len(ln) <= MATCH_LINE and rx.search(ln):
                for j in range(max(0, i - CONTEXT_LINES), min(end, i + CONTEXT_LINES + 1)):
                    keep[j] = True
    return keep, start


# An output of too few lines to cut (a one-line JSON array, a base64 blob) has its lines longer
# than LONG_LINE shrunk instead; a line longer than MATCH_LINE is not kept for naming a word in
# play (a long line names many). Measured with bench/bench_drop_sets.py: shrinking the long lines
# of every output (from 1,000 or 5,000 characters) turned one or two wins against dropping the
# oldest into ties on the standard cuts (a read whose long JSON fixture lines became cheap to
# shrink, so the budget took a more relevant read instead).
LONG_LINE = 5000
MATCH_LINE = 2000
HEAD_CHARS, TAIL_CHARS = 400, 200
CONTEXT_CHARS = 100     # kept either side of a word in play inside a long line
WINDOWS_MAX = 12        # the most words in play a long line keeps a window for (the first of each)


def _line_kept(line: str, rx) -> tuple[str, list[str]]:
    """A long line's head and tail and a window around each word in play in it (the first
    occurrence of each, at most WINDOWS_MAX), every cut span one `[… N characters cut …]`
    marker; and the cut spans. Cuts fall on a space, comma or bracket near the boundary, so no
    name is cut in two."""
    spans = [(0, HEAD_CHARS), (len(line) - TAIL_CHARS, len(line))]
    if rx is not None:
        seen = set()
        for m in rx.finditer(line):
            if m.group(0) in seen:
                continue
            seen.add(m.group(0))
            spans.append((m.start() - CONTEXT_CHARS, m.end() + CONTEXT_CHARS))
            if len(seen) >= WINDOWS_MAX:
                break
    merged: list[list[int]] = []
    for a, b in sorted((max(0, a), min(len(line), b)) for a, b in spans):
        if merged and a <= merged[-1][1] + 40:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out, gone, at = [], [], 0
    for a, b in merged:
        a, b = _soft(line, a, back=True), _soft(line, b, back=False)
        if a > at:
            gone.append(line[at:a])
            out.append(f" [… {a - at} characters cut …] ")
        out.append(line[max(a, at):b])
        at = max(at, b)
    if at < len(line):
        gone.append(line[at:])
        out.append(f" [… {len(line) - at} characters cut …]")
    return "".join(out), gone


SOFT = re.compile(r"[\s,;{}\[\]()]")


def _soft(line: str, k: int, back: bool) -> int:
    """`k` moved (outward, at most 30 characters) to just past a space, comma or bracket."""
    if k <= 0 or k >= len(line):
        return max(0, min(k, len(line)))
    rng = range(k, max(0, k - 30), -1) if back else range(k, min(len(line), k + 30))
    for j in rng:
        if SOFT.match(line[j - 1] if back else line[j]):
            return j if back else j + 1
    return k


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
    TAIL_LINES closing lines), after a command's header (Codex: "Exit code: 0", "Wall time: 2.6
    seconds", then "Output:"), else the whole of it."""
    for i, ln in enumerate(lines[:min(end, HEADER_LINES + 1)]):
        if ln.strip() == "Output:" and i:
            return i + 1, end
        if not HEADER.match(ln):
            break
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
    have = terms_of(kept)
    found = [t for t in _distinct(terms_of(cut)) if t not in have and len(t) >= 5]
    seen = cut[:TEXT_CAP]     # where terms_of found them
    uses = Counter(TOKEN.findall(seen))
    uses.update(re.sub(r"^(?:\./)+", "", p.rstrip(".,;:-")) for p in PATHISH.findall(seen) if "/" in p)
    pos = {}
    for t in found:
        k = seen.find(t)
        pos[t] = k if k >= 0 else len(seen)
    return _first_nameable(sorted(pos, key=lambda t: (-uses[t], pos[t], t)), NAMES_MAX)


def _distinct(terms: set) -> set:
    """The names worth listing: a file name that ends a listed path says nothing more (the
    path names it), so it does not take a place in a capped list. Whether each is `nameable`
    is asked last, of the first ones only (`_first_nameable`)."""
    bases = {t.rstrip("/").rsplit("/", 1)[-1] for t in terms if "/" in t}
    return {t for t in terms if "/" in t or t not in bases}


def _first_nameable(ranked: list, cap: int) -> tuple:
    """The first `cap` of `ranked` that are names (`nameable`): a key or a piece of one is no
    name, and a secret cut out must not come back in the list. Asked in rank order until the
    list is full (a long output names thousands of terms; redaction checks each it is asked)."""
    out = []
    for t in ranked:
        if len(out) >= cap:
            break
        if nameable(t):
            out.append(t)
    return tuple(out)


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
    return _first_nameable(sorted(pos, key=lambda t: (pos[t] if pos[t] >= 0 else len(text), t)), cap)


def note(s: Shrunk, chunk_id: str, session: str) -> str:
    cmd = f"ctx recover --chunk-id {shlex.quote(chunk_id)} --session {shlex.quote(session)}"
    names = f"; the cut lines name: {', '.join(s.names)}" if s.names else ""
    long = "; of a long line, its head, tail and the words in play" if " characters cut …]" in s.text else ""
    return (f"[ctx shrunk this output: kept {s.kept} of {s.total} lines (head, tail, lines naming what is in "
            f"play{long}){names}. Whole output: {cmd}]")


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
