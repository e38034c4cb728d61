"""Scoring as a service: `ctx score` over a stream of any size, and the weights every scorer
uses (curation too). The records wait in a disk spool; per chunk only whether it is scorable,
its time and (for an embedding model) its capped text stay in memory; BM25 reads each text
back from the spool once."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .. import records as R
from ..core.drop import gist
from ..core.working_set import FocusTracker, reads_of, terms_of
from ..core.groups import iter_groups
from ..core.score import (SCORE_EVENT, Weights, ages_from_times, chunk_text, chunk_time, score_chunk,
                          working_set)
from ..core.timeutil import iso, now, parse_ts
from ..errors import UsageProblem


def weights(cfg) -> Weights:
    return Weights(similarity=cfg.get("similarity_weight"), recency=cfg.get("recency_weight"),
                   importance=cfg.get("importance_weight"), half_life_hours=cfg.get("half_life_hours"),
                   working_set=cfg.get("working_set_weight"), superseded=cfg.get("superseded_weight"))


TERMS_CAP = 20_000  # characters of one record read for its terms
IN_PLAY_CAP = 400   # terms in play the score event carries (drop shrinks around them)


def score_event(query: str, embedder: str, when, focus=None, in_play=()) -> dict:
    meta = {"type": SCORE_EVENT, "query": query, "embedder": embedder, "now": iso(when)}
    if focus is not None:
        meta["focus"] = focus.explain()
        meta["in_play"] = sorted(in_play)[:IN_PLAY_CAP]
    return R.make("event", id=f"score-{iso(when)}", content="", flags=["score"], meta=meta)


def in_play_terms(event: dict | None) -> set[str]:
    """The working set a score event names (empty for older events)."""
    meta = (event or {}).get("meta") or {}
    return set(meta.get("in_play") or ())


def is_score_event(r: dict) -> bool:
    return r.get("kind") == "event" and isinstance(r.get("meta"), dict) and r["meta"].get("type") == SCORE_EVENT


@dataclass
class ScoreRun:
    query: str
    chunks: int
    newly_embedded: int
    focus: object = None
    rows: list | None = None      # with explain: one row per scored chunk


QUERY_MODES = ("focus", "last-user")


def chunk_terms(g: list[dict]) -> set[str]:
    """Everything a chunk names (its text, tool calls and results, thinking left out)."""
    parts = []
    for r in g:
        if "thinking" in R.flags(r) or "reasoning" in R.flags(r):
            continue
        if r.get("content"):
            parts.append(r["content"][:TERMS_CAP])
        for c in r.get("tool_calls") or ():
            parts.append(R.tool_call_text(c)[:TERMS_CAP])
    return terms_of("\n".join(parts))


def score_stream(home, records, query: str | None, embedder_name: str, when, out, make_embedder,
                 query_from: str = "focus", explain: bool = False) -> ScoreRun:
    """Write a score event, then every record with `score` and `score_parts` on each chunk's
    records, to `out`. `query` None: from `query_from`: "focus" (what the agent is doing:
    latest real request, open plan item, intention, files in play) or "last-user" (the newest
    request; the focus when it carries no content, such as "continue"). `when` None: the
    stream's newest time (so an idle session is not scored as if it had all become
    irrelevant), else the clock. `make_embedder(home, name, n)` builds the embedder (the CLI
    adds progress). With `explain`, `out` gets nothing and `rows` say why each chunk scored so."""
    seen = {"newest": None}
    tracker = FocusTracker()
    df: Counter = Counter()

    def info(g: list[dict]) -> tuple:
        for r in g:
            if r.get("kind") != "event":
                t = parse_ts(r.get("ts"))
                if t is not None and (seen["newest"] is None or t > seen["newest"]):
                    seen["newest"] = t
            tracker.feed(r)
        scorable = any(r.get("kind") == "message" for r in g)
        terms = frozenset(chunk_terms(g)) if scorable else frozenset()
        df.update(terms)
        reads, writes = reads_of(actions=tracker.actions) if scorable else ((), ())
        tracker.actions.clear()
        return (scorable, chunk_text(g) if scorable and embedder_name != "keyword" else "", chunk_time(g),
                terms, tuple(reads), tuple(writes))

    from .spool import GroupSpool

    with GroupSpool(info) as spool:
        spool.extend(iter_groups(r for r in records if not is_score_event(r)))
        when = when or seen["newest"] or now()
        focus = tracker.focus()
        if query is None:
            if query_from == "last-user" and not focus.contentless and focus.latest:
                query = focus.latest
            else:
                query = focus.query() or None
        if query is None:
            raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
        scorable = [i for i, info_ in enumerate(spool.info) if info_[0]]
        texts = ((chunk_text(g) for g in spool.groups(scorable)) if embedder_name == "keyword"
                 else [spool.info[i][1] for i in scorable])
        emb = make_embedder(home, embedder_name, len(scorable))
        sims = emb.similarities(query, texts)
        del texts
        if getattr(emb, "_bar", None):
            emb._bar.close()
        w = weights(home.config)
        ages = ages_from_times([spool.info[i][2] for i in scorable], when)
        in_play = focus.terms()
        sup = superseded([spool.info[i][4:6] for i in scorable])
        by_chunk = {}
        for k, (i, sim, age) in enumerate(zip(scorable, sims, ages)):
            by_chunk[i] = (sim, age, working_set(spool.info[i][3], in_play, df), sup[k])
        rows = [] if explain else None
        if not explain:
            out.write(score_event(query, embedder_name, when, focus, _worth_keeping(in_play, df)))
        for i, g in enumerate(spool.groups(range(len(spool)))):
            if i in by_chunk:
                sim, age, ws, sp = by_chunk[i]
                score_chunk(g, sim, age, w, ws, sp)
                if explain:
                    rows.append(_explain_row(g, w, sorted(t for t in spool.info[i][3] if t in in_play),
                                             spool.info[i][4] if sp else ()))
            if not explain:
                out.write_all(g)
    return ScoreRun(query, len(scorable), getattr(emb, "encoded", 0), focus, rows)


def signals(groups: list[list[dict]]) -> tuple[list[float], list[float]]:
    """(working set, superseded) of each chunk of an in-memory stream, as `score_stream` finds them."""
    tracker = FocusTracker()
    df: Counter = Counter()
    terms = []
    for g in groups:
        for r in g:
            tracker.feed(r)
        t = frozenset(chunk_terms(g))
        df.update(t)
        terms.append(t)
    in_play = tracker.focus().terms()
    return [working_set(t, in_play, df) for t in terms], superseded([reads_of(g) for g in groups])


def _worth_keeping(in_play: set, df: Counter) -> set:
    """The terms in play a shrunk output should keep lines for: those some chunk names."""
    return {t for t in in_play if df.get(t)}


def superseded(chunks) -> list[float]:
    """Per chunk (its read paths, its whole-file writes): 1.0 when every file it read was read
    again or written whole by a later chunk; a chunk that read nothing is 0.0."""
    last_touch: dict = {}
    for k, (reads, writes) in enumerate(chunks):
        for p in (*reads, *writes):
            last_touch[p] = k
    out = []
    for k, (reads, _) in enumerate(chunks):
        out.append(1.0 if reads and all(last_touch.get(p, k) > k for p in reads) else 0.0)
    return out


def _explain_row(g: list[dict], w: Weights, hits: list[str], read: tuple) -> dict:
    p = g[0].get("score_parts") or {}
    why = []
    if p.get("working_set"):
        why.append("names what is in play: " + ", ".join(hits[:6]))
    if p.get("superseded"):
        why.append("superseded: " + ", ".join(read[:3]) + " read again or rewritten later")
    return {"chunk_id": g[0].get("group"), "score": g[0].get("score"),
            "similarity": p.get("similarity"), "recency": p.get("recency"), "importance": p.get("importance"),
            "working_set": p.get("working_set"), "superseded": p.get("superseded"),
            "weights": f"{w.similarity}/{w.recency}/{w.importance}/{w.working_set}/-{w.superseded}",
            "why": "; ".join(why), "gist": gist(g, 60)}
