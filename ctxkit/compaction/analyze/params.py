"""A function's parameters as its signature writes them: how it is called, on one line."""
from __future__ import annotations

import re

from ..model import Definition
from ..registry import language_for

CALLABLE = {"function", "method", "macro", "definition"}
SELF = {"self", "&self", "&mut self", "mut self", "cls", "this"}


def params_of(path: str, text: str, d: Definition) -> str:
    """The parameters of the callable `d` as its signature writes them, on one line: `(input, plans?)`; a
    long list keeps each parameter's name where a `name: type` form gives it, and ends in `…` past 60
    characters; "" where `d` takes none that can be read (a class, a type, a name with an arity)."""
    if d.kind not in CALLABLE or "/" in d.name or d.line < 1:
        return ""
    head = "\n".join(text.split("\n")[d.line - 1:d.line + 12])
    m = re.search(re.escape(d.name.rsplit(".", 1)[-1]) +
                  r"[ \t]*(?:<(?:[^<>\n]|<[^<>\n]*>)*>)?[ \t]*(?:[:=][^(\n]{0,60}?(?:async[ \t]*)?(?:function[ \t]*)?)?\(", head)
    if not m:
        return ""
    depth, k, start = 0, m.end() - 1, m.end()
    for k in range(m.end() - 1, min(len(head), m.end() + 600)):
        depth += {"(": 1, ")": -1}.get(head[k], 0)
        if depth == 0:
            break
    if depth:
        return ""
    parts, depth, cur = [], 0, ""
    for ch in " ".join(head[start:k].split()):
        depth += {"(": 1, "[": 1, "{": 1, "<": 1, ")": -1, "]": -1, "}": -1, ">": -1}.get(ch, 0) if ch != ">" or \
            not cur.endswith("=") else 0
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts = [x for x in parts + [cur.strip()] if x and x not in SELF]
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
    depth = 0
    for i, ch in enumerate(x):
        depth += {"(": 1, "[": 1, "{": 1, "<": 1, ")": -1, "]": -1, "}": -1, ">": -1}.get(ch, 0)
        if depth == 0 and ch == ":" and i:
            return x[:i].strip()
    x = x.split("=", 1)[0].strip() or x
    if how == "first":
        return x.split()[0]
    if how == "last":
        return x.split()[-1].strip("{}[]")
    return x
