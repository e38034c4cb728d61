"""What `ctx maintain` remembers per session (the last record it processed, when it last
summarized, clustered, archived): $CTX_HOME/maintain-state.json on the embedded store, rows of
ctx_runstate with a version column on the shared one (store/pg.py: PgRunState). Held for the
whole pass: two maintains of one session never run their policy at once."""
from __future__ import annotations

import json
import os
from contextlib import contextmanager


class FileRunState:
    def __init__(self, home):
        self.home = home

    def path(self, name: str) -> str:
        return os.path.join(self.home.path, f"{name}-state.json")

    @contextmanager
    def hold(self, name: str, key: str):
        """The entry `key` of the `name` state (a dict, changed in place), under the file's lock
        for the whole block; written atomically on exit when it changed."""
        from .atomic import atomic_write, load_json, locked

        p = self.path(name)
        with locked(p):
            # a damaged one is read as empty (the policy runs again) and rewritten
            state = load_json(p, f"{name} state", default={}, derived=True)
            entry = state.get(key)
            entry = dict(entry) if isinstance(entry, dict) else {}
            before = json.dumps(entry, sort_keys=True)
            yield entry
            if json.dumps(entry, sort_keys=True) != before:
                state[key] = entry
                atomic_write(p, json.dumps(state, indent=1, sort_keys=True) + "\n")
