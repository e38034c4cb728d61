"""Whether a file found in a folder (a prompt layer, a project's config.yaml) may be read as the user's
own: on a shared machine anyone can create /tmp/.ctx/AGENTS.md or /tmp/.ctx/config.yaml."""
from __future__ import annotations

import os


def untrusted(path: str) -> str | None:
    """Why a file found in a folder may not be read as yours (None: it may): it counts only when it and
    every folder from its own up to the filesystem root belong to you (or root) and nobody else can
    write them."""
    me = os.getuid() if hasattr(os, "getuid") else None
    if me is None:
        return None
    cur = path
    while True:
        try:
            st = os.lstat(cur)
        except OSError as e:
            return f"cannot check {cur}: {e.strerror}"
        if cur == path and not os.path.isfile(path) or os.path.islink(cur) and cur == path:
            return f"{cur} is not a regular file"
        if st.st_uid not in (me, 0):
            return f"{cur} is owned by uid {st.st_uid}, not you"
        sticky = cur != path and st.st_mode & 0o1000 and st.st_uid == 0  # /tmp: only the owner renames
        if st.st_mode & 0o002 and not sticky:
            return f"{cur} is writable by others"
        if cur == path or cur == os.path.dirname(path):
            if st.st_mode & 0o020 and st.st_gid != os.getgid() and st.st_uid != 0:
                return f"{cur} is writable by its group"
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent
