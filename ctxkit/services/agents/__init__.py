"""The agents ctx plugs into, one small registry entry each (`ctx hook AGENT EVENT`).

An entry says only what differs between agents: its event names and which of ctx's lifecycle
events each one is, how its payload is spelled, what it does with a hook's stdout, which events
give a hook too little time to work in line, and where it reads its hooks from (for `ctx hook
install`). The work itself is shared: one resolver of session and project, one notion of
"due", recall, the fold, curation in a detached worker (services/hooks.py).

An agent's module is `ctxkit.services.agents.<MODULES[name]>` and defines `AGENT`; a module that
is not there yet is an agent ctx does not offer (`available()` leaves it out).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
from dataclasses import dataclass
from typing import Callable, Mapping

# ctx's lifecycle: the events its shared handlers know (services/hooks.py HANDLERS)
LIFECYCLE = ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop", "SessionEnd",
             "Notification")
# every agent ctx knows of, in the order `ctx hook --help` lists them: name -> module
MODULES = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini", "copilot": "copilot"}


@dataclass(frozen=True)
class HookSpec:
    """One hook the installer writes: the agent's event name, its matcher, its timeout (in the
    agent's own unit, see Install.timeout_unit)."""
    event: str
    matcher: str | None = None
    timeout: int = 60


@dataclass(frozen=True)
class Install:
    """Where the agent reads hooks and how one group of them is spelled.

    `paths(scope, project_root) -> settings file`; `group(spec, command) -> the JSON value ctx
    appends to the event's list`; `events_at`: the keys leading from the document's top to the
    object whose members are event names (["hooks"] for Claude Code and Codex).
    `extra(scope, project_root, command) -> [(path, Edit)]`: other files the agent reads (Codex's
    config.toml); `note`: what the user still has to do once the file is written."""
    paths: Callable[[str, str], str]
    hooks: tuple[HookSpec, ...]
    group: Callable[[HookSpec, str], dict]
    events_at: tuple[str, ...] = ("hooks",)
    extra: Callable[[str, str], list] | None = None
    note: str = ""


def _identity(data: dict) -> dict:
    return data


def json_output(agent_event: str, lifecycle: str, context: str | None, inject: frozenset) -> str | None:
    """Claude Code's shape (Codex's too): {"hookSpecificOutput": {"hookEventName",
    "additionalContext"}} at the events whose context reaches the model; nothing elsewhere."""
    if not context or lifecycle not in inject:
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": agent_event, "additionalContext": context}})


@dataclass(frozen=True)
class Agent:
    """One agent: `ctx hook NAME EVENT`.

    events: the agent's event name -> ctx's lifecycle event (one of LIFECYCLE), for the events
      ctx acts on; `acknowledged`: its other events (exit 0, nothing done). Names are matched
      without regard to case, `_` or `-`.
    session_prefix: the session key is this prefix + the payload's session id, so one agent's
      sessions never meet another's state ("" for Claude Code, whose keys predate the prefix).
    inject: lifecycle events whose output reaches the model; `steer`: PreCompact's output
      becomes the agent's own compaction instructions (Claude Code).
    start_after_compaction: the agent fires SessionStart (source compact) after it compacts;
      when it does not (Gemini CLI, Copilot CLI), UserPromptSubmit hands the session's state
      back, once per compaction found in the transcript.
    deferred: lifecycle events the agent gives too little time for in-line work (Codex caps
      SessionEnd at 3 s): the hook answers at once and the same handler runs in a detached worker.
    caught_up(transcript, payload) -> whether the transcript on disk holds everything up to the
      hook (an agent that writes its transcript behind its hooks: Copilot CLI); the events that read
      it (Stop, SubagentStop, PreCompact, SessionEnd) wait a little (services/hooks.wait_for_transcript). None: always.
    normalize: the agent's payload -> the field names ctx reads (session_id, transcript_path,
      cwd, source, prompt, trigger, agent_id, agent_transcript_path, custom_instructions), or
      None for a payload ctx has no work for whatever the event (acknowledged).
    render(agent_event, lifecycle, context) -> stdout, or None to print nothing (default:
      Claude Code's JSON at the `inject` events).
    install: where the installer merges the hooks (None: ctx cannot install them yet).
    """
    name: str
    title: str
    events: Mapping[str, str]
    acknowledged: tuple[str, ...] = ()
    session_prefix: str = ""
    inject: frozenset = frozenset({"SessionStart", "UserPromptSubmit"})
    steer: bool = False
    start_after_compaction: bool = True
    deferred: frozenset = frozenset()
    caught_up: Callable[[str, dict], bool] | None = None
    context_cap: int = 10_000
    normalize: Callable[[dict], dict | None] = _identity
    render: Callable[[str, str, str | None], str | None] | None = None
    install: Install | None = None
    help: str = ""                    # `ctx hook NAME --help`

    def lifecycle(self, name: str | None) -> tuple[str | None, str | None]:
        """(the agent's spelling of the event, ctx's lifecycle event or None when ctx has no work
        for it); (None, None) when the agent has no such event."""
        if not name:
            return None, None
        key = _key(name)
        for ev, life in self.events.items():
            if _key(ev) == key:
                return ev, life
        for ev in self.acknowledged:
            if _key(ev) == key:
                return ev, None
        return None, None

    def session_key(self, session_id: str | None) -> str | None:
        return f"{self.session_prefix}{session_id}" if session_id else None

    def output(self, agent_event: str, lifecycle: str, context: str | None) -> str | None:
        if self.render is not None:
            return self.render(agent_event, lifecycle, context)
        return json_output(agent_event, lifecycle, context, self.inject)

    def known(self) -> list[str]:
        return list(self.events) + list(self.acknowledged)


def _key(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def get(name: str) -> Agent:
    """The registry entry of agent NAME (KeyError when ctx has none)."""
    if name not in MODULES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{MODULES[name]}").AGENT


def available() -> list[str]:
    """The agents whose module is there, in MODULES order (no module is imported)."""
    return [n for n, m in MODULES.items() if importlib.util.find_spec(f"{__name__}.{m}") is not None]
