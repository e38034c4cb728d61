"""Keyword candidates without ranking every match: which terms a store ranks, in which order.

A query's terms are OR-ed: any chunk holding one of them is a candidate, and the store ranks
them (FTS5 bm25(), PostgreSQL ts_rank()). Ranking every match costs time in proportion to the
matches, and a common word matches a large share of a million chunks. Both stores therefore
rank in tiers, the same way (so they agree), stopping once `limit` candidates are found:

1. the chunks holding one of the RAREST terms: the terms taken rarest first while the chunks
   holding them add up to at most SCAN; every such chunk is ranked, by those terms;
2. the chunks holding every other term (when there are two or more) and none of the rarest;
3. the chunks holding any other term and none of the rarest.

Tiers 2 and 3 rank at most SCAN matches each (the first the index yields). Where every term's
chunks fit in SCAN (any store below SCAN chunks) tier 1 is the exact ranking; where a query's
terms are all common in a large store, an approximation. Under an idf-weighted ranking a chunk
holding a rare query term outranks one holding only common ones, which is what tier 1 keeps.
Each store ranks a tier's chunks as exactly as it can: PostgreSQL by every query term (ts_rank
of a chunk costs the same for any query), the embedded store by the tier's terms (FTS5's bm25()
counts only the terms of its match expression; the common terms' part is left out).
Candidates come tier by tier; a tier's ranks are scaled below the previous tier's worst where
the store's ranking would put them above it (ts_rank weighs no term by its rarity), so both
stores order by tier first, then by their own rank. A term no chunk holds is left out.
"""
from __future__ import annotations

from typing import Callable, Sequence

SCAN = 2000     # at most this many matches are ranked per tier


def tiers(terms: Sequence[str], counts: Sequence[int], scan: int = SCAN) -> list[tuple[str, list[str], list[str]]]:
    """[(op, terms, excluded terms)]: op 'any' or 'all' over `terms`, leaving out chunks that hold
    any excluded term. `counts`: how many chunks hold each term (counted up to `scan` at least)."""
    present = sorted((n, i) for i, n in enumerate(counts) if n > 0)
    rare: list[str] = []
    total = 0
    for n, i in present:
        if total + n > scan:
            break
        rare.append(terms[i])
        total += n
    other = [terms[i] for _, i in sorted(present, key=lambda x: x[1]) if terms[i] not in rare]
    rare = [t for t in terms if t in rare]   # in the query's order, as the other terms
    out: list[tuple[str, list[str], list[str]]] = []
    if rare:
        out.append(("any", rare, []))
    if len(other) > 1:
        out.append(("all", other, rare))
    if other:
        out.append(("any", other, rare))
    return out


def tiered(terms: Sequence[str], count: Callable[[Sequence[str], int], list[int]],
           rank: Callable[[str, list[str], list[str], int, int], list[tuple]], limit: int) -> list[tuple]:
    """A store's keyword candidates (session, chunk_id, gist, text, rank), best (lowest rank) first.
    count(terms, cap) -> chunks holding each term (at least up to cap); rank(op, terms, excluded, scan,
    limit) -> the best `limit` of the first `scan` chunks matching, as rows like the result."""
    terms = list(dict.fromkeys(terms))
    if not terms or limit <= 0:
        return []
    out: list[tuple] = []
    seen: set[tuple] = set()
    for op, ts, ex in tiers(terms, count(terms, SCAN + 1), SCAN):
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
