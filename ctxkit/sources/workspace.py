"""The workspace (CONTEXT.md and friends) and locked read-modify-write of CONTEXT.md."""
from __future__ import annotations

import os
import re
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


# sections whose items people write (or act on): nothing leaves them without a copy
KEPT_SECTIONS = ("Constraints", "Decisions", "Goals", "Pending", "Pinned")
_GOAL_ID = re.compile(r"^(g-\d+) \(")


def _item_key(section: str, item) -> str:
    if section == "Goals":
        m = _GOAL_ID.match(item.text)
        if m:
            return m.group(1)  # a goal changing status is the same goal
    return item.key()


def kept_before(ctx: Context) -> dict:
    """The kept sections' items before a change (what `left_kept_sections` compares with)."""
    return {s: list(ctx.sections.get(s, [])) for s in KEPT_SECTIONS}


def left_kept_sections(before: dict, new: Context) -> dict[str, list[str]]:
    """{section: the items (rendered, without their "- ") that left it} between `before` (from
    `kept_before`) and `new`: what must be archived, never dropped silently."""
    out = {}
    for section, old in before.items():
        have = {_item_key(section, i) for i in new.sections.get(section, [])}
        gone = [i for i in old if _item_key(section, i) not in have]
        if gone:
            out[section] = list(dict.fromkeys(r[2:] if r.startswith("- ") else r for r in (i.render() for i in gone)))
    return out


def note_archived(n: int, section: str, where: str) -> None:
    if os.environ.get("CTX_QUIET", "") in ("", "0"):
        import sys

        print(f"ctx: {n} item{'s' if n != 1 else ''} left {section} in CONTEXT.md; kept in {where}", file=sys.stderr)


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
