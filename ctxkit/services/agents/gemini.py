"""Google Gemini CLI (`@google/gemini-cli`, plain JavaScript), checked against 0.61.0.

Hooks live under `hooks` in the project's `.gemini/settings.json` or the user's
`~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/` when that is set), as Claude Code's
nested groups ({matcher, hooks: [{type: "command", command, timeout}]}) with the timeout in
milliseconds. A project's hooks run only in a trusted folder (the client asks; headless runs
in an untrusted folder stop with an error). Its events, as ctx maps them:

  SessionStart (source startup, resume, clear) -> SessionStart
  BeforeAgent (once per prompt, `prompt`)      -> UserPromptSubmit
  PreCompress (trigger manual, auto)           -> PreCompact
  AfterAgent (once per answered prompt)        -> Stop
  SessionEnd (reason exit, clear, logout, …)   -> SessionEnd

Every payload carries session_id, transcript_path (`~/.gemini/tmp/<project>/chats/
session-*.jsonl`), cwd and hook_event_name. Context reaches the model from SessionStart and
BeforeAgent as hookSpecificOutput.additionalContext, wrapped by the client in
`<hook_context>` (with `<` and `>` escaped). Gemini CLI reads a hook's stdout as JSON and
otherwise shows its text (its stderr too, when stdout is empty) as a message to the user:
ctx always answers with JSON (`{}` when it has nothing to say), so its notes stay in its logs.

There is no SessionStart after a compression (/compress, or the automatic one when a request
would pass half the window): the client writes the compressed history into the transcript
(a `$set` of its messages with a `<state_snapshot>`), and the next BeforeAgent hands the
session's state back, once per compression (services/hooks). PreCompress is advisory (its
output cannot steer the summary) and fires with trigger `auto` before every model request,
compressing or not; the installer wires only `manual` (/compress), whose matcher the client
compares for equality, so an ordinary turn costs no extra process. Gemini CLI has no subagent
hooks.
"""
from __future__ import annotations

import json
import os

from . import Agent, HookSpec, Install

EVENTS = {"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit", "PreCompress": "PreCompact",
          "AfterAgent": "Stop", "SessionEnd": "SessionEnd", "Notification": "Notification"}
OTHER_EVENTS = ("BeforeTool", "AfterTool", "BeforeModel", "AfterModel", "BeforeToolSelection")

# the timeout is in milliseconds; a matcher of SessionStart, SessionEnd and PreCompress is compared
# for equality with the source / reason / trigger (no alternation)
HOOKS = (HookSpec("SessionStart", None, 30_000), HookSpec("BeforeAgent", None, 30_000),
         HookSpec("PreCompress", "manual", 60_000), HookSpec("AfterAgent", None, 60_000),
         HookSpec("SessionEnd", None, 60_000))
INJECT = frozenset({"SessionStart", "UserPromptSubmit"})


def gemini_home() -> str:
    """The folder Gemini CLI keeps its user settings in."""
    base = os.environ.get("GEMINI_CLI_HOME")
    return os.path.join(base, ".gemini") if base else "~/.gemini"


def paths(scope: str, project: str) -> str:
    return f"{project}/.gemini/settings.json" if scope == "project" else f"{gemini_home()}/settings.json"


def group(spec: HookSpec, command: str) -> dict:
    g: dict = {"matcher": spec.matcher} if spec.matcher else {}
    g["hooks"] = [{"type": "command", "name": "ctx", "command": command, "timeout": spec.timeout}]
    return g


def normalize(data: dict) -> dict:
    """The prompt without the context hooks injected (a SessionStart hook's text comes back inside
    BeforeAgent's prompt, in <hook_context>): recall matches what the user typed."""
    if isinstance(data.get("prompt"), str) and "<hook_context>" in data["prompt"]:
        from ...core.client_text import own_text

        data = dict(data, prompt=own_text(data["prompt"]))
    return data


def render(agent_event: str, lifecycle: str, context: str | None) -> str:
    """JSON always: hookSpecificOutput.additionalContext where it reaches the model, else `{}` (an
    empty stdout would have the client show ctx's stderr note to the user)."""
    if context and lifecycle in INJECT:
        return json.dumps({"hookSpecificOutput": {"hookEventName": agent_event, "additionalContext": context}})
    return "{}"


HELP = """Handle a Google Gemini CLI hook: read its JSON on stdin, answer as Gemini CLI expects.

    The same lifecycle as Claude Code's (`ctx hook claude-code --help`), on Gemini CLI's
    events: SessionStart (startup, resume, clear) and BeforeAgent (each prompt, as
    UserPromptSubmit) inject context as hookSpecificOutput.additionalContext; after Gemini CLI
    compresses the conversation (/compress or on its own; it has no SessionStart then),
    the next BeforeAgent hands the session's state back, once per compression; PreCompress
    (/compress) writes the session's CONTEXT.md first; AfterAgent folds the new turns in;
    SessionEnd archives the session. A Gemini CLI session's state is kept under
    `gemini-SESSION_ID`, apart from every other agent's. The answer is always JSON (`{}` when
    there is nothing to add), so ctx's notes never show up in the chat.

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","source":"startup","session_id":"demo","cwd":"."}' | ctx hook gemini
    """

AGENT = Agent(
    name="gemini", title="Gemini CLI", help=HELP,
    events=EVENTS, acknowledged=OTHER_EVENTS, session_prefix="gemini-",
    inject=INJECT, normalize=normalize, render=render, start_after_compaction=False,
    install=Install(paths=paths, hooks=HOOKS, group=group))
