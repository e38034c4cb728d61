"""What an edit did to the code: the definitions it added, changed or removed, found with the file's
language entry (tree-sitter when installed, the language's regex otherwise)."""
from __future__ import annotations

import re
from collections import Counter

from ..registry import code_parser, language_for
from ..model import Definition

READ_PREFIX = re.compile(r"^\s*\d+(?:→|\t|:|\|)", re.M)   # `cat -n` / Read tool line numbers
CODE_EXT = re.compile(r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|mts|cts|vue|svelte|go|rs|java|kt|kts|scala|rb|cs|ex|exs|heex|"
                      r"dart|c|h|cc|cpp|hpp|cxx|swift|php|lua|sh|bash|zsh|sql|proto|graphql|css|scss|html|erb|"
                      r"cshtml|razor|zig|nim|clj|cljs|hs|ml|elm|gleam|sol)$", re.I)
DOC_EXT = re.compile(r"\.(?:md|mdx|rst|txt|adoc)$", re.I)


def is_code(path: str) -> bool:
    return bool(CODE_EXT.search(path or ""))


def is_terse(path: str) -> bool:
    """A file whose language has many alike definitions (a style sheet's rules): a few of them name a change."""
    return bool(getattr(language_for(path), "terse", False))


def is_doc(path: str) -> bool:
    return bool(DOC_EXT.search(path or ""))


_MEMO: dict = {}


def definitions(path: str, text: str) -> list[Definition]:
    """The definitions in `text`, a file or part of one at `path` (one parse per language and text)."""
    if not text:
        return []
    lang = language_for(path)
    if lang is None:
        return []
    key = (lang.name, text)
    got = _MEMO.get(key)
    if got is None:
        if len(_MEMO) > 4096:
            _MEMO.clear()
        parser = code_parser()
        parsed = parser.definitions(lang, text) if parser is not None and len(text) < 400_000 else None
        regex = lang.definitions(text)
        if parsed is None:
            got = regex
        else:   # the parser's, and what the regex finds that the tags query does not name (type aliases…)
            by_line = {d.line: d for d in regex}
            named = []
            for d in parsed:    # the regex's fuller name where it reads the same line (`name/arity`)
                r = by_line.get(d.line)
                named.append(Definition(r.name, d.kind, d.line, d.end) if r is not None and r.name.startswith(d.name + "/") else d)
            seen = {d.line for d in named}
            got = sorted(named + [d for d in regex if d.line not in seen and all(d.name != p.name for p in named)],
                         key=lambda d: d.line)
        _MEMO[key] = got
    return got


def strip_numbers(text: str) -> str:
    """A Read result's text without its line-number prefixes."""
    return READ_PREFIX.sub("", text) if READ_PREFIX.search(text[:2000]) else text


def _names(defs) -> list[str]:
    return list(dict.fromkeys(d.name for d in defs))


BINDING = re.compile(r"^(?:export[ \t]+(?:default[ \t]+)?)?(?:const|let|var|val|static|final|pub[ \t]+(?:const|static))[ \t]+"
                     r"([A-Za-z_$][\w$]*)|^([A-Z_][A-Z0-9_]{2,})[ \t]*(?::[^=\n]*)?=|"
                     r"^[ \t]*@(?!(?:doc|moduledoc|spec|impl|type|typep|typedoc|callback|behaviour|derive|opaque)\b)([a-z_]\w*)[ \t]",
                     re.M)


def anchors(path: str, text: str) -> list[tuple[int, str, int]]:
    """(line, name, last line or 0) of every definition and top-level binding (a constant, a module attribute)."""
    out = [(d.line, d.name, d.end) for d in definitions(path, text)]
    if language_for(path) is not None:      # a binding ends at the first blank line after it (-1: not known yet)
        out += [(text.count("\n", 0, m.start()) + 1, next(g for g in m.groups() if g), -1) for m in BINDING.finditer(text)]
    return sorted(set(out))


def enclosing(path: str, text: str, snippet: str) -> str | None:
    """The definition or top-level binding (a constant, a module attribute) in `text`, a file as it was read,
    that holds the first line of `snippet`."""
    first = next((ln.strip() for ln in snippet.splitlines() if len(ln.strip()) >= 6), "")
    if not first or not text:
        return None
    clean = strip_numbers(text)
    pos = clean.find(first)
    if pos < 0:
        return None
    line = clean.count("\n", 0, pos) + 1
    best = None
    for at, name, end in anchors(path, clean):
        if at <= line and (end <= 0 or end >= line):
            best = name
        elif at > line:
            break
    return best


