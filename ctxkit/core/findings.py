"""What a read-only span found (pure, deterministic, no model).

A span that reads and searches rather than edits produces knowledge, not changes: where a thing
is defined, how it is wired, what exists and what does not. For one line of enquiry (a numbered
question of the request, the request itself, the plan step in progress) `key_lines` finds the
lines of the files read, and the lines searches matched, that bear on it; `said` gives each as a
short code fragment with its file and line number. These are the facts a successor would
otherwise re-read the files for.

No vocabulary of any one language decides: the enquiry's own names and words, weighed by how rare
they are among the lines read (a word on every line says nothing), score each line; structure (a
definition, markup embedded in code) only breaks ties. The same line in two files is said once,
with both places ("what is duplicated"); the lines that differ are said per file.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from .requests import brief

NUMBERED = re.compile(r"^[ \t]*(\d+)(?:→|\t)(.*)$")           # Claude Code Read / `cat -n`
GREP_LINE = re.compile(r"^([^\s:][^:\n]*?):(\d+)[:-](.*)$")        # `path:12:text` (grep -n, rg -n, Grep)
IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:[.:][A-Za-z_$][\w$]*)*[?!]?")
SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+[?!]?")
# words of an enquiry that name no thing in the code
SKIP = frozenset("""what which where when there their about with from into that this have does current currently
existing related especially used uses using show list each both them they other also been being how whether
would could should will shall must need needs want wants like make made more most some such than then these
those very just only every all any file files code read full content provide summarize please thorough
exploration understand know look find check give point pattern follow content contents directory directories
folder folders structure module modules""".split())
COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*|--|;|%(?!>)|<!--|<%!--|\{/\*|@doc\b|@moduledoc\b|\"\"\"|''')")
IMPORT_LINE = re.compile(r"^\s*(?:import|from\s+\S+\s+import|alias|require|use|using|include|#include)\b")
MARKUP = re.compile(r"^\s*<(?:[A-Za-z/!%.]|\.)")
MARKUP_Q = re.compile(r"\b(?:markup|templates?|html|heex|eex|erb|jsx|tsx|views?|dom|components?|layouts?|ui)\b", re.I)
API_Q = re.compile(r"\b(?:api|interface|public functions?|signatures?|returns?|exports?)\b", re.I)
PROSE = re.compile(r"(?:\b[A-Za-z][a-z]+\b[ ,]+){4}\b[a-z]+\b")   # a sentence: matches in it are words, not names
BARE = re.compile(r"^[\w.{}\[\], ]+$")   # a name in a list (`Foo,`), not a use of it (no call)
FLOOR = 2.5   # a line that only shares one common word with the enquiry is not a finding (or half the best score)
TEST_PATH = re.compile(r"(?:^|/)(?:tests?|spec|__tests__)/|_test\.\w+$|\.test\.\w+$|_spec\.\w+$|(?:^|/)test_[^/]+$")
NAMED_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+|(?:[\w.-]+/)*[\w-]+\.[a-z]\w{0,5})(?![\w/])")
PATH_MARK = ("", False)   # in a subject's set: the enquiry names the file or its folder


@dataclass
class Hit:
    path: str
    line: int
    text: str                      # the line as read (stripped)
    score: float
    also: list = field(default_factory=list)    # (path, line) holding the same line
    alike: list = field(default_factory=list)   # (path, line) of lines shaped the same
    context: tuple | None = None                 # (line, text): the variable it uses, set just before


def numbered_lines(text: str) -> dict[int, str]:
    """The lines a file read shows, by their line numbers (`  12→…`, `12\t…`)."""
    out: dict[int, str] = {}
    for ln in (text or "").splitlines():
        m = NUMBERED.match(ln)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


READ_CMD = re.compile(r"^\s*(?:cat|type|Get-Content|gc|head|nl|bat)\b(?P<flags>(?:\s+-{1,2}[\w-]+(?:\s+\d+)?)*)\s+"
                      r"(?P<path>[^\s|;&<>]+)\s*$", re.I)
SED_CMD = re.compile(r"^\s*sed\s+-n\s+['\"]?(\d+),(\d+)p['\"]?\s+([^\s|;&<>]+)\s*$")
GREP_CMD = re.compile(r"^\s*(?:grep|rg|ag|git\s+grep)\b")


def _content(res) -> str:
    c = res.get("content") if isinstance(res, dict) else None
    return c.replace("\r", "") if isinstance(c, str) else ""


RUN_HEADER = re.compile(r"^(?:Exit code: \d+\s*\n)?(?:Wall time: [^\n]*\n)?(?:Output:\s*\n)?")


def _unwrap(text: str) -> str:
    """A shell result without a runner's header (`Exit code: 0`, `Wall time: …`, `Output:`)."""
    return RUN_HEADER.sub("", text, count=1)


