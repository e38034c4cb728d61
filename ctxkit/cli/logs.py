"""ctx logs: read ctx's JSONL activity logs."""
from __future__ import annotations

import click

from ..core.timeutil import parse_since
from ..errors import UsageProblem
from ..store import logs as logstore
from ..store.home import LOG_NAMES
from .common import emit_listing, get_home, home_option, jq_option, output_options


@click.command("logs")
@click.argument("name", type=click.Choice(LOG_NAMES + ("path",)))
@click.option("--since", metavar="WHEN", help="Only events since a duration ago (24h, 7d) or an ISO time.")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Only the last N events.")
@jq_option
@output_options
@home_option
def logs(name, since, limit, jq_expr, table, as_json, table_fmt):
    """Show one of ctx's logs: compaction, drops, recovery, curation, context-health.

    JSONL by default (a table with -t); `ctx logs path` prints the log directory.

    \b
    Examples:
      ctx logs context-health --since 24h --jq '.pct_used'
      ctx logs drops -t --since 7d
      ctx logs compaction --json | jq -s 'map(.tokens_before - .tokens_after) | add'
    """
    home = get_home()
    if name == "path":
        from ..store.backend import shared

        click.echo(shared(home).where + " (table ctx_logs)" if shared(home) is not None else home.logs_dir)
        return
    try:
        when = parse_since(since) if since else None
    except ValueError as e:
        raise UsageProblem(f"--since: {e}") from None
    rows = logstore.read(home, name, when)
    if limit:
        from collections import deque

        rows = list(deque(rows, maxlen=limit))
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view=name)