_BODIES: dict = {}


def bodies(path: str, text: str) -> dict[str, tuple[int, int, str]]:
    """Each definition's (first line, last line, text) in `text`: from its line to the line before the next
    definition (1-based, inclusive). One reading per language and text."""
    lang = language_for(path)
    key = (lang.name if lang else "", text)
    got = _BODIES.get(key)
    if got is None:
        if len(_BODIES) > 2048:
            _BODIES.clear()
        got = _BODIES[key] = _bodies(path, text)
    return got


def _bodies(path: str, text: str) -> dict[str, tuple[int, int, str]]:
    marks = anchors(path, text)
    lines = text.split("\n")
    out: dict[str, tuple[int, int, str]] = {}
    for k, (line, name, last) in enumerate(marks):
        nxt = next((m[0] for m in marks[k + 1:] if m[0] > line), len(lines) + 1)
        end = last if last > 0 else max(line, nxt - 1)
        if last < 0:        # a binding: to its first blank line (what follows it is not its text)
            end = next((j for j in range(line, end) if not lines[j].strip()), end)
        if name not in out:
            out[name] = (line, end, "\n".join(lines[line - 1:end]).strip())
    return out


def _touching(spans: dict, first: int, last: int) -> list[str]:
    """The definitions whose lines meet first..last, the innermost ones (a class or module holding another
    touched definition is left out)."""
    hit = [n for n, (a, b, _) in spans.items() if a <= last and b >= first]
    return [n for n in hit if not any(m != n and spans[n][0] <= spans[m][0] and spans[m][1] <= spans[n][1] and
                                      (spans[n][0], spans[n][1]) != (spans[m][0], spans[m][1]) for m in hit)]


def edit_facts(path: str, old: str, new: str, before: str = "") -> tuple[list[str], list[str], list[str], str | None]:
    """(added, changed, removed) definitions of one edit, and the file's text after it when known.

    With the file's text before the edit (`before`, as last read or written, edits applied) and the replaced
    text found in it, the edit is located in the file: a definition is added or removed when the file gains or
    loses it, changed when its own text differs (not when it only frames the edit). Otherwise the two snippets
    are compared the same way."""
    clean = strip_numbers(before) if before else ""
    if clean and old and old in clean:
        pos = clean.index(old)
        after = clean[:pos] + new + clean[pos + len(old):]
        b_sp, a_sp = bodies(path, clean), bodies(path, after)
        o_first = clean.count("\n", 0, pos) + 1
        o_last = o_first + old.count("\n")
        n_last = o_first + new.count("\n")
        touched_after = _touching(a_sp, o_first, n_last)
        touched_before = _touching(b_sp, o_first, o_last)
        added = [n for n in touched_after if n not in b_sp]
        removed = [n for n in touched_before if n not in a_sp]
        changed = [n for n in touched_after if n in b_sp and b_sp[n][2] != a_sp[n][2]]
        return added, changed, removed, after
    o_sp, n_sp = bodies(path, old), bodies(path, new)
    known = bodies(path, clean) if clean else {}
    added = [n for n in n_sp if n not in o_sp and n not in known]
    removed = [n for n in o_sp if n not in n_sp]
    changed = [n for n in n_sp if n in o_sp and o_sp[n][2] != n_sp[n][2]] + \
        [n for n in n_sp if n not in o_sp and n in known and known[n][2] != n_sp[n][2]]
    if not (added or changed or removed) and clean:
        name = enclosing(path, clean, old or new)
        if name:
            changed.append(name)
    return added, changed, removed, None


IDENT = re.compile(r"\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+)\b")


def new_names(old: str, new: str) -> list[str]:
    """Identifiers (snake_case, CamelCase, camelCase) the new text has and the old one had not."""
    before = set(IDENT.findall(old or ""))
    out = []
    for n in IDENT.findall(new or ""):
        if n not in before and n not in out:
            out.append(n)
    return out[:12]


CALLED = re.compile(r"(?<![.\w$])([A-Za-z_$][\w$]{3,})\s*\(")
LISTED = re.compile(r"^[ \t]*(?:type[ \t]+)?([A-Za-z_$][\w$]{3,}),?[ \t]*$", re.M)     # a line of a multi-line import


