"""A shell command line split into simple commands (pure, best effort, never raises).

`a && b | tail -5; c > out.txt` gives three segments: `a`, `b` (piped to tail), `c` (redirected to
out.txt). Here-documents are lifted out first (their body is the segment's `heredoc`), `$(…)` and
quotes are kept whole, and leading `VAR=x`, `sudo`, `time`, `timeout N`, `env`, `nice`, `command`
are dropped from a segment's argv. A `cd DIR` segment sets the directory of the ones after it.
"""
from __future__ import annotations

import re
import shlex

from ..model import Segment

HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w-]*)\1")
OPS = ("&&", "||", ";", "|", "\n", "&")
FILTERS = {"tail", "head", "grep", "egrep", "rg", "tee", "less", "more", "sort", "uniq", "wc", "cut", "awk", "sed",
           "cat", "jq", "column", "tr", "xargs", "fold", "nl"}
PREFIXES = {"sudo", "time", "command", "builtin", "exec", "nice", "nohup", "stdbuf", "unbuffer", "caffeinate"}
# launchers that run the program named after them: dropped, so `uv run pytest` reads as `pytest`
LAUNCHERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("rye", "run"), ("hatch", "run"),
             ("npx",), ("bunx",), ("pnpx",), ("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "dlx"), ("bundle", "exec"),
             ("python", "-m"), ("python3", "-m"), ("py", "-m"), ("uvx",), ("pipx", "run")}
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX = 20000


def _lift_heredocs(text: str) -> tuple[str, list[str]]:
    """The line with each here-document's body removed, and the bodies in order."""
    bodies: list[str] = []
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        for m in HEREDOC.finditer(line):
            end = m.group(2)
            body = []
            while i < len(lines) and lines[i].strip() != end:
                body.append(lines[i])
                i += 1
            i += 1  # the delimiter line
            bodies.append("\n".join(body))
    return "\n".join(out), bodies


def _split(text: str) -> list[tuple[str, str]]:
    """(segment text, the operator after it), quotes, `$(…)`, backticks and braces kept whole."""
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    depth = 0
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                buf.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"`":
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            buf.append(text[i:i + 2])
            i += 2
            continue
        if c == "$" and i + 1 < n and text[i + 1] == "(" or c == "(" and depth:
            depth += 1
            buf.append(c)
            i += 1
            continue
        if c == ")" and depth:
            depth -= 1
            buf.append(c)
            i += 1
            continue
        if depth == 0:
            two = text[i:i + 2]
            if two in ("&&", "||"):
                out.append(("".join(buf), two))
                buf = []
                i += 2
                continue
            if c == "|" and two != "|&":
                out.append(("".join(buf), "|"))
                buf = []
                i += 1
                continue
            if two == "|&":
                out.append(("".join(buf), "|"))
                buf = []
                i += 2
                continue
            if c in ";\n":
                out.append(("".join(buf), ";"))
                buf = []
                i += 1
                continue
            if c == "&" and (i + 1 >= n or text[i + 1] not in ">") and (not buf or buf[-1] not in "<>"):
                out.append(("".join(buf), "&"))
                buf = []
                i += 1
                continue
        buf.append(c)
        i += 1
    out.append(("".join(buf), ""))
    return [(s.strip(), op) for s, op in out if s.strip() or op in ("&&", "||")]


WINDOWS = re.compile(r"(?:^|[\s'\"])[A-Za-z]:\\|\.\\\w")


def _words(text: str) -> list[str]:
    if WINDOWS.search(text):    # PowerShell / cmd: backslashes are path separators, not escapes
        return [w.strip("'\"") for w in re.findall(r"\"[^\"]*\"|'[^']*'|\S+", text)]
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=False)
        lex.whitespace_split = True
        lex.commenters = "#"
        return list(lex)
    except ValueError:
        return text.split()


