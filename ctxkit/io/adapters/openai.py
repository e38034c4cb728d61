"""OpenAI chat messages (a JSON array, {"messages": [...]}, or JSONL) -> ctx records.

Also the shared converter for tau-bench (`traj`) and SWE-agent (`history`).
"""
from __future__ import annotations

import json
import re
from typing import Iterable, Iterator

from ... import records as R
from ...errors import InputError

FORMAT = "openai"
ROLE_MAP = {"developer": "system", "function": "tool"}


def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                if "text" in part:
                    out.append(str(part["text"]))
                elif part.get("type") in ("image_url", "input_image", "image"):
                    out.append("[image]")
                else:
                    out.append(json.dumps(part, ensure_ascii=False))
            else:
                out.append(str(part))
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False)


def _calls(calls) -> list[dict]:
    out = []
    if isinstance(calls, str):  # some SWE-agent files store the list as its Python repr
        try:
            import ast

            calls = ast.literal_eval(calls)
        except (ValueError, SyntaxError):
            calls = []
    if not isinstance(calls, list):
        return out
    for c in calls:
        if not isinstance(c, dict):
            continue
        fn = c.get("function") if isinstance(c.get("function"), dict) else {"name": str(c.get("function") or "")}
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        out.append({"id": c.get("id"), "type": c.get("type", "function"),
                    "function": {"name": fn.get("name", ""), "arguments": args}})
    return out


EXTRA_META = ("thought", "action", "agent", "message_type")
SWE_COMMANDS = {"open", "create", "edit", "goto", "scroll_up", "scroll_down", "search_file", "search_dir",
                "find_file", "submit", "str_replace_editor", "insert", "undo_edit"}


def _call_id(m: dict):
    """`tool_call_id`, or the first of SWE-agent's `tool_call_ids` (a list, or its repr)."""
    if m.get("tool_call_id"):
        return m["tool_call_id"]
    ids = m.get("tool_call_ids")
    if isinstance(ids, str):
        try:
            import ast

            ids = ast.literal_eval(ids)
        except (ValueError, SyntaxError):
            ids = [ids]
    if isinstance(ids, list) and ids:
        return str(ids[0])
    return None


def text_action_call(action: str, call_id: str) -> dict:
    """A SWE-agent text action as a tool call: its first word when it is an agent command
    (open, edit, find_file…), else a shell command."""
    first = action.strip().split(None, 1)[0] if action.strip() else "bash"
    name = first if first in SWE_COMMANDS else "bash"
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps({"command": action.strip()}, ensure_ascii=False)}}


def convert(messages: Iterable[tuple[int, object]], *, source_name: str, fmt: str,
            session: str, loc_key: str = "line", actions: list | None = None) -> Iterator[dict]:
    """(position, message) pairs -> records.

    loc_key "line": position is a 1-based JSONL line; "index": a 1-based
    position in a JSON document's message list.
    """
    def bad(pos, reason):
        if loc_key == "line":
            return InputError(source_name, pos, reason)
        return InputError(source_name, None, f"message {pos}: {reason}")

    text_call: str | None = None   # SWE-agent thought/action: the action awaiting its observation
    n_assistant = 0
    seen_task = False
    for pos, (line, m) in enumerate(messages):
        if not isinstance(m, dict):
            raise bad(line, f"expected a chat message object, got {type(m).__name__}")
        role = ROLE_MAP.get(m.get("role"), m.get("role"))
        if role not in R.ROLES:
            raise bad(line, f"unknown role {m.get('role')!r} in {fmt} message")
        content = _text(m.get("content"))
        calls = _calls(m.get("tool_calls"))
        fl = []
        if str(m.get("is_demo", "")).lower() == "true":
            fl.append("demo")
        meta = {k: m[k] for k in EXTRA_META if k in m and m[k] not in (None, "")}
        tcid = _call_id(m) if role == "tool" else None
        if fmt == "swe-agent":
            if role == "assistant":
                action = m.get("action") if isinstance(m.get("action"), str) else None
                if not action and actions is not None and n_assistant < len(actions):
                    action = actions[n_assistant]  # the trajectory has it where the history does not
                n_assistant += 1
                if not calls and action and action.strip():
                    text_call = R.derive_id("swe-call", pos, action)
                    calls = [text_action_call(action, text_call)]
                    meta.setdefault("action", action)
                else:
                    text_call = None
            elif role == "user" and "demo" not in fl:
                if text_call:      # the observation of the action before it
                    role, tcid = "tool", text_call
                    if re.search(r"Traceback \(most recent|command not found|No such file or directory|"
                                 r"SyntaxError|Error:", content[:2000]):
                        fl.append("error")
                elif seen_task:
                    fl.append("observation")
                seen_task = True
                text_call = None
        rec = R.make("message",
                     id=m.get("id") if isinstance(m.get("id"), str) else R.derive_id("m", pos, role, content),
                     session=session, ts=m.get("timestamp") if isinstance(m.get("timestamp"), str) else None,
                     role=role, content=content, tool_calls=calls,
                     tool_call_id=tcid, name=m.get("name") if role == "tool" else None,
                     flags=fl, source={"format": fmt, "file": source_name, loc_key: line}, meta=meta)
        if role == "tool" and not rec.get("tool_call_id"):
            # (pairing.pair keeps every other unmatched result as a flagged user message)
            # Legacy function-role messages have no call id; keep the text as a user turn.
            rec["role"] = "user"
            rec["content"] = f"[tool output{(' ' + m['name']) if m.get('name') else ''}]\n{content}"
            R.add_flag(rec, "orphan_result")
        yield rec


def sniff_line(obj: object) -> bool:
    return isinstance(obj, dict) and "role" in obj and ("content" in obj or "tool_calls" in obj)


def sniff_doc(doc: object) -> bool:
    if isinstance(doc, list):
        return all(isinstance(m, dict) and "role" in m for m in doc[:5])
    return isinstance(doc, dict) and isinstance(doc.get("messages"), list)


def from_doc(doc: object, *, source_name: str, session: str) -> Iterator[dict]:
    msgs = doc if isinstance(doc, list) else doc["messages"]
    if isinstance(doc, dict):
        session = str(doc.get("id") or doc.get("session") or session)
    yield from convert(((i + 1, m) for i, m in enumerate(msgs)), source_name=source_name,
                       fmt=FORMAT, session=session, loc_key="index")
