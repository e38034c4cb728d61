"""Timestamps and durations (pure)."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_DUR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|m|min|mins|h|hr|hrs|hours?|d|days?|w|weeks?)\s*$", re.I)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso(now())


def parse_ts(value) -> datetime | None:
    """Parse an ISO-8601 timestamp (Z or offset); naive ones are taken as UTC."""
    if not isinstance(value, str) or not value:
        return None
    v = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(v)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt


def parse_duration(text: str) -> timedelta:
    """'90s', '15m', '24h', '7d', '2w' -> timedelta; ValueError otherwise."""
    m = _DUR.match(text or "")
    if not m:
        raise ValueError(f"invalid duration {text!r} (use e.g. 90s, 15m, 24h, 7d, 2w)")
    unit = m.group(2).lower()[0]
    return timedelta(seconds=float(m.group(1)) * _UNITS[unit])


def parse_since(text: str, ref: datetime | None = None) -> datetime:
    """A duration ago ('24h') or an absolute ISO timestamp."""
    ts = parse_ts(text)
    if ts is not None:
        return ts
    return (ref or now()) - parse_duration(text)
