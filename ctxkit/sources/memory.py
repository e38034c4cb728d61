"""Long-term memory snippets: MEMORY.md bullets and observations, searchable.

`memory`: a MemoryStore (store/backend.py: the workspace's files, or the shared store's project),
or a workspace folder (its files)."""
from __future__ import annotations

from ..core.dedupe import passages


def _store(memory):
    if isinstance(memory, str):
        from ..store.memory import FileMemory

        return FileMemory(memory)
    return memory


def workspace_texts(workspace: str, names, memory) -> list[tuple[str, str]]:
    """(where, text) of the workspace files `names` that exist, in order; MEMORY.md taken from
    `memory` (the MemoryStore: the workspace's file, or the shared store's project)."""
    import os

    out = []
    for n in names:
        if n == "MEMORY.md":
            m = _store(memory)
            text = m.memory_text()
            if text:
                out.append((m.memory_path, text))
            continue
        p = os.path.join(workspace, n)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as fh:
                out.append((p, fh.read()))
    return out


def snippets(memory) -> list[dict]:
    out = []
    for name, text in _store(memory).documents():
        for _, line, body in passages(name, text):
            out.append({"snippet": body, "source": f"{name}:{line}"})
    return out


def search(memory, query: str, k: int, min_score: float, embedder) -> tuple[list[dict], int]:
    """(top hits, number of snippets that matched at all before the cut)."""
    items = snippets(memory)
    if not items:
        return [], 0
    sims = embedder.similarities(query, [i["snippet"] for i in items])
    scored = [dict(i, score=round(s, 4)) for i, s in zip(items, sims) if s > 0]
    scored.sort(key=lambda x: -x["score"])
    hits = [h for h in scored if h["score"] >= min_score][:k]
    return hits, len(scored)
