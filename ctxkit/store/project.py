"""The project a directory belongs to (its repository root), found by a walk up the tree: no git
import. Used by the workspace resolver and by the project's config.yaml layer."""
from __future__ import annotations

import os


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


def in_repository(path: str) -> bool:
    """`path` is inside a repository (a folder holding `.git` is it or one of its parents)."""
    d = os.path.realpath(os.path.abspath(path))
    return project_root(d) != d or os.path.exists(os.path.join(d, ".git"))
