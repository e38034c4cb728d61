"""Seed 001's duplication map (pure): exact and near-duplicate passages across files."""
from __future__ import annotations

import re
from typing import Sequence


def passages(name: str, text: str) -> list[tuple[str, int, str]]:
    """(file, line, text) for every non-heading line with 4+ words (list markers stripped):
    the duplication map works line by line, like seed 001's (AGENTS.md L7 / MEMORY.md L5)."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if not s or s.startswith(("#", "<!--", "```")):
            continue
        s = re.sub(r"^([-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?", "", s)
        if len(words(s)) >= 4:
            out.append((name, n, s))
    return out


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


def shingles(text: str, k: int = 3) -> set:
    w = words(text)
    return {tuple(w[i:i + k]) for i in range(max(1, len(w) - k + 1))}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def duplicates(files: Sequence[tuple[str, str]], threshold: float = 0.6, similarity=None) -> list[dict]:
    """Groups of passages in different places that say the same thing (exact or near), one row a
    group: a line repeated 30 times is one row with 29 copies, not 435 pairs.

    `similarity(texts)` gives an n×n matrix of semantic similarities (MiniLM cosine: it catches
    paraphrases, which share few word runs); without it, word-shingle overlap (copies only).
    Each row: `a` the first place (the one to keep), `b` the next, `places` all of them in
    order, `copies` (places - 1), `kind` (exact when every copy is word for word, else near or
    paraphrase), `similarity` (the weakest link), `text` (the first place's text) and, per copy,
    `copy_texts` with each copy's similarity to the group (for counting what they waste)."""
    ps = [p for name, text in files for p in passages(name, text)]
    sem = similarity([p[2] for p in ps]) if similarity is not None and ps else None
    sh = [shingles(p[2]) for p in ps]
    norm = [" ".join(words(p[2])) for p in ps]
    parent = list(range(len(ps)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    link: dict[int, tuple[float, str]] = {}  # passage -> (best similarity to an earlier one, kind)
    by_norm: dict[str, int] = {}
    for j in range(len(ps)):
        first = by_norm.setdefault(norm[j], j)
        if first != j:  # an exact copy: no need to compare it with anything else
            parent[find(j)] = find(first)
            link[j] = (1.0, "exact")
            continue
        for i in range(j):
            if by_norm.get(norm[i]) != i:
                continue  # compare with one passage of each exact group
            sim = float(sem[i][j]) if sem is not None else jaccard(sh[i], sh[j])
            if sim < threshold:
                continue
            parent[find(j)] = find(i)
            if sim > link.get(j, (-1.0, ""))[0]:
                link[j] = (sim, "near" if sem is None else "paraphrase")
    groups: dict[int, list[int]] = {}
    for k in range(len(ps)):
        groups.setdefault(find(k), []).append(k)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort()
        first, rest = members[0], members[1:]
        sims = [link.get(k, (1.0, "exact")) for k in rest]
        kinds = {kd for _, kd in sims}
        kind = "exact" if kinds == {"exact"} else ("paraphrase" if "paraphrase" in kinds else "near")
        where = [f"{ps[k][0]}:{ps[k][1]}" for k in members]
        out.append({"a": where[0], "b": where[1], "copies": len(rest), "kind": kind,
                    "similarity": round(min(sm for sm, _ in sims), 3), "text": ps[first][2][:80],
                    "places": where, "copy_texts": [(ps[k][2], sm) for k, (sm, _) in zip(rest, sims)]})
    out.sort(key=lambda r: (r["places"][0].rsplit(":", 1)[0], int(r["places"][0].rsplit(":", 1)[1])))
    return out
