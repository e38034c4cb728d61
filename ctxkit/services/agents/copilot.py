"""GitHub Copilot CLI (`@github/copilot`, a native binary in the npm package), checked against 1.0.102.

Hooks live in JSON files under the repository's `.github/hooks/` or the user's
`~/.copilot/hooks/` (`$COPILOT_HOME/hooks/`), as {"version": 1, "hooks": {EVENT: [{type:
"command", command, timeoutSec}]}}; a repository's hooks run only in a trusted folder (the
client asks once; `-p` runs load them only when the folder is trusted already). Copilot knows
each event by two names: its own camelCase one (sessionStart, userPromptSubmitted, agentStop,
…), whose payloads are camelCase, and Claude Code's PascalCase one, whose payloads are Claude
Code's (hook_event_name, session_id, cwd, transcript_path, source, prompt, trigger, …). ctx is
installed on the PascalCase names:

  SessionStart (source new, resume)        -> SessionStart
  UserPromptSubmit                         -> UserPromptSubmit
  PreCompact (trigger manual, auto)        -> PreCompact
  Stop (agentStop)                         -> Stop
  SubagentStop                             -> SubagentStop
  SessionEnd (reason complete, user_exit…) -> SessionEnd

Context reaches the model as a flat {"additionalContext": …} from SessionStart (a text block
before the prompt) and UserPromptSubmit (a <system_reminder> after it); 1.0.102 ignores
hookSpecificOutput, and ignores the additionalContext of the camelCase userPromptSubmitted.
PreCompact only notifies: nothing it prints reaches Copilot's summary. A `-p` run is a session
of its own to Copilot's hooks (SessionStart … SessionEnd with reason `complete`), and `-p
/compact` fires PreCompact alone; inside an interactive session there is no SessionStart after
/compact or an automatic compaction, so the next UserPromptSubmit hands the session's state back,
once per compaction (services/hooks).

At /exit Copilot gives sessionEnd hooks 1.5 seconds in all and then kills them (the log says
"Deferred sessionEnd hooks exceeded the shutdown budget"): the installer writes ctx's SessionEnd
as a detached command (`set -m; … <&0 &`, its own process group, the payload on its stdin),
which Copilot's kill does not reach. Only Stop, SubagentStop and PreCompact name the transcript (`~/.copilot/session-state/ID/
events.jsonl`); for the other events ctx finds it from the session id. A subagent's events are
in its parent's transcript; its own turns fire UserPromptSubmit and Stop with the subagent's id
as session_id (and parent_agent_id): ctx leaves those alone and records the subagent when
SubagentStop fires in its parent's session.
"""
from __future__ import annotations

import json
import os

from . import Agent, HookSpec, Install

EVENTS = {"SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit", "PreCompact": "PreCompact",
          "Stop": "Stop", "SubagentStop": "SubagentStop", "SessionEnd": "SessionEnd",
          # Copilot's own names of the same events (camelCase payloads)
          "userPromptSubmitted": "UserPromptSubmit", "agentStop": "Stop"}
OTHER_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "SubagentStart",
                "ErrorOccurred", "Notification", "PreMcpToolCall", "userPromptTransformed")

HOOKS = (HookSpec("SessionStart", None, 30), HookSpec("UserPromptSubmit", None, 30),
         HookSpec("PreCompact", None, 60), HookSpec("Stop", None, 60), HookSpec("SubagentStop", None, 60),
         HookSpec("SessionEnd", None, 10))
INJECT = frozenset({"SessionStart", "UserPromptSubmit"})
SOURCES = {"new": "startup", "startup": "startup", "resume": "resume", "clear": "clear"}
# camelCase payload fields -> the names ctx reads
CAMEL = {"sessionId": "session_id", "transcriptPath": "transcript_path", "initialPrompt": "initial_prompt",
         "customInstructions": "custom_instructions", "agentId": "agent_id", "agentType": "agent_type",
         "agentName": "agent_name", "parentAgentId": "parent_agent_id", "stopReason": "stop_reason",
         "hookEventName": "hook_event_name"}


def copilot_home() -> str:
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def paths(scope: str, project: str) -> str:
    if scope == "project":
        return f"{project}/.github/hooks/ctx.json"
    return f"{os.environ.get('COPILOT_HOME') or '~/.copilot'}/hooks/ctx.json"


def group(spec: HookSpec, command: str) -> dict:
    """Copilot's own spelling (`bash`, `timeoutSec`). SessionEnd runs detached: at /exit Copilot
    gives sessionEnd hooks 1.5 s in all and then kills them, less than ctx needs to start."""
    from ..hook_install import detached

    if spec.event == "SessionEnd":
        command = detached(command)
    return {"type": "command", "bash": command, "timeoutSec": spec.timeout}


