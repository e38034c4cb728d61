"""What a new or changed function does, in its author's words: the comments inside its body (numbered or framed
steps first) and the string values it works with (a command it fills in, a placeholder, a marker)."""
from __future__ import annotations

import re

from ..registry import language_for
from .code import definitions, test_cases


INNER_COMMENT: dict[str, re.Pattern] = {}      # a line-comment mark -> the pattern of a comment line
DIRECTIVE = re.compile(r"^(?:@?[a-z][\w-]*:\s?[\w-]+\b(?!\s+\w+\s+\w+\s+\w+)|[a-z]+-(?:disable|ignore|enable)\b|@ts-|"
                       r"(?:region|endregion|pragma|noqa|nolint)\b)")   # a tool's directive by its shape: `go:embed`,
                                                                        # `nolint:unparam`, `eslint-disable-next-line`
LOOKS_CODE = re.compile(r"[;{}]\s*$|^[\w.]+\(.*\)$|^(?:return|const|let|var|import|from|def|func|fn|if|for|await)\b.*[=(]|"
                        r"^[\w.,\s]+(?::=|\s=|\s<-)\s*\S")     # commented-out code: a call, a statement, `x := f()`
STEP_MARK = re.compile(r"^(?:(?:step|phase|stage|part)\s+\d+(?:\.\d+)*[.:)]?|\d+(?:\.\d+)*[.:)])\s+\S", re.I)
LOUD = re.compile(r"\b(?:NOT|NO|NEVER|MUST|ALWAYS|BEFORE|AFTER|ONLY|DO NOT|IMPORTANT)\b")


def outline(path: str, text: str, names, before: str = "") -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """What each named definition does, in its own comments: the comment lines inside its body, in order (a
    run of lines is one), without lint directives, commented-out code or the comments that end the body (the
    next definition's doc). Where three or more mark numbered or framed steps ("--- Phase 2: … ---", "3. …"),
    those and the emphatic ones ("Do NOT reset …") alone. Comments `before` (the file as it was) already had
    are left out: a changed definition's outline is what its change wrote. Only outlines of two or more, each
    with the string values the definition works with."""
    lang = language_for(path)
    mark = getattr(lang, "comment", "")
    if not text or not mark or test_cases(path, text):
        return []       # a test file's cases are told as tests added
    pat = INNER_COMMENT.get(mark)
    if pat is None:     # `# …` is a comment in Python, a heading inside a string in TypeScript
        pat = INNER_COMMENT[mark] = re.compile(r"^[ \t]*(?:" + re.escape(mark) + r"+(?![\[!{])" +
                                               (r"|/\*+" if mark == "//" else "") + r")[ \t]*(.*?)[ \t]*(?:\*/)?[ \t]*$")
    defs = definitions(path, text)      # read once per text already: no body strings built here
    wanted = set(names)
    if not defs or not any(d.name in wanted for d in defs) or mark not in text:
        return []
    lines = text.split("\n")
    starts = sorted({d.line for d in defs})
    span: dict[str, tuple[int, int]] = {}
    for d in defs:
        if d.name in wanted and d.name not in span:
            nxt = next((x for x in starts if x > d.line), len(lines) + 1)
            span[d.name] = (d.line, d.end if d.end > 0 else nxt - 1)
    silences = getattr(lang, "suppress", None)
    flat = _flat(before) if before else ""
    out = []
    for n in names:
        if n not in span:
            continue
        first, last = span[n]
        runs: list[tuple[list[str], list[bool]]] = []
        code: list[list[str]] = []      # the code under each run of comments
        open_run = code_after = False
        for ln in lines[first:last]:
            m = pat.match(ln)
            if not m:
                if ln.strip():
                    open_run, code_after = False, True
                    if code:
                        code[-1].append(ln)
                continue
            said = m.group(1).strip()
            bare = said.strip("-=#*~ ").strip()
            if not bare or DIRECTIVE.match(bare) or LOOKS_CODE.search(bare) or silences and silences.search(ln):
                continue
            if not open_run:
                runs.append(([], []))
                code.append([])
                open_run, code_after = True, False
            runs[-1][0].append(bare)
            runs[-1][1].append(len(said) - len(bare) >= 4)     # "--- Phase 1 ---", "=== Setup ==="
        if runs and not code_after:
            runs.pop()      # comments after the last line of code: the next definition's
        groups = [(" ".join(r), any(f)) for r, f in runs]
        if flat:
            groups = [(g, f) for g, f in groups if " ".join(g.split()[:6]) not in flat]
        if sum(1 for g, f in groups if f or STEP_MARK.match(g)) >= 3:
            below = {g: "\n".join(c) for (g, _), c in zip([(" ".join(r), 0) for r, _ in runs], code)}
            kept, under = [], {}
            for g, f in groups:     # a step's code runs to the next step: what its unmarked comments head too
                if f or STEP_MARK.match(g) or LOUD.search(g):
                    kept.append((g, f))
                    under[g] = below.get(g, "")
                elif kept:
                    under[kept[-1][0]] += "\n" + below.get(g, "")
            groups = [(g + _modes(under.get(g, "")), f) for g, f in kept]
        said_all = tuple(dict.fromkeys(g for g, _ in groups))
        if len(said_all) >= 2:
            out.append((n, said_all, values("\n".join(lines[first:last]), pat)))
    return out


