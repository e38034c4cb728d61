"""Shorten markdown to a token target without cutting a sentence (pure).

`cut_to` keeps the longest prefix of whole blocks. `condense_to` keeps every heading's
section represented: sections take turns adding their next whole block (bullet, paragraph
line), so a 400-token SOUL.md condensed to 200 keeps the start of each section rather than
the whole of the first ones.
"""
from __future__ import annotations

import re

# markdown bold: `**x**` not inside a word or a `code span`, opening on a word or a quote (a `**/*.ex`
# glob is text); `__` is left alone: in an agent's prose it is an identifier (`pydicom__pydicom`, `__init__`)
EMPHASIS = re.compile(r"(?<![\w*])\*\*(?=[^\W_]|[`\"'(\[])(.+?)(?<=[^\s*])\*\*(?![\w*])")
CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def unemphasize(text: str) -> str:
    """`text` with its bold markers removed, identifiers, paths and code spans left as they are."""
    out, pos = [], 0
    for m in CODE_SPAN.finditer(text):
        out.append(EMPHASIS.sub(r"\1", text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(EMPHASIS.sub(r"\1", text[pos:]))
    return "".join(out)


BLOCK = re.compile(r"\n(?=[^\S\n]*\n|[-*] |\d+\. |#)")


def cut_to(text: str, max_tokens: int, count) -> tuple[str, bool]:
    """The longest prefix of whole paragraphs/bullets within max_tokens."""
    if count(text) <= max_tokens:
        return text, False
    kept: list[str] = []
    for b in BLOCK.split(text):
        if count("\n".join(kept + [b])) > max_tokens:
            break
        kept.append(b)
    return "\n".join(kept).strip(), True


def _sections(text: str) -> list[list[str]]:
    """[heading?, block, block, ...] per heading; blank lines dropped."""
    out: list[list[str]] = [[]]
    for line in text.split("\n"):
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            out.append([line])
        elif out[-1] and line.startswith(("  ", "\t")) and not line.lstrip().startswith(("-", "*")):
            out[-1][-1] += " " + line.strip()  # a continuation line joins its block
        else:
            out[-1].append(line)
    return [s for s in out if s]


def condense_to(text: str, max_tokens: int, count) -> tuple[str, bool]:
    """Whole lines from every section, taking turns, within max_tokens (document order kept)."""
    if count(text) <= max_tokens:
        return text, False
    secs = _sections(text)
    take = [0] * len(secs)
    # a section's heading comes with its first line, never alone
    heads = [1 if s[0].lstrip().startswith("#") else 0 for s in secs]

    def render() -> str:
        parts = []
        for s, n, h in zip(secs, take, heads):
            if n > h:
                parts.append("\n".join(s[:n]))
        return "\n\n".join(parts)

    progress = True
    while progress:
        progress = False
        for i, s in enumerate(secs):
            nxt = max(take[i], heads[i]) + 1
            if nxt > len(s):
                continue
            old = take[i]
            take[i] = nxt
            if count(render()) > max_tokens:
                take[i] = old
                continue
            progress = True
    return render().strip(), True