def seen_files(calls, failed) -> dict[str, dict[int, str]]:
    """Every file the span read or searched, as {line number: text} of the lines it saw: reads
    (Read, a viewer, `cat`/`Get-Content`/`head`/`sed -n A,Bp` of one file) and the lines searches
    matched (`path:line:text`). `calls` as core.kinds._calls gives them; `failed(res)` tells a failed
    result."""
    files: dict[str, dict[int, str]] = {}

    def put(path: str, lines: dict[int, str]) -> None:
        if path and lines:
            files.setdefault(path, {}).update(lines)

    for _, name, args, res in calls:
        if res is None or failed(res):
            continue
        text = _content(res)
        if text.lstrip().startswith("<tool_use_error>"):
            continue
        path = str(args.get("file_path") or args.get("path") or "")
        cmd = args.get("command") or args.get("cmd") or ""
        cmd = cmd.strip() if isinstance(cmd, str) else ""
        if name in ("Read", "read_file", "view_file") and path:
            # a reader that does not number its lines shows the file from its first line
            put(path, numbered_lines(text) or {k: ln for k, ln in enumerate(_unwrap(text).split("\n"), 1)})
        elif name in ("open", "goto", "scroll_down", "scroll_up", "view", "str_replace_editor", "edit") or \
                text.startswith("[File: "):
            from .kinds import _views  # SWE-agent's file viewer

            put(*_views(text))
        elif name == "Grep" or (cmd and GREP_CMD.match(cmd)):
            single = path if name == "Grep" and re.search(r"\.\w{1,6}$", path) else ""
            for ln in text.splitlines():
                m = GREP_LINE.match(ln)
                if m and not single:
                    put(m.group(1), {int(m.group(2)): m.group(3)})
                elif single:
                    m = re.match(r"^(\d+)[:-](.*)$", ln)
                    if m:
                        put(single, {int(m.group(1)): m.group(2)})
        elif cmd and "\n" not in cmd:
            body = _unwrap(text)
            m = SED_CMD.match(cmd)
            if m:
                start, target = int(m.group(1)), m.group(3)
            else:
                m = READ_CMD.match(cmd)
                if not m or re.search(r"-(?:Tail|n\s*-|tail)\b", m.group("flags") or "", re.I):
                    continue
                start, target = 1, m.group("path")
            shown = numbered_lines(body)
            if not shown:
                shown = {start + k: ln for k, ln in enumerate(body.split("\n"))}
            put(target.strip("'\""), shown)
    return files


_STEMS: dict[str, str] = {}


def _stem(word: str) -> str:
    got = _STEMS.get(word)
    if got is None:
        got = _stem_of(word)
        if len(_STEMS) < 100_000:   # the words of one span repeat; the memo stays small
            _STEMS[word] = got
    return got


def _stem_of(word: str) -> str:
    w = word.lower()
    for suf in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + ("y" if suf == "ies" else "")
            break
    return w[:6]


def _segments(name: str) -> list[str]:
    return [s.lower() for s in SEGMENT.findall(name)]


def enquiry_terms(q: str) -> list[tuple[str, bool, float]]:
    """(term, is a name, weight) for an enquiry: the identifiers it names (`SessionLive`), the
    parts of a dotted one (`AshComputer.LiveView`: `AshComputer`, `LiveView`, weaker), the stems of
    its plain words and proper names ("Ash"), and, weakest, the stems of its names' parts."""
    q = re.sub(r"\b[a-z][\w+.-]*://\S+", " ", q)   # a URL names a place, not a thing in the code
    names: list[str] = []
    for b in re.findall(r"`([^`\n]+)`", q):
        names += [x for x in IDENT.findall(b) if len(x) > 2]
    bare = re.sub(r"`[^`]*`", " ", q)
    names += CAMEL.findall(bare) + SNAKE.findall(bare)
    names = list(dict.fromkeys(n for n in names if n.lower() not in SKIP))
    parts = [p for n in names if "." in n for p in n.split(".") if len(p) > 2 and p not in names]
    plain = NAMED_PATH.sub(" ", re.sub(r"`[^`]*`", " ", q))
    plain = CAMEL.sub(" ", SNAKE.sub(" ", plain))
    words = [_stem(w) for w in re.findall(r"[A-Za-z][a-z0-9]{3,}", plain) if w.lower() not in SKIP]
    words += [w.lower() for w in re.findall(r"(?<=[a-z,;:(] )[A-Z][a-z]{2}\b", plain)]  # a proper name: "Ash"
    derived = [_stem(s) for n in names for s in _segments(n) if len(s) >= 4 and s not in SKIP]
    out = [(n, True, 2.0) for n in names] + [(p, True, 1.0) for p in dict.fromkeys(parts)]
    out += [(w, False, 1.0) for w in dict.fromkeys(words)]
    return out + [(d, False, 0.5) for d in dict.fromkeys(derived) if d not in words]


