"""Long-term memory snippets: MEMORY.md bullets and observations/*.md, searchable."""
from __future__ import annotations

import glob
import os

from ..core.dedupe import passages


def snippets(workspace: str) -> list[dict]:
    files = [os.path.join(workspace, "MEMORY.md")] + sorted(glob.glob(os.path.join(workspace, "observations", "*.md")))
    out = []
    for f in files:
        if not os.path.lexists(f):
            continue
        from ..store.atomic import read_text

        text = read_text(f)  # a link is refused
        for _, line, body in passages(os.path.relpath(f, workspace), text):
            out.append({"snippet": body, "source": f"{os.path.relpath(f, workspace)}:{line}"})
    return out


def search(workspace: str, query: str, k: int, min_score: float, embedder) -> tuple[list[dict], int]:
    """(top hits, number of snippets that matched at all before the cut)."""
    items = snippets(workspace)
    if not items:
        return [], 0
    sims = embedder.similarities(query, [i["snippet"] for i in items])
    scored = [dict(i, score=round(s, 4)) for i, s in zip(items, sims) if s > 0]
    scored.sort(key=lambda x: -x["score"])
    hits = [h for h in scored if h["score"] >= min_score][:k]
    return hits, len(scored)