def gone_names(old: str, new: str, after: str) -> list[str]:
    """The functions an edit stopped calling or importing (`old` -> `new`) that the file, `after` it, no
    longer names anywhere: what the change took out of use."""
    if not old:
        return []
    called = [n for n in CALLED.findall(old) if n not in (new or "")]
    listed = [n for n in LISTED.findall(old) if n not in (new or "")]
    if listed:      # a name on a line of its own counts only inside an import list
        k = (after or "").find(new) if new else -1
        lead = (after[max(0, k - 300):k] if k >= 0 else "") + old
        listed = listed if re.search(r"\bimport\s*\{(?![^}]*\bfrom\b)[^}]*$", lead) else []
    out = []
    for n in called + listed:
        if n not in out and IDENT.fullmatch(n) and not re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", after or ""):
            out.append(n)
    return out[:6]


def line_diff(old: str, new: str, n: int = 2, width: int = 100) -> tuple[list[str], list[str]]:
    """Up to `n` short lines only the old text has, and up to `n` only the new one has."""
    a = [ln.strip() for ln in (old or "").splitlines() if ln.strip()]
    b = [ln.strip() for ln in (new or "").splitlines() if ln.strip()]
    sa, sb = set(a), set(b)
    gone = [ln for ln in a if ln not in sb and 3 <= len(ln) <= width and _says(ln)][:n]
    came = [ln for ln in b if ln not in sa and 3 <= len(ln) <= width and _says(ln)][:n]
    return gone, came


def _says(line: str) -> bool:
    """A line that says something alone: not a bare key that opens a block (`"Stop": [`) or holds an empty
    value (`"matcher": "",`); a selector or a signature that opens one (`.row pre {`) says what follows."""
    return not re.fullmatch(r"""["']?[\w.-]+["']?\s*[:=]\s*(?:""|''|\[\]|\{\}|null|nil|None|[\[{(])?[,;]?|"""
                            r"""[\w$.]+,?|"[\w-]+":\s*"[\w-]{0,12}",?""", line)   # nor a name in an import list
                                                                              # (`buildPrompt,`), nor `"type": "command",`


SHAPES = {"type", "interface", "struct", "enum", "class", "record", "union", "trait", "object"}   # what has members
MEMBER = re.compile(r"""^(?:\|\s*)?(?:"([^"\s]{1,60})"|'([^'\s]{1,60})'|([A-Za-z_]\w*)\??\s*(?::(?!:)|=(?!=)|,$|\(|$|"""
                    r"""\s+[\[\]*\w.<>]+\s*(?:`[^`]*`)?\s*,?$))""")
NOT_MEMBER = frozenset("return if else for while case let const var def func fn pub import export from switch break "
                       "continue yield await async end do".split())


def members(old: str, new: str) -> tuple[list[str], list[str]]:
    """The members a type's edit gave it and took from it (fields, union and enum members, variants): the
    names that lines only the new text has, and only the old one has, begin with."""
    def of(text: str) -> list[str]:
        out = []
        for ln in (text or "").splitlines():
            m = MEMBER.match(ln.strip())
            if m and ln.strip():
                name = next(g for g in m.groups() if g is not None)
                if name not in NOT_MEMBER and name not in out:
                    out.append(name)
        return out
    a, b = of(old), of(new)
    return [x for x in b if x not in a], [x for x in a if x not in b]


_TESTS: dict = {}


def test_cases(path: str, text: str) -> list[str] | None:
    """The test cases `text` defines by its language's entry (None: the language names none); one reading
    per language and text (the same text is asked about by several analyses)."""
    fn = getattr(language_for(path), "tests", None)
    if fn is None:
        return None
    key = (path.rsplit(".", 1)[-1], text)
    got = _TESTS.get(key)
    if got is None:
        if len(_TESTS) > 4096:
            _TESTS.clear()
        got = _TESTS[key] = fn(text or "")
    return got


def tests_added(path: str, old: str, new: str) -> list[str]:
    """Test cases the new text defines and the old one did not."""
    if test_cases(path, "") is None:
        return []
    left = Counter(test_cases(path, old or ""))      # the same name twice is two tests (in two describe blocks)
    out = []
    for t in test_cases(path, new or ""):
        if left[t]:
            left[t] -= 1
        else:
            out.append(t)
    return out


COMMENT = re.compile(r"^[ \t]*(?://+|#+|--|\*+|/\*+|;+)[ \t]?(.*?)(?:\*/)?[ \t]*$")
DECOR = re.compile(r"^[ \t]*(?:@\w|#\[|\[\w)")
DOCSTRING = re.compile(r'^[ \t]*(?:@(?:doc|moduledoc)[ \t]+)?(?:"""|\'\'\'|~[sS]""")[ \t]*(.*)$')


