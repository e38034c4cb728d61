"""ctx drop (low-relevance chunks -> cold storage, a stub stays) and ctx drops (what was dropped)."""
from __future__ import annotations

import tempfile

import click

from .completion import complete_session

from ..core.timeutil import parse_since
from ..errors import UsageProblem
from ..io.jsonl import Writer
from ..services.dropping import commit, drop_stream
from ..store import logs
from ..store.cold import check_id
from .common import note, InputRecords, emit_listing, get_home, home_option, input_options, jq_option, output_options, session_prefix
from .count import resolve_tokenizer


@click.command("drop")
@input_options
@click.option("--cutoff", type=click.FloatRange(0, 1), help="Drop chunks scoring at or below this "
              "(config: relevance_cutoff, 0.3).")
@click.option("--keep", "keep_at", type=click.FloatRange(0, 1), help="Keep chunks scoring at or above this; "
              "those in between are flagged `summarize` (config: relevance_keep, 0.7).")
@click.option("--min-keep", type=click.IntRange(min=0), help="Never drop the newest N chunks "
              "(config: min_chunks_to_keep, 5).")
@click.option("--dry-run", is_flag=True, help="Print each chunk's decision instead; change nothing.")
@click.option("-t", "--table", is_flag=True, help="With --dry-run: a table (default on a terminal).")
@home_option
def drop(file, from_, skip_invalid, cutoff, keep_at, min_keep, dry_run, table):
    """Move low-relevance chunks to cold storage; a one-line stub takes each one's place.

    Reads scored records (run `ctx score` first). KEEP at or above --keep, DROP at or
    below --cutoff, SUMMARIZE (flag for ctx compact) in between. Always kept: the newest
    --min-keep chunks, system records, pinned/important chunks. A dropped chunk is written
    and fsynced to cold-storage/SESSION/CHUNK.jsonl before its stub is printed.

    \b
    Examples:
      ctx import s.jsonl | ctx score --query "fix the JWT refresh bug" | ctx drop > kept.jsonl
      ctx score s.jsonl -q "refresh token" | ctx drop --dry-run -t
    """
    home = get_home()
    cfg = home.config
    cutoff = cfg.get("relevance_cutoff", cutoff)
    keep_at = cfg.get("relevance_keep", keep_at)
    if cutoff > keep_at:
        raise UsageProblem(f"--cutoff {cutoff} is above --keep {keep_at}")
    min_keep = cfg.get("min_chunks_to_keep", min_keep)
    # the output goes to a temporary file and out whole at the end: a failing drop prints nothing
    with tempfile.TemporaryFile("w+", encoding="utf-8") as pending:
        run = drop_stream(home, InputRecords(file, from_, skip_invalid), resolve_tokenizer(None, None), cutoff,
                          keep_at, min_keep, Writer(pending), dry_run)
        if dry_run:
            emit_listing(run.rows, table=table, as_json=False)
            return
        if run.disabled:
            click.echo("ctx: cold_storage_enabled is false: nothing is dropped (dropping needs a place to "
                       "keep the chunks)", err=True)
        pending.seek(0)
        _copy_out(pending)
    commit(home, run, file, cutoff, keep_at, min_keep)
    note(f"ctx: dropped {run.dropped} of {run.total} chunks to cold storage, flagged {run.summarized} to "
         f"summarize; {run.before} -> {run.after} tokens")


def _copy_out(src) -> None:
    import shutil
    import sys

    from ..errors import PipeClosed

    try:
        shutil.copyfileobj(src, sys.stdout, 1 << 20)
        sys.stdout.flush()
    except BrokenPipeError:
        raise PipeClosed() from None


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
    """
    home = get_home()
    if session:
        check_id(session, "session id")
    try:
        when = parse_since(since) if since else None
    except ValueError as e:
        raise UsageProblem(f"--since: {e}") from None
    rows = (ev for ev in logs.read(home, "drops", when)
            if (not session or ev.get("session_id") == session) and (not reason or ev.get("reason") == reason))
    if limit:
        import collections

        rows = collections.deque(rows, maxlen=limit)
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view="drops")

