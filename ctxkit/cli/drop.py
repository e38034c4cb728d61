"""ctx drop (low-relevance chunks -> cold storage, a stub stays) and ctx drops (what was dropped)."""
from __future__ import annotations

import click

from .completion import complete_session

from ..core.timeutil import parse_since
from ..errors import UsageProblem
from ..io.jsonl import Writer
from ..services.dropping import Budget, commit, drop_stream
from ..services.spool import OutputSpool
from ..store import logs
from ..store.cold import check_id
from .common import (Fraction, note, InputRecords, emit_listing, get_home, home_option, input_options, jq_option,
                     listing_only, output_options, session_prefix)
from .count import resolve_tokenizer


@click.command("drop")
@input_options
@click.option("--cutoff", type=Fraction(0, 1), help="Drop chunks scoring at or below this "
              "(config: relevance_cutoff, 0.2).")
@click.option("--keep", "keep_at", type=Fraction(0, 1), help="Keep chunks scoring at or above this "
              "(config: relevance_keep, 0.5).")
@click.option("--min-keep", type=click.IntRange(min=0), help="Never drop the newest N chunks "
              "(config: min_chunks_to_keep, 5).")
@click.option("--free", "free", type=Fraction(0, 1), metavar="FRACTION",
              help="Free this share of the stream's tokens instead, least relevant chunks first (shrunk or "
              "dropped, whichever loses least per token; --keep fences chunks off only when given).")
@click.option("--to-tokens", type=click.IntRange(min=0), metavar="N",
              help="Like --free, down to N tokens.")
@click.option("--shrink/--no-shrink", default=None, help="Shrink large tool outputs between the thresholds "
              "(config: shrink_outputs, on).")
@click.option("--all", "whole", is_flag=True, help="Work on the whole history (default: from the last compaction "
              "boundary on, what the model sees).")
@click.option("--dry-run", is_flag=True, help="A listing of each chunk's decision instead (totals on stderr); "
              "change nothing. Takes -t, --json, --fmt, --jq.")
