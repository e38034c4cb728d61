"""OpenHands event trajectories (a JSON array of actions and observations, as OpenHands saves
with `--save-trajectory-path` or replays in its tests) -> ctx records.

An event is `{id, timestamp, source: user|agent|environment, message, action | observation,
args | content + extras, cause, tool_call_metadata?}`. An agent action made through function
calling carries `tool_call_metadata` {function_name, tool_call_id, model_response,
total_calls_in_response}: the model's response itself, whose message holds the assistant's
text and every tool call of that response exactly as the model wrote them (one assistant
record per response, however many actions it caused), and the provider's usage. The
observation that answers it carries the same `tool_call_id` and becomes the call's result
(flagged `error` when OpenHands says it failed). `system` and `message` actions are the system
prompt and the user's and agent's words; a `condensation` action with a summary is OpenHands'
own compaction (a `summary` record). State changes and empty observations are events with
--keep-meta.
"""
from __future__ import annotations

import json
from typing import Iterator

from ... import records as R
from ...errors import InputError
from .common import Place, Turn, call, text_of, ts_of, usage

FORMAT = "openhands"
SOURCES = ("agent", "user", "environment")


def _event(e: object) -> bool:
    return isinstance(e, dict) and e.get("source") in SOURCES and ("action" in e or "observation" in e)


def sniff_doc(doc: object) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_event(e) for e in doc[:5])


def _response(meta: dict) -> tuple[str | None, dict]:
    """(response id, the assistant message of the model response) of a tool_call_metadata."""
    mr = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
    choices = mr.get("choices") if isinstance(mr.get("choices"), list) else []
    msg = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    return (str(mr["id"]) if mr.get("id") else None), (msg if isinstance(msg, dict) else {})


def _usage(meta: dict) -> dict | None:
    mr = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
    u = mr.get("usage") if isinstance(mr.get("usage"), dict) else {}
    details = u.get("prompt_tokens_details") if isinstance(u.get("prompt_tokens_details"), dict) else {}
    cache_read = u.get("cache_read_input_tokens", details.get("cached_tokens"))
    # litellm's prompt_tokens counts the cached and cache-written tokens too
    return usage(input_total=u.get("prompt_tokens"), cache_read=cache_read,
                 cache_write=u.get("cache_creation_input_tokens"), output=u.get("completion_tokens"))


def from_doc(doc: list, *, source_name: str, session: str, keep_meta: bool = False) -> Iterator[dict]:
    place = Place()
    turn = Turn()
    responses: set = set()
    for i, e in enumerate(doc, 1):
        if not _event(e):
            raise InputError(source_name, None, f"event {i}: expected an OpenHands event "
                                                f"{{source, action | observation, …}}")
        src = {"format": FORMAT, "file": source_name, "index": i}
        ts = ts_of(e.get("timestamp"))
        eid = f"oh-{e['id']}" if isinstance(e.get("id"), int) else R.derive_id("oh", i, e)
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        meta = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        action, obs = e.get("action"), e.get("observation")
        if action is not None and meta and e.get("source") == "agent":
            rid, msg = _response(meta)
            tid = str(meta.get("tool_call_id") or R.derive_id("ohc", i, e))
            if rid is None or rid not in responses:
                if rid is not None:
                    responses.add(rid)
                calls = []
                for tc in msg.get("tool_calls") or ():
                    fn = tc.get("function") if isinstance(tc, dict) and isinstance(tc.get("function"), dict) else {}
                    if tc.get("id"):
                        calls.append(call(tc["id"], fn.get("name"), fn.get("arguments")))
                text = text_of(msg.get("content")) if msg else str(args.get("thought") or "")
                rec = R.make("message", id=eid, session=session, ts=ts, role="assistant", content=text,
                             tool_calls=calls, source=src, usage=_usage(meta))
                mr = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
                place.stamp(rec, model=mr.get("model") if isinstance(mr.get("model"), str) else None)
                yield from turn.start(rec)
            if not turn.has_call(tid) and turn.open():  # a call the response does not list: as OpenHands ran it
                own = {k: v for k, v in args.items() if k not in ("thought", "hidden", "confirmation_state",
                                                                   "is_input", "blocking", "impl_source")}
                turn.rec.setdefault("tool_calls", []).append(call(tid, meta.get("function_name") or action, own))
            continue
        if obs is not None and meta and isinstance(meta.get("tool_call_id"), str):
            extras = e.get("extras") if isinstance(e.get("extras"), dict) else {}
            md = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
            refused = "is NOT executed" in str(e.get("content") or "")   # sent while another command still ran
            running = obs == "run" and md.get("exit_code") == -1 and not refused   # no exit yet: still running
            failed = refused or not running and (e.get("success") is False or obs in ("error", "user_rejected"))
            rec = R.make("message", id=eid, session=session, ts=ts, role="tool", tool_call_id=meta["tool_call_id"],
                         content=text_of(e.get("content")) or str(e.get("message") or ""), source=src,
                         flags=["error"] if failed else ["running"] if running else None)
            place.stamp(rec, cwd=md.get("working_dir") if isinstance(md.get("working_dir"), str) else None)
            if turn.has_call(meta["tool_call_id"]):
                turn.result(rec)
                if not turn.waiting():
                    yield from turn.flush()
            else:
                yield from turn.flush()
                yield rec
            continue
        if action == "system":
            yield from turn.other(R.make("message", id=eid, session=session, ts=ts, role="system",
                                         content=text_of(args.get("content")), source=src))
            continue
        if action == "message" and e.get("source") in ("user", "agent"):
            role = "user" if e["source"] == "user" else "assistant"
            text = args.get("content") if isinstance(args.get("content"), str) else str(e.get("message") or "")
            rec = R.make("message", id=eid, session=session, ts=ts, role=role, content=text, source=src)
            yield from turn.flush()
            yield rec
            continue
        if action == "condensation" and isinstance(args.get("summary"), str) and args["summary"].strip():
            yield from turn.flush()
            yield R.make("summary", id=eid, session=session, ts=ts, role="user", content=args["summary"], source=src,
                         flags=["compact_summary"],
                         meta={"forgotten": json.dumps(args.get("forgotten_event_ids"))}
                         if args.get("forgotten_event_ids") else None)
            continue
        if keep_meta:
            yield from turn.other(R.make("event", id=eid, session=session, ts=ts, content=str(e.get("message") or ""),
                                         source=src, meta={"type": str(action or obs)}))
    yield from turn.flush()