class Index:
    """The lines of the files seen, with what each names (its identifiers and their lowercased
    parts), for scoring against several enquiries; each name and part points at the lines that
    hold it, so an enquiry only visits the lines that share a term with it."""

    def __init__(self, files: dict[str, dict[int, str]]):
        self.files = files
        self.rows: list[tuple[str, int, str]] = []
        self.by_name: dict[str, set] = {}    # identifier (and each dotted part) -> rows
        self.by_part: dict[str, set] = {}    # lowercased part of an identifier (and its stem) -> rows
        parts: dict[str, tuple] = {}
        for path, lines in files.items():
            for n in sorted(lines):
                t = lines[n].strip()
                if len(t) < 3 or len(t) > 240:
                    continue
                ids = IDENT.findall(t)
                if not ids:
                    continue
                k = len(self.rows)
                self.rows.append((path, n, t))
                for i in set(ids):
                    keys = parts.get(i)
                    if keys is None:   # an identifier's names and parts, worked out once
                        segs = [x for x in _segments(i) if len(x) >= 3]
                        keys = parts[i] = ({i, *i.split("."), *i.split(":")}, {*segs, *map(_stem, segs)})
                    for x in keys[0]:
                        self.by_name.setdefault(x, set()).add(k)
                    for x in keys[1]:
                        self.by_part.setdefault(x, set()).add(k)
        self._hits: dict = {}

    def hits(self, term: str, is_name: bool) -> dict[int, float]:
        """The rows holding the term, each with how well: 1 when the line names it (a name as an
        identifier, a word as a whole part of one: `render` in `TranscriptRenderer.render`), 0.6
        when a part only starts with it (`rendered_lines`)."""
        key = (term, is_name)
        if key not in self._hits:
            got: dict[int, float] = {}
            if is_name:
                got = dict.fromkeys(self.by_name.get(term, ()), 1.0)
                if "." in term:
                    got.update((k, 1.0) for k, r in enumerate(self.rows) if term in r[2])
            else:
                for part, rows in self.by_part.items():
                    if part.startswith(term):
                        q = 1.0 if part == term else 0.6
                        for k in rows:
                            if got.get(k, 0) < q:
                                got[k] = q
            self._hits[key] = got
        return self._hits[key]

    def df(self, term: str, is_name: bool) -> int:
        return len(self.hits(term, is_name))


