"""Cline's `api_conversation_history.json` (`…/tasks/<task id>/`) -> ctx records.

The file is the JSON array of Anthropic-style messages Cline sends (cline/cline,
src/core/task/index.ts and src/shared/messages/content.ts: `ClineStorageMessage`, with `ts`,
`modelInfo` and `metrics` on recent releases). Tool use comes two ways, both read:

- native tool calling: `tool_use` blocks in the assistant message, `tool_result` blocks in the
  next user message (src/core/task/tools/utils/ToolResultUtils.ts);
- tools written in the assistant's text as XML-ish tags (`<read_file><path>a.py</path>
  </read_file>`), answered in the next user message by a text block `[read_file for 'a.py']
  Result:` followed by the output (in the same block, or in the next one on older releases), or
  by `Tool [name] was not executed because a tool has already been used in this message.`

The assistant's text is kept as written; each XML tool becomes a call whose arguments are its
parameters. The first user message wraps the task in `<task>`; every user turn ends with the
client's `<environment_details>`, which import marks as the client's.
"""
from __future__ import annotations

import os
import re
from typing import Iterator

from ... import records as R
from ...core.client_text import is_client_only
from ...errors import InputError
from .common import Place, call, text_of, ts_of, usage

FORMAT = "cline"
TOOLS = ("ask_followup_question", "attempt_completion", "execute_command", "replace_in_file", "read_file",
         "write_to_file", "search_files", "list_files", "list_code_definition_names", "browser_action",
         "use_mcp_tool", "access_mcp_resource", "load_mcp_documentation", "new_task", "plan_mode_respond",
         "act_mode_respond", "focus_chain", "web_fetch", "web_search", "condense", "summarize_task", "report_bug",
         "new_rule", "apply_patch", "generate_explanation", "use_skill", "use_subagents", "insert_content",
         "search_and_replace", "list_code_definitions")
XML_TOOL = re.compile(r"<(" + "|".join(TOOLS) + r")>(.*?)</\1>", re.S)
XML_PARAM = re.compile(r"<([a-z_]+)>(.*?)</\1>", re.S)
RESULT_HEAD = re.compile(r"^\[(\w+)\b[^\n]*?\] Result:[ \t]*\n?")
NOT_RUN = re.compile(r"^Tool \[(\w+)\] was not executed because a tool has already been used in this message")
MARKERS = ("<environment_details>", "<task>", "[TASK RESUMPTION]")


def _blocks(content) -> list:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _texts(m: dict) -> list[str]:
    return [b.get("text") for b in _blocks(m.get("content")) if b.get("type") == "text" and isinstance(b.get("text"), str)]


def sniff_doc(doc: object) -> bool:
    """An array of user/assistant messages that carries Cline's own marks: the `<task>` and
    `<environment_details>` of its user turns, its `[tool] Result:` blocks, or its `ts` and
    `modelInfo` fields."""
    if not (isinstance(doc, list) and doc and all(isinstance(m, dict) and m.get("role") in ("user", "assistant")
                                                  and "content" in m for m in doc[:5])):
        return False
    for m in doc[:20]:
        if "modelInfo" in m or (m.get("role") == "user" and any(t.lstrip().startswith(MARKERS) or
                                                                  "<environment_details>" in t or RESULT_HEAD.match(t)
                                                                  for t in _texts(m))):
            return True
    return False


def session_of(path: str, fallback: str) -> str:
    """The task id: the folder Cline keeps the task's files in."""
    if path and path != "-" and os.path.basename(path) == "api_conversation_history.json":
        return os.path.basename(os.path.dirname(os.path.abspath(path))) or fallback
    return fallback


def xml_calls(text: str, position: int) -> list[dict]:
    """The tools written in an assistant's text, as calls (their parameters the arguments)."""
    out = []
    for k, m in enumerate(XML_TOOL.finditer(text)):
        params = {p.group(1): p.group(2).strip("\n") for p in XML_PARAM.finditer(m.group(2))}
        out.append(call(f"cline-{position}-{k + 1}", m.group(1), params))
    return out


