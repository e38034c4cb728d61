"""ctx records -> the request body a model API takes (pure: no I/O). One renderer, used by
`ctx export` and `prompt build --format messages`.

OpenAI (`messages`): system records first, then the conversation; tool calls on assistant
messages, each result a `tool` message right after its call. Anthropic: one top-level
`system`; strictly alternating user/assistant turns starting with user; `tool_use` blocks on
the assistant turn and their `tool_result` blocks first in the user turn right after it.
Summaries and stubs go where each API accepts them: as user text at their place in the
conversation (a compaction summary is never a system message in the middle). Thinking and
events are not sent (they cannot be replayed without the provider's signatures). A compaction
marker ("Conversation compacted") is bookkeeping, not a prompt: it is not sent either.

Tool ids are made valid for both APIs (Anthropic: `^[a-zA-Z0-9_-]+$`), the same rewrite on
the call and on its result, unique within the body. Records that leave nothing to send raise
`NothingToSend` (an empty `messages` is a request every API rejects).
"""
from __future__ import annotations

import json
import re

from .. import records as R

CONTINUE = "(continuing the conversation)"


class NothingToSend(ValueError):
    """The records hold nothing a model API takes (only events, thinking or markers)."""


def _sendable(r: dict) -> bool:
    return isinstance(r, dict) and r.get("kind") in ("message", "summary", "stub") and \
        not {"thinking", "reasoning", "compact_boundary"} & set(R.flags(r))


_ID_OK = re.compile(r"^[a-zA-Z0-9_-]+$")


class ToolIds:
    """One body's tool-id rewrite: each original id to one valid, unique id (call and result alike)."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.used: set[str] = set()

    def __call__(self, orig) -> str:
        key = "" if orig is None else str(orig)
        if key in self.map:
            return self.map[key]
        new = key if _ID_OK.match(key) else (re.sub(r"[^a-zA-Z0-9_-]+", "_", key).strip("_") or "call")
        base, n = new, 1
        while new in self.used:
            n += 1
            new = f"{base}_{n}"
        self.map[key] = new
        self.used.add(new)
        return new


def _check_nonempty(seen: int, msgs: list, target: str) -> None:
    if seen and not msgs:
        raise NothingToSend(f"nothing to send to {target}: the {seen} input record(s) hold no message "
                            "(only events, thinking or compaction markers)")


def _counted(records, box: list):
    for r in records:
        box[0] += 1
        yield r


def _role(r: dict) -> str:
    role = r.get("role") or "user"
    if r.get("kind") in ("summary", "stub") and role != "system" or \
            (r.get("kind") == "summary" and "compaction" in R.flags(r)):
        return "user"
    return role


def split_system(records) -> tuple[list[str], list[dict]]:
    """(system texts, the rest) — system records are hoisted wherever they sit."""
    system, rest = [], []
    for r in records:
        if not isinstance(r, dict) or not _sendable(r):
            continue
        if _role(r) == "system":
            if (r.get("content") or "").strip():
                system.append(r["content"])
        else:
            rest.append(r)
    return system, rest


def to_openai(records, system_prefix: str | None = None) -> dict:
    seen = [0]
    system, rest = split_system(_counted(records, seen))
    ids = ToolIds()
    if system_prefix:
        system.insert(0, system_prefix)
    msgs: list[dict] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for r in rest:
        role = _role(r)
        m: dict = {"role": role, "content": r.get("content") or ""}
        if role == "assistant" and r.get("tool_calls"):
            m["tool_calls"] = [{"id": ids(c.get("id")), "type": "function",
                                "function": {"name": (c.get("function") or {}).get("name", ""),
                                             "arguments": _args_str(c)}} for c in r["tool_calls"]]
            if not m["content"]:
                m["content"] = None
        if role == "tool":
            m["tool_call_id"] = ids(r.get("tool_call_id"))
        if role != "tool" and m["content"] == "" and not m.get("tool_calls"):
            continue
        msgs.append(m)
    _check_nonempty(seen[0], msgs, "openai")
    return {"messages": msgs}


def _args_str(call: dict) -> str:
    a = (call.get("function") or {}).get("arguments", "")
    return a if isinstance(a, str) else json.dumps(a, ensure_ascii=False)


def _args_obj(call: dict) -> dict:
    a = (call.get("function") or {}).get("arguments", "")
    if isinstance(a, dict):
        return a
    try:
        v = json.loads(a) if a else {}
    except (ValueError, TypeError, RecursionError):
        return {"arguments": a}
    return v if isinstance(v, dict) else {"arguments": v}


def to_anthropic(records, system_prefix: str | None = None) -> dict:
    seen = [0]
    system, rest = split_system(_counted(records, seen))
    ids = ToolIds()
    if system_prefix:
        system.insert(0, system_prefix)
    turns: list[dict] = []

    def add(role: str, blocks: list[dict]) -> None:
        blocks = [b for b in blocks if b.get("type") != "text" or b.get("text", "").strip()]
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            if role == "user" and any(b["type"] == "tool_result" for b in blocks):
                # results answer the assistant turn just before: they lead the user turn
                prev = turns[-1]["content"]
                lead = [b for b in prev if b["type"] == "tool_result"]
                turns[-1]["content"] = lead + blocks + [b for b in prev if b["type"] != "tool_result"]
            else:
                turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for r in rest:
        role = _role(r)
        text = r.get("content") or ""
        if role == "assistant":
            blocks = [{"type": "text", "text": text}]
            for c in r.get("tool_calls") or ():
                blocks.append({"type": "tool_use", "id": ids(c.get("id")), "name": (c.get("function") or {}).get("name", ""),
                               "input": _args_obj(c)})
            add("assistant", blocks)
        elif role == "tool":
            b = {"type": "tool_result", "tool_use_id": ids(r.get("tool_call_id"))}
            if text:  # content is optional; an empty result is sent without it
                b["content"] = text
            if "error" in R.flags(r):
                b["is_error"] = True
            add("user", [b])
        else:
            add("user", [{"type": "text", "text": text}])
    _check_nonempty(seen[0], turns, "anthropic")
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
    body: dict = {}
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = turns
    return body


RENDERERS = {"openai": to_openai, "anthropic": to_anthropic}
