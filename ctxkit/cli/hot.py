"""Hot-context verbs (seed 004's slash commands): goal, decision, constraint, remember, entities.

Every change is a locked read-modify-write of CONTEXT.md with a version bump; `--if-version N`
makes it optimistic (exit 4 on conflict); `--agent NAME` attributes it.
"""
from __future__ import annotations

import json
import re

import click

from ..core.context_md import MAX_ITEMS_BY_SECTION, Item, merge_items
from ..core.entities import CATEGORIES, extract
from ..core.timeutil import now_iso
from ..errors import CtxError, UsageProblem
from ..sources.workspace import ContextFile
from .common import (InputRecords, emit_listing, get_workspace, home_option, input_options, jq_option, note,
                     output_options, workspace_option)

GOAL = re.compile(r"^(g-\d+) \((pending|in-progress|complete)(?: [\dT:Z-]+)?, (high|medium|low)"
                  r"(?:, parent (g-\d+))?\) (.*)$")


def common_options(f):
    f = click.option("--if-version", type=int, metavar="N", help="Only if CONTEXT.md is at version N (else exit 4).")(f)
    f = click.option("--agent", metavar="NAME", help="Who made the change.")(f)
    return workspace_option(home_option(f))


def _update(change, if_version):
    new = ContextFile(get_workspace()).update(change, if_version)
    note(f"ctx: CONTEXT.md is at version {new.version}")
    return new


def parse_goal(item: Item) -> dict | None:
    m = GOAL.match(item.text)
    if not m:
        return None
    return {"id": m.group(1), "status": m.group(2), "priority": m.group(3), "parent": m.group(4),
            "goal": m.group(5), "done": bool(item.done), "by": item.by, "created": item.at}


def minute() -> str:
    """Now, UTC, to the minute: the timestamp decisions and goals carry."""
    return now_iso()[:16] + "Z"


def goal_item(g: dict, by: str | None) -> Item:
    status = g["status"] + (f" {g['completed']}" if g.get("completed") else "")
    parent = f", parent {g['parent']}" if g.get("parent") else ""
    return Item(text=f"{g['id']} ({status}, {g['priority']}{parent}) {g['goal']}", done=g["status"] == "complete",
                by=by, at=g.get("created") or minute())


@click.group("goal")
def goal():
    """Goals with status (pending, in-progress, complete), priority and parent.

    \b
    Examples:
      ctx goal add "Implement JWT authentication" --priority high
      ctx goal add "Write token tests" --parent g-001 && ctx goal start g-002
      ctx goal complete g-002 && ctx goal list
    """


@goal.command("add")
@click.argument("text")
@click.option("--priority", type=click.Choice(["high", "medium", "low"]), default="medium", show_default=True)
@click.option("--parent", metavar="GOAL_ID", shell_complete=lambda c, p, i: complete_goal(c, p, i),
              help="The parent goal's id.")
@common_options
def goal_add(text, priority, parent, agent, if_version):
    """Add a pending goal; prints its id.

    \b
    Example:
      ctx goal add "Implement JWT authentication" --priority high
    """
    out = {}

    def change(ctx):
        items = ctx.items("Goals")
        ids = [int(g["id"][2:]) for g in map(parse_goal, items) if g]
        if parent and parent not in {g["id"] for g in map(parse_goal, items) if g}:
            raise UsageProblem(f"no goal {parent!r} to be the parent", hint="ctx goal list")
        gid = f"g-{max(ids, default=0) + 1:03d}"
        out["id"] = gid
        items.append(goal_item({"id": gid, "status": "pending", "priority": priority, "parent": parent,
                                "goal": text.replace("\n", " ")}, agent))
        return ctx

    _update(change, if_version)
    click.echo(out["id"])


def _set_status(gid: str, status: str, agent, if_version):
    def change(ctx):
        for i, item in enumerate(ctx.items("Goals")):
            g = parse_goal(item)
            if g and g["id"] == gid:
                g["status"] = status
                if status == "complete":
                    g["completed"] = now_iso()
                ctx.sections["Goals"][i] = goal_item(g, agent or item.by)
                return ctx
        raise UsageProblem(f"no goal {gid!r}", hint="ctx goal list shows the ids")

    _update(change, if_version)


@goal.command("start")
@click.argument("goal_id", shell_complete=lambda c, p, i: complete_goal(c, p, i))
@common_options
def goal_start(goal_id, agent, if_version):
    """Mark a goal in-progress.

    \b
    Example:
      ctx goal start g-001
    """
    _set_status(goal_id, "in-progress", agent, if_version)


@goal.command("complete")
@click.argument("goal_id", shell_complete=lambda c, p, i: complete_goal(c, p, i))
@common_options
def goal_complete(goal_id, agent, if_version):
    """Mark a goal complete (it ages out of the prompt after age_out_hours).

    \b
    Example:
      ctx goal complete g-001
    """
    _set_status(goal_id, "complete", agent, if_version)


@goal.command("list")
@click.option("--status", type=click.Choice(["pending", "in-progress", "complete"]), help="Only goals with this status.")
@jq_option
@output_options
@workspace_option
@home_option
def goal_list(status, jq_expr, table, as_json, table_fmt):
    """The goals: id, status, priority, parent, when created, the goal.

    \b
    Examples:
      ctx goal list -t
      ctx goal list --status pending --jq -r .goal_id
    """
    rows = []
    for item in ContextFile(get_workspace()).read().sections.get("Goals", []):
        g = parse_goal(item)
        if g and (not status or g["status"] == status):
            rows.append({"goal_id": g["id"], "status": g["status"], "priority": g["priority"], "parent": g["parent"],
                         "created": g["created"], "goal": g["goal"], "by": g["by"]})
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)