def rel_path(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def subject(path: str, q: str, terms: list, cwd: str | None = None) -> set:
    """Why the file is the enquiry's subject, as the (term, is a name) keys that inside it point at
    nothing in particular: a name the enquiry gives is the file's (`SessionLive` →
    `session_live.ex`, with its parts' stems), or the enquiry names the file, its folder (`priv/`)
    or its top folder by a plain word ("Config files" → `config/…`): PATH_MARK. Empty when it is
    not a subject."""
    rel = rel_path(path, cwd)
    stem = rel.rsplit("/", 1)[-1].split(".")[0].lower()
    out: set = set()
    for t, is_name, _ in terms:
        if is_name and (t.lower() == stem or "_".join(_segments(t.rsplit(".", 1)[-1])) == stem):
            out.add((t, True))
            out.update((_stem(s), False) for s in _segments(t) if len(s) >= 4)
    for m in NAMED_PATH.findall(q):
        if (m.endswith("/") and (rel.startswith(m) if cwd else "/" + m in path)) or \
                (not m.endswith("/") and (rel == m or rel.endswith("/" + m))):
            out.add(PATH_MARK)
    top = rel.split("/", 1)[0].lower() if cwd and "/" in rel else ""
    plain = re.sub(r"`[^`]*`", " ", NAMED_PATH.sub(" ", q))
    if top and any(w.lower() == top for w in re.findall(r"[A-Za-z]{3,}", plain)):
        out |= {PATH_MARK, (_stem(top), False)}
    return out


def _shape(text: str) -> str:
    """A line with its symbols and numbers blanked: `computer :session_data do` is shaped like
    `computer :project_filter do`."""
    t = re.sub(r"(?<![\w:]):\w+|\b\d+\b", "_", text)   # a string names a thing of its own (an event, a key)
    return " ".join(t.split())


ASSIGN = re.compile(r"^\s*([a-z_]\w*)\s*=(?!=)")


def key_lines(q: str, index: Index, shared: dict | None = None, skip: set | None = None,
              cap: int = 8, per_file: int = 4, cwd: str | None = None) -> list[Hit]:
    """The lines of the files seen that bear most on enquiry `q`, best first (at most `cap`, at
    most `per_file` from one file). `shared` maps a term to how many enquiries name it (a term
    every question shares points at none of them); `skip` holds (path, line) already said under
    another enquiry (a line that names this enquiry's own names is said again). Lines shaped
    alike (`computer :a do`, `computer :b do`) are one hit that says where the others are; a
    variable a hit uses, set on the lines just before it, comes with it (its `context`)."""
    terms = enquiry_terms(q)
    if not terms or not index.rows:
        return []
    n = len(index.rows)
    weights = {}
    for t, is_name, factor in terms:
        df = index.df(t, is_name)
        if df:
            w = math.log((n + 1) / (df + 0.5)) * factor
            weights[(t, is_name)] = w / math.sqrt(max(1, (shared or {}).get(t, 1)))
    if not weights:
        return []
    from .episodes import DEFS

    full = {t for t, is_name, factor in terms if is_name and factor >= 2.0}
    weak = {(t, is_name) for t, is_name, factor in terms if factor < 1.0}   # a name's part: only in that name's file
    markup_q, tests_q = bool(MARKUP_Q.search(q)), bool(re.search(r"\btests?\b", q, re.I))
    subjects = {p: subject(p, q, terms, cwd) for p in index.files}
    focused = any(subjects.values())
    blocks = {(p, k) for p, lines in index.files.items() for a, b, _ in markup_blocks(lines) if markup_q
              for k in range(a, b + 1)}
    scored = []
    rows: dict[int, list] = {}
    for k, w in weights.items():
        for r, m in index.hits(*k).items():
            rows.setdefault(r, []).append((k, w * m))
    for r in sorted(rows):
        path, num, text = index.rows[r]
        if TEST_PATH.search(path) and not tests_q and not subjects[path]:
            continue  # a test's assertions are not how the code works
        got = [(k, w) for k, w in rows[r] if k not in subjects[path] and (k not in weak or subjects[path])]
        named = any(k[0] in full for k, _ in got)
        if not got or (focused and not subjects[path] and not named):
            continue  # the enquiry names its files: elsewhere only the lines that name its names
        s = sum(w for _, w in got)
        if COMMENT.match(text):
            s *= 0.5
        elif IMPORT_LINE.match(text):
            s *= 0.4
        elif BARE.match(text):
            s *= 0.3
        elif PROSE.search(text):
            s *= 0.5
        elif any(rx.match(text) for rx in DEFS):
            s *= 1.3
        if MARKUP.match(text):
            s *= (2.0 if (path, num) in blocks else 1.3) if markup_q else 0.6
        if subjects[path]:
            s *= 1.2
        scored.append((s, path, num, text, named))
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    floor = min(FLOOR, 0.5 * scored[0][0]) if scored else FLOOR   # few lines read: every word is rarer
    out: list[Hit] = []
    by_text: dict[str, Hit] = {}
    by_shape: dict[str, Hit] = {}
    count: dict[str, int] = {}
    for s, path, num, text, named in scored:
        if s < floor or len(out) >= cap:
            break
        if skip and (path, num) in skip and not named:
            continue
        key = " ".join(text.split())
        if key in by_text:
            h = by_text[key]
            if h.path == path:
                h.alike.append((path, num))
            elif all(p != path for p, _ in h.also):
                h.also.append((path, num))
            continue
        shape = (path, _shape(text))   # in another file, a line shaped alike says how that file differs
        if shape in by_shape:
            by_shape[shape].alike.append((path, num))
            continue
        if count.get(path, 0) >= (cap if subjects[path] else per_file):
            continue
        count[path] = count.get(path, 0) + 1
        h = Hit(path, num, text, s, context=_context(index.files[path], num, text))
        by_text[key] = h
        by_shape[shape] = h
        out.append(h)
    return out


def _context(lines: dict[int, str], num: int, text: str) -> tuple | None:
    """The line just before `num` that sets a variable the line uses (`opts = …` before
    `render(messages, opts)`): how the call is wired."""
    args = " ".join(re.findall(r"[\w.]+\(([^()]*)\)", text))  # what the line passes to a call
    for k in range(num - 1, num - 4, -1):
        m = ASSIGN.match(lines.get(k, ""))
        if m and re.search(rf"\b{m.group(1)}\b", args):
            return (k, lines[k].strip())
    return None



def fragment(text: str, cap: int = 90) -> str:
    """A code line as a short quotable fragment (never a backtick inside, cut at a word)."""
    return brief(text.replace("`", "'"), cap)


def said(hits: Sequence[Hit], rel) -> str:
    """Hits as `file`: `fragment` (line), grouped by file in the order of their best hit, each
    file's lines in order; a line two files share says both places."""
    order: list[str] = []
    for h in hits:
        if h.path not in order:
            order.append(h.path)
    parts = []
    for p in order:
        mine = sorted((h for h in hits if h.path == p), key=lambda h: h.line)
        bits = []
        for h in mine:
            where = f"line {h.line}"
            if h.also:
                where += "; also " + ", ".join(f"`{rel(q)}` line {k}" for q, k in h.also)
            if h.alike:
                here = [k for q, k in h.alike if q == h.path]
                where += f"; {len(h.alike)} more like it" + (
                    f": line{'s' if len(here) > 1 else ''} {', '.join(map(str, here[:4]))}" if here else " elsewhere")
            said_ = f"`{fragment(h.text)}` ({where})"
            if h.context:
                said_ = f"`{fragment(h.context[1], 70)}` (line {h.context[0]}) then " + said_
            bits.append(said_)
        parts.append(f"`{rel(p)}`: " + ", ".join(bits))
    return "; ".join(parts)


def markup_blocks(lines: dict[int, str], min_lines: int = 5, gap: int = 12) -> list[tuple[int, int, int | None]]:
    """Markup embedded in code (an inline template, JSX): (first line, last line, the line of the
    definition that holds it or None) of each run of markup lines."""
    from .episodes import DEFS

    marks = [n for n in sorted(lines) if MARKUP.match(lines[n])]
    runs: list[list[int]] = []
    for n in marks:
        if runs and n - runs[-1][-1] <= gap:
            runs[-1].append(n)
        else:
            runs.append([n])
    out = []
    for r in runs:
        if len(r) < min_lines:
            continue
        before = next((lines[k] for k in range(r[0] - 1, max(0, r[0] - 6), -1) if k in lines and lines[k].strip()), "")
        depth = len(before) - len(before.lstrip())   # the line that opens the markup (`~H"""`, `return (`)
        holder = next((k for k in range(r[0] - 1, max(0, r[0] - 40), -1) if k in lines and
                       len(lines[k]) - len(lines[k].lstrip()) < max(depth, 1) and any(rx.match(lines[k]) for rx in DEFS)),
                      None)
        out.append((r[0], r[-1], holder))
    return out


PRIVATE = re.compile(r"^\s*(?:defp|defmacrop|private|protected)\b|^\s*(?:async\s+)?(?:def|function|fn)\s+_")
SPEC = re.compile(r"^\s*(?:@spec|@callback)\s")


def interface(lines: dict[int, str]) -> list[tuple[int, str, str]]:
    """A file's public definitions as read, in order: (line, header, the first sentence of its
    documentation), the type spec on the line before a definition standing for its header when
    there is one (`@spec render([map()], keyword()) :: [map()]`); a definition of several clauses
    once."""
    from .episodes import DEFS

    out, seen = [], set()
    nums = sorted(lines)
    for k, n in enumerate(nums):
        t = lines[n].strip()
        if PRIVATE.match(lines[n]):
            continue
        m = next((m for rx in DEFS for m in (rx.match(lines[n]),) if m), None)
        if m is None or re.match(r"^\s*(?:defmodule|class)\b", t):
            continue
        arg = re.match(r"\s*\(\s*(\"[^\"]*\"|:\w+)", lines[n][m.end():])  # a handler's clause: its message
        key = m.group(1) + (arg.group(1) if arg else "")
        if key in seen:
            continue
        seen.add(key)
        prev = next(((nums[j], lines[nums[j]].strip()) for j in range(k - 1, max(-1, k - 3), -1)
                     if lines[nums[j]].strip()), (0, ""))
        line, head = prev if SPEC.match(prev[1]) and m.group(1) in prev[1] else (n, t)
        out.append((line, head, _doc(lines, n)))
    return out


def _doc(lines: dict[int, str], n: int) -> str:
    """The first sentence of the documentation of the definition on line `n`: a doc block just
    before it (`@doc \"\"\"`, `/** … */`) or a docstring just after it."""
    k = n - 1
    while k in lines and (not lines[k].strip() or re.match(r"^\s*(?:@spec|@impl|@callback|@\w+\(|@[\w.]+$)", lines[k])):
        k -= 1
    text = []
    if k in lines and re.match(r"^\s*(?:\"\"\"|\*/)\s*$", lines[k]):
        j = k - 1
        while j in lines and j > k - 40 and not re.search(r"@doc\s+\"\"\"|/\*\*", lines[j]):
            j -= 1
        if j in lines and j > k - 40:
            text = [lines[x].strip().lstrip("* ").strip() for x in range(j + 1, k) if x in lines]
    elif n + 1 in lines and re.match(r"^\s*[rRbuU]?(?:\"\"\"|\'\'\')", lines[n + 1]):
        first = re.sub(r"^\s*[rRbuU]?(?:\"\"\"|\'\'\')", "", lines[n + 1]).strip()
        text = [first] + [lines[x].strip() for x in range(n + 2, n + 5) if x in lines]
    body = " ".join(t for t in text if t and not t.startswith(("@", "#"))).split('"""')[0].split("'\''\''")[0]
    first = re.split(r"(?<=[.!?])\s", body, maxsplit=1)[0].strip()
    return brief(first, 120) if len(first.split()) >= 3 else ""


def compare(files: dict[str, dict[int, str]], paths: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """What files define in common and what only one of them defines (their definitions as
    core.episodes names them: functions, handlers): (common, {path: its own})."""
    from .episodes import definitions

    defs = {p: definitions("\n".join(files[p][n] for n in sorted(files[p])), p) for p in paths}
    own = {p: p.rsplit("/", 1)[-1].split(".")[0].lower().replace("_", "") for p in paths}
    # functions and handlers: not the file's own module or component, not markup, imports or routes
    defs = {p: [d for d in ds if not re.match(r"^(?:<|import |route |attribute )|^[A-Z]\w*(?:\.[A-Z]\w*)+$", d)
                and "=" not in d and d.lower().replace("_", "") != own[p]] for p, ds in defs.items()}
    common = [d for d in defs[paths[0]] if all(d in defs[p] for p in paths[1:])]
    return common, {p: [d for d in ds if d not in common] for p, ds in defs.items()}


INTENT = re.compile(r"\b(?:let me|let's|i'll|i will|i need|i'm going|i am going|i should|i want|we need|we should|"
                    r"next,? i|now i|so i'm|so i am|i'm doing|before (?:i|we))\b", re.I)
STATE = re.compile(r"\b(?:is|are|was|were|has|have|had|exists?|does not|doesn't|don't|isn't|aren't|wasn't|"
                   r"no|none|not|only|already|uses?|holds?|contains?|returns?|defines?|lives?|sits?)\b", re.I)


def conclusions(span: Sequence[dict], cap: int = 4) -> list[str]:
    """What the agent itself concluded from what it read: its sentences, after its first look,
    that state a finding ("`bash` isn't available in this Windows workspace", "The app.js file is
    too large") rather than an intention; the part before a ", so I…" only. Newest last."""
    from .hygiene import is_narration
    from .shorten import unemphasize

    out: list[str] = []
    looked = False
    for r in span:
        if not isinstance(r, dict):
            continue
        if r.get("role") == "tool":
            looked = True
            continue
        if r.get("role") != "assistant" or not looked or "thinking" in (r.get("flags") or ()):
            continue
        text = r.get("content") if isinstance(r.get("content"), str) else ""
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        for para in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+[.)])\s)", text):
            for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"'(])", " ".join(para.split())):
                sent = unemphasize(re.sub(r"^\s*(?:[-*]|\d+[.)])\s+", "", sent)).strip()
                sent = re.split(r",?\s+(?:so|and so|which is why|therefore)\s+(?:I|I'm|I am|I'll|we|let)\b", sent)[0]
                sent = re.sub(r"^(?:good|great|perfect|ok|okay|now|so|alright)\b[,.!:—-]*\s*", "", sent, flags=re.I)
                if len(sent.split()) < 4 or sent.endswith(("?", ":")) or INTENT.search(sent) or \
                        is_narration(sent) or not STATE.search(sent):
                    continue
                sent = sent.rstrip(" .")
                if sent not in out:
                    out.append(sent)
    return [brief(x, 200) for x in out[-cap:]]