def from_doc(doc: list, *, source_name: str, session: str) -> Iterator[dict]:
    place = Place()
    pending: list[dict] = []     # the previous assistant message's text-written calls, not yet answered
    seen: set = set()
    for i, m in enumerate(doc, 1):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise InputError(source_name, None, f"message {i}: expected a Cline message {{role: user|assistant, content}}")
        if not isinstance(m.get("content"), (str, list)):
            raise InputError(source_name, None, f"message {i}: content must be a string or a list of blocks")
        src = {"format": FORMAT, "file": source_name, "index": i}
        mid = str(m["id"]) if isinstance(m.get("id"), str) and m["id"] not in seen else R.derive_id("cl", i, m["role"])
        seen.add(mid)
        ts = ts_of(m.get("ts"))
        blocks = _blocks(m["content"])
        if m["role"] == "assistant":
            texts, thinking, calls = [], [], []
            for b in blocks:
                t = b.get("type")
                if t == "text" and isinstance(b.get("text"), str):
                    texts.append(b["text"])
                elif t in ("thinking", "redacted_thinking"):
                    if isinstance(b.get("thinking"), str) and b["thinking"].strip():
                        thinking.append(b["thinking"])
                elif t == "tool_use" and b.get("id"):
                    calls.append(call(b["id"], b.get("name"), b.get("input") if b.get("input") is not None else {}))
                elif t in ("image", "document"):
                    texts.append(f"[{t}]")
            text = "\n\n".join(texts)
            written = xml_calls(text, i)
            pending = list(written)
            tok = (m.get("metrics") or {}).get("tokens") if isinstance(m.get("metrics"), dict) else None
            tok = tok if isinstance(tok, dict) else {}
            turn = ("cl", i)
            if thinking:
                yield R.make("message", id=f"{mid}#thinking", session=session, ts=ts, role="assistant",
                             content="\n\n".join(thinking), flags=["thinking"], source=src, _turn=turn)
            rec = R.make("message", id=mid, session=session, ts=ts, role="assistant", content=text,
                         tool_calls=calls + written, source=src, _turn=turn,
                         usage=usage(input_total=tok.get("prompt"), cache_read=tok.get("cached"),
                                     output=tok.get("completion")))
            info = m.get("modelInfo") if isinstance(m.get("modelInfo"), dict) else {}
            yield place.stamp(rec, model=info.get("modelId") if isinstance(info.get("modelId"), str) else None)
            continue
        results, words = [], []
        k = 0
        while k < len(blocks):
            b = blocks[k]
            t = b.get("type")
            if t == "tool_result":
                results.append(R.make("message", id=f"{mid}#{b.get('tool_use_id')}", session=session, ts=ts,
                                      role="tool", tool_call_id=str(b.get("tool_use_id") or ""),
                                      content=text_of(b.get("content")), source=src,
                                      flags=["error"] if b.get("is_error") else None))
            elif t == "text" and isinstance(b.get("text"), str):
                head, not_run = RESULT_HEAD.match(b["text"]), NOT_RUN.match(b["text"])
                hit = head or not_run
                target = _take(pending, hit.group(1)) if hit else None
                if target is not None:
                    body = b["text"][head.end():] if head else b["text"]
                    if head and not body.strip() and k + 1 < len(blocks) and blocks[k + 1].get("type") == "text" \
                            and not RESULT_HEAD.match(blocks[k + 1].get("text") or ""):
                        k += 1
                        body = blocks[k].get("text") or ""   # older releases: the output in the next block
                    results.append(R.make("message", id=f"{mid}#{target['id']}", session=session, ts=ts, role="tool",
                                          tool_call_id=target["id"], content=body, source=src,
                                          flags=["error"] if not_run or _failed(body) else None))
                else:
                    words.append(b["text"])
            elif t in ("image", "document"):
                words.append(f"[{t}]")
            k += 1
        pending = []
        yield from results
        text = "\n\n".join(words)
        if text.strip():
            rec = R.make("message", id=mid, session=session, ts=ts, role="user", content=text, source=src,
                         flags=["meta"] if all(_client(w) for w in words) else None)
            yield rec


def _take(pending: list[dict], name: str) -> dict | None:
    """The first unanswered text-written call named `name` (else the first unanswered one)."""
    for j, c in enumerate(pending):
        if c["function"]["name"] == name:
            return pending.pop(j)
    return pending.pop(0) if pending else None


def _failed(body: str) -> bool:
    return body.lstrip().startswith(("The tool execution failed", "The user denied this operation", "Error"))


def _client(text: str) -> bool:
    """A user block Cline wrote: environment details, its resumption notice without the user's
    new words, its reminder to use a tool."""
    t = text.lstrip()
    if t.startswith("[TASK RESUMPTION]"):
        return "<user_message>" not in t
    return is_client_only(t)
