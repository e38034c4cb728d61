"""ctx score: relevance of every chunk (similarity + recency + importance)."""
from __future__ import annotations

import click

from ..core.groups import iter_groups
from ..core.requests import last_request
from ..core.score import Weights, chunk_text, newest_time, score_groups
from ..core.timeutil import iso, now, parse_ts
from ..errors import UsageProblem
from ..io.jsonl import Writer
from .. import records as R
from .common import note, InputRecords, get_home, home_option, input_options
from .progress import progress_bar

SCORE_EVENT = "score"


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
    records = [r for r in InputRecords(file, from_, skip_invalid)
               if not (r.get("kind") == "event" and (r.get("meta") or {}).get("type") == SCORE_EVENT)]
    if now_:
        when = parse_ts(now_)
        if when is None:
            raise UsageProblem(f"--now: not an ISO-8601 time: {now_!r}")
    else:
        # Ages count from the conversation's own newest record, so an idle session is not
        # scored as if all of it had become irrelevant; no timestamps at all -> the clock.
        when = newest_time(records) or now()
    if query_from == "last-user" or (not query and not query_from):
        query = last_request(records)
        if query is None:
            raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
    name = cfg.get("embedder", embedder)
    if auto_recover:
        records = _auto_recover(home, records, query, name, cfg.get("auto_recover_min_score"))
    groups = list(iter_groups(records))
    scorable = [i for i, g in enumerate(groups) if any(r.get("kind") == "message" for r in g)]
    texts = [chunk_text(groups[i]) for i in scorable]
    emb = make_embedder(home, name, len(texts))
    sims = emb.similarities(query, texts)
    if getattr(emb, "_bar", None):
        emb._bar.close()
    w = Weights(similarity=cfg.get("similarity_weight"), recency=cfg.get("recency_weight"),
                importance=cfg.get("importance_weight"), half_life_hours=cfg.get("half_life_hours"))
    score_groups([groups[i] for i in scorable], sims, when, w)
    out = Writer()
    out.write(score_event(query, name, when))
    for g in groups:
        out.write_all(g)
    if getattr(emb, "encoded", 0):
        note(f"ctx: scored {len(scorable)} chunks ({emb.encoded} newly embedded)")


def _auto_recover(home, records, query, embedder_name, min_score):
    from ..services.cold import auto_recover

    from .progress import spinner

    records, done = auto_recover(home, records, query, embedder_name, min_score, progress_bar, spinner)
    for chunk_id, sim in done:
        note(f"ctx: auto-recovered {chunk_id} (similarity {sim:.2f})")
    return records

