"""What several transcript readers share: times, usage, places, turns that never split."""
from __future__ import annotations

import itertools
import json
from datetime import datetime, timezone
from typing import Iterator


def iso_ms(ms) -> str | None:
    """An epoch time in milliseconds (or seconds, when small) as ISO-8601 UTC, or None."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
        return None
    secs = ms / 1000 if ms > 1e11 else ms
    try:
        return datetime.fromtimestamp(secs, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def ts_of(value) -> str | None:
    """An ISO-8601 string kept as it is, an epoch number converted; anything else None."""
    if isinstance(value, str) and value:
        from ...core.timeutil import parse_ts

        dt = parse_ts(value)
        if dt is None:
            return None
        if datetime.fromisoformat(value.strip().replace("Z", "+00:00")).tzinfo is None:
            return dt.isoformat().replace("+00:00", "Z")  # a time without a zone is UTC: say so
        return value
    return iso_ms(value)


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def usage(*, input_total=None, input_fresh=None, cache_read=None, cache_write=None, output=None,
          window=None) -> dict | None:
    """Provider usage in ctx's terms (core.usage reads it): `input_tokens` is the input not read
    from a cache, so input + cache read + cache write + output is what the model held.
    `input_total` is an input count that includes the cached tokens (OpenAI, Gemini, Cline);
    `input_fresh` one that does not (Anthropic, opencode). None when nothing is known, or when
    every count is zero (a placeholder, not a measurement)."""
    cache_read, cache_write, output = _int(cache_read), _int(cache_write), _int(output)
    fresh = _int(input_fresh)
    if fresh is None and _int(input_total) is not None:
        fresh = max(0, input_total - (cache_read or 0) - (cache_write or 0))
    u = {"input_tokens": fresh, "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write,
         "output_tokens": output, "context_window": _int(window) or None}
    u = {k: v for k, v in u.items() if v is not None}
    if fresh is None and output is None or not any(u.get(k) for k in ("input_tokens", "cache_read_input_tokens",
                                                                       "cache_creation_input_tokens", "output_tokens")):
        return None
    return u


def arguments(args) -> str:
    """Tool-call arguments as the JSON string OpenAI-style calls carry (a string stays as it is)."""
    if isinstance(args, str):
        return args
    if args is None:
        return "{}"
    return json.dumps(args, ensure_ascii=False)


def call(call_id: str, name: str, args) -> dict:
    return {"id": str(call_id), "type": "function", "function": {"name": str(name or ""), "arguments": arguments(args)}}


def text_of(value) -> str:
    """A tool output or a content value as text: strings as they are, lists of text parts
    joined, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for p in value:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, dict) and p.get("type") in ("image", "image_url", "input_image"):
                parts.append("[image]")
            else:
                parts.append(json.dumps(p, ensure_ascii=False))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)


class Place:
    """Stamps `meta.cwd`, `meta.branch` and `meta.model` on a record when they are new or
    changed for its session (each is said once, where it starts to hold)."""

    def __init__(self):
        self.seen: dict[tuple, str] = {}

    def stamp(self, rec: dict, **values) -> dict:
        for key, v in values.items():
            if isinstance(v, str) and v and self.seen.get((rec.get("session"), key)) != v:
                self.seen[(rec.get("session"), key)] = v
                rec.setdefault("meta", {})[key] = v
        return rec


class Turn:
    """One assistant turn of a streaming reader: the thinking before it, the assistant record
    with its calls, and the results as they come; records that arrive while results are awaited
    (notifications, a subagent's own turns, events) wait in `held` and follow the turn, so
    nothing ever comes between a call and its result."""

    _keys = itertools.count(1)            # one `_turn` per turn, whichever Turn emitted it

    def __init__(self):
        self.before: list[dict] = []
        self.rec: dict | None = None
        self.results: list[dict] = []
        self.held: list[dict] = []

    def open(self) -> bool:
        return self.rec is not None

    def waiting(self) -> bool:
        """Calls of the turn still wait for their result."""
        if self.rec is None:
            return False
        answered = {r.get("tool_call_id") for r in self.results}
        return any(c["id"] not in answered for c in self.rec.get("tool_calls") or ())

    def has_call(self, call_id) -> bool:
        return self.rec is not None and any(c["id"] == call_id for c in self.rec.get("tool_calls") or ())

    def start(self, rec: dict, before: list[dict] | None = None) -> Iterator[dict]:
        """Close the open turn and open a new one with `rec` (records of a turn share `_turn`)."""
        yield from self.flush()
        self.rec, self.before = rec, list(before or [])

    def result(self, rec: dict) -> None:
        names = {c["id"]: c["function"]["name"] for c in (self.rec or {}).get("tool_calls") or ()}
        if names.get(rec.get("tool_call_id")):
            rec.setdefault("name", names[rec["tool_call_id"]])
        self.results.append(rec)

    def other(self, rec: dict) -> Iterator[dict]:
        """A record that is not part of the turn: after it, at once when no call waits."""
        if self.waiting():
            self.held.append(rec)
            return iter(())
        return iter([*self.flush(), rec])

    def flush(self) -> Iterator[dict]:
        if self.rec is not None:
            key = ("turn", next(Turn._keys))
            for r in (*self.before, self.rec, *self.results):
                r["_turn"] = key
                yield r
        yield from self.held
        self.before, self.rec, self.results, self.held = [], None, [], []