def complete_goal(ctx, param, incomplete):
    """Goal ids from the workspace's CONTEXT.md, for shell completion; nothing on any error."""
    try:
        from ..sources.workspace import resolve_workspace
        from .common import get_home

        ws = resolve_workspace(ctx.find_root().meta.get("ctx.workspace"), get_home(ctx).path)
        items = ContextFile(ws).read().sections.get("Goals", [])
    except Exception:  # noqa: BLE001 -- completion must never fail the shell
        return []
    from click.shell_completion import CompletionItem

    return [CompletionItem(g["id"], help=g["goal"][:60]) for g in map(parse_goal, items)
            if g and g["id"].startswith(incomplete)]


@click.group("decision")
def decision():
    """The decision log.

    \b
    Example:
      ctx decision log "Use RS256 instead of HS256" --why "better for distributed systems"
    """


@decision.command("log")
@click.argument("text")
@click.option("--why", metavar="TEXT", help="The rationale.")
@common_options
def decision_log(text, why, agent, if_version):
    """Log a decision with its rationale and author.

    \b
    Example:
      ctx decision log "Store public keys in Redis" --why "fast lookup, TTL" --agent agent-b
    """
    def change(ctx):
        ctx.sections["Decisions"] = merge_items(ctx.items("Decisions"), [Item(text=text, why=why, by=agent,
                                                                             at=minute())],
                                                cap=MAX_ITEMS_BY_SECTION["Decisions"])  # the rest: archive/
        return ctx

    _update(change, if_version)


@click.group("constraint")
def constraint():
    """Constraints the agent must respect for this session.

    \b
    Examples:
      ctx constraint add "Token TTL must be exactly 1 hour"
      ctx constraint list && ctx constraint remove "Token TTL must be exactly 1 hour"
    """


@constraint.command("add")
@click.argument("text")
@common_options
def constraint_add(text, agent, if_version):
    """Add a constraint.

    \b
    Example:
      ctx constraint add "Must support refresh tokens"
    """
    def change(ctx):
        ctx.sections["Constraints"] = merge_items(ctx.items("Constraints"), [Item(text=text, by=agent)], cap=0)
        return ctx

    _update(change, if_version)


@constraint.command("remove")
@click.argument("text")
@common_options
def constraint_remove(text, agent, if_version):
    """Remove a constraint (by its text).

    \b
    Example:
      ctx constraint remove "Must support refresh tokens"
    """
    def change(ctx):
        before = ctx.items("Constraints")
        after = [i for i in before if i.key() != Item(text=text).key()]
        if len(after) == len(before):
            raise CtxError(f"no constraint {text!r}", hint="ctx constraint list")
        ctx.sections["Constraints"] = after
        return ctx

    _update(change, if_version)


@constraint.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also the constraints that left CONTEXT.md (removed or over a "
                                                         "cap), from archive/constraints.md, marked archived.")
@jq_option
@output_options
@workspace_option
@home_option
def constraint_list(show_all, jq_expr, table, as_json, table_fmt):
    """The constraints: each one's text and who added it.

    \b
    Examples:
      ctx constraint list --jq .constraint -r
      ctx constraint list --all
    """
    # output contract: JSONL piped, a table on a terminal
    cf = ContextFile(get_workspace())
    rows = [{"constraint": i.text, "by": i.by, "archived": False} for i in cf.read().sections.get("Constraints", [])]
    if show_all:
        rows += [{"constraint": line, "by": None, "archived": True} for line in cf.archived("Constraints")]
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 columns=["constraint", "by"] + (["archived"] if show_all else []))


@click.command("remember")
@click.argument("text")
@common_options
def remember(text, agent, if_version):
    """Keep a fact for good: pinned, compaction never removes it.

    \b
    Example:
      ctx remember "The staging DB is read-only on Fridays"
    """
    def change(ctx):
        items = ctx.items("Pinned")
        if Item(text=text).key() not in {i.key() for i in items}:
            items.append(Item(text=text, by=agent))
        return ctx

    _update(change, if_version)


@click.command("entities")
@input_options
@click.option("--print", "only_print", is_flag=True, help="Print the entities as JSON; do not touch CONTEXT.md.")
@common_options
def entities(file, from_, skip_invalid, only_print, agent, if_version):
    """Extract files, functions and classes, packages, @people and URLs from records, and
    merge them into CONTEXT.md's Key entities.

    \b
    Examples:
      ctx entities s.jsonl
      ctx import abc.jsonl | ctx entities --print | jq .files
    """
    found = extract(InputRecords(file, from_, skip_invalid))
    if only_print:
        click.echo(json.dumps(found))
        return

    def change(ctx):
        current = {}
        for item in ctx.items("Key entities"):
            if ":" in item.text:
                cat, vals = item.text.split(":", 1)
                current[cat.strip()] = [v.strip() for v in vals.split(",") if v.strip()]
        for cat in CATEGORIES:
            merged = [v for v in current.get(cat, []) if v not in found[cat]] + found[cat]
            current[cat] = merged[-12:]
        ctx.sections["Key entities"] = [Item(text=f"{c}: {', '.join(current[c])}") for c in CATEGORIES if current[c]]
        return ctx

    _update(change, if_version)
    note("ctx: " + ", ".join(f"{len(v)} {k}" for k, v in found.items()))
