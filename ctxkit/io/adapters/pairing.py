"""Pairing that never lies (streaming, every format goes through it).

- A tool result pairs with the most recent unanswered call of its id.
- A call id that repeats in one session is made unique in the output: the second `call_x`
  becomes `call_x~2` on the call and on the result that answers it.
- A call with no recorded result gets a synthesized result flagged `missing_result`, placed
  right after the turn's real results, so every API accepts the sequence.
- A result that answers no call is kept as a user message flagged `orphan_result` and `meta`:
  never an orphaned tool record.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from ... import records as R

MISSING = "[no result was recorded for this call]"


def pair(records: Iterable[dict]) -> Iterator[dict]:
    seen: dict[tuple, int] = {}           # (session, original id) -> how many calls had it
    waiting: dict[tuple, list[str]] = {}  # (session, original id) -> unanswered unique ids, newest last
    turn: dict | None = None              # the assistant record whose calls are open
    open_ids: list[str] = []              # its unanswered unique ids, in call order
    held: list[dict] = []                 # events that arrived inside the turn: they never split it

    def close() -> Iterator[dict]:
        nonlocal turn, open_ids, held
        if turn is not None:
            names = {c["id"]: (c.get("function") or {}).get("name") for c in turn.get("tool_calls") or ()}
            for uid in open_ids:
                rec = R.make("message", id=f"{turn.get('id')}#missing-{uid}", session=turn.get("session"),
                             ts=turn.get("ts"), role="tool", tool_call_id=uid, name=names.get(uid),
                             content=MISSING, flags=["missing_result"], source=turn.get("source"))
                if "_turn" in turn:
                    rec["_turn"] = turn["_turn"]
                yield rec
            for key in list(waiting):
                waiting[key] = [u for u in waiting[key] if u not in open_ids]
        yield from held
        turn, open_ids, held = None, [], []

    for rec in records:
        if rec.get("kind") == "event":
            if turn is not None:
                held.append(rec)
            else:
                yield rec
            continue
        sess = rec.get("session")
        if rec.get("role") == "tool" and rec.get("kind") == "message":
            key = (sess, rec.get("tool_call_id"))
            stack = waiting.get(key) or []
            if stack and stack[-1] in open_ids:
                uid = stack.pop()
                open_ids.remove(uid)
                rec["tool_call_id"] = uid
                yield rec
                continue
            yield from close()
            yield _orphan(rec)
            continue
        yield from close()
        calls = rec.get("tool_calls")
        if rec.get("role") == "assistant" and isinstance(calls, list) and calls:
            for c in calls:
                if not isinstance(c, dict):
                    continue
                orig = c.get("id")
                key = (sess, orig)
                seen[key] = seen.get(key, 0) + 1
                uid = orig if seen[key] == 1 else f"{orig}~{seen[key]}"
                c["id"] = uid
                waiting.setdefault(key, []).append(uid)
                open_ids.append(uid)
            turn = rec
        yield rec
    yield from close()


def _orphan(rec: dict) -> dict:
    out = R.make("message", id=rec.get("id"), session=rec.get("session"), ts=rec.get("ts"), role="user",
                 content=f"[tool result {rec.get('tool_call_id')}]\n{rec.get('content') or ''}",
                 source=rec.get("source"), flags=["orphan_result", "meta"])
    if "_turn" in rec:
        out["_turn"] = rec["_turn"]
    return out
