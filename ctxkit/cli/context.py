"""ctx context show|update|path: the CONTEXT.md working-state document."""
from __future__ import annotations

import json

import click

from ..core.context_md import Item, merge_items, render
from ..errors import UsageProblem
from ..sources.workspace import ContextFile
from .common import emit_object, get_home, note, report_options, get_workspace, home_option, workspace_option


@click.group("context")
def context():
    """Read and update CONTEXT.md, the one working-state document.

    \b
    Examples:
      ctx context show
      ctx context update --focus "JWT refresh" --add-decision "Use RS256" --why "key rotation"
    """


@context.command("show")
@click.option("--session", "session_prefix", metavar="ID", help="That session's own state (a unique prefix of its "
              "id) instead of the current project's CONTEXT.md.")
@report_options
@workspace_option
@home_option
def show(jq_expr, table, as_json, table_fmt, session_prefix):
    """Print CONTEXT.md: the document as markdown (on a terminal and piped, as `cat` would), or
    the structured view with --json / --jq.

    \b
    Examples:
      ctx context show
      ctx context show --session abc
      ctx context show --json | jq '.sections.Files'
    """
    cf = ContextFile(get_workspace())
    if session_prefix:
        from ..store.session_state import state_file
        from ..store.sessions import resolve

        home = get_home()
        cf = state_file(home, resolve(home, session_prefix))
    ctx = cf.read()
    if table and as_json:
        raise UsageProblem("-t/--table and --json cannot be used together")
    if as_json or jq_expr:
        emit_object({"path": cf.path, **ctx.as_dict()}, as_json=True, jq_expr=jq_expr)
    elif cf.exists():
        from ..store import redaction

        click.echo(redaction.text(render(ctx)), nl=False)  # a hand-edited file may hold what ctx must not print
    else:
        note(f"ctx: no CONTEXT.md yet at {cf.path} (ctx compact or ctx context update writes one)")


@context.command("path")
@workspace_option
@home_option
def path():
    """Print the path of CONTEXT.md.

    \b
    Example:
      $EDITOR "$(ctx context path)"
    """
    click.echo(ContextFile(get_workspace()).path)


def _now_item(items: list[Item], label: str, value: str) -> list[Item]:
    rest = [i for i in items if not i.text.lower().startswith(label.lower() + ":")]
    return [Item(text=f"{label}: {value}")] + rest if value else rest


@context.command("update")
@click.option("--focus", metavar="TEXT", help="Now → Focus.")
@click.option("--task", metavar="TEXT", help="The Task sentence (and Now → Task).")
@click.option("--blocked", metavar="TEXT", help="Now → Blocked.")
@click.option("--add-decision", "decisions", multiple=True, metavar="TEXT", help="Append to Decisions.")
@click.option("--why", metavar="TEXT", help="Rationale for the decision(s) added.")
@click.option("--add-fact", "facts", multiple=True, metavar="TEXT", help="Append to Facts (every one is kept).")
@click.option("--add-pending", "pending", multiple=True, metavar="TEXT", help="Append an open item to Pending.")
@click.option("--done", "done", multiple=True, metavar="TEXT", help="Tick the Pending item with this text.")
@click.option("--add-error", "errors", multiple=True, metavar="TEXT", help="Append to Errors.")
@click.option("--add-recent", "recent", multiple=True, metavar="TEXT", help="Append to Recent (max 5).")
@click.option("--agent", metavar="NAME", help="Who made the change (kept on decisions).")
@click.option("--if-version", type=int, metavar="N", help="Only if CONTEXT.md is still at version N; exit 4 otherwise.")
@click.option("--json", "as_json", is_flag=True, help="Print the new structured state.")
@workspace_option
@home_option
def update(focus, task, blocked, decisions, why, facts, pending, done, errors, recent, agent, if_version, as_json):
    """Change CONTEXT.md under a lock and bump its version (safe with many writers).

    Items added by hand are all kept. Focus, Task and Blocked are derived again from the
    session by `ctx observe` and each compaction; a Now line of your own wording stays.

    \b
    Examples:
      ctx context update --focus "refresh tokens" --add-pending "test the refresh flow"
      v=$(ctx context show --json | jq .version); ctx context update --if-version "$v" --done "test the refresh flow"
    """
    def change(ctx):
        now = ctx.items("Now")
        if focus is not None:
            now = _now_item(now, "Focus", focus)
        if task is not None:
            ctx.task = task
            now = _now_item(now, "Task", task)
        if blocked is not None:
            now = _now_item(now, "Blocked", blocked)
        if now:
            order = {"focus": 0, "task": 1, "blocked": 2}
            now.sort(key=lambda i: order.get(i.text.split(":", 1)[0].lower(), 3))
            ctx.sections["Now"] = now
        # what a person adds by hand is kept, however many (cap=0): no item leaves without a word
        if decisions:
            ctx.sections["Decisions"] = merge_items(ctx.items("Decisions"),
                                                    [Item(text=d, why=why, by=agent) for d in decisions], cap=0)
        if facts:
            ctx.sections["Facts"] = merge_items(ctx.items("Facts"), [Item(text=f) for f in facts], cap=0)
        if pending:
            ctx.sections["Pending"] = merge_items(ctx.items("Pending"), [Item(text=p, done=False) for p in pending],
                                                  cap=0)
        for d in done:
            for item in ctx.items("Pending"):
                if item.text == d or item.key() == Item(text=d).key():
                    item.done = True
        if errors:
            ctx.sections["Errors"] = merge_items(ctx.items("Errors"), [Item(text=e) for e in errors], cap=0)
        if recent:
            kept = merge_items(ctx.items("Recent"), [Item(text=r) for r in recent], cap=0)
            gone[:] = [i.text for i in kept[:-5]]  # Recent holds five: the oldest leave, and stderr says which
            ctx.sections["Recent"] = kept[-5:]
        return ctx

    gone: list[str] = []

    new = ContextFile(get_workspace()).update(change, if_version)
    for text in gone:
        note(f"ctx: Recent keeps five items: {text!r} left it")
    if as_json:
        click.echo(json.dumps(new.as_dict()))
    else:
        note(f"ctx: CONTEXT.md is at version {new.version}")


