"""The workspace (CONTEXT.md and friends) and locked read-modify-write of CONTEXT.md."""
from __future__ import annotations

import os
from typing import Callable

from ..core.context_md import Context, ContextFormatError, parse, render
from ..core.timeutil import now_iso
from ..errors import ConflictError, InputError
from ..store.atomic import atomic_write, clean_stale_tmp, locked, makedirs


def resolve_workspace(flag: str | None, home_workspace: str) -> str:
    """--workspace, else $CTX_WORKSPACE, else ./.ctx/ when present, else $CTX_HOME/workspace."""
    if flag:
        return os.path.abspath(os.path.expanduser(flag))
    env = os.environ.get("CTX_WORKSPACE")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    local = os.path.join(os.getcwd(), ".ctx")
    if os.path.isdir(local):
        return local
    return home_workspace


class ContextFile:
    def __init__(self, workspace: str):
        self.workspace = workspace
        self.path = os.path.join(workspace, "CONTEXT.md")

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def read(self) -> Context:
        if not self.exists():
            return Context()
        from ..store.atomic import read_text

        text = read_text(self.path)  # a link is refused, bytes that are not UTF-8 named
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
