"""What ctx tells an agent's own compaction: the session's verified state, as instructions for
the summary the agent writes (Claude Code passes a PreCompact hook's stdout to its summarizer).

One function, `steering_text`, reads the state the compaction engine derived for the session (the
CONTEXT.md that services.compaction.compact wrote when the hook folded the transcript in) and
says what the summary must keep: the task, the current work, checks that fail, commits, open
errors and the next step. It reads CONTEXT.md's sections only, never the engine's internals.
"""
from __future__ import annotations

import re

STEER_CAP = 9_000   # characters; Claude Code cuts a PreCompact hook's output at 10,000

HEAD = ("ctx has the verified state of this session (derived from the transcript and checked against it). "
        "Your summary is what the agent that continues will work from: keep every fact below in it, exactly "
        "(commit hashes, test names, paths and commands as written), and prefer it where the conversation "
        "seems to say otherwise.")
_COMMIT = re.compile(r"\b[Cc]ommitted\s+`?([0-9a-f]{7,40})\b")
_FAILED = re.compile(r"\b(fail(ed|ing|ures?)?|error)\b", re.I)


def _items(ctx, name: str) -> list[str]:
    return [i.text for i in ctx.sections.get(name, []) if i.done is not True]


def _steps(ctx) -> list[str]:
    return [n for n in ctx.sections if n.startswith("Step ")]


def steering_text(state, limit: int = STEER_CAP) -> str:
    """Instructions for the agent's compaction summary from the session's CONTEXT.md (a
    core.context_md.Context; None or empty state: "")."""
    if state is None or not (state.task or any(state.sections.values())):
        return ""
    parts: list[tuple[str, list[str]]] = []
    if state.task:
        parts.append(("Task", [state.task]))
    if state.latest:
        parts.append(("Latest request", [state.latest]))
    parts.append(("Current work", _items(state, "Current work")))
    steps = _steps(state)
    checks = [t for n in steps[-1:] for t in _items(state, n) if t.startswith("Checks:")]
    failing = [t for t in checks if _FAILED.search(t) and "0 failures" not in t]
    parts.append(("Failing checks" if failing else "Checks after the last edit", failing or checks))
    commits = [t for n in steps for t in _items(state, n) if _COMMIT.search(t)]
    parts.append(("Commits", commits[-8:]))
    errors = [t for t in _items(state, "Errors") if "resolved" not in t]
    parts.append(("Open errors", errors[-5:]))
    parts.append(("Work items", _items(state, "Work items")[:8]))
    parts.append(("Next step", _items(state, "Next step")))
    body = [HEAD]
    for name, lines in parts:
        if lines:
            body.append(f"## {name}\n" + "\n".join(f"- {x}" if not x.startswith("- ") else x for x in lines))
    return _fit("\n\n".join(body), limit)


def _fit(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 60].rsplit("\n", 1)[0]
    return cut + "\n[… cut to fit the agent's limit on hook output]"
