"""Claude Code (`@anthropic-ai/claude-code`): hooks in .claude/settings.json or
~/.claude/settings.json, or a plugin's hooks/hooks.json.

Its payloads are the ones ctx's handlers read (session_id, transcript_path, cwd, source,
prompt, trigger, agent_id, agent_transcript_path). Context reaches the model as
{"hookSpecificOutput": {"hookEventName", "additionalContext"}} at SessionStart and
UserPromptSubmit; a PreCompact hook's plain stdout becomes the custom instructions of Claude's
own compaction summary (2.1.197 and 2.1.332 alike; 2.1.332 cuts it at 10,000 characters).
"""
from __future__ import annotations

import json

from . import Agent, HookSpec, Install, json_output

LIFECYCLE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop",
                    "SessionEnd", "Notification")
# every other event of Claude Code's hooks reference: acknowledged, nothing done
OTHER_EVENTS = ("StopFailure", "SubagentStart", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                "PermissionRequest", "PermissionDenied", "TeammateIdle", "TaskCompleted", "InstructionsLoaded",
                "ConfigChange", "Elicitation", "ElicitationResult", "WorktreeCreate", "WorktreeRemove", "CwdChanged",
                "FileChanged")

HOOKS = (HookSpec("SessionStart", "startup|resume|clear|compact", 10), HookSpec("UserPromptSubmit", None, 30),
         HookSpec("PreCompact", "manual|auto", 60), HookSpec("PostCompact", "manual|auto", 10),
         HookSpec("Stop", None, 60), HookSpec("SubagentStop", None, 60), HookSpec("SessionEnd", None, 60))


def group(spec: HookSpec, command: str) -> dict:
    g: dict = {"matcher": spec.matcher} if spec.matcher else {}
    g["hooks"] = [{"type": "command", "command": command, "timeout": spec.timeout}]
    return g


def paths(scope: str, project: str) -> str:
    return f"{project}/.claude/settings.json" if scope == "project" else "~/.claude/settings.json"


def render(agent_event: str, lifecycle: str, context: str | None) -> str | None:
    if lifecycle == "PreCompact":
        return context or None   # plain text: the instructions for Claude's summary
    return json_output(agent_event, lifecycle, context, frozenset({"SessionStart", "UserPromptSubmit"}))


HELP = """Handle a Claude Code hook: read its JSON on stdin, answer as the protocol expects.

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
    hook_recall_min_score); it works before the transcript exists. PreCompact: the session's
    CONTEXT.md, written before Claude compacts, and its verified state (current work, failing
    checks, commits, next step) printed as instructions for Claude's summary. Stop and
    SessionEnd: new turns folded in, in line (a second or two); curation when due and, at
    session end, cold storage run in a detached worker. Every hook parses only the transcript
    lines appended since the session's last hook (a rewritten or replaced file is read whole).
    SubagentStop: the subagent's own transcript recorded under its parent (the parent's state
    untouched); Claude Code's compaction agent costs nothing.

    Transcripts may open with any bookkeeping line (interactive sessions do); those lines
    are skipped and counted. Other events are acknowledged. A hook never exits 2. Install with
    `ctx hook install claude-code` (or wire examples/claude-code/settings.json; no hook is
    async: headless runs finish them).

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","transcript_path":"t.jsonl","cwd":"."}' | ctx hook claude-code
    """

AGENT = Agent(
    name="claude-code", title="Claude Code", help=HELP,
    events={e: e for e in LIFECYCLE_EVENTS}, acknowledged=OTHER_EVENTS,
    session_prefix="", steer=True, render=render,
    install=Install(paths=paths, hooks=HOOKS, group=group))


# ---- the plugin (`/plugin install`): a marketplace folder holding one plugin ----

PLUGIN = "ctx"
MARKETPLACE = "ctxkit"


def plugin_files(command: str, version: str, marketplace: str = MARKETPLACE) -> dict[str, str]:
    """The files of a plugin marketplace folder whose one plugin runs COMMAND's hooks:
    .claude-plugin/marketplace.json and plugins/ctx/{.claude-plugin/plugin.json, hooks/hooks.json}.
    `/plugin marketplace add DIR` then `/plugin install ctx@ctxkit` (or `claude plugin …`)."""
    hooks: dict = {}
    for h in HOOKS:
        hooks.setdefault(h.event, []).append(group(h, f"{command} hook claude-code {h.event}"))
    desc = ("ctx keeps each session's working state (CONTEXT.md): injected at session start and after "
            "compaction, given to Claude's compaction as instructions, recalled on a prompt.")
    manifest = {"name": PLUGIN, "version": version, "description": desc,
                "author": {"name": "ctxkit"}, "license": "MIT"}
    market = {"name": marketplace, "description": "ctxkit's plugins for Claude Code", "owner": {"name": "ctxkit"},
              "plugins": [{"name": PLUGIN, "source": f"./plugins/{PLUGIN}", "description": desc,
                           "version": version}]}

    def dump(obj) -> str:
        return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"

    return {".claude-plugin/marketplace.json": dump(market),
            f"plugins/{PLUGIN}/.claude-plugin/plugin.json": dump(manifest),
            f"plugins/{PLUGIN}/hooks/hooks.json": dump({"description": "ctx: working state across sessions and "
                                                                       "compactions", "hooks": hooks})}