# --- what one look-around call showed, as a conclusion ----------------------------------------------

MISSING = re.compile(r"Cannot find path '([^']+)' because it does not exist|([^\s:'‘`]+): No such file or directory|"
                     r"cannot access '([^']+)'|File does not exist[.:]?\s*(\S*)", re.I)
NO_COMMAND = re.compile(r"The term '([\w.-]+)' is not recognized|(?:^|\s)([\w.-]+): (?:command )?not found|"
                        r"'([\w.-]+)' is not recognized as an internal or external command", re.M)
NEWEST = re.compile(r"Sort-Object\s+(?:-Property\s+)?LastWriteTime\s+-Desc|\bls\s+-\w*t\w*\b|sort\s+-\w*r", re.I)
FIRST = re.compile(r"Select-Object\s+-First\s+\d+|\|\s*head\b", re.I)
LISTS = re.compile(r"^\s*(?:ls|dir|find|tree|Get-ChildItem|gci)\b", re.I)
EFFECT = re.compile(r"^\s*(?:sudo\s+)?(?:cp|mv|rm|mkdir|ln|touch|tee|install|rsync|curl\s.*-o|Copy-Item|Move-Item|"
                    r"Remove-Item|New-Item|Set-Content|Out-File)\b", re.I)


def _listed_dir(cmd: str, text: str) -> str:
    """The folder a listing command lists: PowerShell's `Directory:` header, else its first
    argument that is not an option."""
    m = re.search(r"^\s*Directory:\s*(.+?)\s*$", text, re.M)
    if m:
        return m.group(1)
    words = cmd.split("|")[0].split()[1:]
    skip_next = False
    for w in words:
        if skip_next:
            skip_next = False
            continue
        if w.startswith("-"):
            skip_next = w.lower() in ("-filter", "-include", "-exclude", "-depth", "-name", "-maxdepth", "-type")
            continue
        return w.strip("'\"")
    return "."


