"""Seed 003's memory curation, run by `ctx maintain` (and so by the Stop hook) when usage
reaches curation_trigger_pct: the session's chunks are scored against what the agent is doing
(`ctx score`'s default query: the latest real request, the open plan item, the agent's last
words, the files in play; never a bare "continue"), and those at or below relevance_cutoff go
to cold storage (durable, searchable, recoverable by id), so the next compaction and the prompt work from what matters. The
curation.jsonl event says what it found and how many drops it triggered.
"""
from __future__ import annotations

from ..backends.tokenizers import count_records
from ..core.drop import DROP, decide_facts, facts, gist
from ..core.groups import iter_groups
from ..core.score import chunk_text, newest_time, score_groups
from ..core.timeutil import now
from ..store import logs
from ..store.backend import open_store
from .dropping import to_cold
from .scoring import signals, weights


def curate(home, cfg, records: list[dict], query: str, tok, memory_hits: int = 0) -> dict:
    """Score, decide and move the low-relevance chunks to cold storage; the curation event."""
    from .embedding import make_embedder, resolve_embedder

    groups = [g for g in iter_groups([dict(r) for r in records]) if g]
    scorable = [g for g in groups if any(r.get("kind") == "message" for r in g)]
    name, _ = resolve_embedder(cfg)  # the default MiniLM not installed: keywords (the event names it)
    emb = make_embedder(home, name, len(scorable))
    sims = emb.similarities(query, [chunk_text(g) for g in scorable])
    score_groups(scorable, sims, newest_time(records) or now(), weights(cfg), *signals(scorable))
    tokens = [sum(count_records(tok, g, reuse=True)) for g in groups]
    cutoff = cfg.get("relevance_cutoff")
    decisions = decide_facts([facts(g, t) for g, t in zip(groups, tokens)], cutoff, cfg.get("relevance_keep"),
                             cfg.get("min_chunks_to_keep"), False)
    store = open_store(home).cold
    days = cfg.get("recoverable_for_days")
    triggered = saved = 0
    if cfg.get("cold_storage_enabled"):
        for g, t, d in zip(groups, tokens, decisions):
            if d.action != DROP:
                continue
            orig = [{k: v for k, v in r.items() if k not in ("score", "score_parts")} for r in g]
            # a chunk curated on an earlier turn is not logged again
            _, _, redrop = to_cold(home, store, orig, t, "curation", d.score, query, cutoff, days, gist(g, 80),
                                   log_redrop=False)
            if not redrop:
                triggered += 1
                saved += t
    event = {"event": "memfas_curation", "query": query[:200], "hits_found": memory_hits,
             "total_hits_before_curation": len(scorable), "token_savings": saved, "drops_triggered": triggered,
             "embedder": name}
    logs.append(home, "curation", event)
    return event
