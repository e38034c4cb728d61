"""Key entities (pure, deterministic): files, functions/classes, packages, @people, URLs."""
from __future__ import annotations

import re
from typing import Iterable

from .artifacts import trail
from .hygiene import PATH

URL = re.compile(r"https?://[^\s)>\]\"'`]+")
PERSON = re.compile(r"(?<![\w.])@([A-Za-z][\w-]{1,38})\b")
FUNC = re.compile(r"\b(?:def|fn|func|function)\s+([A-Za-z_]\w*)|\bclass\s+([A-Z]\w*)|`([A-Za-z_][\w.]*)\(\)`")
PKG = re.compile(r"\b(?:pip install|npm install|cargo add|go get|mix deps\.get|gem install)\s+((?:[\w@/.=<>~^-]+\s*)+)"
                 r"|^\s*(?:import|from)\s+([A-Za-z_][\w]*)", re.M)
CODE_ATTRS = {"moduledoc", "doc", "impl", "spec", "type", "callback", "behaviour", "property", "staticmethod",
              "classmethod", "dataclass", "override", "param", "return", "returns", "throws", "deprecated"}
CATEGORIES = ("files", "functions", "packages", "people", "urls")


def extract(records: Iterable[dict]) -> dict[str, list[str]]:
    recs = list(records)
    out: dict[str, list[str]] = {c: [] for c in CATEGORIES}

    def add(cat, v):
        v = v.strip().rstrip(".,;:")
        if v and v not in out[cat]:
            out[cat].append(v)

    for p in trail(recs):
        add("files", p)
    for r in recs:
        if r.get("role") == "tool" or {"thinking", "reasoning"} & set(r.get("flags") or ()):
            continue  # tool output (file contents, listings) names too much; its files come from the trail
        text = r.get("content") or ""
        for m in URL.finditer(text):
            add("urls", m.group(0))
        no_urls = URL.sub(" ", text)
        for m in PERSON.finditer(re.sub(r"```.*?```|`[^`]*`", " ", no_urls, flags=re.S)):
            if m.group(1).lower() not in CODE_ATTRS:
                add("people", "@" + m.group(1))
        for m in FUNC.finditer(no_urls):
            add("functions", next(g for g in m.groups() if g))
        for m in PKG.finditer(no_urls):
            if m.group(1):
                for w in m.group(1).split():
                    if not w.startswith("-"):
                        add("packages", re.split(r"[=<>~^@]", w)[0] or w)
            elif m.group(2):
                add("packages", m.group(2))
        for m in PATH.finditer(no_urls):
            if "/" in m.group(0):
                add("files", m.group(0))
    return out
