"""ctx eval: probe recall and compression of a compacted stream against its session."""
from __future__ import annotations

import click

from ..backends.tokenizers import count_records
from ..core.probes import build, score, stream_text
from ..io.adapters import FORMATS, open_records
from ..io.jsonl import Source
from .common import emit_listing, home_option, jq_option, output_options
from .count import resolve_tokenizer, tokenizer_options


@click.command("eval")
@click.argument("session_file", metavar="SESSION", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--candidate", required=True, metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True), help="The compacted (or truncated) stream to test.")
@click.option("--from", "from_", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Format of SESSION; auto sniffs it.")
@tokenizer_options
@jq_option
@output_options
@home_option
def eval_cmd(session_file, candidate, from_, tokenizer, model, jq_expr, table, as_json, table_fmt):
    """Exact-match probes from the span a compaction removed, and their recall in the candidate.

    Probes: files touched (artifact), error lines (error), the last user request's key
    terms (continuation), identifiers and numbers used 3+ times (recall). Also prints the
    compression (share of tokens saved).

    \b
    Examples:
      ctx compact s.jsonl --budget 8000 > c.jsonl && ctx eval s.jsonl --candidate c.jsonl -t
      ctx eval s.jsonl --candidate <(ctx truncate s.jsonl --budget 8000) --jq 'select(.category=="artifact")'
    """
    session = list(open_records(Source(session_file), from_))
    cand = list(open_records(Source(candidate), "auto"))
    cand_ids = {r.get("id") for r in cand if r.get("kind") == "message"}
    span = [r for r in session if r.get("id") not in cand_ids and r.get("kind") == "message"] or session
    rows = score(build(session, span), stream_text(cand))
    tok = resolve_tokenizer(tokenizer, model)
    before = sum(count_records(tok, session))
    after = sum(count_records(tok, cand))
    rows.append({"category": "compression", "tokens_before": before, "tokens_after": after,
                 "recall": round(1 - after / before, 3) if before else None, "span_records": len(span)})
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)