def probe(name: str, args: dict, text: str, failed: bool, names_of, enquiry: str = "") -> str:
    """What one look-around call (a listing, a file read, a probe command) showed, said as a
    conclusion: "`X` does not exist", "`bash` is not available in this shell", "`dir` holds `a`,
    `b`", "the newest file under `dir`: `x`", "nothing under `dir` matches `*.jsonl`", or a file's
    length, what its opening comment says it does and the lines that bear on `enquiry`.
    `names_of(lines)` gives a listing's entries (core.focus._entries)."""
    cmd = args.get("command") or args.get("cmd") or ""
    cmd = " ".join(cmd.split()) if isinstance(cmd, str) else ""
    body = _unwrap((text or "").replace("\r", ""))
    target = str(args.get("file_path") or args.get("path") or "")
    if failed:
        m = MISSING.search(body)
        if m:
            gone = next(g for g in m.groups() if g) if any(m.groups()) else target
            return f"`{gone or target or cmd}` does not exist"
        m = NO_COMMAND.search(body)
        if m:
            return f"`{next(g for g in m.groups() if g)}` is not available in this shell"
        first = next((ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip().startswith(("At line", "+", "~"))), "")
        return f"`{brief(cmd or name, 90)}` failed" + (f": {brief(first, 140)}" if first else "")
    lines = [ln.rstrip() for ln in body.splitlines() if ln.strip() and not re.match(r"^[-\s]+$", ln)]
    if cmd and LISTS.match(cmd) or name == "LS":
        where = _listed_dir(cmd, body) if cmd else target
        flt = re.search(r"-(?:Filter|Include|name)\s+['\"]?([^\s'\"|]+)", cmd)
        entries = names_of(lines) if lines else []
        entries = [e for e in entries if e not in (".", "..")]
        if not entries:
            return f"nothing under `{where}`" + (f" matches `{flt.group(1)}`" if flt else "")
        if NEWEST.search(cmd) and FIRST.search(cmd):
            return f"the newest {'file' if len(entries) == 1 else 'files'} under `{where}`" + \
                (f" matching `{flt.group(1)}`" if flt else "") + ": " + ", ".join(f"`{e}`" for e in entries[:3])
        return f"`{where}` holds " + ", ".join(f"`{brief(e, 90)}`" for e in entries[:10]) + \
            (f" ({len(entries)} in all)" if len(entries) > 10 else "")
    m = READ_CMD.match(cmd) if cmd else None
    path = target if name in ("Read", "view", "open") else (m.group("path").strip("'\"") if m else "")
    if path:
        shown = numbered_lines(body) or {k + 1: ln for k, ln in enumerate(body.split("\n"))}
        return f"`{path}` ({len(shown)} lines)" + _about(shown, path, enquiry)
    if not lines:
        if re.match(r"^git\s+status\b", cmd):
            return "the working tree has no uncommitted changes (`git status` printed nothing)"
        return f"`{brief(cmd or name, 90)}`: no output"
    if len(lines) <= 3:
        return f"`{brief(cmd or name, 90)}` printed `{brief(' | '.join(ln.strip() for ln in lines), 160)}`"
    return f"`{brief(cmd or name, 90)}` printed {len(lines)} lines, starting `{brief(lines[0].strip(), 100)}`"


