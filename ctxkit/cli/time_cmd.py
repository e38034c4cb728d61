"""ctx time: now, last interaction, gap class and what to do about it."""
from __future__ import annotations


import click

from ..core.timeutil import parse_ts
from ..services.awareness import time_facts
from .common import emit_object, get_home, home_option, report_options


@click.command("time")
@click.option("--now", "now_", metavar="TIME", help="Pretend it is TIME (ISO-8601).")
@report_options
@home_option
def time_cmd(now_, jq_expr, table, as_json, table_fmt):
    """Time awareness: now, last interaction, the gap and what to do about it.

    Gap classes: < 5 min continue; 5–30 min brief "back to it"; 30 min–2 h re-orient;
    2 h+ summarize where we left off; next day fresh start (review yesterday);
    two days or more: a long break (review the last session's CONTEXT.md). After a
    2-hour pause this is a new session ("Session: Just started"), and the last
    one is named with its length and topic.

    \b
    Examples:
      ctx time
      ctx time --json | jq -r .hint
    """
    ref = parse_ts(now_) if now_ else None
    facts = time_facts(get_home(), ref)
    emit_object(facts, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt,
                human=lambda: [click.echo(line) for line in facts["block"]])
