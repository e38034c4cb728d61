"""ctx time: now, last interaction, gap class and what to do about it."""
from __future__ import annotations


import click

from ..core.timeinfo import ago, gap_class, pattern, time_block
from ..core.timeutil import iso, now, parse_ts
from ..store import sessions
from .common import emit_object, get_home, home_option, report_options


def time_facts(home, ref=None) -> dict:
    ref = ref or now()
    idx = sessions.load(home)
    entries = sorted(idx.values(), key=lambda e: e.get("last_activity") or "")
    lasts = [parse_ts(e.get("last_activity")) for e in entries if e.get("last_activity")]
    last = max(lasts) if lasts else None
    current = entries[-1] if entries else None
    started = parse_ts(current.get("started")) if current else None
    durations = []
    for e in entries[-10:]:
        a, b = parse_ts(e.get("started")), parse_ts(e.get("last_activity"))
        if a and b:
            durations.append(b - a)
    cls, hint = gap_class(last, ref)
    return {"now": iso(ref), "last_interaction": iso(last) if last else None, "ago": ago(last, ref),
            "session": current.get("session") if current else None,
            "session_started": iso(started) if started else None, "gap_class": cls, "hint": hint,
            "pattern": pattern(durations), "block": time_block(ref, last, started, durations)}


@click.command("time")
@click.option("--now", "now_", metavar="TIME", help="Pretend it is TIME (ISO-8601).")
@report_options
@home_option
def time_cmd(now_, jq_expr, table, as_json, table_fmt):
    """Time awareness: now, last interaction, the gap and what to do about it.

    Gap classes: < 5 min continue; 5–30 min brief "back to it"; 30 min–2 h re-orient;
    2 h+ summarize where we left off; next day fresh start.

    \b
    Examples:
      ctx time
      ctx time --json | jq -r .hint
    """
    ref = parse_ts(now_) if now_ else None
    facts = time_facts(get_home(), ref)
    emit_object(facts, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt,
                human=lambda: [click.echo(line) for line in facts["block"]])
