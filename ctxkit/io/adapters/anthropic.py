"""Anthropic Messages -> ctx records: `{"system": …, "messages": [...]}` (the shape every
Anthropic-SDK agent loop keeps), or JSONL of such messages.

Content is a string or a list of blocks: `text`, `thinking` / `redacted_thinking` (a separate
record flagged `thinking`), `tool_use` (a tool call), `tool_result` (a tool record paired by
`tool_use_id`; `is_error` flags it), `image` / `document` (a placeholder).
"""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from ... import records as R
from ...errors import InputError

FORMAT = "anthropic"
BLOCKS = {"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document",
          "server_tool_use", "web_search_tool_result"}


def _blocks(content) -> list:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def is_anthropic_message(m: object) -> bool:
    return isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), list) \
        and any(isinstance(b, dict) and b.get("type") in BLOCKS - {"text", "image"} for b in m["content"])


def sniff_doc(doc: object) -> bool:
    """A document with a top-level `system`, or messages carrying Anthropic-only blocks."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return False
    msgs = doc["messages"]
    if any(isinstance(m, dict) and m.get("role") == "system" for m in msgs):
        return False  # OpenAI keeps the system prompt inside messages
    return "system" in doc or any(is_anthropic_message(m) for m in msgs)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for b in content or ():
        if isinstance(b, dict):
            if b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif b.get("type") in ("image", "document"):
                parts.append(f"[{b['type']}]")
            else:
                parts.append(json.dumps(b, ensure_ascii=False))
        else:
            parts.append(str(b))
    return "\n".join(parts)


def convert(messages: Iterable[tuple[int, object]], *, source_name: str, session: str, system=None,
            loc_key: str = "index") -> Iterator[dict]:
    def bad(pos, reason):
        if loc_key == "line":
            return InputError(source_name, pos, reason)
        return InputError(source_name, None, f"message {pos}: {reason}")

    if system:
        yield R.make("message", id=R.derive_id("a", 0, "system"), session=session, role="system",
                     content=_text(system), source={"format": FORMAT, "file": source_name, loc_key: 0})
    for pos, m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise bad(pos, "expected an Anthropic message {role: user|assistant, content}")
        if not isinstance(m.get("content"), (str, list)):
            raise bad(pos, "content must be a string or a list of blocks")
        src = {"format": FORMAT, "file": source_name, loc_key: pos}
        base = R.derive_id("a", pos, m.get("role"))
        ts = m.get("timestamp") if isinstance(m.get("timestamp"), str) else None
        if m["role"] == "assistant":
            texts, thinking, calls = [], [], []
            for b in _blocks(m["content"]):
                if not isinstance(b, dict):
                    raise bad(pos, "a content block must be an object")
                t = b.get("type")
                if t == "text":
                    texts.append(str(b.get("text", "")))
                elif t in ("thinking", "redacted_thinking"):
                    thinking.append(str(b.get("thinking") or b.get("data") or ""))
                elif t in ("tool_use", "server_tool_use"):
                    calls.append({"id": str(b.get("id") or f"{base}-call{len(calls)}"), "type": "function",
                                  "function": {"name": str(b.get("name", "")),
                                               "arguments": json.dumps(b.get("input", {}), ensure_ascii=False)}})
                else:
                    texts.append(_text([b]))
            if thinking:
                yield R.make("message", id=f"{base}#thinking", session=session, ts=ts, role="assistant",
                             content="\n\n".join(thinking), flags=["thinking"], source=src)
            yield R.make("message", id=base, session=session, ts=ts, role="assistant", content="\n\n".join(texts),
                         tool_calls=calls, source=src)
            continue
        texts = []
        for k, b in enumerate(_blocks(m["content"])):
            if not isinstance(b, dict):
                raise bad(pos, "a content block must be an object")
            if b.get("type") == "tool_result":
                yield R.make("message", id=f"{base}#{k}", session=session, ts=ts, role="tool",
                             tool_call_id=str(b.get("tool_use_id") or ""), content=_text(b.get("content") or ""),
                             flags=["error"] if b.get("is_error") else None, source=src)
            else:
                texts.append(_text([b]))
        if any(t.strip() for t in texts):
            yield R.make("message", id=base, session=session, ts=ts, role="user", content="\n".join(texts), source=src)


def from_doc(doc: dict, *, source_name: str, session: str) -> Iterator[dict]:
    session = str(doc.get("id") or doc.get("session") or session)
    yield from convert(((i + 1, m) for i, m in enumerate(doc["messages"])), source_name=source_name,
                       session=session, system=doc.get("system"))