REDIRECT = re.compile(r"(?<![0-9&<])(>>?)\s*(\"[^\"]*\"|'[^']*'|[^\s;&|<>]+)")


def _quoted(text: str) -> list[tuple[int, int]]:
    """The spans of `text` inside quotes (a `>` there is a character, not a redirection)."""
    spans, quote, start, i = [], "", 0, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                spans.append((start, i))
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote, start = c, i
        i += 1
    if quote:
        spans.append((start, len(text)))
    return spans


def _redirects(text: str) -> list[re.Match]:
    spans = _quoted(text)
    return [m for m in REDIRECT.finditer(text) if not any(a < m.start() < b for a, b in spans)]


def segments(command: str) -> list[Segment]:
    """The simple commands of `command`, in order."""
    if not command or len(command) > MAX:
        command = (command or "")[:MAX]
    text, bodies = _lift_heredocs(command)
    parts = _split(text)
    raw: list[tuple[str, str, str, str]] = []   # (text, op_before, op_after, heredoc)
    before = ""
    for seg, op in parts:
        body = bodies.pop(0) if HEREDOC.search(seg) and bodies else ""
        raw.append((seg, before, op, body))
        before = op
    out: list[Segment] = []
    cwd = ""
    for k, (seg, before, after, body) in enumerate(raw):
        if not seg:
            continue
        redirect, append = "", False
        found = _redirects(seg)
        for m in found:
            target = m.group(2)
            if not target.startswith(("/dev/", "&")):
                redirect, append = target.strip("'\""), m.group(1) == ">>"
        bare = seg
        for m in reversed(found):
            bare = bare[:m.start()] + " " + bare[m.end():]
        words = [w for w in _words(HEREDOC.sub(" ", bare)) if not re.fullmatch(r"\d?>&\d|&>\S*|\d>\S*|<", w)]
        words = _strip_prefixes(words)
        piped: list[str] = []
        j = k
        while j < len(raw) and raw[j][2] == "|" and j + 1 < len(raw):
            nxt = _strip_prefixes(_words(raw[j + 1][0]))
            if nxt:
                piped.append(nxt[0].rsplit("/", 1)[-1])
            j += 1
        if words[:1] == ["cd"] and len(words) >= 2:
            cwd = words[1]
        out.append(Segment(argv=tuple(words), text=seg, index=len(out), count=0, op_before=before, op_after=after,
                           piped_to=tuple(piped), heredoc=body, redirect=redirect, append=append, cwd=cwd))
    return [Segment(**{**s.__dict__, "count": len(out)}) for s in out]


def _strip_prefixes(words: list[str]) -> list[str]:
    w = list(words)
    while w:
        if ASSIGN.match(w[0]):
            w.pop(0)
        elif w[0] in PREFIXES:
            w.pop(0)
        elif w[0] == "env":
            w.pop(0)
            while w and (ASSIGN.match(w[0]) or w[0].startswith("-")):
                w.pop(0)
        elif w[0] in ("timeout", "gtimeout") and len(w) > 1:
            w.pop(0)
            while w and (w[0].startswith("-") or re.fullmatch(r"\d+[smhd]?", w[0])):
                w.pop(0)
        elif tuple(w[:2]) in LAUNCHERS and len(w) > 2 or tuple(w[:1]) in LAUNCHERS and len(w) > 1:
            n = 2 if tuple(w[:2]) in LAUNCHERS else 1
            w = w[n:]
            while w and w[0].startswith("-") and w[0] not in ("-m",):   # launcher flags (`uv run --frozen`)
                w.pop(0)
        else:
            break
    if w:
        w[0] = w[0].rsplit("/", 1)[-1] if not w[0].startswith("./") else w[0]
    return w


def is_filtered(seg: Segment) -> bool:
    """The segment's output went through a filter (tail, grep…): its exit status is the filter's
    and part of its output may be missing."""
    return any(p in FILTERS for p in seg.piped_to)
