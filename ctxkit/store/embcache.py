"""cache/embeddings.sqlite: (model, sha256 of text) -> vector, so rescoring only embeds what is new."""
from __future__ import annotations

import os

from .atomic import makedirs
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;
"""


class EmbeddingCache:
    """In a home that cannot be written (a read-only snapshot), the cache is read as it is and
    what is new is kept in memory for the run only."""

    def __init__(self, path: str):
        from .atomic import no_links
        from .sqlite_files import open_read_only, writable

        self.path = path
        self.read_only = not writable(os.path.dirname(path))
        if self.read_only:
            no_links(path)
            self.db = open_read_only(path) if os.path.isfile(path) else sqlite3.connect(":memory:",
                                                                                           isolation_level=None)
            if not os.path.isfile(path):
                self.db.executescript(SCHEMA)
            return
        makedirs(os.path.dirname(path))
        self.db = sqlite3.connect(no_links(path), timeout=60, isolation_level=None)
        os.chmod(path, 0o600)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def get_many(self, model: str, hashes: list[str]) -> dict:
        import numpy as np

        out = {}
        uniq = list(dict.fromkeys(hashes))
        for start in range(0, len(uniq), 500):
            part = uniq[start:start + 500]
            q = f"SELECT hash, vec FROM embeddings WHERE model=? AND hash IN ({','.join('?' * len(part))})"
            for h, blob in self.db.execute(q, [model, *part]):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model: str, vecs: dict) -> None:
        from ..errors import CtxError
        from .sqlite_files import rollback

        if self.read_only and os.path.isfile(self.path):
            return   # a read-only home: vectors made in this run are not kept
        rows = [(model, h, int(v.shape[0]), v.astype("float32").tobytes()) for h, v in vecs.items()]
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
                self.db.execute("COMMIT")
            except BaseException:
                rollback(self.db)
                raise
        except sqlite3.OperationalError as e:   # the disk full: say which file, never "cannot rollback"
            raise CtxError(f"{self.path}: {e} (the embedding cache)") from None

    def count(self, model: str | None = None) -> int:
        if model:
            return self.db.execute("SELECT COUNT(*) FROM embeddings WHERE model=?", (model,)).fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
