"""Keyword candidates without ranking every match: which terms a store ranks, in which order.

A query's terms are OR-ed: any chunk holding one of them is a candidate, and the store ranks
them (FTS5 bm25(), PostgreSQL ts_rank()). Ranking every match costs time in proportion to the
matches, and a common word matches a large share of a million chunks. Both stores therefore
rank in tiers, the same way (so they agree), stopping once `limit` candidates are found:

1. the chunks holding a RARE term (one held by fewer than RARE chunks): every such chunk is
   ranked, by the rare terms;
2. the chunks holding every common term (when there are two or more) and no rare one;
3. the chunks holding any common term and no rare one.

Tiers 2 and 3 are ranked by the common terms. Every tier ranks at most SCAN matches, the first
the index yields: exact whenever a tier's matches fit (always below a few thousand chunks),
an approximation only where a query's terms are all common in a large store. Under an
idf-weighted ranking a chunk holding a rare query term outranks one holding only common ones,
which is what tier 1 keeps; the rank of a tier-1 chunk leaves out the common terms' small part.
Candidates come tier by tier; a tier's ranks are scaled below the previous tier's worst where
the store's ranking would put them above it (ts_rank weighs no term by its rarity), so both
stores order by tier first, then by their own rank.
A term no chunk holds is left out (it adds nothing to any chunk's rank).
"""
from __future__ import annotations

from typing import Callable, Sequence

RARE = 2000      # a term held by fewer chunks than this is rare: all its chunks are ranked
SCAN = 10_000    # at most this many matches are ranked per tier


def tiers(terms: Sequence[str], counts: Sequence[int], rare: int = RARE) -> list[tuple[str, list[str], list[str]]]:
    """[(op, terms, excluded terms)]: op 'any' or 'all' over `terms`, leaving out chunks that hold
    any excluded term. `counts`: how many chunks hold each term, counted up to `rare`."""
    rare_t = [t for t, n in zip(terms, counts) if 0 < n < rare]
    common = [t for t, n in zip(terms, counts) if n >= rare]
    out: list[tuple[str, list[str], list[str]]] = []
    if rare_t:
        out.append(("any", rare_t, []))
    if len(common) > 1:
        out.append(("all", common, rare_t))
    if common:
        out.append(("any", common, rare_t))
    return out


def tiered(terms: Sequence[str], count: Callable[[Sequence[str], int], list[int]],
           rank: Callable[[str, list[str], list[str], int, int], list[tuple]], limit: int) -> list[tuple]:
    """A store's keyword candidates (session, chunk_id, gist, text, rank), best (lowest rank) first.
    count(terms, cap) -> chunks holding each term, up to cap; rank(op, terms, excluded, scan,
    limit) -> the best `limit` of the first `scan` chunks matching, as rows like the result."""
    terms = list(dict.fromkeys(terms))
    if not terms or limit <= 0:
        return []
    out: list[tuple] = []
    seen: set[tuple] = set()
    for op, ts, ex in tiers(terms, count(terms, RARE), RARE):
        rows = sorted((r for r in rank(op, ts, ex, SCAN, limit) if (r[0], r[1]) not in seen),
                      key=lambda r: (r[4], r[0], r[1]))
        if rows and out:
            floor, best = max(r[4] for r in out), rows[0][4]
            if best < floor:  # ranked above the tier before it (ts_rank knows no rarity): scaled below it
                rows = [(*r[:4], r[4] * (floor / best)) for r in rows]
        out.extend(rows)
        seen.update((r[0], r[1]) for r in rows)
        if len(out) >= limit:
            break
    return out[:limit]
