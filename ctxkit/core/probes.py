"""Exact-match probes for `ctx eval` (pure): does a compacted stream keep what matters?"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from .bm25 import STOP
from .requests import last_request
from .hygiene import BACKTICK, IDENT
from .score import chunk_text

CATEGORIES = ("artifact", "error", "continuation", "recall")


def stream_text(records: Sequence[dict]) -> str:
    return "\n".join(chunk_text([r], limit=10**9) for r in records)


def build(session: Sequence[dict], span: Sequence[dict]) -> dict[str, list[str]]:
    """Probes from the pre-compaction span (and the session's last user request)."""
    probes: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    from ..compaction import state_of

    st = state_of(list(span))
    probes["artifact"] = list(dict.fromkeys([f.path for f in st.files] + list(st.reads)))
    probes["error"] = list(dict.fromkeys(_head(e.text) for e in st.errors))
    last = last_request(session) or ""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9_.-]{3,}", re.sub(r"<[^>]+>", " ", last))
             if w.lower() not in STOP]
    probes["continuation"] = list(dict.fromkeys(words))[:8]
    text = "\n".join(r.get("content") or "" for r in span)  # tool-call JSON keys are not recall
    counts: Counter = Counter()
    for m in IDENT.finditer(text):
        counts[m.group(0)] += 1
    for m in BACKTICK.finditer(text):
        if len(m.group(1)) <= 60:
            counts[m.group(1)] += 1
    for m in re.finditer(r"(?<![\w.])\d{3,}(?![\w])", text):
        counts[m.group(0)] += 1
    probes["recall"] = [k for k, n in counts.most_common() if n >= 3][:20]
    return probes


def _head(line: str, n: int = 60) -> str:
    """The start of an error line, cut at a word boundary (what a summary must keep verbatim)."""
    if len(line) <= n:
        return line.rstrip(" …")
    return line[:n].rsplit(" ", 1)[0]


def score(probes: dict[str, list[str]], candidate_text: str) -> list[dict]:
    rows = []
    for cat in CATEGORIES:
        ps = probes.get(cat, [])
        hits = [p for p in ps if p in candidate_text]
        rows.append({"category": cat, "probes": len(ps), "hits": len(hits),
                     "recall": round(len(hits) / len(ps), 3) if ps else None,
                     "missed": [p for p in ps if p not in candidate_text][:5]})
    return rows
