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
    def __init__(self, path: str):
        makedirs(os.path.dirname(path))
        self.path = path
        from .atomic import no_links

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
        rows = [(model, h, int(v.shape[0]), v.astype("float32").tobytes()) for h, v in vecs.items()]
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def count(self, model: str | None = None) -> int:
        if model:
            return self.db.execute("SELECT COUNT(*) FROM embeddings WHERE model=?", (model,)).fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