def transcript_of(session_id: str) -> str | None:
    """The session's events.jsonl, when Copilot has written it (ids are UUIDs; anything else is
    not looked up)."""
    if not session_id or not all(c.isalnum() or c == "-" for c in session_id):
        return None
    p = os.path.join(copilot_home(), "session-state", session_id, "events.jsonl")
    return p if os.path.isfile(p) else None


def normalize(data: dict) -> dict | None:
    """Copilot's payload -> the fields ctx reads; None for a subagent's own turn (its
    UserPromptSubmit and Stop carry the subagent's id as session_id), which ctx leaves to
    SubagentStop."""
    out = dict(data)
    for camel, snake in CAMEL.items():
        if camel in data and snake not in data:
            out[snake] = data[camel]
    if "response" in data and "last_assistant_message" not in data:
        out["last_assistant_message"] = data["response"]
    sid, agent = out.get("session_id"), out.get("agent_id")
    if out.get("parent_agent_id") and agent and agent == sid:
        return None
    if isinstance(out.get("source"), str):
        out["source"] = SOURCES.get(out["source"], out["source"])
    if not out.get("transcript_path") and isinstance(sid, str):
        found = transcript_of(sid)
        if found:
            out["transcript_path"] = found
    if agent and out.get("transcript_path") and not out.get("agent_transcript_path"):
        # a subagent's events are in its parent's transcript (the importer keys them SESSION.agent-ID)
        out["agent_transcript_path"] = out["transcript_path"]
    if isinstance(out.get("prompt"), str) and "<" in out["prompt"]:
        from ...core.client_text import own_text

        out["prompt"] = own_text(out["prompt"]) or out["prompt"]
    return out


def _ms(value) -> float | None:
    """A timestamp of Copilot's (ISO 8601 text, or milliseconds since the epoch) in milliseconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value:
        from datetime import datetime

        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
        except ValueError:
            return None
    return None


def caught_up(path: str, data: dict) -> bool:
    """Copilot writes events.jsonl behind its hooks (under load a `-p` run's whole turn reached the
    file after its Stop and SessionEnd hooks had run): the file has caught up when its last whole line
    is no older than the payload's own timestamp (less 0.1 s; both are Copilot's clock). A payload
    without a timestamp, or a file that cannot be read, counts as caught up."""
    want = _ms(data.get("timestamp"))
    if want is None:
        return True
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 65536))
            tail = f.read()
    except OSError:
        return True
    for line in reversed(tail.split(b"\n")[:-1]):     # whole lines only, the newest first
        try:
            got = _ms(json.loads(line).get("timestamp"))
        except (ValueError, AttributeError):
            continue
        if got is not None:
            return got >= want - 100
    return False


def render(agent_event: str, lifecycle: str, context: str | None) -> str | None:
    if context and lifecycle in INJECT:
        return json.dumps({"additionalContext": context})
    return None


HELP = """Handle a GitHub Copilot CLI hook: read its JSON on stdin, answer as Copilot expects.

    The same lifecycle as Claude Code's (`ctx hook claude-code --help`), on Copilot's
    PascalCase events (whose payloads are Claude Code's): SessionStart (new, resume) and
    UserPromptSubmit inject context as {"additionalContext": …}; after Copilot compacts inside
    a session (/compact, or on its own; no SessionStart follows), the next UserPromptSubmit
    hands the session's state back, once per compaction; PreCompact writes the session's
    CONTEXT.md first (its output cannot steer Copilot's summary); Stop folds the new turns in;
    SubagentStop records a subagent (whose events are in its parent's transcript) under its
    parent, and the subagent's own prompts and stops are left alone; SessionEnd archives the
    session (installed detached: at /exit Copilot kills hooks after 1.5 s). The transcript is ~/.copilot/session-state/ID/events.jsonl ($COPILOT_HOME), found
    from the session id where the payload does not name it. A Copilot session's state is kept
    under `copilot-SESSION_ID`, apart from every other agent's. The camelCase names
    (userPromptSubmitted, agentStop, …) are accepted too; Copilot 1.0.102 does not pass a
    userPromptSubmitted hook's context to the model.

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","source":"new","session_id":"demo","cwd":"."}' | ctx hook copilot
    """

AGENT = Agent(
    name="copilot", title="GitHub Copilot CLI", help=HELP,
    events=EVENTS, acknowledged=OTHER_EVENTS, session_prefix="copilot-",
    inject=INJECT, normalize=normalize, render=render, start_after_compaction=False, caught_up=caught_up,
    install=Install(paths=paths, hooks=HOOKS, group=group))
