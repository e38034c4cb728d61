"""Scoring as a service: `ctx score` over a stream of any size, and the weights every scorer
uses (curation too). The records wait in a disk spool; per chunk only whether it is scorable,
its time and (for an embedding model) its capped text stay in memory; BM25 reads each text
back from the spool once."""
from __future__ import annotations

from dataclasses import dataclass

from .. import records as R
from ..core.groups import iter_groups
from ..core.requests import request_text
from ..core.score import SCORE_EVENT, Weights, ages_from_times, chunk_text, chunk_time, score_chunk
from ..core.timeutil import iso, now, parse_ts
from ..errors import UsageProblem


def weights(cfg) -> Weights:
    return Weights(similarity=cfg.get("similarity_weight"), recency=cfg.get("recency_weight"),
                   importance=cfg.get("importance_weight"), half_life_hours=cfg.get("half_life_hours"))


def score_event(query: str, embedder: str, when) -> dict:
    return R.make("event", id=f"score-{iso(when)}", content="", flags=["score"],
                  meta={"type": SCORE_EVENT, "query": query, "embedder": embedder, "now": iso(when)})


def is_score_event(r: dict) -> bool:
    return r.get("kind") == "event" and isinstance(r.get("meta"), dict) and r["meta"].get("type") == SCORE_EVENT


@dataclass
class ScoreRun:
    query: str
    chunks: int
    newly_embedded: int


def score_stream(home, records, query: str | None, embedder_name: str, when, out, make_embedder) -> ScoreRun:
    """Write a score event, then every record with `score` and `score_parts` on each chunk's
    records, to `out`. `query` None: the stream's latest request. `when` None: the stream's
    newest time (so an idle session is not scored as if it had all become irrelevant), else
    the clock. `make_embedder(home, name, n)` builds the embedder (the CLI adds progress)."""
    seen = {"newest": None, "request": None}

    def info(g: list[dict]) -> tuple:
        for r in g:
            if r.get("kind") != "event":
                t = parse_ts(r.get("ts"))
                if t is not None and (seen["newest"] is None or t > seen["newest"]):
                    seen["newest"] = t
            if r.get("role") == "user":
                seen["request"] = request_text(r) or seen["request"]
        scorable = any(r.get("kind") == "message" for r in g)
        return scorable, chunk_text(g) if scorable and embedder_name != "keyword" else "", chunk_time(g)

    from .spool import GroupSpool

    with GroupSpool(info) as spool:
        spool.extend(iter_groups(r for r in records if not is_score_event(r)))
        when = when or seen["newest"] or now()
        query = query or seen["request"]
        if query is None:
            raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
        scorable = [i for i, (ok, _, _) in enumerate(spool.info) if ok]
        texts = ((chunk_text(g) for g in spool.groups(scorable)) if embedder_name == "keyword"
                 else [spool.info[i][1] for i in scorable])
        emb = make_embedder(home, embedder_name, len(scorable))
        sims = emb.similarities(query, texts)
        del texts
        if getattr(emb, "_bar", None):
            emb._bar.close()
        w = weights(home.config)
        ages = ages_from_times([spool.info[i][2] for i in scorable], when)
        by_chunk = {i: (sim, age) for i, sim, age in zip(scorable, sims, ages)}
        out.write(score_event(query, embedder_name, when))
        for i, g in enumerate(spool.groups(range(len(spool)))):
            if i in by_chunk:
                score_chunk(g, *by_chunk[i], w)
            out.write_all(g)
    return ScoreRun(query, len(scorable), getattr(emb, "encoded", 0))
