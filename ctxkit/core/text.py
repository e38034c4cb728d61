"""Prose as sentences (pure): the one splitter compaction, clustering and the hygiene gate share."""
from __future__ import annotations

import re

FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
TABLE = re.compile(r"^\s*\|.*\|\s*$", re.M)
HEADING = re.compile(r"^\s*#{1,6}\s+.*$", re.M)
SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(\[])|(?<=[.!?]\*\*)\s+(?=[A-Z`*\"'(\[])|\n+")
INLINE = re.compile(r"`[^`\n]+`")
HIDE = str.maketrans({".": "\x00", "!": "\x01", "?": "\x02"})       # a sentence end inside inline code is none
SHOW = str.maketrans({"\x00": ".", "\x01": "!", "\x02": "?"})
EMPH = re.compile(r"\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)")
BULLET = re.compile(r"^\s*(?:>\s*)*(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


def clean(sentence: str) -> str:
    """A sentence without its list marker, quote marks, emphasis and extra white space."""
    s = BULLET.sub("", sentence.strip())
    s = re.sub(r"^(?:>\s*)+", "", s)
    s = EMPH.sub("", s)
    return " ".join(s.split()).rstrip(" :")


def sentences(text: str, cap: int | None = None) -> list[str]:
    """The prose sentences of a message: code blocks, tables and headings left out; with `cap`, a sentence
    longer than `cap` characters or shorter than four words is skipped, never cut."""
    body = HEADING.sub("", TABLE.sub("", FENCE.sub("\n", text or "")))
    body = INLINE.sub(lambda m: m.group(0).translate(HIDE), body)     # `a ?? b` is one sentence
    out = []
    for part in SPLIT.split(body):
        s = clean(part).translate(SHOW)
        if not s or s.startswith(("GIVEN ", "WHEN ", "THEN ")):
            continue
        if cap is not None and (len(s) > cap or len(s) < 20 or len(s.split()) < 4):
            continue
        out.append(s)
    return out
