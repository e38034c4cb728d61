"""The workspace (CONTEXT.md and friends) and locked read-modify-write of CONTEXT.md."""
from __future__ import annotations

import os
from typing import Callable

from ..core.context_md import Context, ContextFormatError, parse, render
from ..core.timeutil import now_iso
from ..errors import ConflictError, InputError
from ..store.atomic import atomic_write, clean_stale_tmp, locked, makedirs


def project_root(path: str | None = None) -> str:
    """The project a directory belongs to: its repository root (the nearest folder holding
    `.git`), else the directory itself. No git import: a walk up the tree."""
    start = os.path.realpath(os.path.abspath(os.path.expanduser(path or os.getcwd())))
    d = start
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return start
        d = parent


def project_dir(home_path: str, root: str) -> str:
    """The project's workspace under the home: $CTX_HOME/projects/NAME-HASH (one per root)."""
    import hashlib
    import re

    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(root.rstrip(os.sep)))[:40].strip("._") or "root"
    return os.path.join(home_path, "projects", f"{name}-{hashlib.sha256(root.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}")


def resolve_workspace(flag: str | None, home_path: str, cwd: str | None = None) -> str:
    """--workspace, else $CTX_WORKSPACE, else CWD's ./.ctx/ when present, else the project's
    folder under $CTX_HOME/projects/ (the project being the repository root of CWD, the current
    directory by default): one home serves many projects and none sees another's state."""
    if flag:
        return os.path.abspath(os.path.expanduser(flag))
    env = os.environ.get("CTX_WORKSPACE")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    here = os.path.abspath(cwd or os.getcwd())
    local = os.path.join(here, ".ctx")
    if os.path.isdir(local):
        return local
    return project_dir(home_path, project_root(here))


class ContextFile:
    def __init__(self, workspace: str):
        self.workspace = workspace
        self.path = os.path.join(workspace, "CONTEXT.md")

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def read(self) -> Context:
        if not self.exists():
            return Context()
        with open(self.path, encoding="utf-8") as f:
            text = f.read()
        try:
            return parse(text)
        except ContextFormatError as e:
            raise InputError(self.path, e.line, e.reason,
                             hint="fix the line by hand; the file was left as it was") from None

    def update(self, change: Callable[[Context], Context | None], if_version: int | None = None) -> Context:
        """Locked read-modify-write: re-read, check the version, change, bump, write atomically.

        The file is re-read under the lock, so a hand edit made since the last write is kept.
        """
        makedirs(self.workspace)
        clean_stale_tmp(self.workspace)
        ignore = os.path.join(self.workspace, ".gitignore")
        if os.path.basename(os.path.normpath(self.workspace)) == ".ctx" and not os.path.exists(ignore):
            atomic_write(ignore, "# written by ctx: its state never belongs in your repository\n*\n")
        with locked(self.path):
            ctx = self.read()
            if if_version is not None and ctx.version != if_version:
                raise ConflictError(f"{self.path}: version is {ctx.version}, not {if_version}; "
                                    f"nothing changed", hint="re-read it (ctx context show --json) and retry")
            new = change(ctx) or ctx
            new.version = ctx.version + 1
            new.updated = now_iso()
            from ..store import redaction

            text = redaction.text(render(new))  # what users type (remember, decision) too
            atomic_write(self.path, text)
            return parse(text) if text != render(new) else new
