"""The hooks' state: what a session's hooks already did (transcript size, what was injected, the
hand-over record, where the incremental transcript reader stopped), one JSON file under the home,
changed under its lock and written atomically."""
from __future__ import annotations

import json
import os
from typing import Callable


def state_path(home) -> str:
    return os.path.join(home.path, "hooks-state.json")


def read_state(home) -> dict:
    from .atomic import load_json

    return load_json(state_path(home), "hook state", default={}, derived=True)  # rebuilt as hooks run


def _write(p: str, state: dict) -> None:
    from .atomic import atomic_write

    atomic_write(p, json.dumps(state, indent=1, sort_keys=True) + "\n")


def update_state(home, key: str, value) -> None:
    """Set (or, with None, remove) one key of the state."""
    from .atomic import locked

    p = state_path(home)
    with locked(p):
        state = read_state(home)
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
        _write(p, state)


def change_state(home, key: str, change: Callable[[dict], dict | None]) -> dict:
    """Read and change one dict-valued key under the state's lock: `change(current) -> new value or
    None` (None: leave it). Returns the current value."""
    from .atomic import locked

    p = state_path(home)
    with locked(p):
        state = read_state(home)
        cur = state.get(key) if isinstance(state.get(key), dict) else {}
        new = change(cur)
        if new is not None:
            state[key] = new
            _write(p, state)
    return cur
