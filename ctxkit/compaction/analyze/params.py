"""A function's parameters as its signature writes them: how it is called, on one line."""
from __future__ import annotations

import re

from ..model import Definition
from ..registry import language_for

CALLABLE = {"function", "method", "macro", "definition"}
SELF = {"self", "&self", "&mut self", "mut self", "cls", "this"}


OPEN, CLOSE = "([{<", ")]}>"


def _depths(text: str):
    """(index, char, bracket depth before it) for each character outside quoted strings; the `>` of `->` and
    `=>` closes nothing."""
    depth, quote = 0, ""
    for k, ch in enumerate(text):
        if quote:
            if ch == quote and text[k - 1] != "\\":
                quote = ""
            continue
        if ch in "'\"`":
            quote = ch
            continue
        if ch == ">" and k and text[k - 1] in "-=":
            continue
        yield k, ch, depth
        depth += (ch in OPEN) - (ch in CLOSE)


def params_of(path: str, text: str, d: Definition) -> str:
    """The parameters of the callable `d` as its signature writes them, on one line: `(input, plans?)`; a
    long list keeps each parameter's name where a `name: type` form gives it, and ends in `…` past 60
    characters; "" where `d` takes none that can be read (a class, a type, a name with an arity)."""
    if d.kind not in CALLABLE or "/" in d.name or d.line < 1:
        return ""
    head = "\n".join(text.split("\n")[d.line - 1:d.line + 12])
    m = re.search(re.escape(d.name.rsplit(".", 1)[-1]) + r"[ \t]*(?:<(?:[^<>\n]|<[^<>\n]*>)*>|\[[^\]\n]*\])?"
                  r"[ \t]*(?:[:=][^(\n]{0,60}?(?:async[ \t]*)?(?:function[ \t]*)?)?\(", head)
    if not m:
        return ""
    inner = head[m.end():m.end() + 600]
    end = next((k for k, ch, depth in _depths(inner) if ch == ")" and depth == 0), None)   # the list's own close
    if end is None:
        return ""
    inner = " ".join(inner[:end].split())
    cuts = [k for k, ch, depth in _depths(inner) if ch == "," and depth == 0]
    parts = [inner[a + 1:b].strip() for a, b in zip([-1] + cuts, cuts + [len(inner)])]
    parts = [x for x in parts if x and x not in SELF]
    whole = re.sub(r",\s*([}\])])", r" \1", ", ".join(parts))     # `{ title, content, }`: no comma before the close
    if len(whole) > 40:     # long: the names only, as the language places them
        how = getattr(language_for(path), "param_name", "")
        whole = re.sub(r",\s*([}\])])", r" \1", ", ".join(_param_name(x, how) for x in parts))
    if len(whole) > 60:
        whole = whole[:60].rsplit(",", 1)[0] + ", …"
    return f"({whole})" if whole else ""


def _param_name(x: str, how: str) -> str:
    """A parameter's name: what comes before a `:` outside brackets (`plans?: {…}`, `{ title, content }: Props`,
    Kotlin's `name: String`), else before a default's `=`, else its first word (`ctx context.Context`) or its
    last (`final String name`), as the language places it."""
    for i, ch, depth in _depths(x):
        if depth == 0 and ch == ":" and i:
            return x[:i].strip()
    eq = next((i for i, ch, depth in _depths(x) if depth == 0 and ch == "=" and i), None)
    x = x[:eq].strip() if eq else x
    if how == "first":
        return x.split()[0]
    if how == "last":
        return x.split()[-1].strip("{}[]")
    return x