def _archive(home, ctx_file: ContextFile) -> str | None:
    from ..store.session_state import archive_context

    return archive_context(home, ctx_file)


@context.command("archive")
@click.option("--title", metavar="TEXT", help="Also keep it as a long-term memory entry under this title "
                                               "(observations/…_archive_TITLE.md: found by ctx memory search).")
@workspace_option
@home_option
def archive(title):
    """Copy CONTEXT.md into $CTX_HOME/archive/ and print the copy's path.

    With --title, the session's task, decisions, facts and outcomes also become a
    long-term memory entry in the workspace's observations/ (its path printed too), so
    `ctx memory search` finds them after CONTEXT.md is cleared.

    \b
    Examples:
      ctx context archive && ctx context clear --no-archive
      ctx context archive --title "JWT auth with RS256"
    """
    from .common import get_home

    cf = ContextFile(get_workspace())
    dest = _archive(get_home(), cf)
    if dest is None:
        note("ctx: no CONTEXT.md to archive")
        return
    click.echo(dest)
    if title:
        from ..services.memory import archive_fragment
        from ..store.backend import memory_store

        click.echo(archive_fragment(get_workspace(), cf.read(), title,
                                    memory=memory_store(get_home(), get_workspace())))


@context.command("clear")
@click.option("--all", "clear_all", is_flag=True, help="Clear Constraints and Pinned too (workspace-level facts).")
@click.option("--no-archive", is_flag=True, help="Do not keep a copy in $CTX_HOME/archive/ first.")
@workspace_option
@home_option
def clear(clear_all, no_archive):
    """Start CONTEXT.md afresh: archive it, then empty the session's state.

    Constraints and Pinned are workspace-level and stay unless --all.

    \b
    Examples:
      ctx context clear
      ctx context clear --all --no-archive
    """
    from ..core.context_md import Context
    from ..store.session_state import WORKSPACE_SECTIONS
    from .common import get_home

    cf = ContextFile(get_workspace())
    if not cf.exists():
        note("ctx: no CONTEXT.md to clear")
        return
    dest = None if no_archive else _archive(get_home(), cf)

    def change(cur):
        keep = {} if clear_all else {k: list(cur.sections[k]) for k in WORKSPACE_SECTIONS if cur.sections.get(k)}
        return Context(version=cur.version, sections=keep)

    cf.update(change)
    note(f"ctx: cleared {cf.path}" + (f" (archived to {dest})" if dest else ""))
