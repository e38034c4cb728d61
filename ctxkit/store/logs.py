"""JSONL activity logs: append one event per line, read them back filtered."""
from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Iterator

from ..core.timeutil import now_iso, parse_ts
from ..errors import InputError
from ..io.jsonl import BAD_UTF8, loads
from .atomic import append_line
from .home import LOG_NAMES, Home

# Which config knob switches each log on or off (context-health is asked for with --log).
LOG_SWITCH = {"compaction": "log_compaction", "drops": "log_drops", "recovery": "log_recovery",
              "curation": "log_curation"}


def append(home: Home, name: str, event: dict) -> dict | None:
    """Append `event` to logs/NAME.jsonl unless that log is switched off in config."""
    if name not in LOG_NAMES:
        raise ValueError(name)
    switch = LOG_SWITCH.get(name)
    if switch and not home.config.get(switch):
        return None
    from . import redaction

    event = {"timestamp": now_iso(), **redaction.value(event)}
    line = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    from .backend import shared

    store = shared(home)
    if store is not None:
        store.logs.append_line(name, line)
    else:
        append_line(home.log_path(name), line)
    return event


def read(home: Home, name: str, since: datetime | None = None) -> Iterator[dict]:
    from .backend import shared

    store = shared(home)
    if store is not None:
        yield from _events(store.logs.lines(name), f"{store.where} log {name}", since)
        return
    from .atomic import open_checked

    path = home.log_path(name)
    if not os.path.lexists(path):
        return
    with open_checked(path, "r", encoding="utf-8", errors="surrogateescape") as f:
        yield from _events(f, path, since)


def _events(lines, path: str, since: datetime | None) -> Iterator[dict]:
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if BAD_UTF8.search(line):
            raise InputError(path, lineno, "not UTF-8 text")
        try:
            ev = loads(line)
        except InputError as e:  # bad JSON, NaN, nesting too deep, a 5,000-digit number
            raise InputError(path, lineno, e.reason) from None
        if not isinstance(ev, dict):
            raise InputError(path, lineno, f"a log line must be a JSON object, got {type(ev).__name__}")
        if since is not None:
            ts = parse_ts(ev.get("timestamp"))
            if ts is None or ts < since:
                continue
        yield ev


def drop_event(ev: dict) -> dict:
    """A drops.jsonl line in today's shape, whatever version of ctx wrote it: a line from before
    `tokens_freed` has it null (what it freed was not recorded: its `tokens` is the whole chunk,
    which a shrink did not free), and a shrink logged as `chunk_dropped` says `chunk_shrunk`."""
    if "tokens_freed" in ev:
        return ev
    ev = dict(ev, tokens_freed=None)
    if ev.get("event") == "chunk_dropped" and str(ev.get("reason") or "").endswith("_shrunk"):
        ev["event"] = "chunk_shrunk"
    return ev
