"""ctx hook claude-code EVENT / ctx hook generic EVENT: ctxkit inside an agent's lifecycle.

Claude Code runs the command with the hook's JSON on stdin (session_id, transcript_path,
cwd, hook_event_name, and per event: source, prompt, trigger, custom_instructions). Context
for the model goes back as JSON {"hookSpecificOutput": {"hookEventName", "additionalContext"}}
(SessionStart, UserPromptSubmit). Hooks fail open: they never exit 2 (which would block
the user's prompt or Claude's stop); a problem is one line on stderr and exit 1.
"""
from __future__ import annotations

import json
import os
import sys

import click

from ..errors import InputError
from ..io.jsonl import loads
from ..services import hooks as svc
from .common import note, get_home, home_option, workspace_option

# Every event in Claude Code's hooks reference; the ones ctx acts on are HANDLED, the rest are
# acknowledged (exit 0) so a settings file that wires them never blocks anything.
KNOWN = ("SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
         "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied", "Notification",
         "PreCompact", "PostCompact", "TeammateIdle", "TaskCompleted", "InstructionsLoaded", "ConfigChange",
         "Elicitation", "ElicitationResult", "WorktreeCreate", "WorktreeRemove", "CwdChanged", "FileChanged")
HANDLED = ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop", "SessionEnd",
           "Notification")
EVENTS = HANDLED
CONTEXT_CAP = svc.CONTEXT_CAP


def canonical(name: str | None) -> str | None:
    """`stop`, `STOP`, `session_end` -> the reference's spelling; None when unknown."""
    if not name:
        return None
    key = name.replace("_", "").replace("-", "").lower()
    return next((e for e in KNOWN if e.lower() == key), None)


class FailOpen(click.Command):
    """A hook never exits 2 (that blocks the user's prompt or Claude's stop): a usage problem is
    one line on stderr and exit 0."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as e:
            click.echo(f"ctx hook: {e.format_message()} (ignored: hooks fail open)", err=True)
            ctx.exit(0)


@click.group("hook")
def hook():
    """Run ctxkit from an agent's hooks (Claude Code, or any agent with a transcript file).

    \b
    Examples (.claude/settings.json, see examples/claude-code/settings.json):
      "SessionStart": [{"hooks": [{"type": "command", "command": "ctx hook claude-code SessionStart"}]}]
      ctx hook generic SessionEnd --transcript ~/agent/session.jsonl
    """


@hook.command("claude-code", cls=FailOpen)
@click.argument("event", required=False)
@workspace_option
@home_option
def claude_code(event):
    """Handle a Claude Code hook: read its JSON on stdin, answer as the protocol expects.

    EVENT may be left out (it is read from hook_event_name) and is matched without regard to
    case. The session is the payload's session_id, the project the repository root of its
    cwd (state goes to the project's folder under $CTX_HOME/projects/ unless cwd has .ctx/):
    one home serves many projects and none sees another's state.

    SessionStart: resume and compact get this session's own state; startup and clear a new
    session's (the project's Constraints and Pinned; at startup also the project's previous
    session, labelled as such). UserPromptSubmit: usage (the provider's numbers after the
    last compaction, over the model's window); when due, the session's working state, once
    per change; earlier context that matches the prompt (cold-storage chunks and memory whose
    keyword score times the share of the prompt's words they hold reaches
    hook_recall_min_score); it works before the transcript exists. PreCompact: the session's CONTEXT.md, written before Claude compacts. Stop and
    SessionEnd: new turns folded in, in line (a second or two); curation when due and, at
    session end, cold storage run in a detached worker. Every hook parses only the transcript
    lines appended since the session's last hook (a rewritten or replaced file is read whole). SubagentStop: the subagent's own
    transcript recorded under its parent (the parent's state untouched); Claude Code's
    compaction agent costs nothing.

    Transcripts may open with any bookkeeping line (interactive sessions do); those lines
    are skipped and counted. Other events are acknowledged. A hook never exits 2. Wire it
    with examples/claude-code/settings.json (no hook is async: headless runs finish them).

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","transcript_path":"t.jsonl","cwd":"."}' | ctx hook claude-code
    """
    raw = sys.stdin.read() if not sys.stdin.isatty() else ""
    try:
        data = loads(raw, "stdin") if raw.strip() else {}
    except InputError as e:  # bad JSON, NaN, nesting too deep, a 5,000-digit number
        raise InputError("stdin", e.line, f"hook input is not JSON: {e.reason.removeprefix('invalid JSON: ')}") from None
    if not isinstance(data, dict):
        raise InputError("stdin", None, "hook input must be a JSON object")
    from ..records import hook_payload

    data = hook_payload(data)  # wrong-typed fields are left out (hooks fail open), never an internal error
    name = canonical(event or data.get("hook_event_name"))
    if name is None:
        note(f"ctx hook: unknown event {event or data.get('hook_event_name')!r}; nothing done "
             f"(known: {', '.join(HANDLED)})")
        return
    if name not in HANDLED:
        return  # an event ctx has no work for: acknowledged
    context, msg = _run(name, data)
    if context and name in ("SessionStart", "UserPromptSubmit"):
        click.echo(json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}))
    elif msg:
        note(msg)


def _run(name: str, data: dict) -> tuple[str | None, str | None]:
    """Resolve the payload's session and project, run the event's handler, redact its output."""
    root = click.get_current_context().find_root()
    if isinstance(data.get("cwd"), str) and os.path.isdir(data["cwd"]):
        root.meta["ctx.cwd"] = data["cwd"]
    home = get_home()
    context, msg = svc.handle(name, home, svc.resolve(home, data, root.meta.get("ctx.workspace")))
    if context:
        from ..store import redaction

        context = redaction.text(context)
    return context, msg


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


@hook.command("curate", hidden=True)
@click.option("--transcript", required=True, type=click.Path(dir_okay=False))
@click.option("--session")
@click.option("--ended", is_flag=True)
@workspace_option
@home_option
def curate_cmd(transcript, session, ended):
    """The detached worker hooks start: curation when due; at session end, cold storage."""
    from ..services.curation import run_worker

    run_worker(get_home(), transcript, session, ended)  # a failure is logged where ctx status shows it
