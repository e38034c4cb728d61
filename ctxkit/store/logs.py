"""JSONL activity logs: append one event per line, read them back filtered."""
from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Iterator

from ..core.timeutil import now_iso, parse_ts
from ..errors import InputError
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
    from .atomic import no_links

    path = no_links(home.log_path(name))
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        yield from _events(f, path, since)


def _events(lines, path: str, since: datetime | None) -> Iterator[dict]:
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(path, lineno, f"invalid JSON: {e.msg}") from None
        if since is not None:
            ts = parse_ts(ev.get("timestamp"))
            if ts is None or ts < since:
                continue
        yield ev