def doc_of(text: str, line: int) -> str:
    """The first sentence of the comment block just above the definition at `line` (1-based), or of the
    docstring just below it (Python) / `@doc` just above it (Elixir)."""
    lines = text.split("\n")
    k = line - 2
    while k >= 0 and DECOR.match(lines[k]) and not COMMENT.match(lines[k]):
        k -= 1
    block: list[str] = []
    while k >= 0:
        m = COMMENT.match(lines[k])
        if not m or lines[k].strip().startswith("#!"):
            break
        block.insert(0, m.group(1))
        k -= 1
    text_doc = " ".join(x.strip() for x in block if x.strip() and not x.strip().startswith("@"))
    if not text_doc and line >= 2 and lines[line - 2].strip() in ('"""', "'''", '~S"""', '"""\n'):
        for j in range(line - 3, max(-1, line - 40), -1):    # a heredoc `@doc """ … """` ending just above
            m = DOCSTRING.match(lines[j])
            if m:
                text_doc = " ".join(x.strip() for x in [m.group(1)] + lines[j + 1:line - 2] if x.strip())
                break
    if not text_doc:
        for j in (line - 2, line):   # @doc above (Elixir), a docstring below (Python)
            if 0 <= j < len(lines):
                m = DOCSTRING.match(lines[j])
                if m:
                    got = [m.group(1)]
                    for ln in lines[j + 1:j + 8]:
                        if '"""' in ln or "\'\'\'" in ln or re.match(r"^\s*(?:def|defp|class|func|fn)\b", ln):
                            got.append(re.split(r'"""|\'\'\'', ln)[0])
                            break
                        got.append(ln.strip())
                    text_doc = " ".join(x for x in got if x).split('"""')[0].split("\'\'\'")[0]
                    break
        one = re.match(r'^[ \t]*@doc[ \t]+"([^"]+)"', lines[line - 2]) if line >= 2 else None
        if one and not text_doc:
            text_doc = one.group(1)
    first = re.split(r"(?<=[.!?])\s", text_doc.strip(), maxsplit=1)[0] if text_doc else ""
    return first[:200]


CONSTANT = re.compile(r"^(?:export[ \t]+)?(?:const|let|var|static|final|pub[ \t]+const)[ \t]+([A-Za-z_$][\w$]*)[ \t]*(?::[^=\n]+)?=[ \t]*"
                      r"([^;\n]{1,48}?)[ \t]*;?[ \t]*$|^[ \t]*@([a-z_]\w*)[ \t]+([^\n#]{1,48}?)[ \t]*$|"
                      r"^([A-Z_][A-Z0-9_]{2,})[ \t]*(?::[^=\n]+)?=[ \t]*([^\n]{1,48}?)[ \t]*$", re.M)
SHELL_VAR = re.compile(r"\$[\w({]")     # `"${DIR}/lib"`, `"$(cat)"`: an expansion, not a literal
LITERAL = re.compile(r"^(?:-?[\d_.]+(?:\s*\*\s*[\d_.]+)*|\"[^\"]*\"|'[^']*'|`[^`]*`|true|false|nil|null|None|True|False|"
                     r":\w+|~[a-z]\[[^\]]*\]|\d+\s*\*\s*\w+|\[[^\]]{0,40}\])$")


def imports(path: str, text: str) -> list[str]:
    """The modules or packages `text` brings in, by its language's import statements, in order."""
    pat = getattr(language_for(path), "imports", None)
    if pat is None or not text:
        return []
    return list(dict.fromkeys(next(g for g in m.groups() if g) for m in pat.finditer(text) if any(m.groups())))


def messages(path: str, text: str) -> list[str]:
    """What the code sends and takes, by its language's message patterns: "broadcasts `{:done, id}` on
    `"jobs"`", "handles `{:done, id}`", "listens for `"scroll"`"; once each, in order."""
    pats = getattr(language_for(path), "messages", None)
    if not pats or not text:
        return []
    found = []
    for verb, pat in pats:
        for m in pat.finditer(text):
            parts = [" ".join(g.split()).replace('\\"', '"') for g in m.groups() if g]
            said = f"{verb} `{parts[-1]}`" + (f" on `{parts[0]}`" if len(parts) > 1 else "")
            found.append((m.start(), said))
    return list(dict.fromkeys(x for _, x in sorted(found)))


