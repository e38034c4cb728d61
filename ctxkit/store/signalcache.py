"""cache/signals/SESSION.bin: what `ctx score` found in each chunk of a session, by a hash of the
chunk, so rescoring the same session reads each chunk's signals back instead of finding them
again (the embedding cache's idea, for the signals that need no model).

One file per session (its first record's session id), holding only the chunks of the latest
run: it never grows past the session. It is tagged with a fingerprint of the code and the
redaction settings that made it; any other fingerprint reads as empty. The encoding is
`marshal` (plain tuples, strings, numbers: the fastest to read back); the file is private
(0600) under CTX_HOME like every cache, and a file that does not decode is ignored.
"""
from __future__ import annotations

import hashlib
import marshal
import os

from .atomic import atomic_write, locked, open_checked

FORMAT = 1


def path_for(cache_dir: str, session: str | None) -> str:
    name = hashlib.sha256(str(session or "").encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return os.path.join(cache_dir, "signals", f"{name}.bin")


def lines_path_for(cache_dir: str, session: str | None) -> str:
    """The session's table of input lines known clean (io.seen), beside its signals."""
    return path_for(cache_dir, session)[:-len(".bin")] + ".lines"


def load(path: str, fingerprint: str) -> dict:
    """The cached entries ({chunk hash: entry}), or {} when absent, stale or unreadable."""
    if not os.path.exists(path):  # nothing cached yet: no lock file either (a failed run leaves nothing)
        return {}
    try:
        with locked(path, shared=True):
            with open_checked(path, "rb") as f:
                data = f.read()
    except (OSError, FileNotFoundError):
        return {}
    try:
        fmt, fp, entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return {}
    if fmt != FORMAT or fp != fingerprint or not isinstance(entries, dict):
        return {}
    return entries


def save(path: str, fingerprint: str, entries: dict) -> None:
    """Replace the file with `entries` (atomic, under its lock). The caller passes only what may
    persist: entries of chunks whose records redaction leaves unchanged."""
    data = marshal.dumps((FORMAT, fingerprint, entries))
    with locked(path):
        atomic_write(path, data)
