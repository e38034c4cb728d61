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

    for lineno, obj in iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped):
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
            if keep_meta:
                yield R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                             meta={"type": typ, "cwd": p.get("cwd")})
            continue
        if typ == "response_item":
            pt = p.get("type")
            if pt == "function_call" or pt == "custom_tool_call" or pt == "local_shell_call":
                if pending_calls is not None and results:
                    yield from flush()
                if pending_calls is None:
                    pending_calls = R.make("message", id=rid, session=session, ts=ts, role="assistant",
                                           content="", source=src)
                pending_calls.setdefault("tool_calls", [])
                args = p.get("arguments", p.get("input", p.get("action", "")))
                if not isinstance(args, str):
                    args = json.dumps(args, ensure_ascii=False)
                pending_calls["tool_calls"].append({
                    "id": p.get("call_id") or p.get("id") or rid, "type": "function",
                    "function": {"name": p.get("name") or pt, "arguments": args}})
                continue
            if pt in ("function_call_output", "custom_tool_call_output"):
                out = p.get("output")
                if isinstance(out, dict):
                    out = out.get("content") or json.dumps(out, ensure_ascii=False)
                text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
                rec = R.make("message", id=rid, session=session, ts=ts, role="tool",
                             tool_call_id=p.get("call_id"), content=text, source=src,
                             flags=["error"] if _failed(text) else None)
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
                if cwd and role == "user":
                    rec["meta"] = {"cwd": cwd}
                    cwd = None
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
            info = p.get("info") or {}
            last = info.get("last_token_usage") or {}
            if last:
                usage = {"input_tokens": last.get("input_tokens"), "output_tokens": last.get("output_tokens"),
                         "cache_read_input_tokens": last.get("cached_input_tokens"),
                         "context_window": info.get("model_context_window")}
                yield from event(R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                                        flags=["usage"], usage={k: v for k, v in usage.items() if v is not None}))
            continue
        if typ == "compacted":
            yield from flush()
            yield R.make("summary", id=rid, session=session, ts=ts, role="user",
                         content=p.get("message") or "", source=src)
            continue
        if keep_meta:
            yield from event(R.make("event", id=rid, session=session, ts=ts, content="", source=src,
                                    meta={"type": typ, "payload_type": p.get("type")}))
    yield from flush()


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