MODE = re.compile(r"\b([A-Za-z_]\w*)\s*[:=]\s*(true|false|True|False)\b")


def _modes(code: str) -> str:
    """The on/off options a step's code passes (`writeMode: false`), as ` (writeMode: false)`: how the step
    differs from its neighbours."""
    got = list(dict.fromkeys(f"{k}: {v.lower()}" for k, v in MODE.findall(code)))
    return f" ({', '.join(got[:3])})" if got else ""


_FLAT: dict = {}


def _flat(text: str) -> str:
    """`text` with its whitespace runs as one space (once per text: a file's edits all compare against it)."""
    got = _FLAT.get(text)
    if got is None:
        if len(_FLAT) > 256:
            _FLAT.clear()
        got = _FLAT[text] = " ".join(text.split())
    return got


STRING = re.compile(r""""([^"\\\n]{3,90})"|'([^'\\\n]{3,90})'""")
MESSAGE = re.compile(r"(?<!%)%(?!%)[-+#0-9.]*[a-zA-Z]|\{\}|\b(?:failed|error|warning|unable|cannot|could not)\b|[.!?]$",
                     re.I)
SHAPED = re.compile(r"[\s/%$.:{]")     # a command, a path, a placeholder, a template: not a bare key or a log field


SAID_BY = re.compile(r"(?:\b(?:new|errorf?|info|warn(?:ing)?|debug|fatal\w*|log\w*|print\w*|panic|\w*exception|\w*error)"
                     r"|raise \w+|throw new \w+)\s*\(\s*$", re.I)      # a message handed to a logger or an error


def values(body: str, comment: re.Pattern | None = None, n: int = 5) -> tuple[str, ...]:
    """The string values a definition works with (a command it fills in, a placeholder, a path, a marker), not
    its messages (a format with `%w`, "failed to …", a sentence, what it logs or raises) nor what its comments
    quote: what its comments leave unsaid."""
    out: list[str] = []
    for ln in body.split("\n"):
        if comment is not None and comment.match(ln):
            continue
        for m in STRING.finditer(ln):
            v = (m.group(1) or m.group(2)).strip()
            inside = m.group(2) is not None and ln[:m.start()].count('"') % 2     # 'quoted' within a "message"
            if SHAPED.search(v) and not MESSAGE.search(v) and len(v.split()) <= 6 and not v.startswith("[") \
                    and not inside and not SAID_BY.search(ln[:m.start()]) and v not in out:
                out.append(v)
    return tuple(out[:n])
