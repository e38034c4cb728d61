"""Per-session working state: each session's CONTEXT.md lives in the session store
($CTX_HOME/sessions/ID/CONTEXT.md); the workspace's CONTEXT.md is the active session's.

A subagent (`SESSION.agent-ID`) or another session never overwrites the active session's
workspace file: it writes its own state here. Constraints and Pinned are workspace-level and
carry over when a session is made current.
"""
from __future__ import annotations

import hashlib
import os
import re

from ..core.context_md import Context
from ..sources.workspace import ContextFile

WORKSPACE_SECTIONS = ("Constraints", "Pinned")


def safe_id(session: str) -> str:
    """A file-name-safe, collision-free folder name for any session id."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", session)[:80].strip("._") or "session"
    if base == session:
        return base
    return f"{base}-{hashlib.sha256(session.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def is_subagent(session: str | None) -> bool:
    return bool(session) and ".agent-" in session


def state_file(home, session: str) -> ContextFile:
    from .backend import shared

    if shared(home) is not None:  # the shared store keeps state with a version column
        return shared(home).state_file(session)
    return ContextFile(os.path.join(home.path, "sessions", safe_id(session)))


def with_workspace_sections(ctx: Context, workspace_ctx: Context) -> Context:
    out = Context(version=workspace_ctx.version, updated=ctx.updated, state=dict(ctx.state), task=ctx.task,
                  sections={k: list(v) for k, v in ctx.sections.items()}, latest=ctx.latest)
    for name in WORKSPACE_SECTIONS:
        if workspace_ctx.sections.get(name):
            out.sections[name] = list(workspace_ctx.sections[name])
    return out


def may_replace_workspace(workspace_ctx: Context, session: str | None) -> bool:
    """The workspace file takes `session`'s state when it is nobody's yet, already this
    session's, or a subagent's of this session; never another session's or its parent's."""
    cur = workspace_ctx.state.get("session")
    if not cur:
        return True
    if not session:
        return False
    return cur == session or (cur.startswith(session + ".agent-") and not is_subagent(session))


def activate(home, workspace: str, session: str) -> Context | None:
    """Make `session`'s stored state the workspace's CONTEXT.md; None when it has none."""
    sf = state_file(home, session)
    if not sf.exists():
        return None
    stored = sf.read()
    return ContextFile(workspace).update(lambda cur: with_workspace_sections(stored, cur))


def archive_context(home, ctx_file: ContextFile) -> str | None:
    """Copy a CONTEXT.md into $CTX_HOME/archive/ (atomically, never over an earlier copy), or
    into the shared store's archive when one is configured; where the copy is."""
    from ..core.context_md import render
    from ..core.timeutil import now_iso
    from .atomic import atomic_write, makedirs
    from .backend import shared

    if not ctx_file.exists():
        return None
    ctx = ctx_file.read()
    sess = re.sub(r"[^A-Za-z0-9._-]+", "_", ctx.state.get("session") or "workspace")[:80]
    stamp = now_iso().replace(":", "").replace("-", "")
    if shared(home) is not None:
        return shared(home).archive_context(f"CONTEXT-{sess}-{stamp}", render(ctx))
    base = os.path.join(home.path, "archive", f"CONTEXT-{sess}-{stamp}")
    dest, k = base + ".md", 1
    while os.path.exists(dest):
        k += 1
        dest = f"{base}-{k}.md"
    makedirs(os.path.dirname(dest))
    atomic_write(dest, render(ctx))
    return dest
