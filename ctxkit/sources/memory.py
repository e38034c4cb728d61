"""Long-term memory snippets: MEMORY.md bullets and observations, searchable.

`memory`: a MemoryStore (store/backend.py: the workspace's files, or the shared store's project),
or a workspace folder (its files)."""
from __future__ import annotations

import re

from ..core.dedupe import passages, words


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


CITED = re.compile(r"\s+\(from ([^()\s]+:\d+)\)$")


def snippets(memory) -> list[dict]:
    """Every passage of MEMORY.md and the observations, each fact once: an observation's line that
    `ctx reflect` took into MEMORY.md (its `(from observations/F.md:N)`, or the same words) is found
    as the MEMORY.md bullet only, so nothing is injected twice."""
    docs = _store(memory).documents()
    cited, said = set(), set()
    for name, text in docs:
        if name == "MEMORY.md" or name.endswith("/MEMORY.md"):
            for _, _, body in passages(name, text):
                m = CITED.search(body)
                if m:
                    cited.add(m.group(1))
                said.add(" ".join(words(CITED.sub("", body))))
    out = []
    for name, text in docs:
        memory_file = name == "MEMORY.md" or name.endswith("/MEMORY.md")
        for _, line, body in passages(name, text):
            if not memory_file and (f"{name}:{line}" in cited or " ".join(words(body)) in said):
                continue
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
