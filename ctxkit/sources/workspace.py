"""The workspace (CONTEXT.md and friends) and locked read-modify-write of CONTEXT.md."""
from __future__ import annotations

import os
import re
from typing import Callable

from ..core.context_md import Context, ContextFormatError, kept_before, left_kept_sections, parse, render
from ..core.timeutil import now_iso
from ..errors import ConflictError, InputError
from ..store.atomic import atomic_write, clean_stale_tmp, locked, makedirs
from ..store.notes import note_archived
from ..store.project import project_root  # noqa: F401 - the one definition; callers import it from here


def project_dir(home_path: str, root: str) -> str:
    """The project's workspace under the home: $CTX_HOME/projects/NAME-HASH (one per root)."""
    import hashlib
    import re

    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(root.rstrip(os.sep)))[:40].strip("._") or "root"
    return os.path.join(home_path, "projects", f"{name}-{hashlib.sha256(root.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}")


def locate_workspace(flag: str | None, home_path: str, cwd: str | None = None,
                     session_cwd: str | None = None) -> tuple[str, str]:
    """(workspace, why) — the one resolution for commands and hooks: --workspace, else
    $CTX_WORKSPACE, else the nearest ./.ctx/ from the directory up to its repository root, else
    the project's folder under $CTX_HOME/projects/ (the project being that repository root). The
    directory is the session's (SESSION_CWD: a hook payload's cwd, the transcript's) where one
    says, else CWD (default: the shell's). One home serves many projects; none sees another's state."""
    if flag:
        return os.path.abspath(os.path.expanduser(flag)), "--workspace"
    env = os.environ.get("CTX_WORKSPACE")
    if env:
        return os.path.abspath(os.path.expanduser(env)), "$CTX_WORKSPACE"
    here = os.path.abspath(session_cwd or cwd or os.getcwd())
    whose = "the session's directory" if session_cwd else "the current directory"
    root = project_root(here)
    d = here
    while True:
        if os.path.isdir(os.path.join(d, ".ctx")):
            return os.path.join(d, ".ctx"), f"the .ctx/ folder of {d}, from {whose} {here}"
        if os.path.realpath(d) == root or os.path.dirname(d) == d:
            break
        d = os.path.dirname(d)
    return project_dir(home_path, root), f"the project {root}, from {whose} {here}"


def resolve_workspace(flag: str | None, home_path: str, cwd: str | None = None, session_cwd: str | None = None) -> str:
    """The workspace of `locate_workspace`, an older shared workspace's state moved into it first."""
    target, _ = locate_workspace(flag, home_path, cwd, session_cwd)
    if not flag and not os.environ.get("CTX_WORKSPACE") and os.path.basename(target) != ".ctx":
        migrate_shared_workspace(home_path, target)
    return target


# what an older ctx kept in the one shared default workspace ($CTX_HOME/workspace) that is a
# project's own state now; SOUL.md, USER.md, AGENTS.md stay there (the personal prompt layer)
SHARED_STATE = ("CONTEXT.md", "MEMORY.md", "observations", "archive")


def migrate_shared_workspace(home_path: str, target: str) -> str | None:
    """Move the working state an older ctx left in $CTX_HOME/workspace (one workspace for every
    project) to a project's folder, once: to the project of the session that wrote its
    CONTEXT.md when the session index knows it, else to `target` (the project asking first).
    Each item moves by rename under a lock; an item the destination already has goes to
    $CTX_HOME/archive/ instead (nothing is overwritten or lost). A folder the user linked there
    on purpose is left alone. Returns the destination, with one note on stderr; None when there
    was nothing to move."""
    old = os.path.join(home_path, "workspace")
    if not any(os.path.lexists(os.path.join(old, n)) for n in SHARED_STATE) or os.path.islink(old):
        return None
    import sys

    from ..store.atomic import fsync_dir

    with locked(os.path.join(home_path, "workspace-migration")):
        items = [n for n in SHARED_STATE if os.path.lexists(os.path.join(old, n))]
        if not items:
            return None  # another process moved them while this one waited
        dest = _owner_dir(home_path, old) or target
        makedirs(dest)
        moved, kept = [], []
        stamp = now_iso().replace(":", "").replace("-", "")
        for n in items:
            src, dst = os.path.join(old, n), os.path.join(dest, n)
            if os.path.lexists(dst):
                dst = os.path.join(home_path, "archive", f"workspace-{stamp}", n)
                makedirs(os.path.dirname(dst))
                kept.append(n)
            else:
                moved.append(n)
            os.rename(src, dst)
            fsync_dir(os.path.dirname(dst))
        fsync_dir(old)
    what = f"moved {', '.join(moved)} to {dest}" if moved else ""
    if kept:
        what += ("; " if what else "") + (f"{', '.join(kept)} (the project already has its own) to "
                                          f"{os.path.join(home_path, 'archive', 'workspace-' + stamp)}")
    print(f"ctx: the shared workspace {old} is one project's now: {what} (each project keeps its own state "
          f"under {os.path.join(home_path, 'projects')}; SOUL.md, USER.md, AGENTS.md stay where they are)",
          file=sys.stderr, flush=True)
    return dest


def _owner_dir(home_path: str, old: str) -> str | None:
    """The folder of the project whose session wrote the shared CONTEXT.md, when known."""
    try:
        sid = ContextFile(old).read().state.get("session") if os.path.exists(os.path.join(old, "CONTEXT.md")) else None
        if not sid:
            return None
        from ..store import sessions
        from ..store.home import Home

        from ..store.backend import close_store

        home = Home(home_path)
        # the older ctx that wrote it kept its session index in the home's file; a shared store's
        # index is asked too (the session may have run on another machine since)
        try:
            owner = (sessions.load_local(home).get(sid) or {}).get("project") or \
                (sessions.load(home).get(sid) or {}).get("project")
        finally:
            close_store(home)
    except Exception:  # noqa: BLE001 - an unreadable file or index: the asking project takes it
        return None
    return project_dir(home_path, owner) if isinstance(owner, str) and owner else None


# sections whose items people write (or act on): nothing leaves them without a copy
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

    def archive_path(self, section: str) -> str:
        return os.path.join(self.workspace, "archive", re.sub(r"[^a-z0-9]+", "-", section.lower()).strip("-") + ".md")

    def archived(self, section: str) -> list[str]:
        """The items that left `section` (over a cap, removed, resolved), oldest first."""
        from ..store.atomic import read_text

        p = self.archive_path(section)
        if not os.path.lexists(p):
            return []
        return [line[2:] for line in read_text(p).splitlines() if line.startswith("- ")]

    def _archive_gone(self, before: dict, new: Context) -> None:
        """Nothing a user wrote leaves CONTEXT.md silently: what left a kept section (a cap, a
        compaction merge, a removal) is appended to archive/SECTION.md, with one line on stderr."""
        for section, gone in left_kept_sections(before, new).items():
            path = self.archive_path(section)
            with locked(path):
                existing = self.archived(section)
                lines = existing + [r for r in gone if r not in existing]
                atomic_write(path, "".join(f"- {x}\n" for x in lines))
            note_archived(len(gone), section, path)

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
            before = kept_before(ctx)
            new = change(ctx) or ctx
            self._archive_gone(before, new)
            new.version = ctx.version + 1
            new.updated = now_iso()
            from ..store import redaction

            text = redaction.text(render(new))  # what users type (remember, decision) too
            atomic_write(self.path, text)
            return parse(text) if text != render(new) else new
