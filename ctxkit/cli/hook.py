"""ctx hook AGENT EVENT / ctx hook generic EVENT / ctx hook install|uninstall AGENT: ctxkit
inside an agent's lifecycle.

The agent runs `ctx hook AGENT EVENT` with the hook's JSON on stdin (session_id,
transcript_path, cwd, hook_event_name, and per event: source, prompt, trigger). Context for the
model goes back as the agent expects it (services/agents: one registry entry per agent). Hooks
fail open: they never exit 2 (which would block the user's prompt or the agent's stop); a
problem is one line on stderr and exit 1.
"""
from __future__ import annotations

import os
import sys

import click

from ..errors import InputError
from ..io.jsonl import loads
from ..services import agents
from ..services import hooks as svc
from .common import get_home, home_option, note, workspace_option

CLAUDE = agents.get("claude-code")
# every event in Claude Code's hooks reference; the ones ctx acts on are HANDLED
KNOWN = tuple(CLAUDE.known())
HANDLED = tuple(CLAUDE.events)
EVENTS = HANDLED
CONTEXT_CAP = svc.CONTEXT_CAP


def canonical(name: str | None) -> str | None:
    """`stop`, `STOP`, `session_end` -> Claude Code's spelling; None when unknown."""
    return CLAUDE.lifecycle(name)[0]


class FailOpen(click.Command):
    """A hook never exits 2 (that blocks the user's prompt or the agent's stop): a usage problem
    is one line on stderr and exit 0."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as e:
            click.echo(f"ctx hook: {e.format_message()} (ignored: hooks fail open)", err=True)
            ctx.exit(0)


class HookGroup(click.Group):
    """`ctx hook`: one command per agent ctx knows (services/agents), then the rest."""

    def list_commands(self, ctx):
        return agents.available() + [n for n in super().list_commands(ctx) if n not in agents.MODULES]

    def get_command(self, ctx, name):
        if name in agents.MODULES and name in agents.available():
            return agent_command(name)
        return super().get_command(ctx, name)


@click.group("hook", cls=HookGroup)
def hook():
    """Run ctxkit from an agent's hooks: Claude Code, Codex CLI, Gemini CLI, GitHub Copilot CLI
    (and any agent with a transcript).

    \b
    Install ctx's hooks into an agent's own settings (merged; `--dry-run` shows the diff):
      ctx hook install claude-code --project
      ctx hook install codex --user --dry-run
      ctx hook install gemini --dry-run
    Or wire them by hand (examples/claude-code/, codex/, gemini/, copilot/):
      "SessionStart": [{"hooks": [{"type": "command", "command": "ctx hook claude-code SessionStart"}]}]
      ctx hook generic SessionEnd --transcript ~/agent/session.jsonl
    """


PAYLOAD_MAX = 64 << 20   # characters of hook input read at most


def read_payload() -> dict:
    """The hook's JSON object from stdin ({} when there is none)."""
    raw = sys.stdin.read(PAYLOAD_MAX + 1) if not sys.stdin.isatty() else ""
    if len(raw) > PAYLOAD_MAX:   # a payload names the transcript; it never carries one
        raise InputError("stdin", None, f"hook input is over {PAYLOAD_MAX >> 20} MB; not a hook payload")
    try:
        data = loads(raw, "stdin") if raw.strip() else {}
    except InputError as e:  # bad JSON, NaN, nesting too deep, a 5,000-digit number
        raise InputError("stdin", e.line, f"hook input is not JSON: {e.reason.removeprefix('invalid JSON: ')}") from None
    if not isinstance(data, dict):
        raise InputError("stdin", None, "hook input must be a JSON object")
    from ..records import hook_payload

    return hook_payload(data)  # wrong-typed fields are left out (hooks fail open), never an internal error


