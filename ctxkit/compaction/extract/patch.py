"""Patches as file changes: the `*** Begin Patch` format (Codex's apply_patch and the agents that copied
it) and unified diffs (`--- a/x` / `+++ b/x`). Each file gets one change with its removed and added
lines as `old` and `new`."""
from __future__ import annotations

import re

from ..model import CREATE, DELETE, MODIFY, MOVE, Change

FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$")
MOVE_TO = re.compile(r"^\*\*\* Move to: (.+)$")
UNIFIED = re.compile(r"^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$")


def changes(text: str, at: int, ok: bool = True, ts: str | None = None) -> list[Change]:
    if "*** Begin Patch" in text or FILE.search(text.split("\n", 3)[-1] if text else ""):
        return _codex(text, at, ok, ts)
    if re.search(r"^\+\+\+ ", text, re.M):
        return _unified(text, at, ok, ts)
    return []


def _codex(text: str, at: int, ok: bool, ts) -> list[Change]:
    out: list[Change] = []
    cur: dict | None = None

    def flush():
        if cur is not None:
            out.append(Change(at, path=cur["path"], action=cur["action"], old="\n".join(cur["old"]),
                              new="\n".join(cur["new"]), ok=ok, via="patch", to=cur.get("to", ""), ts=ts))

    for line in text.splitlines():
        m = FILE.match(line)
        if m:
            flush()
            verb, path = m.group(1), m.group(2).strip()
            cur = {"path": path, "action": {"Add": CREATE, "Update": MODIFY, "Delete": DELETE}[verb], "old": [], "new": []}
            continue
        if cur is None:
            continue
        mv = MOVE_TO.match(line)
        if mv:
            cur["action"], cur["to"] = MOVE, mv.group(1).strip()
            continue
        if line.startswith("*** End"):
            continue
        if line.startswith("+"):
            cur["new"].append(line[1:])
        elif line.startswith("-"):
            cur["old"].append(line[1:])
    flush()
    return out


def _unified(text: str, at: int, ok: bool, ts) -> list[Change]:
    out: list[Change] = []
    path, old, new, created, deleted = None, [], [], False, False
    prev = ""

    def flush():
        if path:
            action = CREATE if created else DELETE if deleted else MODIFY
            out.append(Change(at, path=path, action=action, old="\n".join(old), new="\n".join(new), ok=ok,
                              via="patch", ts=ts))

    for line in text.splitlines():
        m = UNIFIED.match(line)
        if m and prev.startswith("--- "):
            flush()
            path, old, new = m.group(1).strip(), [], []
            created = prev.strip() in ("--- /dev/null",)
            deleted = m.group(1).strip() == "/dev/null"
            if deleted:
                path = prev[4:].strip().removeprefix("a/")
        elif path and line.startswith("+") and not line.startswith("+++"):
            new.append(line[1:])
        elif path and line.startswith("-") and not line.startswith("---"):
            old.append(line[1:])
        prev = line
    flush()
    return out
