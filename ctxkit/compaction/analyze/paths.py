"""Paths as the engine names them (relative to the work's root), and how a path a tool printed matches one a
change made."""
from __future__ import annotations

import re


class Paths:
    """Relative paths: under the root, the path from it; elsewhere under home, `~/…`; else as given."""

    def __init__(self, root: str):
        self.root = root.rstrip("/\\")

    def rel(self, path: str) -> str:
        p = (path or "").strip().strip("'\"")
        if not p:
            return p
        p = p.replace("\\", "/") if re.match(r"^[A-Za-z]:\\", p) or "\\" in p and "/" not in p else p
        root = self.root.replace("\\", "/") if "\\" in self.root else self.root
        if root and (p == root):
            return "."
        if root and p.startswith(root + "/"):
            return p[len(root) + 1:]
        if p.startswith("./"):
            return p[2:]
        return p


TEMP = re.compile(r"^(?:/tmp/|/var/folders/|/private/var/folders/|/var/tmp/|[A-Za-z]:\\(?:Windows\\)?Temp\\)")


def is_temp(path: str) -> bool:
    """A scratch file (under /tmp and the like): the agent's own notes, not the project's files."""
    return bool(TEMP.match(path or ""))


GENERATED = re.compile(r"(?:^|/)(?:_build|node_modules|__pycache__|\.git|\.mypy_cache|\.pytest_cache)/")


def is_generated(path: str) -> bool:
    """A copy a build or a tool made (`_build/dev/…`, `node_modules/…`): reading it is not reading the project."""
    return bool(GENERATED.search(path or ""))


def work_root(cwd: str, changed_paths: list[str], workdirs: list[str] = ()) -> str:
    """The folder the work happens in: the session's directory, or the directory commands ran in (a worktree)
    when it holds more of the changed files; the latest such directory wins a tie."""
    paths = [p for p in changed_paths if (p.startswith("/") or re.match(r"^[A-Za-z]:", p)) and not is_temp(p)]
    if not paths:
        return cwd
    best, held = cwd, sum(1 for p in paths if cwd and p.startswith(cwd.rstrip("/") + "/"))
    for d in reversed(list(dict.fromkeys(reversed([w for w in workdirs if w])))):
        n = sum(1 for p in paths if p.startswith(d.rstrip("/") + "/"))
        if n > held:
            best, held = d.rstrip("/"), n
    return best


def inside(path: str) -> bool:
    """A path under the work's root (outside ones, `~/…` or absolute, are not the project's files)."""
    return not path.startswith(("/", "~")) and not re.match(r"^[A-Za-z]:", path)


# git commands that throw changes away or put them aside
DISCARD = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?(?:stash\b(?!\s+(?:list|show))|restore\b|reset\s+--hard|checkout\s+(?:\S+\s+)?--\s|"
                     r"checkout\s+\.|clean\s+-\w*f)")


def up(path: str) -> str:
    """A path `git status` printed relative to a directory below the root (`../cli/x.go`): the part that
    names the file, for matching by its end."""
    while path.startswith("../"):
        path = path[3:]
    return path


def same(path: str, named: str) -> bool:
    n = named.rstrip("/")
    return path == n or path.endswith("/" + n) or n.endswith("/" + path) or path.startswith(n + "/") or n == "."