def run_agent_hook(name: str, event: str | None, in_worker: bool = False) -> None:
    """Read the payload, find ctx's lifecycle event, run its handler (or hand it to a detached
    worker when the agent gives the hook too little time), print what the agent expects."""
    agent = agents.get(name)
    payload = read_payload()
    data = agent.normalize(payload)
    if data is None:
        return  # a payload the agent's entry leaves alone (a Copilot subagent's own turn): acknowledged
    agent_event, life = agent.lifecycle(event or data.get("hook_event_name"))
    if agent_event is None:
        note(f"ctx hook: unknown {agent.title} event {event or data.get('hook_event_name')!r}; nothing done "
             f"(known: {', '.join(agent.events)})")
        return
    if life is None:
        return  # an event ctx has no work for: acknowledged
    if life in agent.deferred and not in_worker:
        home = get_home()
        svc.spawn_deferred(home, agent.name, agent_event, data, click.get_current_context().find_root()
                           .meta.get("ctx.workspace"))
        return
    svc.wait_for_transcript(get_home(), agent, life, data)
    context, msg = _run(life, data, agent, in_worker)
    out = agent.output(agent_event, life, context)
    if out:
        click.echo(out)
    if msg:
        note(msg)


def _run(name: str, data: dict, agent=None, in_worker: bool = False) -> tuple[str | None, str | None]:
    """Resolve the payload's session and project, run the event's handler, redact its output."""
    root = click.get_current_context().find_root()
    if isinstance(data.get("cwd"), str) and os.path.isdir(data["cwd"]):
        root.meta["ctx.cwd"] = data["cwd"]
    home = get_home()
    target = svc.resolve(home, data, root.meta.get("ctx.workspace"), agent)
    target.in_worker = in_worker
    context, msg = svc.handle(name, home, target)
    from ..services.transcripts import HALF_WRITTEN

    if target.ignored.get(HALF_WRITTEN):
        note(f"ctx: {target.transcript}: skipped a half-written last line (the transcript is still being written)")
    if context:
        from ..store import redaction

        context = svc.cap(redaction.text(context), agent.context_cap if agent is not None else CONTEXT_CAP)
    return context, msg


def agent_command(name: str) -> click.Command:
    agent = agents.get(name)

    @click.argument("event", required=False)
    @click.option("--in-worker", is_flag=True, hidden=True, help="Run a deferred event (ctx's own worker).")
    @workspace_option
    @home_option
    def cmd(event, in_worker):
        run_agent_hook(name, event, in_worker)

    cmd.__doc__ = agent.help or f"Handle a {agent.title} hook: read its JSON on stdin, answer as it expects."
    return click.command(name, cls=FailOpen)(cmd)


@hook.command("generic", cls=FailOpen)
@click.argument("event")
@click.option("--transcript", metavar="FILE", type=click.Path(dir_okay=False), help="The session transcript (any format ctx import reads).")
@click.option("--session", metavar="ID", help="Session id, for the logs.")
@workspace_option
@home_option
def generic(event, transcript, session):
    """The same lifecycle for any agent: context for the model is printed as plain text.

    \b
    Example:
      ctx hook generic SessionStart --transcript ~/agent/session.jsonl >> system_prompt.txt
    """
    name = canonical(event)
    if name not in HANDLED:
        note(f"ctx hook: unknown event {event!r}; nothing done (known: {', '.join(HANDLED)})")
        return
    context, msg = _run(name, {"transcript_path": transcript, "session_id": session, "cwd": os.getcwd(),
                               "source": "startup"})
    if context:
        click.echo(context)
    if msg:
        note(msg)


def _scope(project: bool, user: bool) -> str:
    if project and user:
        raise click.UsageError("--project and --user exclude each other")
    return "user" if user else "project"


def _agent_arg(name: str):
    if name not in agents.available():
        raise click.UsageError(f"unknown agent {name!r} (known: {', '.join(agents.available())})")
    agent = agents.get(name)
    if agent.install is None:
        raise click.UsageError(f"ctx cannot install {agent.title}'s hooks yet")
    return agent


@hook.command("install")
@click.argument("agent_name", metavar="AGENT")
@click.option("--project", "project", is_flag=True, help="The project's settings (the default): the repository root of the current directory.")
@click.option("--user", "user", is_flag=True, help="Your own settings, for every project.")
@click.option("--dry-run", is_flag=True, help="Print the diff; change nothing.")
@click.option("--plugin", "plugin_dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Claude Code only: write a plugin marketplace to DIR instead (then `/plugin marketplace add DIR`, "
                   "`/plugin install ctx@ctxkit`).")
