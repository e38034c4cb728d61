"""The ctx record: schema version 1, the plumbing contract between stages.

A record is a plain dict, one JSON object per line. Stable fields are listed
in FIELDS; adapters may add `meta` (source-specific extras) and `usage`
(provider-reported token usage).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

SCHEMA_VERSION = 1

KINDS = ("message", "summary", "stub", "event")
ROLES = ("system", "user", "assistant", "tool")

FIELDS = {
    "v": "schema version (1)",
    "kind": "message | summary | stub | event",
    "id": "stable id, unique in a session",
    "session": "session id",
    "ts": "ISO-8601 UTC timestamp, where known",
    "role": "system | user | assistant | tool",
    "content": "text",
    "tool_calls": "OpenAI-style tool calls on an assistant record",
    "tool_call_id": "on a tool record: the call it answers",
    "name": "tool name on a tool record",
    "group": "atomic group (chunk) id: a tool-calling turn and all its results",
    "tokens": "token count under the named tokenizer",
    "tokenizer": "the tokenizer that produced `tokens`",
    "score": "relevance score of the record's chunk",
    "score_parts": "similarity, recency, importance",
    "flags": "e.g. important, pinned, thinking, summarize",
    "source": "{format, file, line} where it came from",
    "meta": "source-specific extras (free-form)",
    "usage": "provider-reported token usage, where the source has it",
}

# Flags with a meaning across commands.
PINNED_FLAGS = frozenset({"pinned", "important"})


def make(kind: str = "message", **fields: Any) -> dict:
    rec: dict = {"v": SCHEMA_VERSION, "kind": kind}
    for k, v in fields.items():
        if v is None or v == [] or v == {}:
            continue
        rec[k] = v
    return rec


def content_hash(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def derive_id(prefix: str, position: int, *parts: Any) -> str:
    return f"{prefix}-{content_hash(position, *parts)[:12]}"


STR_FIELDS = ("id", "session", "ts", "content", "tool_call_id", "name", "group", "tokenizer")
DICT_FIELDS = ("meta", "source", "usage", "score_parts")


def validate(rec: Any) -> str | None:
    """Return a reason string if `rec` is not a valid v1 record, else None. Every field of the
    schema is checked for its type, so no later stage meets a wrong-typed field."""
    if not isinstance(rec, dict):
        return f"expected a JSON object, got {type(rec).__name__}"
    v = rec.get("v")
    if v != SCHEMA_VERSION or isinstance(v, bool):
        return f"unsupported record version {v!r} (this ctx reads v{SCHEMA_VERSION})"
    kind = rec.get("kind")
    if kind not in KINDS:
        return f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})"
    role = rec.get("role")
    if role is not None and role not in ROLES:
        return f"unknown role {role!r} (expected one of {', '.join(ROLES)})"
    if kind == "message" and role is None:
        return "message record without a role"
    for f in STR_FIELDS:
        if rec.get(f) is not None and not isinstance(rec[f], str):
            return f"{f} must be a string, got {type(rec[f]).__name__}"
    for f in DICT_FIELDS:
        if rec.get(f) is not None and not isinstance(rec[f], dict):
            return f"{f} must be an object, got {type(rec[f]).__name__}"
    if isinstance(rec.get("ts"), str) and rec["ts"]:
        from .core.timeutil import parse_ts

        if parse_ts(rec["ts"]) is None:
            return f"ts must be an ISO-8601 time, got {rec['ts'][:40]!r}"
    tc = rec.get("tool_calls")
    if tc is not None:
        if not isinstance(tc, list):
            return "tool_calls must be a list"
        for call in tc:
            if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call.get("id"):
                return "every tool call needs a string id"
            fn = call.get("function")
            if fn is not None and not (isinstance(fn, dict) and isinstance(fn.get("name", ""), str)
                                       and isinstance(fn.get("arguments", ""), (str, dict))):
                return "tool_calls[].function must be {name: string, arguments: string}"
    if role == "tool" and not rec.get("tool_call_id"):
        return "tool record without tool_call_id"
    flags = rec.get("flags")
    if flags is not None and not (isinstance(flags, list) and all(isinstance(f, str) for f in flags)):
        return "flags must be a list of strings"
    tokens = rec.get("tokens")
    if tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0):
        return "tokens must be a non-negative integer"
    score = rec.get("score")
    if score is not None and (not isinstance(score, (int, float)) or isinstance(score, bool)):
        return "score must be a number"
    if isinstance(score, float) and score != score or score in (float("inf"), float("-inf")):
        return "score must be a finite number"
    if tokens is not None and tokens > 1 << 53:
        return "tokens is out of range"
    usage = rec.get("usage")
    if isinstance(usage, dict):
        for k, x in usage.items():
            if x is not None and not isinstance(x, (int, float, dict, str)) or isinstance(x, bool) or \
                    isinstance(x, float) and not math.isfinite(x) or isinstance(x, int) and abs(x) > 1 << 53:
                return f"usage.{k} must be a finite number"
    meta = rec.get("meta")
    if isinstance(meta, dict):
        for k in ("cwd", "branch", "title", "type", "chunk_id", "gist", "model", "session_id", "summary"):
            if meta.get(k) is not None and not isinstance(meta[k], str):
                return f"meta.{k} must be a string, got {type(meta[k]).__name__}"
    return None


_LONE = re.compile("[\ud800-\udfff]")


def unicode_text(s: str) -> str:
    """`s` for a sink that takes only Unicode text (SQLite, a model's tokenizer): a lone
    surrogate becomes U+FFFD there, as any UTF-8 decoder would make it. Records themselves keep
    it: they carry it exactly (JSON writes it back as the `\\udXXX` escape it came in as)."""
    return _LONE.sub("\ufffd", s) if _LONE.search(s) else s


def _clean(v: Any) -> Any:
    """`v` with `unicode_text` applied to every string in it (a hook payload: nothing of it is
    given back to the agent byte for byte)."""
    if isinstance(v, str):
        return unicode_text(v)
    if isinstance(v, list):
        out = [_clean(x) for x in v]
        return v if all(a is b for a, b in zip(out, v)) else out
    if isinstance(v, dict):
        out = {_clean(k): _clean(x) for k, x in v.items()}
        return v if all(a is b for a, b in zip(out.values(), v.values())) and list(out) == list(v) else out
    return v


USAGE_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                "context_window")


def clean_usage(usage: Any) -> tuple[dict | None, list[str]]:
    """Provider usage with what cannot be read as one left out: (the usage, or None when nothing
    is left; the fields left out). A count must be a non-negative integer; another field a
    finite number, a string or an object (what providers add: a service tier, server tool use)."""
    if usage is None:
        return None, []
    if not isinstance(usage, dict):
        return None, ["usage"]
    out, bad = {}, []
    for k, x in usage.items():
        if x is None:
            out[k] = x
            continue
        if k in USAGE_COUNTS:
            ok = isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 1 << 53
        else:
            ok = isinstance(x, (int, float, dict, str)) and not isinstance(x, bool) and \
                not (isinstance(x, float) and not math.isfinite(x)) and not (isinstance(x, int) and abs(x) > 1 << 53)
        if ok:
            out[k] = x
        else:
            bad.append(f"usage.{k}")
    return out or None, bad


def sanitize(rec: Any) -> Any:
    """A record every later stage can handle: tool-call `arguments` given as an object become
    the JSON string the schema says. A lone surrogate (half an emoji, as JavaScript's
    JSON.stringify writes it) is kept as it is: the record goes out, into cold storage and back
    with the same `\\udXXX` escape (`unicode_text` is for the sinks that cannot take it)."""
    calls = rec.get("tool_calls") if isinstance(rec, dict) else None
    if isinstance(calls, list) and any(isinstance(c, dict) and isinstance(c.get("function"), dict)
                                       and isinstance(c["function"].get("arguments"), (dict, list)) for c in calls):
        import json

        rec = dict(rec, tool_calls=[
            dict(c, function=dict(c["function"], arguments=json.dumps(c["function"]["arguments"], ensure_ascii=False)))
            if isinstance(c, dict) and isinstance(c.get("function"), dict)
            and isinstance(c["function"].get("arguments"), (dict, list)) else c for c in calls])
    return rec


HOOK_STR_FIELDS = ("hook_event_name", "transcript_path", "session_id", "cwd", "prompt", "source", "message",
                   "custom_instructions", "trigger", "agent_transcript_path", "agent_id", "reason", "title",
                   "permission_mode", "tool_name", "notification_type")
HOOK_BOOL_FIELDS = ("stop_hook_active",)


def hook_payload(data: dict) -> dict:
    """A hook payload with every field ctx reads of the type it reads: a string field holding
    something else (a list, a number, a NUL) is left out, as if the agent had not sent it."""
    out = {}
    for k, v in data.items():
        if k in HOOK_STR_FIELDS and not (isinstance(v, str) and "\x00" not in v):
            continue
        if k in HOOK_BOOL_FIELDS and not isinstance(v, bool):
            continue
        out[k] = _clean(v)
    return out


def is_ctx_record(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("v") == SCHEMA_VERSION and obj.get("kind") in KINDS


def flags(rec: dict) -> list[str]:
    return rec.get("flags") or []


def has_flag(rec: dict, flag: str) -> bool:
    return flag in (rec.get("flags") or ())


def add_flag(rec: dict, flag: str) -> dict:
    fl = list(rec.get("flags") or [])
    if flag not in fl:
        fl.append(flag)
    rec["flags"] = fl
    return rec


def is_protected(rec: dict) -> bool:
    """System, pinned and important records are never dropped or truncated."""
    return rec.get("role") == "system" or bool(PINNED_FLAGS.intersection(rec.get("flags") or ()))


def tool_call_text(call: dict) -> str:
    """The text a tool call costs: its name plus serialized arguments."""
    fn = call.get("function") or {}
    name = fn.get("name") or call.get("name") or ""
    args = fn.get("arguments", call.get("arguments", ""))
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return f"{name} {args}" if name else args
