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
    """Pairs of passages in different places that say the same thing (exact or near).

    `similarity(texts)` gives an n×n matrix of semantic similarities (MiniLM cosine: it catches
    paraphrases, which share few word runs); without it, word-shingle overlap (copies only)."""
    ps = [p for name, text in files for p in passages(name, text)]
    sem = similarity([p[2] for p in ps]) if similarity is not None and ps else None
    sh = [shingles(p[2]) for p in ps]
    norm = [" ".join(words(p[2])) for p in ps]
    out = []
    for i in range(len(ps)):
        for j in range(i + 1, len(ps)):
            if ps[i][0] == ps[j][0] and abs(ps[i][1] - ps[j][1]) < 1:
                continue
            if norm[i] == norm[j]:
                sim, kind = 1.0, "exact"
            else:
                sim = float(sem[i][j]) if sem is not None else jaccard(sh[i], sh[j])
                if sim < threshold:
                    continue
                kind = "near" if sem is None else "paraphrase"
            out.append({"a": f"{ps[i][0]}:{ps[i][1]}", "b": f"{ps[j][0]}:{ps[j][1]}", "kind": kind,
                        "similarity": round(sim, 3), "text": ps[j][2][:80]})
    return out
