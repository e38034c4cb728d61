"""The SQLite files ctx keeps under its home (the cold-storage index, the embedding cache): opened
read-only in a home that cannot be written, and a failed write's real cause kept."""
from __future__ import annotations

import os
import sqlite3


def writable(folder: str) -> bool:
    """Whether ctx may create and change files in `folder` (False on a read-only snapshot or
    backup of a home, or a folder that cannot be made)."""
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return os.access(folder, os.W_OK)


def open_read_only(path: str) -> sqlite3.Connection:
    """An SQLite file in a home that cannot be written, opened read-only (`mode=ro`: nothing is
    created beside it); a WAL database whose shared-memory file cannot be made there is read as
    the immutable file it is."""
    from urllib.parse import quote

    uri = "file:" + quote(os.path.abspath(path))
    try:
        db = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=60, isolation_level=None)
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, timeout=60, isolation_level=None)
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db


def rollback(db: sqlite3.Connection) -> None:
    """Roll back what is open, if anything: SQLite has already rolled back a transaction a full
    disk ended, and "cannot rollback - no transaction is active" must not hide that cause."""
    if db.in_transaction:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