def constants(text: str) -> list[tuple[str, str]]:
    """(name, value) of the constants `text` sets to a literal (`const X = 90`, `@ttl_seconds 90`, `MAX = 5`)."""
    out = []
    for m in CONSTANT.finditer(text or ""):
        name, value = next(((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i)), (None, None))
        if name and value and LITERAL.match(value.strip()) and not SHELL_VAR.search(value) and \
                name not in ("doc", "moduledoc", "spec", "impl") and \
                all(n != name for n, _ in out):
            out.append((name, value.strip()))
    return out[:12]


TABLE_HEAD = re.compile(r"^[ \t]*(?:@(\w+)[ \t]+%?|(?:(?:export[ \t]+)?(?:const|let|var|final|static)[ \t]+)?"
                        r"([A-Za-z_$][\w$.]*)[ \t]*(?::[^=\n{]+)?=[ \t]*(?:map\[[^\]\n]+\][\w.]+[ \t]*|%)?)\{[ \t]*$", re.M)
TABLE_ROW = re.compile(r"""^[ \t]*(?:(["'])(.{1,60}?)\1|([A-Za-z_]\w*))[ \t]*(?::|=>)[ \t]*(["'])(.{1,80}?)\4[ \t]*,?[ \t]*$""")


def _tables(text: str, least: int = 3) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for m in TABLE_HEAD.finditer(text or ""):
        rows = []
        for ln in text[m.end():].split("\n")[1:]:
            r = TABLE_ROW.match(ln)
            if not r:
                break
            rows.append((r.group(2) or r.group(3), r.group(5)))
        if len(rows) >= least:
            out.setdefault(m.group(1) or m.group(2), rows)
    return out


def tables(text: str, before: str = "") -> list[str]:
    """The lookup tables `text` sets: a name bound to three or more string keys each mapped to a string
    ("`hookMap` maps `agent:bootstrap` → `bootstrap`, …"), in order; with `before` (the text an edit
    replaced), only the entries it did not have ("`LABELS` now also maps …")."""
    had = _tables(before, 1)
    out = []
    for name, rows in _tables(text).items():
        old = set(had.get(name, ()))
        new = [r for r in rows if r not in old]
        if not new:
            continue
        shown = ", ".join(f"`{k}` → `{v}`" for k, v in new[:6]) + (f" and {len(new) - 6} more" if len(new) > 6 else "")
        out.append(f"`{name}` {'now also maps' if name in had else 'maps'} {shown}")
    return out[:3]


COMMENT_LINE = re.compile(r"^\s*(?://|#(?![{\[])|--|/\*|\*(?!\*)\s)")


def one_line(body: str, limit: int = 260) -> str:
    """A short definition's text on one line (comments and blank lines out), or "" when it is too long to
    quote or would not read as code on a line (a backtick, a multi-line string)."""
    lines = [ln.strip() for ln in body.split("\n") if ln.strip() and not COMMENT_LINE.match(ln)]
    if not 2 <= len(lines) <= 14 or "`" in body or "\\" in body or '"""' in body or "\'\'\'" in body:
        return ""
    text = re.sub(r"\s+", " ", " ".join(lines))
    if len(text) > limit or not _balanced(text):
        return ""       # an edit's snippet may hold a definition's beginning only
    return text


def _balanced(text: str) -> bool:
    for o, c in ("()", "[]", "{}"):
        if text.count(o) != text.count(c):
            return False
    return len(re.findall(r"\bdo\b", text)) == len(re.findall(r"\bend\b", text)) or " do " not in text


def _calls(body: str) -> bool:
    """The body, past its first line (the signature), calls something: a definition that only builds a
    literal (a map of defaults, an empty struct) says no more than its name."""
    rest = "\n".join(body.split("\n")[1:])
    return bool(re.search(r"[\w)\]]\s*\(", rest))


def short_bodies(path: str, text: str, names) -> list[tuple[str, str]]:
    """(name, one-line text) of the named definitions of `text` short enough to quote."""
    if not text or getattr(language_for(path), "indent_blocks", False) or test_cases(path, text) or is_terse(path):
        return []       # a test file's cases are told as tests added; a style rule's text is not its behaviour
    got = bodies(path, text)
    seen = Counter(name for _, name, _ in anchors(path, text)) if got else Counter()
    out = []
    for n in names:
        if n in got and seen[n] == 1:   # one clause of several (Elixir, Erlang) is not the definition
            line = one_line(got[n][2])
            if line and _calls(got[n][2]):
                out.append((n, line))
    return out
