"""Token counts remembered across runs ($CTX_HOME/cache/token-counts.json), so a command that
counts the same texts again (prompt build's identity files and condensed CONTEXT.md) does not
load the tokenizer's tables at all. Keyed by tokenizer name and the text's sha256."""
from __future__ import annotations

import hashlib
import json
import os

from ..errors import InputError

MAX_ENTRIES = 20_000


def _load(path: str) -> dict:
    from .atomic import load_json

    try:
        return load_json(path, "token-count cache", default={}, derived=True)
    except InputError:  # a link or a folder in its place: counted afresh, never written through
        return {}


def _counts(d) -> dict:
    """A tokenizer's cached counts, those of the wrong type left out (they are counted again)."""
    if not isinstance(d, dict):
        return {}
    return {k: v for k, v in d.items() if type(v) is int and v >= 0}


class CountCache:
    def __init__(self, home, tok):
        self.tok = tok
        self.path = os.path.join(home.cache_dir, "token-counts.json")
        self.name = tok.name
        self.data: dict = {}
        self.dirty = False
        self.data = _counts(_load(self.path).get(self.name))

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]

    def cached(self, text: str) -> int | None:
        return self.data.get(self.key(text))

    def count(self, text: str) -> int:
        k = self.key(text)
        n = self.data.get(k)
        if n is None:
            n = self.tok.count(text)
            self.data[k] = n
            self.dirty = True
        return n

    def upper_bound(self, text: str) -> int:
        """The exact count when known, else a bound it never exceeds (a BPE token is at least one
        byte; approx is 4 characters a token)."""
        n = self.cached(text)
        return n if n is not None else len(text.encode("utf-8", "surrogatepass"))

    def save(self) -> None:
        if not self.dirty:
            return
        from .atomic import atomic_write, locked

        with locked(self.path):
            allc = _load(self.path)
            mine = {**_counts(allc.get(self.name)), **self.data}
            if len(mine) > MAX_ENTRIES:
                mine = dict(list(mine.items())[-MAX_ENTRIES:])
            allc[self.name] = mine
            atomic_write(self.path, json.dumps(allc))
        self.dirty = False
