"""BM25 (Okapi) over a small corpus, pure Python: the no-model similarity."""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

_TOKEN = re.compile(r"[A-Za-z0-9_]+")
STOP = frozenset("""a an and are as at be but by for from has have i if in into is it its of on or
so that the their then there these this to was we were will with you your not no do does did
let me my our can should would could""".split())


def tokenize(text: str) -> list[str]:
    out = []
    for t in _TOKEN.findall(text.lower()):
        if t in STOP:
            continue
        out.append(t)
        # split snake_case / dotted identifiers so `refresh_token` matches "refresh token"
        if "_" in t:
            out.extend(p for p in t.split("_") if p and p not in STOP)
    return out


class BM25:
    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tfs = [Counter(tokenize(d)) for d in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = (sum(self.lens) / len(self.lens)) if self.lens else 0.0
        df: Counter = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> list[float]:
        q = [t for t in dict.fromkeys(tokenize(query)) if t in self.idf]
        out = []
        for tf, dl in zip(self.tfs, self.lens):
            s = 0.0
            for t in q:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * dl / (self.avg or 1)))
            out.append(s)
        return out


def normalized(scores: Sequence[float]) -> list[float]:
    """Scale to [0, 1] by the best score (all zeros stay zero)."""
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


def coverage(query: str, text: str) -> float:
    """The share of the query's distinct terms (stop words left out) that occur in `text`:
    an absolute measure in [0, 1], where a score scaled to the best hit is only relative."""
    q = set(tokenize(query))
    return len(q & set(tokenize(text))) / len(q) if q else 0.0


def bm25_scores(query: str, docs: Iterable[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25(docs).scores(query) in one pass over `docs`, keeping only each document's length
    and its counts of the query's terms: memory grows with the number of documents, not their size."""
    qs = set(tokenize(query))
    stats = []
    for d in docs:
        toks = tokenize(d)
        stats.append((len(toks), Counter(x for x in toks if x in qs)))
    return bm25_of_stats(query, stats, k1, b)


def doc_stats(text: str) -> tuple[int, dict]:
    """What BM25 needs of a document, whatever the query: its length in tokens and each token's count."""
    toks = tokenize(text)
    return len(toks), dict(Counter(toks))


def bm25_of_stats(query: str, stats: Sequence[tuple[int, dict]], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 scores of documents given as `doc_stats` (or counts of at least the query's terms):
    the same numbers as `bm25_scores` over their texts. Each document's sum is exact (fsum), so
    it does not depend on the order its terms are visited in."""
    qs = frozenset(tokenize(query))
    n = len(stats)
    if not n:
        return []
    df: Counter = Counter()
    for _, tf in stats:
        df.update(qs.intersection(tf))
    avg = (sum(dl for dl, _ in stats) / n) or 1
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    out = []
    for dl, tf in stats:
        hits = qs.intersection(tf)
        if not hits:
            out.append(0.0)
            continue
        norm = k1 * (1 - b + b * dl / avg)
        out.append(math.fsum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in hits))
    return out
