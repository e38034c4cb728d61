"""What the detached worker (the hooks' curation, and cold storage at session end) leaves for
people to see: its stderr in logs/worker.log, and its last failure in logs/worker-failed.json
until a later run succeeds (`ctx status` and `ctx health` show it)."""
from __future__ import annotations

import os

from .atomic import PRIVATE_FILE, atomic_write, load_json, makedirs, no_links

LOG = "worker.log"
FAILED = "worker-failed.json"
MAX_LOG = 1 << 20  # past 1 MB the log starts again (the previous one kept as worker.log.1)


def _dir(home) -> str:
    try:
        return home.logs_dir
    except Exception:  # a config that does not load (one reason a worker fails): the home's own logs/
        return os.path.join(home.path, "logs")


def log_path(home) -> str:
    return os.path.join(_dir(home), LOG)


def open_log(home):
    """The worker's stderr: logs/worker.log opened for appending (private, no link followed).
    Where it cannot be opened (a read-only or full home), /dev/null as before: the hook still runs."""
    path = log_path(home)
    try:
        makedirs(os.path.dirname(path))
        no_links(path)
        try:
            if os.path.getsize(path) > MAX_LOG:
                os.replace(path, path + ".1")
        except OSError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), PRIVATE_FILE)
    except OSError:
        return open(os.devnull, "ab")
    return os.fdopen(fd, "ab")


def record_failure(home, event: dict) -> None:
    """The last failure, kept until a run succeeds (redacted like every write)."""
    import json

    from . import redaction

    atomic_write(os.path.join(_dir(home), FAILED), json.dumps(redaction.value(event), ensure_ascii=False) + "\n",
                 redacted=True)


def clear_failure(home) -> None:
    try:
        os.unlink(os.path.join(_dir(home), FAILED))
    except FileNotFoundError:
        pass


def last_failure(home) -> dict | None:
    """The worker's last failure when no run succeeded since, else None (one stat when there is none)."""
    path = os.path.join(_dir(home), FAILED)
    if not os.path.lexists(path):
        return None
    return load_json(path, "worker failure record", derived=True)
