"""Atomic groups (chunks): an assistant turn with tool calls plus all its results.

Nothing may separate a group; every stage works on whole groups.
"""
from __future__ import annotations

from typing import Iterable, Iterator

GROUP_PREFIX = "c"


def group_id(n: int) -> str:
    return f"{GROUP_PREFIX}-{n:04d}"


def assign_groups(records: Iterable[dict], start: int = 1) -> Iterator[dict]:
    """Give every message, summary and stub a `group`, streaming (events get none).

    Records that already carry a group keep it. Adapters may mark records of
    one turn with a private `_turn` key; consecutive records with the same
    `_turn` share a group. Otherwise an assistant record with tool calls opens
    a group that the following tool results (matched by tool_call_id) join.
    """
    n = start - 1
    cur_group: str | None = None
    cur_turn = None
    pending: set[str] = set()
    for rec in records:
        turn = rec.pop("_turn", None)
        if rec.get("kind") == "event":
            yield rec  # bookkeeping belongs to no chunk and never splits one
            continue
        if rec.get("group"):
            cur_group, cur_turn, pending = rec["group"], None, set()
            yield rec
            continue
        if turn is not None and turn == cur_turn and cur_group:
            rec["group"] = cur_group
        elif rec.get("role") == "tool" and rec.get("tool_call_id") in pending and cur_group:
            rec["group"] = cur_group
            pending.discard(rec["tool_call_id"])
        else:
            n += 1
            cur_group = group_id(n)
            cur_turn = turn
            pending = set()
            rec["group"] = cur_group
        for call in rec.get("tool_calls") or ():
            if call.get("id"):
                pending.add(call["id"])
        yield rec


def iter_groups(records: Iterable[dict]) -> Iterator[list[dict]]:
    """Yield lists of consecutive records sharing a group (ungrouped = alone)."""
    buf: list[dict] = []
    cur = object()
    for rec in records:
        g = rec.get("group")
        if buf and (g is None or g != cur):
            yield buf
            buf = []
        buf.append(rec)
        cur = g if g is not None else object()
    if buf:
        yield buf


def group_is_complete(group: list[dict]) -> bool:
    """True when every tool call in the group has its result and vice versa."""
    calls = {c.get("id") for r in group for c in (r.get("tool_calls") or ())}
    results = {r.get("tool_call_id") for r in group if r.get("role") == "tool"}
    return results <= calls
