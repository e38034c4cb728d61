"""Codex CLI rollout JSONL -> ctx records.

Every line is {timestamp, type, payload}. response_item payloads carry
messages, function_call / function_call_output pairs and reasoning; event_msg
token_count carries provider-reported usage.
"""
from __future__ import annotations

import json
import re
from typing import Iterator

from ... import records as R
from ...errors import InputError
from ...core.requests import clean_request
from ..jsonl import Source, iter_json_lines
from .common import Place, usage as usage_of

FORMAT = "codex"
TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}


def sniff(obj: object) -> bool:
    return isinstance(obj, dict) and obj.get("type") in TYPES and "payload" in obj


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    out = []
    for c in content or ():
        if isinstance(c, dict):
            out.append(c.get("text") or "")
    return "\n".join(out)


def parse(source: Source, *, keep_meta: bool = False, skip_invalid: bool = False,
          skipped: list | None = None) -> Iterator[dict]:
    session = "codex"
    pending_calls: dict | None = None   # assistant record being built from consecutive calls
    results: list[dict] = []
    deferred: list[dict] = []           # events seen while calls wait for their output
    turn_no = 0
    cwd = None
    place = Place()
    model = branch = None
    exit_codes: dict[str, int] = {}     # call id -> exit code an exec_command_end reported

    def flush():
        nonlocal pending_calls, results, turn_no, deferred
        if pending_calls is not None:
            turn_no += 1
            pending_calls["_turn"] = turn_no
            if not pending_calls.get("tool_calls"):
                pending_calls.pop("tool_calls", None)
            yield pending_calls
            for r in results:
                r["_turn"] = turn_no
                yield r
        yield from deferred
        pending_calls, results, deferred = None, [], []

    def waiting() -> bool:
        """Calls of the current turn still wait for their output."""
        if pending_calls is None:
            return False
        answered = {r.get("tool_call_id") for r in results}
        return any(c["id"] not in answered for c in pending_calls.get("tool_calls") or ())

    def event(rec: dict):
        """An event never splits a turn: held until the turn's outputs are in."""
        if waiting():
            deferred.append(rec)
            return iter(())
        return iter([*flush(), rec])

    for lineno, obj in iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped, live=True):
        if not isinstance(obj, dict) or "payload" not in obj:
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise InputError(source.name, lineno, "expected a Codex rollout line {timestamp, type, payload}")
        typ, p, ts = obj.get("type"), obj.get("payload") or {}, obj.get("timestamp")
        src = {"format": FORMAT, "file": source.name, "line": lineno}
        rid = R.derive_id("cx", lineno, obj)
        if typ == "session_meta":
            session = str(p.get("id") or session)
            cwd = p.get("cwd") if isinstance(p.get("cwd"), str) else cwd
            git = p.get("git") if isinstance(p.get("git"), dict) else {}
            branch = git.get("branch") if isinstance(git.get("branch"), str) else branch
            if keep_meta:
                yield R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                             meta={"type": typ, "cwd": p.get("cwd")})
            continue
        if typ == "turn_context":
            model = p.get("model") if isinstance(p.get("model"), str) else model
            if isinstance(p.get("cwd"), str) and p["cwd"] != cwd:
                cwd = p["cwd"]
        if typ == "event_msg" and p.get("type") == "exec_command_end" and p.get("call_id"):
            code = p.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                exit_codes[p["call_id"]] = code
                for r in results:  # the output came first: flag it now
                    if r.get("tool_call_id") == p["call_id"] and code != 0:
                        R.add_flag(r, "error")
            continue
        if typ == "response_item":
            pt = p.get("type")
            if pt in CALLS:
                if pending_calls is not None and results:
                    yield from flush()
                if pending_calls is None:
                    pending_calls = place.stamp(R.make("message", id=rid, session=session, ts=ts, role="assistant",
                                                       content="", source=src), model=model)
                pending_calls.setdefault("tool_calls", [])
                args = p.get("arguments", p.get("input", p.get("action", "")))
                if not isinstance(args, str):
                    args = json.dumps(args, ensure_ascii=False)
                name = p.get("name") or CALLS[pt]
                if isinstance(p.get("namespace"), str) and p["namespace"]:
                    name = p["namespace"] + name  # an MCP tool: `mcp__server__` + `_tool`
                pending_calls["tool_calls"].append({
                    "id": p.get("call_id") or p.get("id") or rid, "type": "function",
                    "function": {"name": name, "arguments": args}})
                continue
            if pt in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
                out = p.get("output") if pt != "tool_search_output" else p.get("tools")
                if isinstance(out, dict):
                    out = out.get("content") or json.dumps(out, ensure_ascii=False)
                text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
                code = exit_codes.get(p.get("call_id"))
                rec = R.make("message", id=rid, session=session, ts=ts, role="tool",
                             tool_call_id=p.get("call_id"), content=text, source=src,
                             flags=["error"] if _failed(text) or code not in (None, 0) else None)
                ids = {c["id"] for c in (pending_calls or {}).get("tool_calls", [])}
                if pending_calls is not None and rec["tool_call_id"] in ids:
                    for c in pending_calls["tool_calls"]:
                        if c["id"] == rec["tool_call_id"]:
                            rec["name"] = c["function"]["name"]
                    results.append(rec)
                else:
                    yield from flush()
                    yield R.make("message", id=rid, session=session, ts=ts, role="user",
                                 content=f"[tool result {rec.get('tool_call_id')}]\n{rec.get('content', '')}",
                                 source=src, flags=["orphan_result"])
                continue
            if pt == "reasoning" and waiting():
                pass  # reasoning between a call and its output stays out of the way
            else:
                yield from flush()
            if pt == "message":
                role = {"developer": "system"}.get(p.get("role"), p.get("role"))
                if role not in R.ROLES:
                    role = "user"
                text = _content_text(p.get("content"))
                fl = ["meta"] if role == "user" and clean_request(text) is None else None
                rec = R.make("message", id=p.get("id") or rid, session=session, ts=ts, role=role,
                             content=text, source=src, flags=fl)
                if role == "user":
                    place.stamp(rec, cwd=cwd, branch=branch)
                elif role == "assistant":
                    place.stamp(rec, model=model)
                if role == "assistant":
                    pending_calls = rec  # the calls that follow belong to this turn
                else:
                    yield rec
            elif pt == "reasoning":
                summ = p.get("summary") or []
                text = "\n".join(s.get("text", "") if isinstance(s, dict) else str(s) for s in summ)
                if text.strip():
                    rec = R.make("message", id=p.get("id") or rid, session=session, ts=ts, role="assistant",
                                 content=text, source=src, flags=["reasoning"])
                    if waiting():
                        deferred.append(rec)
                    else:
                        yield rec
            elif keep_meta:
                yield from event(R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                                        meta={"type": typ, "payload_type": pt}))
            continue
        if typ == "event_msg" and p.get("type") == "token_count":
            info = p.get("info") if isinstance(p.get("info"), dict) else {}
            last = info.get("last_token_usage") if isinstance(info.get("last_token_usage"), dict) else {}
            # Codex's input_tokens include the cached ones (its total_tokens is input + output)
            u = usage_of(input_total=last.get("input_tokens"), cache_read=last.get("cached_input_tokens"),
                         output=last.get("output_tokens"), window=info.get("model_context_window"))
            if u:
                yield from event(R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                                        flags=["usage"], usage=u, meta={"model": model} if model else None))
            continue
        if typ == "compacted":
            yield from flush()
            kept = p.get("replacement_history") if isinstance(p.get("replacement_history"), list) else []
            text = p.get("message") if isinstance(p.get("message"), str) and p["message"].strip() else _kept(kept)
            yield R.make("summary", id=rid, session=session, ts=ts, role="user", content=text, source=src,
                         flags=["compact_summary"],
                         meta={"kept_items": len(kept)} if kept else None)
            continue
        if keep_meta:
            yield from event(R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                                    meta={"type": typ, "payload_type": p.get("type")}))
    yield from flush()


# response items that are calls: their name when the item has none
CALLS = {"function_call": "function_call", "custom_tool_call": "custom_tool_call", "local_shell_call": "shell",
         "web_search_call": "web_search", "tool_search_call": "tool_search"}


def _kept(items: list) -> str:
    """What a compaction kept for the model when it wrote no summary text (Codex's remote
    compaction): the messages of its replacement history, each headed by its role."""
    out = []
    for it in items:
        if isinstance(it, dict) and it.get("type") == "message":
            text = _content_text(it.get("content"))
            if text.strip():
                out.append(f"[{it.get('role')}]\n{text}")
    return "\n\n".join(out) or "[Codex compacted the conversation; the rollout keeps no summary text]"


EXIT = re.compile(r"^(?:Exit code|exit_code|Process exited with code):?\s*(-?\d+)", re.M)


def _failed(output: str) -> bool:
    """Codex output reports its exit code in its first lines (or as JSON metadata)."""
    m = EXIT.search(output[:300])
    if m:
        return m.group(1) != "0"
    try:
        o = json.loads(output)
    except (ValueError, TypeError, RecursionError):
        return False
    ec = (o.get("metadata") or {}).get("exit_code") if isinstance(o, dict) else None
    return ec not in (None, 0)
