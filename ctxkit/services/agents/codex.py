"""OpenAI Codex CLI (`@openai/codex`, a native binary in the npm package), checked against 0.171.0.

Hooks live in `.codex/hooks.json` of the project (read only when the project is trusted) or in
`$CODEX_HOME/hooks.json` (~/.codex); Codex runs a hook only once the user has trusted it (the
TUI's /hooks; `codex exec --dangerously-bypass-hook-trust` for vetted automation). Payloads are
Claude Code's (session_id, transcript_path = the rollout, cwd, source, prompt, trigger,
turn_id, model). Context reaches the model as hookSpecificOutput.additionalContext at
SessionStart (startup, resume, clear, compact) and UserPromptSubmit, as a developer message.
PreCompact's output cannot steer the summary (only JSON that may stop it): ctx steers Codex's
compaction through `compact_prompt` in config.toml, which the installer writes beside the
hooks, and folds the session at PreCompact so SessionStart(compact) hands the state back.
SessionEnd gets at most 3 seconds: its work runs in a detached worker.
"""
from __future__ import annotations

import os

from . import Agent, HookSpec, Install

EVENTS = {"SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit", "PreCompact": "PreCompact",
          "PostCompact": "PostCompact", "Stop": "Stop", "SubagentStop": "SubagentStop", "SessionEnd": "SessionEnd"}
OTHER_EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest", "SubagentStart", "StopFailure", "Interrupt",
                "PreModelRequest")

HOOKS = (HookSpec("SessionStart", "startup|resume|clear|compact", 10), HookSpec("UserPromptSubmit", None, 30),
         HookSpec("PreCompact", "manual|auto", 60), HookSpec("PostCompact", "manual|auto", 10),
         HookSpec("Stop", None, 60), HookSpec("SubagentStop", None, 60),
         HookSpec("SessionEnd", None, 3))   # Codex clamps SessionEnd to 3 s (and warns above it)

COMPACT_PROMPT = """\
You are writing the handoff summary of this conversation for the agent that continues it, which will see \
only your summary and the newest turns.

Write, in this order:
1. Every request the user made, in order, each with its outcome so far.
2. Current work: what was being done at the cut, the file and function it is in.
3. Checks: which tests, builds or linters ran after the last edit, and whether they passed or failed \
(name the failing ones).
4. Commits made (hash and message) and what is changed but not committed.
5. Errors met and how each was fixed, or that it is still open.
6. The next step.

The conversation may contain blocks headed "# Context (this session's state" or "# Working state": \
they are ctx's verified state of this session, written from the transcript and checked against it. Carry the newest one's current work, \
failing checks, commit hashes and next step into your summary unchanged, and prefer them where the \
conversation seems to say otherwise. Be exact about names, paths, commands and numbers; leave out what \
is done and no longer matters."""

MARKER = "# ctx: Codex's compaction, steered by ctx's verified state (ctx hook uninstall codex removes this)"


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or "~/.codex"


def paths(scope: str, project: str) -> str:
    return f"{project}/.codex/hooks.json" if scope == "project" else f"{codex_home()}/hooks.json"


def group(spec: HookSpec, command: str) -> dict:
    g: dict = {"matcher": spec.matcher} if spec.matcher else {}
    g["hooks"] = [{"type": "command", "command": command, "timeout": spec.timeout}]
    return g


def prompt_block() -> str:
    """The lines the installer puts at the top of config.toml (a top-level key must precede
    every table)."""
    return f"{MARKER}\ncompact_prompt = '''\n{COMPACT_PROMPT}'''\n\n"   # a literal string: taken as written


def add_compact_prompt(base: str | None) -> tuple[str | None, list, list]:
    """config.toml with ctx's compact_prompt first; a compact prompt of the user's is kept."""
    import tomllib

    text = base or ""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return base, [], [f"config.toml is not valid TOML ({e}); compact_prompt not written"]
    if "compact_prompt" in doc or "experimental_compact_prompt_file" in doc:
        if doc.get("compact_prompt") == COMPACT_PROMPT:
            return base, [], []
        return base, [], ["config.toml already sets a compact prompt: kept yours (ctx's is in examples/codex/)"]
    block = prompt_block()
    notes = ["config.toml also has [hooks]: Codex loads them and hooks.json both (and warns); "
             "keep one of the two"] if isinstance(doc.get("hooks"), dict) and doc["hooks"] else []
    return block + text, [(0, len(block))], notes


def remove_compact_prompt(text: str) -> str:
    """config.toml without ctx's block (when the file changed since install)."""
    block = prompt_block()
    return text.replace(block, "", 1) if block in text else text


def extra(scope: str, project: str) -> list:
    cfg = f"{project}/.codex/config.toml" if scope == "project" else f"{codex_home()}/config.toml"
    return [(cfg, add_compact_prompt, remove_compact_prompt)]


NOTE = ("Codex runs a hook only once you trust it: open `codex` in this project, and at \"Hooks need review\" "
        "choose \"Trust all and continue\" (or review them one by one with /hooks); a project's .codex/ is read only "
        "in a trusted project")

HELP = """Handle an OpenAI Codex CLI hook: read its JSON on stdin, answer as Codex expects.

    The same lifecycle as Claude Code's (`ctx hook claude-code --help`), on Codex's events:
    SessionStart (startup, resume, clear, compact) and UserPromptSubmit inject context as
    hookSpecificOutput.additionalContext; PreCompact writes the session's CONTEXT.md before
    Codex compacts, so that SessionStart(compact) hands the state back after it; Stop folds the
    new turns in; SubagentStop records a subagent under its parent; SessionEnd (which Codex
    gives 3 seconds) archives the session in a detached worker. A Codex session's state is
    kept under `codex-SESSION_ID`, apart from every other agent's. Codex's summary is steered by
    the compact_prompt `ctx hook install codex` writes into config.toml. Codex runs a hook
    only once you trust it (/hooks in the TUI).

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","source":"startup","session_id":"demo","cwd":"."}' | ctx hook codex
    """

AGENT = Agent(
    name="codex", title="OpenAI Codex CLI", help=HELP,
    events=EVENTS, acknowledged=OTHER_EVENTS, session_prefix="codex-",
    deferred=frozenset({"SessionEnd"}),
    install=Install(paths=paths, hooks=HOOKS, group=group, extra=extra, note=NOTE))