def _about(lines: dict[int, str], path: str, enquiry: str) -> str:
    """What a file read says it is (its opening comment, or a document's headings) and its lines
    that bear on the enquiry."""
    nums = sorted(lines)
    doc = bool(re.search(r"\.(?:md|markdown|txt|rst)$", path, re.I))
    opening = []
    for n in nums[:12]:
        t = lines[n].strip()
        if t.startswith("#!") or not t or doc:
            continue
        if re.match(r"^(?:#|//|--|;|\*|/\*)", t):
            said_ = re.sub(r"^(?:#+|//+|--|;+|/\*+|\*+/?)\s*", "", t)
            if said_:
                opening.append(said_)
            continue
        break
    heads = [lines[n].lstrip("# ").strip() for n in nums if re.match(r"^#{1,3}\s", lines[n])] if doc else []
    out = ""
    if heads:
        out += ", sections: " + "; ".join(brief(h, 50) for h in heads[:6]) + (" …" if len(heads) > 6 else "")
    elif opening:
        out += ": \"" + brief(" ".join(opening[:3]), 200) + "\""
    effects = [(n, lines[n].strip()) for n in nums if not doc and EFFECT.match(lines[n])]
    if effects and re.search(r"\.(?:sh|bash|zsh|ps1|bat|cmd)$|^[^.]*$", path.rsplit("/", 1)[-1]):
        out += "; what running it does: " + ", ".join(f"`{fragment(t, 80)}` (line {n})" for n, t in effects[:4])
    elif enquiry:
        hits = key_lines(enquiry, Index({path: lines}), cap=3, per_file=3)
        if hits:
            out += "; its lines on the work at hand: " + ", ".join(
                f"`{fragment(h.text, 80)}` (line {h.line})" for h in sorted(hits, key=lambda h: h.line))
    return out


