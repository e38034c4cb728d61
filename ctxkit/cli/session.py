"""ctx session list|show|restore: sessions from the index, logs and cold storage."""
from __future__ import annotations

import json
import os

import click

from .completion import complete_session

from ..core.compact import summary_record
from ..core.context_md import Context
from ..core.timeutil import now_iso
from ..errors import UsageProblem
from ..io.adapters import open_records
from ..io.jsonl import Source, Writer
from ..services.spool import OutputSpool
from ..sources.workspace import ContextFile
from ..store import sessions
from ..store.backend import open_store
from .common import note, emit_listing, emit_object, get_home, get_workspace, home_option, jq_option, output_options, workspace_option, session_prefix


def all_sessions(home) -> dict:
    idx = sessions.load(home)
    try:
        for st in open_store(home).cold.stats():
            e = idx.setdefault(st["session"], {"session": st["session"]})
            e["cold_chunks"] = st["chunks"]
            e.setdefault("last_activity", st["last_drop"])
    except Exception:  # noqa: BLE001 - an unreadable index must not hide the session list
        pass
    return idx


@click.group("session")
def session():
    """Sessions ctx has seen: list them, show one, restore one to continue from.

    \b
    Examples:
      ctx session list -t
      ctx session list --jq .session_id -r > resume.jsonl
    """


@session.command("list")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Only the N most recent sessions.")
@jq_option
@output_options
@home_option
def list_(limit, jq_expr, table, as_json, table_fmt):
    """Sessions, most recent last: started, last activity (and how long ago), records, status, title.

    \b
    Example:
      ctx session list -t
    """
    from ..core.timeinfo import ago
    from ..core.timeutil import now, parse_ts

    ref = now()
    rows = sorted(all_sessions(get_home()).values(), key=lambda e: e.get("last_activity") or "")
    rows = rows[-limit:] if limit else rows
    rows = [{**{k: e.get(k) for k in ("session", "started", "last_activity")},
             "ago": ago(parse_ts(e.get("last_activity")), ref) if e.get("last_activity") else None,
             **{k: e.get(k) for k in ("message_count", "records", "cold_chunks", "status", "title", "agents",
                                      "primary_files", "tags")}}
            for e in rows]
    # on a terminal, what tells sessions apart first: the title before a long (subagent) id
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr, view="sessions")


@session.command("show")
@click.argument("session_id", shell_complete=complete_session, callback=session_prefix)
@jq_option
@output_options
@home_option
def show(session_id, jq_expr, table, as_json, table_fmt):
    """One session's index entry: JSON when piped, a table on a terminal.

    \b
    Examples:
      ctx session show abc --jq .source -r
      ctx session show abc -t
    """
    e = all_sessions(get_home()).get(session_id)
    if e is None:
        raise UsageProblem(f"no session {session_id!r}", hint="ctx session list shows the known ones")
    emit_object(e, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt)


@session.command("restore")
@click.argument("session_id", shell_complete=complete_session, callback=session_prefix)
@click.option("-n", "--limit", "--last", "last_n", type=click.IntRange(min=0), default=10, show_default=True,
              metavar="N", help="How many of the session's last records to print after its state "
                                "(--last is the old name).")
@workspace_option
@home_option
def restore(session_id, last_n):
    """Print the session's CONTEXT.md state (as a summary record) and its last records.

    The stream is ready to continue from: pipe it into an agent or `ctx prompt build
    --records`. The state goes to stderr in human form too.

    \b
    Example:
      ctx session restore abc -n 10 > resume.jsonl
    """
    home = get_home()
    e = all_sessions(home).get(session_id)
    if e is None:
        raise UsageProblem(f"no session {session_id!r}", hint="ctx session list shows the known ones")
    from ..store.session_state import activate, state_file

    ws = get_workspace()
    restored = activate(home, ws, session_id)  # the session's own state becomes the workspace's
    ctx = restored if restored is not None else ContextFile(ws).read()
    if restored is None and ctx.state.get("session") not in (None, session_id):
        note(f"ctx: no stored state for {session_id}; CONTEXT.md belongs to {ctx.state.get('session')}, "
             f"left as it was")
        ctx = Context()
    held = OutputSpool()  # the tail is read before anything is printed: a bad line in it prints nothing
    out = Writer(held)
    if ctx.task or any(ctx.sections.values()):
        out.write(summary_record(Context(task=ctx.task, sections=ctx.sections, latest=ctx.latest), session_id,
                                 now_iso(), {"restored_from": state_file(home, session_id).path if restored
                                             is not None else "CONTEXT.md"}))
    goals = [i.text for i in ctx.sections.get("Goals", []) if not i.done]
    pending = [i.text for i in ctx.sections.get("Pending", []) if not i.done]
    note(f"Session {session_id}: {e.get('title') or ctx.task[:80]}")
    note(f"  Active goals: {len(goals)}" + (f" ({'; '.join(goals[:3])})" if goals else ""))
    note(f"  Last activity: {e.get('last_activity') or 'unknown'}")
    if ctx.latest:
        note(f"  Latest request: {ctx.latest[:160]}")
    nxt = [i.text for i in ctx.sections.get("Next step", [])]  # where compaction says the work goes on
    if nxt:
        note(f"  Next step: {'; '.join(nxt[:2])}")
    if pending:
        note(f"  Pending: {'; '.join(pending[:3])}")
    if not nxt and not pending and restored is not None:
        note("  Next step: none recorded")
    src = e.get("source")
    if last_n and src and os.path.exists(src):
        recs = [r for r in open_records(Source(src)) if r.get("session") == session_id and r.get("kind") != "event"]
        from ..core.groups import iter_groups

        groups = list(iter_groups(recs))
        tail: list[dict] = []
        for g in reversed(groups):  # whole groups only
            if len(tail) >= last_n:
                break
            tail = g + tail
        out.write_all(tail)
    elif last_n:
        note("ctx: the session's transcript is not known (no source in the index)")
    held.commit()
