"""What an edit did to the code: the definitions it added, changed or removed, found with the file's
language entry (tree-sitter when installed, the language's regex otherwise)."""
from __future__ import annotations

import re

from .. import registry
from ..model import Definition

READ_PREFIX = re.compile(r"^\s*\d+(?:→|\t|:|\|)", re.M)   # `cat -n` / Read tool line numbers
CODE_EXT = re.compile(r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|mts|cts|vue|svelte|go|rs|java|kt|kts|scala|rb|cs|ex|exs|heex|"
                      r"dart|c|h|cc|cpp|hpp|cxx|swift|php|lua|sh|bash|zsh|sql|proto|graphql|css|scss|html|erb|"
                      r"cshtml|razor|zig|nim|clj|cljs|hs|ml|elm|gleam|sol)$", re.I)
DOC_EXT = re.compile(r"\.(?:md|mdx|rst|txt|adoc)$", re.I)


def is_code(path: str) -> bool:
    return bool(CODE_EXT.search(path or ""))


def is_doc(path: str) -> bool:
    return bool(DOC_EXT.search(path or ""))


_MEMO: dict = {}


def definitions(path: str, text: str) -> list[Definition]:
    """The definitions in `text`, a file or part of one at `path` (one parse per language and text)."""
    if not text:
        return []
    lang = registry.language_for(path)
    if lang is None:
        return []
    key = (lang.name, text)
    got = _MEMO.get(key)
    if got is None:
        if len(_MEMO) > 4096:
            _MEMO.clear()
        parser = registry.code_parser()
        got = parser.definitions(lang, text) if parser is not None and len(text) < 400_000 else None
        if got is None:
            got = lang.definitions(text)
        _MEMO[key] = got
    return got


def strip_numbers(text: str) -> str:
    """A Read result's text without its line-number prefixes."""
    return READ_PREFIX.sub("", text) if READ_PREFIX.search(text[:2000]) else text


def _names(defs) -> list[str]:
    return list(dict.fromkeys(d.name for d in defs))


BINDING = re.compile(r"^(?:export[ \t]+(?:default[ \t]+)?)?(?:const|let|var|val|static|final|pub[ \t]+(?:const|static))[ \t]+"
                     r"([A-Za-z_$][\w$]*)|^([A-Z_][A-Z0-9_]{2,})[ \t]*(?::[^=\n]*)?=|^[ \t]*@([a-z_]\w*)[ \t]", re.M)


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
    anchors = [(d.line, d.name) for d in definitions(path, clean)]
    anchors += [(clean.count("\n", 0, m.start()) + 1, next(g for g in m.groups() if g)) for m in BINDING.finditer(clean)]
    best = None
    for at, name in sorted(anchors):
        if at <= line:
            best = name
        else:
            break
    return best


def edit_facts(path: str, old: str, new: str, before: str = "") -> tuple[list[str], list[str], list[str]]:
    """(added, changed, removed) definitions of one edit. `before` is the file as last read, when known,
    to name the definition an edit inside a body falls in."""
    old_defs, new_defs = _names(definitions(path, old)), _names(definitions(path, new))
    added = [n for n in new_defs if n not in old_defs]
    removed = [n for n in old_defs if n not in new_defs]
    changed = [n for n in new_defs if n in old_defs]
    if not (added or removed or changed) and before:
        name = enclosing(path, before, old or new)
        if name:
            changed.append(name)
    return added, changed, removed


IDENT = re.compile(r"\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+)\b")


def new_names(old: str, new: str) -> list[str]:
    """Identifiers (snake_case, CamelCase, camelCase) the new text has and the old one had not."""
    before = set(IDENT.findall(old or ""))
    out = []
    for n in IDENT.findall(new or ""):
        if n not in before and n not in out:
            out.append(n)
    return out[:12]


def line_diff(old: str, new: str, n: int = 2, width: int = 100) -> tuple[list[str], list[str]]:
    """Up to `n` short lines only the old text has, and up to `n` only the new one has."""
    a = [ln.strip() for ln in (old or "").splitlines() if ln.strip()]
    b = [ln.strip() for ln in (new or "").splitlines() if ln.strip()]
    sa, sb = set(a), set(b)
    gone = [ln for ln in a if ln not in sb and 3 <= len(ln) <= width][:n]
    came = [ln for ln in b if ln not in sa and 3 <= len(ln) <= width][:n]
    return gone, came


def tests_added(path: str, old: str, new: str) -> list[str]:
    """Test cases the new text defines and the old one did not."""
    lang = registry.language_for(path)
    fn = getattr(lang, "tests", None)
    if fn is None:
        return []
    before = set(fn(old or ""))
    return [t for t in dict.fromkeys(fn(new or "")) if t not in before]


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
    if not text_doc:
        for j in (line - 2, line):   # @doc above (Elixir), a docstring below (Python)
            if 0 <= j < len(lines):
                m = DOCSTRING.match(lines[j])
                if m:
                    rest = [m.group(1)] + [ln.strip() for ln in lines[j + 1:j + 6]]
                    text_doc = " ".join(x for x in rest if x).split('"""')[0].split("\'\'\'")[0]
                    break
    first = re.split(r"(?<=[.!?])\s", text_doc.strip(), maxsplit=1)[0] if text_doc else ""
    return first[:200]