@jq_option
@output_options
@home_option
def drop(file, from_, skip_invalid, cutoff, keep_at, min_keep, free, to_tokens, shrink, whole, dry_run, jq_expr, table,
         as_json, table_fmt):
    """Move low-relevance chunks to cold storage; a one-line stub takes each one's place.

    Reads scored records (`ctx score` first). KEEP at or above --keep, DROP at or below
    --cutoff; in between, a large tool output is SHRUNK (its head, tail and the lines naming
    what is in play) and other chunks are flagged SUMMARIZE for `ctx compact`. Always kept:
    the newest --min-keep chunks, system records, pinned chunks. Each chunk is in cold
    storage, fsynced, before its stub is printed; `ctx recover` gives it back exactly.
    --free and --to-tokens: docs/relevance.md.

    \b
    Examples:
      ctx import s.jsonl | ctx score | ctx drop --free 0.5 > kept.jsonl
      ctx import s.jsonl | ctx score --query "fix the JWT refresh bug" | ctx drop > kept.jsonl
      ctx score s.jsonl --query "refresh token" | ctx drop --dry-run -t
    """
    if not dry_run:
        listing_only(table=table, as_json=as_json, jq_expr=jq_expr, table_fmt=table_fmt, mode="--dry-run",
                     prints="drop prints a record stream")
    home = get_home()
    cfg = home.config
    budget_keep = keep_at   # with a budget, only an explicit --keep fences chunks off
    cutoff = cfg.get("relevance_cutoff", cutoff)
    keep_at = cfg.get("relevance_keep", keep_at)
    if cutoff > keep_at:
        if budget_keep is not None:
            raise UsageProblem(f"--cutoff {cutoff} is above --keep {keep_at}")
        keep_at = cutoff   # a --cutoff above the configured keep: nothing is left to shrink or flag
    if free is not None and to_tokens is not None:
        raise UsageProblem("--free and --to-tokens cannot be used together")
    min_keep = cfg.get("min_chunks_to_keep", min_keep)
    shrink = cfg.get("shrink_outputs", shrink)
    budget = Budget(free, to_tokens) if (free is not None or to_tokens is not None) else None
    if budget is not None:
        keep_at = budget_keep if budget_keep is not None else 1.01
    # the output is held back and goes out whole once the drop is logged: a failing drop prints nothing
    from ..store import sessions

    sessions.check(home)  # a damaged index fails the drop before any chunk is written
    pending = OutputSpool()
    try:
        run = drop_stream(home, InputRecords(file, from_, skip_invalid), resolve_tokenizer(None, None), cutoff,
                          keep_at, min_keep, Writer(pending), dry_run, budget, shrink, whole)
        if dry_run:
            pending.close()
            emit_listing(run.rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view="drop-plan")
            note(f"ctx: would drop {run.dropped} of {run.total} chunks, shrink {run.shrunk}, flag {run.summarized} "
                 f"to summarize; {run.before} -> {run.after} tokens (frees {run.before - run.after})")
            if not run.in_reach:
                note(f"ctx: freeing {run.target} tokens is out of reach: what can go goes, and shrunk outputs "
                     f"keep their kept lines")
            _note_hidden(run)
            return
        if run.disabled:
            click.echo("ctx: cold_storage_enabled is false: nothing is dropped (dropping needs a place to "
                       "keep the chunks)", err=True)
        commit(home, run, file, cutoff, keep_at, min_keep)
    except BaseException:
        pending.close()
        raise
    pending.commit()
    note(f"ctx: dropped {run.dropped} of {run.total} chunks to cold storage, shrunk {run.shrunk}, flagged "
         f"{run.summarized} to summarize; {run.before} -> {run.after} tokens")
    if not run.in_reach:
        note(f"ctx: freeing {run.target} tokens is out of reach (the newest {min_keep} chunks, pinned, system and "
             f"small chunks stay); freed {run.before - run.after}, and shrunk outputs keep their kept lines")
    _note_hidden(run)


def _note_hidden(run) -> None:
    if run.hidden:
        seen_before, seen_after = run.seen
        note(f"ctx: after the last compaction boundary, what the model sees: {seen_before} -> {seen_after} tokens "
             f"(`ctx status` and `ctx count` count this); the {run.hidden} tokens before it are history the "
             f"model no longer sees, left as they are (--all works on them too)")


@click.command("drops")
@click.option("--session", metavar="ID", shell_complete=complete_session, callback=session_prefix, help="Only this session.")
@click.option("--since", metavar="WHEN", help="Only drops since a duration ago (24h, 7d) or an ISO time.")
@click.option("--reason", metavar="R", help="Only this drop reason (e.g. low_relevance).")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Only the last N drops.")
@jq_option
@output_options
@home_option
def drops(session, since, reason, limit, jq_expr, table, as_json, table_fmt):
    """What was dropped, when and why (from logs/drops.jsonl).

    \b
    Examples:
      ctx drops --session abc --since 24h -t
      ctx drops -n 5
      ctx drops --jq .relevance_score | sort -n | uniq -c
      ctx drops --since 24h --jq .tokens_freed | awk '{s += $1} END {print s}'

    Each entry: `tokens` the chunk's whole size (what cold storage holds), `tokens_freed` what
    leaving it out freed in the stream (the chunk minus its stub, or minus its shrunk form for a
    `chunk_shrunk`; null on entries from before it was recorded); `threshold_used` is null for a
    --free or --to-tokens run.
    """
    home = get_home()
    if session:
        check_id(session, "session id")
    try:
        when = parse_since(since) if since else None
    except ValueError as e:
        raise UsageProblem(f"--since: {e}") from None
    rows = (logs.drop_event(ev) for ev in logs.read(home, "drops", when)
            if (not session or ev.get("session_id") == session) and (not reason or ev.get("reason") == reason))
    if limit:
        import collections

        rows = collections.deque(rows, maxlen=limit)
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view="drops")

