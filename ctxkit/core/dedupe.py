"""Seed 001's duplication map (pure): exact and near-duplicate passages across files."""
from __future__ import annotations

import re
from typing import Sequence


def passages(name: str, text: str) -> list[tuple[str, int, str]]:
    """(file, first line, text) for every bullet, heading-free paragraph or list item."""
    out, buf, start = [], [], 0
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        bullet = re.match(r"^([-*+]|\d+[.)])\s+", s)
        if not s or s.startswith("#") or bullet:
            if buf:
                out.append((name, start, " ".join(buf)))
                buf = []
            if bullet:
                out.append((name, n, s[bullet.end():]))
            continue
        if not buf:
            start = n
        buf.append(s)
    if buf:
        out.append((name, start, " ".join(buf)))
    return [p for p in out if len(words(p[2])) >= 4]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


def shingles(text: str, k: int = 3) -> set:
    w = words(text)
    return {tuple(w[i:i + k]) for i in range(max(1, len(w) - k + 1))}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def duplicates(files: Sequence[tuple[str, str]], threshold: float = 0.6) -> list[dict]:
    """Pairs of passages in different places that say the same thing (exact or near)."""
    ps = [p for name, text in files for p in passages(name, text)]
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
                sim = jaccard(sh[i], sh[j])
                if sim < threshold:
                    continue
                kind = "near"
            out.append({"a": f"{ps[i][0]}:{ps[i][1]}", "b": f"{ps[j][0]}:{ps[j][1]}", "kind": kind,
                        "similarity": round(sim, 3), "text": ps[j][2][:80]})
    return out
