"""ctx score: relevance of every chunk (similarity + recency + importance)."""
from __future__ import annotations

import click

from ..core.groups import iter_groups
from ..core.requests import last_request
from ..core.score import SCORE_EVENT, Weights, chunk_text
from ..core.timeutil import iso, now, parse_ts
from ..errors import UsageProblem
from ..io.jsonl import Writer
from .. import records as R
from .common import note, InputRecords, get_home, home_option, input_options
from .progress import progress_bar



def score_event(query: str, embedder: str, when) -> dict:
    return R.make("event", id=f"score-{iso(when)}", content="", flags=["score"],
                  meta={"type": SCORE_EVENT, "query": query, "embedder": embedder, "now": iso(when)})


def make_embedder(home, name: str, n_texts: int):
    """The services' factory with a terminal progress bar."""
    from ..services.embedding import make_embedder as factory

    from .progress import spinner

    return factory(home, name, n_texts, progress_bar, spinner)


@click.command("score")
@input_options
@click.option("--query", "-q", metavar="TEXT", help="What the agent is working on now.")
@click.option("--query-from", type=click.Choice(["last-user"]),
              help="Take the query from the newest user message in the stream.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]),
              help="minilm (sentence-transformers, offline) or keyword (BM25, no model). Config: embedder.")
@click.option("--now", "now_", metavar="TIME", help="Score as if it were TIME (ISO-8601), for reproducible runs.")
@click.option("--auto-recover", is_flag=True,
              help="Bring back cold chunks of these sessions whose similarity passes auto_recover_min_score.")
@home_option
def score(file, from_, skip_invalid, query, query_from, embedder, now_, auto_recover):
    """Score every chunk's relevance to the query and write `score`, `score_parts` on its records.

    score = similarity_weight·similarity + recency_weight·exp(-age_hours/half_life_hours)
    + importance_weight·importance (weights, half-life from config). Records without
    timestamps get recency from their position. Embeddings are cached by
    (model, sha256 of text), so rescoring a growing session only embeds what is new.

    \b
    Examples:
      ctx import s.jsonl | ctx score --query "fix the JWT refresh bug" | ctx drop > kept.jsonl
      ctx score s.jsonl --query-from last-user --embedder keyword | jq -c '{id, score}'
    """
    if query and query_from:
        raise UsageProblem("--query and --query-from cannot be used together")
    home = get_home()
    cfg = home.config
    from ..core.requests import request_text
    from ..core.score import ages_from_times, chunk_time, score_chunk
    from ..services.spool import GroupSpool

    if now_ and parse_ts(now_) is None:
        raise UsageProblem(f"--now: not an ISO-8601 time: {now_!r}")
    name = cfg.get("embedder", embedder)
    records = (r for r in InputRecords(file, from_, skip_invalid)
               if not (r.get("kind") == "event" and (r.get("meta") or {}).get("type") == SCORE_EVENT))
    if auto_recover:  # recovery splices chunks into the stream: it needs the query and the list first
        records = list(records)
        q = query if query and not query_from else last_request(records)
        if q is None:
            raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
        records = _auto_recover(home, records, q, name, cfg.get("auto_recover_min_score"),
                                cfg.get("auto_recover_max_chunks"))
    seen = {"newest": None, "request": None}

    def info(g: list[dict]) -> tuple:
        """Kept in memory per chunk (the records wait on disk): scorable?, its text, its time."""
        for r in g:
            if r.get("kind") != "event":
                t = parse_ts(r.get("ts"))
                if t is not None and (seen["newest"] is None or t > seen["newest"]):
                    seen["newest"] = t
            if r.get("role") == "user":
                seen["request"] = request_text(r) or seen["request"]
        scorable = any(r.get("kind") == "message" for r in g)
        # keyword scoring reads each text back from the spool once: no text stays in memory
        return scorable, chunk_text(g) if scorable and name != "keyword" else "", chunk_time(g)

    with GroupSpool(info) as spool:
        spool.extend(iter_groups(records))
        # Ages count from the conversation's own newest record, so an idle session is not
        # scored as if all of it had become irrelevant; no timestamps at all -> the clock.
        when = parse_ts(now_) if now_ else (seen["newest"] or now())
        if query_from == "last-user" or (not query and not query_from):
            query = seen["request"]
            if query is None:
                raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
        scorable = [i for i, (ok, _, _) in enumerate(spool.info) if ok]
        texts = ((chunk_text(g) for g in spool.groups(scorable)) if name == "keyword"
                 else [spool.info[i][1] for i in scorable])
        emb = make_embedder(home, name, len(scorable))
        sims = emb.similarities(query, texts)
        del texts
        if getattr(emb, "_bar", None):
            emb._bar.close()
        w = Weights(similarity=cfg.get("similarity_weight"), recency=cfg.get("recency_weight"),
                    importance=cfg.get("importance_weight"), half_life_hours=cfg.get("half_life_hours"))
        ages = ages_from_times([spool.info[i][2] for i in scorable], when)
        by_chunk = {i: (sim, age) for i, sim, age in zip(scorable, sims, ages)}
        out = Writer()
        out.write(score_event(query, name, when))
        for i, g in enumerate(spool.groups(range(len(spool)))):
            if i in by_chunk:
                score_chunk(g, *by_chunk[i], w)
            out.write_all(g)
    if getattr(emb, "encoded", 0):
        note(f"ctx: scored {len(scorable)} chunks ({emb.encoded} newly embedded)")


def _auto_recover(home, records, query, embedder_name, min_score, max_chunks=3):
    from ..services.cold import auto_recover

    from .progress import spinner

    records, done = auto_recover(home, records, query, embedder_name, min_score, progress_bar, spinner, max_chunks)
    for chunk_id, sim in done:
        note(f"ctx: auto-recovered {chunk_id} (similarity {sim:.2f})")
    return records