# --- what a web lookup found --------------------------------------------------------------------------

WEB_NOISE = re.compile(r"^(?:Web search results for query:|Links:\s*\[|REMINDER:|Based on (?:the|my) (?:web )?search"
                       r"(?:es| results)?[^.:]*[.:]?\s*$)", re.I)
# a sentence about the lookup itself, not its subject ("The search results provided comprehensive
# information about X, but limited details on Y"; "they don't contain specific information about Z")
META = re.compile(r"^(?:the|these|my|our) (?:search )?results?\b|\b(?:they|results|pages?|sources?) (?:do not|don't|did not|"
                  r"didn't) (?:contain|include|provide|mention)\b|\bprovided? (?:comprehensive |some |limited |general )?"
                  r"(?:information|details)\b", re.I)
NEGATIVE = re.compile(r"\b(?:no|not|none|doesn't|don't|isn't|aren't|without|lacks?|never|cannot|can't)\b", re.I)


def web_found(query: str, text: str, cap: int = 2) -> list[str]:
    """What a web search or a fetched page said on its question: the sentences that share most of
    the question's words, a sentence holding a code fragment (a command, a dependency line) or a
    negative finding ("there doesn't appear to be a pre-built installer") first; at most `cap`,
    each brief. The tool's own framing (the links list, "Based on the search results", the reminder
    to cite) is left out."""
    body = "\n".join(ln for ln in (text or "").splitlines() if not WEB_NOISE.match(ln.strip()))
    body = re.sub(r"```.*?```", " ", body, flags=re.S)
    words = {_stem(w) for w in re.findall(r"[A-Za-z][a-z0-9]{3,}", query) if w.lower() not in SKIP} | \
        {w.lower() for w in re.findall(r"\b[a-z_]{3,}\b", query) if "_" in w}
    scored = []
    for k, para in enumerate(re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+[.)]|#+)\s)", body)):
        if re.match(r"^\s*#", para):
            continue  # a heading names a topic, it says nothing about it
        para = re.sub(r"^\s*(?:[-*]|\d+[.)])\s+", "", para.strip())
        for sent in re.split(r"(?<=[.!?])\s+(?=[A-Z`(])", " ".join(para.split())):
            sent = sent.replace("**", "").strip()
            sent = re.sub(r"^(?:The|These) (?:search )?results (?:show|shows|indicate|suggest) that\s+", "", sent)
            if len(sent.split()) < 5 or sent.endswith(":") or META.search(sent):
                continue
            got = {_stem(w) for w in re.findall(r"[A-Za-z][a-z0-9]{3,}", sent)} & words
            s = len(got) + 1.5 * ("`" in sent) + 1.0 * bool(NEGATIVE.search(sent)) - \
                1.5 * bool(re.search(r"\b(?:search results|this suggests|the comparison)\b", sent, re.I))
            if got:
                scored.append((-s, k, sent))
    scored.sort()
    picked = sorted(scored[:cap], key=lambda x: x[1])
    return [brief(s, 220).rstrip(".") for _, _, s in picked]



def undefined(q: str, index: Index, cwd: str | None = None) -> list[str]:
    """The names an enquiry gives (`TranscriptRenderer`, `AshComputer.LiveView`) that no file read
    defines and no file read is named after: where they are defined is not read yet."""
    from .episodes import DEFS

    terms = enquiry_terms(q)
    out = []
    for t, is_name, factor in terms:
        if not is_name or factor < 2.0 or not re.match(r"^[A-Z]", t):
            continue
        if any((t, True) in subject(p, q, terms, cwd) for p in index.files):
            continue
        last = t.rsplit(".", 1)[-1]
        if last.endswith("s") and last[:-1] in index.by_name:
            continue   # a plural ("LiveViews") names a kind of thing the files use, not one to look up
        if any(any(rx.match(index.rows[k][2]) for rx in DEFS) for k in index.hits(last, True)):
            continue
        out.append(t)
    return out