@home_option
def install(agent_name, project, user, dry_run, plugin_dir):
    """Merge ctx's hooks into an agent's settings (never over a user's own hooks).

    Only text is inserted: everything already in the file stays as it was, running it again
    changes nothing, and `ctx hook uninstall` removes exactly what it added (the file comes back
    byte for byte when nothing else changed since). The hooks run this `ctx` by its absolute
    path, whatever PATH the agent gives them. AGENT is claude-code, codex, gemini or copilot.
    Codex gets its hooks in .codex/hooks.json and a compact_prompt in .codex/config.toml that
    asks its compaction to keep ctx's verified state; Gemini CLI its hooks in
    .gemini/settings.json; Copilot CLI a file of its own, .github/hooks/ctx.json
    (~/.copilot/hooks/ctx.json with --user).

    \b
    Examples:
      ctx hook install claude-code --dry-run
      ctx hook install codex --user
      ctx hook install copilot --dry-run
      ctx hook install claude-code --plugin ~/ctx-plugin
    """
    from ..services import hook_install as hi

    agent = _agent_arg(agent_name)
    if plugin_dir:
        if agent.name != "claude-code":
            raise click.UsageError("--plugin is for claude-code")
        written = hi.write_plugin(plugin_dir, dry_run)
        for path in written:
            click.echo(path)
        if not dry_run:
            note(f"ctx: plugin written; in Claude Code: /plugin marketplace add {os.path.abspath(plugin_dir)}, "
                 f"then /plugin install ctx@ctxkit")
        return
    scope = _scope(project, user)
    home = get_home()
    changes = hi.plan_install(agent, scope, os.getcwd(), home)
    for c in changes:
        for n in c.notes:
            note(f"ctx: {c.path}: {n}")
    if dry_run:
        click.echo(hi.diff(changes), nl=False)
        return
    hi.apply(changes, home, agent, scope, installing=True)
    for c in changes:
        note(f"ctx: {c.path}: " + ("hooks installed" if c.changed and c is changes[0] else
                                   "updated" if c.changed else "unchanged (installed already)"))
    if agent.install.note and any(c.changed for c in changes):
        note(f"ctx: {agent.install.note}")


@hook.command("uninstall")
@click.argument("agent_name", metavar="AGENT")
@click.option("--project", "project", is_flag=True, help="The project's settings (the default).")
@click.option("--user", "user", is_flag=True, help="Your own settings.")
@click.option("--dry-run", is_flag=True, help="Print the diff; change nothing.")
@home_option
def uninstall(agent_name, project, user, dry_run):
    """Remove the hooks `ctx hook install` added (and nothing else).

    A file install left as it was comes back byte for byte (a file it created is removed); in a
    file changed since, the hook groups that run ctx by absolute path go, everything else stays.

    \b
    Example:
      ctx hook uninstall claude-code --project
    """
    from ..services import hook_install as hi

    agent = _agent_arg(agent_name)
    scope = _scope(project, user)
    home = get_home()
    changes = hi.plan_uninstall(agent, scope, os.getcwd(), home)
    if dry_run:
        click.echo(hi.diff(changes), nl=False)
        return
    hi.apply(changes, home, agent, scope, installing=False)
    for c in changes:
        if c.before is not None:
            note(f"ctx: {c.path}: " + ("removed" if c.after is None else "ctx's hooks removed" if c.changed else
                                       "; ".join(c.notes) or "unchanged"))


@hook.command("curate", hidden=True)
@click.option("--transcript", required=True, type=click.Path(dir_okay=False))
@click.option("--session")
@click.option("--ended", is_flag=True)
@workspace_option
@home_option
def curate_cmd(transcript, session, ended):
    """The detached worker hooks start: curation when due; at session end, cold storage."""
    from ..services.hooks import run_worker

    run_worker(get_home(), transcript, session, ended)  # a failure is logged where ctx status shows it
