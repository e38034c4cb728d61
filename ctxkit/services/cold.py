"""Cold-storage search and recovery as services (no click): used by `cold-storage search`,
`recover`, `memory search --include-cold`, `score --auto-recover` and the hooks."""
from __future__ import annotations

from ..core.bm25 import normalized
from ..core.splice import splice, stubs
from ..errors import UsageProblem
from ..store import logs
from ..store.backend import ColdStore, open_store
from ..store.cold import unsafe_id
from .embedding import make_embedder

FULL_SCAN_MAX = 20_000   # below this many chunks, every chunk is a semantic candidate
FTS_CANDIDATES = 200


def search_cold(home, store: ColdStore, query: str, limit: int, session: str | None, embedder: str,
                progress=None, loading=None) -> list[dict]:
    """Hybrid search: BM25 (FTS5) candidates, re-ranked with embedding similarity.

    score = 0.5 * bm25 (scaled to the best hit) + 0.5 * cosine similarity, or bm25
    alone with the keyword embedder.
    """
    cands = store.candidates(query, session, FTS_CANDIDATES)
    kw = keyword_scores(cands)
    pool = {(s, c): (g, t) for s, c, g, t, _ in cands}
    emb = None
    known: dict = {}
    if embedder != "keyword" and store.count() <= FULL_SCAN_MAX:
        for s, c, g, t in store.all_texts(session):
            pool.setdefault((s, c), (g, t))
    elif embedder != "keyword" and hasattr(store, "vector_candidates"):  # a store with its own vector index
        emb = make_embedder(home, embedder, FTS_CANDIDATES, progress, loading)
        near = store.vector_candidates(embedder, emb.embed([query])[0], session, FTS_CANDIDATES)
        if near is None:
            import sys

            print("ctx: the store has no vector index (pgvector): semantic search ranks the keyword "
                  "candidates exactly", file=sys.stderr, flush=True)
        for s, c, g, t, sim in near or ():
            pool.setdefault((s, c), (g, t))
            known[(s, c)] = max(0.0, min(1.0, float(sim)))  # the index's cosine: no need to embed the text
    if not pool:
        return []
    keys = list(pool)
    kw_n = [kw.get(k, 0.0) for k in keys]
    if embedder == "keyword":
        scores = kw_n
    else:
        emb = emb or make_embedder(home, embedder, len(keys), progress, loading)
        rest = [k for k in keys if k not in known]
        known.update(zip(rest, emb.similarities(query, [pool[k][1] for k in rest])))
        sims = [known[k] for k in keys]
        scores = [0.5 * a + 0.5 * b for a, b in zip(kw_n, sims)]
    ranked = sorted(zip(keys, scores), key=lambda x: -x[1])[:limit]
    return [{"session": k[0], "chunk": k[1], "score": round(sc, 4), "gist": pool[k][0]} for k, sc in ranked]


def keyword_scores(cands: list[tuple]) -> dict[tuple, float]:
    """{(session, chunk): score in [0, 1]} for a store's keyword candidates (session, chunk, gist,
    text, rank): the rank is lower-is-better (fts5 bm25(), or -ts_rank), scaled to the best hit."""
    keys = [(s, c) for s, c, _, _, _ in cands]
    return dict(zip(keys, normalized([max(0.0, -rank) for *_, rank in cands])))


def resolve_chunk(store: ColdStore, chunk_id: str, session: str | None) -> dict:
    found = store.find(chunk_id, session)
    if not found:
        if unsafe_id(chunk_id):
            raise UsageProblem(f"unsafe chunk id {chunk_id!r}: an id is looked up, never opened as a path, and "
                               f"no chunk has one with '/' or '..' like it")
        where = f" in session {session}" if session else ""
        raise UsageProblem(f"no chunk {chunk_id!r}{where} in cold storage",
                           hint="ctx cold-storage list shows what is there")
    if len(found) > 1:
        sessions = ", ".join(sorted(f["session"] for f in found))
        raise UsageProblem(f"chunk {chunk_id} is in {len(found)} sessions ({sessions}): pass --session")
    return found[0]


def log_recovery(home, entry: dict, method: str, query=None, score=None, into=None) -> str | None:
    """Log a recovery; on a full disk or a read-only home the recovery still stands (what failed
    is returned, for a warning), the log is only the record of it."""
    try:
        logs.append(home, "recovery", {"event": "chunk_recovered", "chunk_id": entry["chunk_id"],
                                       "session_id": entry["session_id"], "method": method, "query": query,
                                       "score": score, "into": into, "tokens": entry.get("tokens"),
                                       "relevance_score_at_drop": entry.get("relevance_score")})
    except OSError as e:
        import errno

        if e.errno not in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES):
            raise
        return f"{e.filename or home.log_path('recovery')}: {e.strerror}"
    return None


def auto_recover(home, records: list[dict], query: str, embedder_name: str, min_score: float,
                 progress=None, loading=None, max_chunks: int = 3) -> tuple[list[dict], list[tuple[str, float]]]:
    """Splice back the cold chunks of this stream's stubs whose similarity to the query passes
    min_score, the best `max_chunks` of them: (records, [(chunk id, similarity) recovered])."""
    from ..core.score import chunk_text

    present = stubs(records)
    if not present:
        return records, []
    store = open_store(home).cold
    entries = []
    for chunk_id, session in present:
        found = store.find(chunk_id, session) if chunk_id else []
        if found:
            entries.append(store.load(found[0]["path"]))
    if not entries:
        return records, []
    emb = make_embedder(home, embedder_name, len(entries), progress, loading)
    sims = emb.similarities(query, [chunk_text(e["records"]) for e in entries])
    done = []
    best = sorted(zip(entries, sims), key=lambda es: -es[1])[:max_chunks]
    for entry, sim in best:
        if sim >= min_score:
            records, ok = splice(records, entry["chunk_id"], entry["session_id"], entry["records"])
            if ok:
                log_recovery(home, entry, "auto", query, round(sim, 4))
                done.append((entry["chunk_id"], sim))
    return records, done
