"""ctx time: now, last interaction, gap class and what to do about it."""
from __future__ import annotations


import click

from ..core.timeinfo import ago, gap_class, pattern, time_block
from ..core.timeutil import iso, now, parse_ts
from ..store import sessions
from .common import emit_object, get_home, home_option, report_options


def time_facts(home, ref=None) -> dict:
    from ..core.timeinfo import SESSION_GAP

    ref = ref or now()
    idx = sessions.load(home)
    entries = sorted((e for e in idx.values() if e.get("last_activity")), key=lambda e: e["last_activity"])
    lasts = [parse_ts(e.get("last_activity")) for e in entries]
    last = max(lasts) if lasts else None
    current = entries[-1] if entries else None
    # the newest session is still going when it was active within SESSION_GAP; else this is a new one
    going = current is not None and last is not None and ref - last < SESSION_GAP
    started = parse_ts(current.get("started")) if going else None
    before = entries[-2] if going and len(entries) >= 2 else (current if not going else None)
    last_session = None
    if before:
        last_session = {"started": parse_ts(before.get("started")), "ended": parse_ts(before.get("last_activity")),
                        "topic": before.get("title") or "", "session": before.get("session")}
    durations = []
    for e in entries[-10:]:
        a, b = parse_ts(e.get("started")), parse_ts(e.get("last_activity"))
        if a and b:
            durations.append(b - a)
    cls, hint = gap_class(last, ref)
    ls = None
    if last_session and last_session["ended"]:
        ls = {"session": last_session["session"], "ended": iso(last_session["ended"]), "topic": last_session["topic"],
              "minutes": int((last_session["ended"] - last_session["started"]).total_seconds() // 60)
              if last_session["started"] else None}
    return {"now": iso(ref), "last_interaction": iso(last) if last else None, "ago": ago(last, ref),
            "session": current.get("session") if going else None,
            "session_started": iso(started) if started else None, "gap_class": cls, "hint": hint,
            "last_session": ls, "pattern": pattern(durations),
            "block": time_block(ref, last, started, durations, last_session)}


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
