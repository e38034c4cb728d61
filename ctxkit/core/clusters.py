"""Clusters of similar chunks (seed 004: compacted every 50 messages), pure.

Similarity is BM25 between chunk texts, scaled to each chunk's best match; chunks join a
cluster when they are mutually similar above `threshold`. A cluster of three or more chunks
is compacted into one Facts bullet that names its chunks and states its most salient sentence,
so ten near-identical exchanges ("retry the build", "retry the build again") read as one.
"""
from __future__ import annotations

import re
from typing import Sequence

from .bm25 import BM25, normalized, tokenize
from .text import sentences
from .hygiene import gate
from .score import chunk_text


def clusters(groups: Sequence[list[dict]], threshold: float = 0.6, min_size: int = 3) -> list[list[int]]:
    texts = [chunk_text(g) for g in groups]
    if len(texts) < min_size:
        return []
    bm = BM25(texts)
    sims = []
    for t in texts:
        q = " ".join(sorted(set(tokenize(t)))[:64])
        sims.append(normalized(bm.scores(q)) if q else [0.0] * len(texts))
    seen: set[int] = set()
    out = []
    for i in range(len(texts)):
        if i in seen or not texts[i].strip():
            continue
        members = [i] + [j for j in range(i + 1, len(texts)) if j not in seen and sims[i][j] >= threshold
                         and sims[j][i] >= threshold]
        if len(members) >= min_size:
            out.append(members)
            seen.update(members)
    return out


CLUSTER_BULLET = re.compile(r"^\d+ similar exchanges \(")   # what cluster_bullet writes


def cluster_bullet(groups: Sequence[list[dict]], members: Sequence[int]) -> str | None:
    """One Facts bullet for a cluster: its size, its chunk ids, and its clearest statement."""
    cands = []
    for i in members:
        for r in groups[i]:
            if r.get("role") == "assistant" and r.get("content"):
                cands += sentences(r["content"], cap=320)
    kept, _ = gate(cands)
    ids = ", ".join(str(groups[i][0].get("group")) for i in members[:6]) + (" …" if len(members) > 6 else "")
    if not kept:
        return None
    best = max(kept, key=lambda s: (len(set(tokenize(s))), -len(s)))
    return f"{len(members)} similar exchanges ({ids}): {best}"
