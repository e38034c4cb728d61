"""ctx score: relevance of every chunk (similarity + recency + importance)."""
from __future__ import annotations

import click

from ..core.requests import last_request
from ..core.timeutil import parse_ts
from ..errors import UsageProblem
from ..io.jsonl import Writer
from ..services.scoring import is_score_event, line_memo, score_stream
from ..services.spool import OutputSpool
from .common import (OldQueryShort, note, InputRecords, embedder_name, emit_listing, get_home, home_option, input_options, jq_option, listing_only,
                     output_options)
from .progress import progress_bar



def make_embedder(home, name: str, n_texts: int):
    """The services' factory with a terminal progress bar."""
    from ..services.embedding import make_embedder as factory

    from .progress import spinner

    return factory(home, name, n_texts, progress_bar, spinner)


@click.command("score", cls=OldQueryShort)
@input_options
@click.option("--query", metavar="TEXT", help="What the agent is working on now.")
@click.option("--query-from", type=click.Choice(["focus", "last-user"]), default="focus", show_default=True,
              help="Without --query: against what the agent is doing (the latest request, the open item, "
              "the files in play), or the newest user request.")
@click.option("--explain", is_flag=True, help="A listing instead: each chunk's score, signals and why (query and "
              "weights on stderr). Takes -t, --json, --fmt, --jq.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]),
              help="minilm (offline model: the ml extra) or keyword (BM25, no model; the default without the ml extra). Config: embedder.")
@click.option("--now", "now_", metavar="TIME", help="Score as if it were TIME (ISO-8601).")
@click.option("--auto-recover", is_flag=True,
              help="Bring back cold chunks of these sessions at auto_recover_min_score or more.")
@jq_option
@output_options
@home_option
def score(file, from_, skip_invalid, query, query_from, explain, embedder, now_, auto_recover, jq_expr, table,
          as_json, table_fmt):
    """Score every chunk's relevance to what the agent will need: `score`, `score_parts` on its records.

    score = (similarity_weight·similarity + recency_weight·exp(-age_hours/half_life_hours)
    + importance_weight·importance + working_set_weight·working_set) / max(1, the sum of
    those four weights) - superseded_weight·superseded, clamped to [0, 1]. Defaults: 0.2,
    0.1 (6 h), 0.05, 0.6 and 0.2 (config). working_set: the chunk names what is in play
    (files written, the open item, open errors, identifiers of the last turns; rare terms
    count most). superseded: the session read or rewrote the same thing later. Rescoring a
    growing session reads and embeds only what is new. More: docs/relevance.md.

    \b
    Examples:
      ctx import s.jsonl | ctx score --query "fix the JWT refresh bug" | ctx drop > kept.jsonl
      ctx score s.jsonl --query-from last-user --embedder keyword | jq -c '{id, score}'
    """
    if query and query_from != "focus":
        raise UsageProblem("--query and --query-from cannot be used together")
    if not explain:
        listing_only(table=table, as_json=as_json, jq_expr=jq_expr, table_fmt=table_fmt, mode="--explain",
                     prints="score prints a record stream")
    home = get_home()
    cfg = home.config
    when = None
    if now_:
        when = parse_ts(now_)
        if when is None:
            raise UsageProblem(f"--now: not an ISO-8601 time: {now_!r}")
    name = embedder_name(home, embedder)
    memo = None if auto_recover else line_memo(home)
    records = InputRecords(file, from_, skip_invalid, memo=memo)
    if auto_recover:  # recovery splices chunks into the stream: it needs the query and the list first
        records = [r for r in records if not is_score_event(r)]
        q = query or last_request(records)
        if q is None:
            raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
        records = _auto_recover(home, records, q, name, cfg.get("auto_recover_min_score"),
                                cfg.get("auto_recover_max_chunks"))
    with OutputSpool() as out:
        run = score_stream(home, records, query, name, when, Writer(out), make_embedder, query_from, explain,
                           memo)
    if explain:
        from ..core.score import weights_line
        from ..services.scoring import weights

        if run.chunks:
            note(f"ctx: query: {' '.join(run.query.split())[:200]}")
            note(f"ctx: weights: {weights_line(weights(cfg))}")
        emit_listing(run.rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view="explain")
    if run.newly_embedded:
        note(f"ctx: scored {run.chunks} chunks ({run.newly_embedded} newly embedded)")


def _auto_recover(home, records, query, embedder_name, min_score, max_chunks=3):
    from ..services.cold import auto_recover

    from .progress import spinner

    records, done = auto_recover(home, records, query, embedder_name, min_score, progress_bar, spinner, max_chunks)
    for chunk_id, sim in done:
        note(f"ctx: auto-recovered {chunk_id} (similarity {sim:.2f})")
    return records

