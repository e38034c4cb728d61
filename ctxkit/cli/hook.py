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

from ..errors import CtxError, InputError
from ..io.adapters import open_records
from ..io.jsonl import Source
from ..sources.workspace import ContextFile
from ..store import logs, sessions
from .common import note, get_home, get_workspace, home_option, workspace_option

EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")


def _records(transcript: str | None) -> list[dict]:
    if not transcript:
        return []
    if not os.path.exists(transcript):
        raise InputError(transcript, None, "transcript_path does not exist")
    from ..store import redaction

    red = redaction.active()
    return [red.record(r) if red else r for r in open_records(Source(transcript))]


def _compact(home, records, force: bool, whole: bool = False):
    """whole: summarize everything but the newest group into CONTEXT.md (the window is about
    to be compacted or the session is over, so nothing needs to stay raw)."""
    from ..services.compaction import compact
    from .compact import options_from_config
    from .count import resolve_tokenizer
    from .status import resolve_budget

    opts = options_from_config(home.config, resolve_budget(None, None, None), force=force)
    if whole:
        opts.preserve_ratio = 0.0
    return compact(records, resolve_tokenizer(None, None), opts, home, get_workspace()).commit()


def _usage(home, records) -> float:
    from ..backends.tokenizers import count_records
    from .count import resolve_tokenizer
    from .status import resolve_budget

    total = sum(count_records(resolve_tokenizer(None, None), records, reuse=True)) if records else 0
    return total / resolve_budget(None, None, None)


def session_context(home, cwd: str | None) -> str:
    """CONTEXT.md, the time block and external changes, for the model at session start."""
    from ..sources.external import git_changes, modified_files, summary_lines
    from .external import last_session_time
    from .time_cmd import time_facts

    parts = []
    cf = ContextFile(get_workspace())
    if cf.exists():
        from ..core.context_view import condensed
        from .count import resolve_tokenizer

        body = condensed(cf.read(), home.config.get("context_view_tokens"), resolve_tokenizer(None, None).count)
        parts.append("# Context\n" + body)
    tf = time_facts(home)
    parts.append("## Time\n" + "\n".join(f"- {x}" for x in tf["block"]))
    when = last_session_time(home)
    ch = git_changes(cwd or os.getcwd(), when)
    if ch.get("repo"):
        parts.append("## External\n" + "\n".join(f"- {x}" for x in summary_lines(ch, modified_files(
            get_workspace(), when))))
    return "\n\n".join(parts)


def handle(event: str, data: dict, home) -> tuple[str | None, str | None]:
    """Do the event's work; return (context for the model, note for the user)."""
    transcript = data.get("transcript_path")
    if event == "SessionStart":
        recs = _records(transcript) if transcript and os.path.exists(transcript) else []
        if recs:
            sessions.touch(home, recs, transcript)
        return session_context(home, data.get("cwd")), None
    recs = _records(transcript)
    if event == "UserPromptSubmit":
        pct = _usage(home, recs)
        trigger = home.config.get("compaction_trigger_pct")
        logs.append(home, "context-health", {"session": data.get("session_id"), "pct_used": round(pct, 4),
                                              "hook": event, "compaction_due": pct >= trigger})
        if pct < trigger:
            return None, None
        rep = _compact(home, recs, force=False)
        cf = ContextFile(get_workspace())
        if rep.acted or cf.exists():
            return (f"Context is at {pct:.0%} of the budget. The older part of this conversation is "
                    f"summarized in {cf.path}; rely on it for earlier decisions, files and errors."), None
        return None, None
    if event == "PreCompact":
        rep = _compact(home, recs, force=True, whole=True)
        if data.get("custom_instructions"):
            logs.append(home, "compaction", {"event": "precompact_instructions", "session": data.get("session_id"),
                                             "custom_instructions": data["custom_instructions"],
                                             "trigger": data.get("trigger")})
        return None, f"ctx: CONTEXT.md written before compaction ({rep.groups_summarized} groups)"
    if event in ("Stop", "SessionEnd"):
        sessions.touch(home, recs, transcript)
        rep = _compact(home, recs, force=True, whole=True)
        return None, f"ctx: CONTEXT.md updated ({rep.groups_summarized} new groups)"
    raise CtxError(f"unknown hook event {event!r}", hint=f"one of: {', '.join(EVENTS)}")


@click.group("hook")
def hook():
    """Run ctxkit from an agent's hooks (Claude Code, or any agent with a transcript file).

    \b
    Examples (.claude/settings.json, see examples/claude-code/settings.json):
      "SessionStart": [{"hooks": [{"type": "command", "command": "ctx hook claude-code SessionStart"}]}]
      ctx hook generic SessionEnd --transcript ~/agent/session.jsonl
    """


@hook.command("claude-code")
@click.argument("event", type=click.Choice(EVENTS))
@workspace_option
@home_option
def claude_code(event):
    """Handle a Claude Code hook: read its JSON on stdin, answer as the protocol expects.

    SessionStart prints CONTEXT.md, the time block and git changes as additionalContext;
    UserPromptSubmit compacts into CONTEXT.md when usage is above the trigger; PreCompact
    writes CONTEXT.md from the transcript before Claude's own compaction; Stop and
    SessionEnd update CONTEXT.md and the session index.

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","transcript_path":"t.jsonl","cwd":"."}' | ctx hook claude-code SessionStart
    """
    raw = sys.stdin.read()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as e:
        raise InputError("stdin", e.lineno, f"hook input is not JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise InputError("stdin", None, "hook input must be a JSON object")
    if data.get("cwd") and os.path.isdir(data["cwd"]) and not os.environ.get("CTX_WORKSPACE"):
        local = os.path.join(data["cwd"], ".ctx")
        if os.path.isdir(local):
            click.get_current_context().find_root().meta.setdefault("ctx.workspace", local)
    context, msg = handle(event, data, get_home())
    if context and event in ("SessionStart", "UserPromptSubmit"):
        from ..store import redaction

        context = redaction.text(context)
        click.echo(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}))
    elif msg:
        note(msg)


@hook.command("generic")
@click.argument("event", type=click.Choice(EVENTS))
@click.option("--transcript", metavar="FILE", help="The session transcript (any format ctx import reads).")
@click.option("--session", metavar="ID", help="Session id, for the logs.")
@workspace_option
@home_option
def generic(event, transcript, session):
    """The same lifecycle for any agent: context for the model is printed as plain text.

    \b
    Example:
      ctx hook generic SessionStart --transcript ~/agent/session.jsonl >> system_prompt.txt
    """
    context, msg = handle(event, {"transcript_path": transcript, "session_id": session, "cwd": os.getcwd()},
                           get_home())
    if context:
        from ..store import redaction

        click.echo(redaction.text(context))
    if msg:
        note(msg)
