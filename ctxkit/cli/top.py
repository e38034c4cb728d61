"""ctx top: what is eating the window, biggest chunks first."""
from __future__ import annotations

import click

from ..io.tables import want_table

from .common import InputRecords, emit_listing, home_option, input_options, jq_option, note, output_options
from .count import resolve_tokenizer, tokenizer_options


@click.command("top")
@input_options
@click.option("-n", "--limit", type=click.IntRange(min=1), default=10, show_default=True, metavar="N",
              help="How many chunks.")
@click.option("--all", "count_all", is_flag=True,
              help="Rank the whole history (default: from the last compaction boundary on, what the model sees).")
@tokenizer_options
@jq_option
@output_options
@home_option
def top(file, from_, skip_invalid, limit, count_all, tokenizer, model, jq_expr, table, as_json, table_fmt):
    """List the biggest chunks: kind, tokens, share, age, tool and the file each names.

    A chunk is a message or an assistant turn with its tool calls and results
    (what `ctx drop` drops whole). Without FILE on a terminal: this project's
    newest agent session (`ctx sessions`). `ctx status` says how full; this says
    what fills it.

    \b
    Examples:
      ctx top -n 5
      ctx top s.jsonl --jq 'select(.kind == "tool") | .file' -r | sort | uniq -c
    """
    from ..errors import UsageProblem
    from ..services.usage_view import biggest_chunks

    if table and as_json:
        raise UsageProblem("-t/--table and --json cannot be used together")

    tok = resolve_tokenizer(tokenizer, model)
    rows, total, chunks = biggest_chunks(InputRecords(file, from_, skip_invalid, redact=False), tok, limit, count_all)
    held = sum(r["tokens"] for r in rows)
    where = "in the whole history" if count_all else "from the last compaction boundary on"
    note(f"ctx: {chunks} chunks, {total} tokens {where}; the biggest {len(rows)} hold {held}"
         f" ({held / total:.0%})" if total else f"ctx: no chunks {where}")
    if want_table(table, as_json) and not jq_expr:   # for people: the file's tail, its name never cut
        from ..core.drop import path_tail

        rows = [{**r, "file": path_tail(r["file"], 1) if r["file"] else None} for r in rows]
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view="top")
