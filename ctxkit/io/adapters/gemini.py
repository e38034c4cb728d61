"""Gemini CLI chats -> ctx records.

Two shapes (google-gemini/gemini-cli, packages/core/src/services/chatRecordingService.ts and
chatRecordingTypes.ts):

- the JSONL session (`~/.gemini/tmp/<project>/chats/session-*.jsonl`): a metadata line
  `{sessionId, projectHash, startTime, …}`, then one line per message record `{id, timestamp,
  type: user|gemini|info|error|warning, content, toolCalls?, thoughts?, tokens?, model?}`; a
  message is written again, whole, each time it changes (its tool results, its tokens), and
  keeps its first place; `{"$set": {…}}` updates the metadata, and `{"$set": {"messages": […]}}`
  is a checkpoint that replaces the conversation; `{"$rewindTo": ID}` removes that message and
  everything after it (an ID it does not know empties the conversation), as Gemini CLI's own
  loader does;
- the older single JSON session `{sessionId, projectHash, startTime, lastUpdated, messages}`.

A checkpoint that brings a `<state_snapshot>` (Gemini CLI's compression) keeps the messages it
compressed away before a `summary` record flagged `compact_summary`; any other checkpoint
replaces the conversation. `info`, `error` and `warning` messages are the CLI's notices, never
sent to the model: events with --keep-meta.
"""
from __future__ import annotations

import json
from typing import Iterator

from ... import records as R
from ...errors import InputError
from ..jsonl import Source, iter_json_lines
from .common import Place, call, text_of, ts_of, usage

FORMAT = "gemini-cli"
TYPES = ("user", "gemini", "info", "error", "warning")
SNAPSHOT = "<state_snapshot>"


def sniff_line(obj: object) -> bool:
    """The metadata line that opens a JSONL session."""
    return isinstance(obj, dict) and isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str)


def sniff_doc(doc: object) -> bool:
    return sniff_line(doc) and isinstance(doc.get("messages"), list)


def _parts(content) -> list:
    """Gemini's PartListUnion as a list of parts ({text}, {functionCall}, {functionResponse}, …)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    return [{"text": json.dumps(content, ensure_ascii=False)}]


def _text(parts: list) -> str:
    out = []
    for p in parts:
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("text"), str) and not p.get("thought"):
            out.append(p["text"])
        elif "inlineData" in p or "fileData" in p:
            data = p.get("inlineData") or p.get("fileData") or {}
            out.append(f"[{(data.get('mimeType') or 'file') if isinstance(data, dict) else 'file'}]")
    return "\n".join(out)


def _response_text(resp) -> tuple[str, bool]:
    """A functionResponse's text, and whether it reports an error."""
    r = resp.get("response") if isinstance(resp, dict) else None
    if isinstance(r, dict):
        if "error" in r and r["error"] not in (None, ""):
            return text_of(r["error"]), True
        if "output" in r:
            return text_of(r["output"]), False
        return json.dumps(r, ensure_ascii=False), False
    return text_of(r), False


def _result_text(result) -> tuple[str, bool]:
    """A toolCalls[].result (the parts sent back to the model) as text, and whether it is an error."""
    texts, error = [], False
    for p in _parts(result):
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
            t, e = _response_text(p["functionResponse"])
            texts.append(t)
            error = error or e
        elif isinstance(p, dict) and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif isinstance(p, dict) and ("inlineData" in p or "fileData" in p):
            texts.append("[file]")
    return "\n".join(texts), error


def _is_snapshot(msg: dict) -> bool:
    return msg.get("type") == "user" and SNAPSHOT in _text(_parts(msg.get("content")))


def resolve(lines, name: str, skipped: list | None = None) -> tuple[dict, list[tuple[int, dict, str]]]:
    """Replay a JSONL session as Gemini CLI loads it: (metadata, [(line, message, role)]) where
    role is "summary" for a compression snapshot a checkpoint brought, else "message". With a
    `skipped` list (--skip-invalid), a line that breaks the format's rules is counted there and
    read past."""
    if skipped is not None:
        def lines_or_skip():
            for lineno, rec in lines:
                try:
                    yield from _one(lineno, rec)
                except InputError:
                    skipped.append(lineno)
        return _resolve(lines_or_skip(), name)
    return _resolve(((n, r) for n, r in lines), name)


def _one(lineno: int, rec) -> Iterator[tuple[int, object]]:
    """A line checked alone (what can be checked before it is replayed)."""
    if not isinstance(rec, dict) or ("$rewindTo" in rec and not isinstance(rec["$rewindTo"], str)) or \
            ("$set" in rec and not isinstance(rec["$set"], dict)) or \
            (isinstance(rec.get("id"), str) and not isinstance(rec.get("type"), str)) or \
            not ("$rewindTo" in rec or isinstance(rec.get("id"), str) or "$set" in rec or sniff_line(rec)):
        raise InputError("", lineno, "bad line")
    yield lineno, rec


def _resolve(lines, name: str) -> tuple[dict, list[tuple[int, dict, str]]]:
    meta: dict = {}
    msgs: dict[str, tuple[int, dict, str]] = {}
    seen: dict[str, tuple[int, dict]] = {}   # every message's newest recorded version (and its first line)
    for lineno, rec in lines:
        if not isinstance(rec, dict):
            raise InputError(name, lineno, "expected a JSON object (a Gemini CLI session record)")
        if "$rewindTo" in rec:
            rid = rec["$rewindTo"]
            if not isinstance(rid, str):
                raise InputError(name, lineno, "$rewindTo must name a message id (a string)")
            ids = list(msgs)
            if rid in msgs:
                for k in ids[ids.index(rid):]:
                    del msgs[k]
            else:
                msgs.clear()
        elif isinstance(rec.get("id"), str):
            _check_message(rec, name, lineno)
            first = msgs.get(rec["id"])
            msgs[rec["id"]] = (first[0] if first else lineno, rec, first[2] if first else "message")
            seen[rec["id"]] = (msgs[rec["id"]][0], rec)
        elif "$set" in rec:
            upd = rec["$set"]
            if not isinstance(upd, dict):
                raise InputError(name, lineno, "$set must be an object")
            if isinstance(upd.get("messages"), list):
                msgs = _checkpoint(msgs, upd["messages"], lineno, name, seen)
            meta.update({k: v for k, v in upd.items() if k != "messages"})
        elif sniff_line(rec):
            meta.update({k: v for k, v in rec.items() if k != "messages"})
            for m in rec.get("messages") or ():
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    _check_message(m, name, lineno)
                    msgs[m["id"]] = (lineno, m, "message")
                    seen[m["id"]] = (lineno, m)
        else:
            raise InputError(name, lineno, "not a Gemini CLI session record (no id, $set, $rewindTo or sessionId)")
    return meta, list(msgs.values())


def _check_message(m: dict, name: str, line: int) -> None:
    if not isinstance(m.get("type"), str):
        raise InputError(name, line, f"message {m.get('id')!r} has no type (expected one of {', '.join(TYPES)})")
    if m.get("toolCalls") is not None and not isinstance(m["toolCalls"], list):
        raise InputError(name, line, "toolCalls must be a list")


def _checkpoint(msgs: dict, new: list, lineno: int, name: str, seen: dict) -> dict:
    """The conversation after a `$set: {messages}` checkpoint. A compression (a new snapshot
    message) keeps what it compressed away in front of the snapshot; anything else replaces."""
    items = []
    for m in new:
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            _check_message(m, name, lineno)
            items.append(m)
    # a message the conversation had keeps what the checkpoint leaves out (Gemini CLI rebuilds it
    # from the model's history: no timestamp of its own, no tokens, no model)
    items = [dict(seen[m["id"]][1], content=m.get("content")) if m["id"] in seen else m for m in items]
    for m in items:
        seen.setdefault(m["id"], (lineno, m))
    compressed = any(m["id"] not in msgs and _is_snapshot(m) for m in items)
    if not compressed:
        return {m["id"]: (seen[m["id"]][0], m, msgs[m["id"]][2] if m["id"] in msgs else "message")
                if m["id"] in seen else (lineno, m, "message") for m in items}
    out: dict = {}
    new_ids = {m["id"] for m in items}
    kept = [m for m in items if m["id"] in msgs]
    fresh_before: dict[str, list] = {}       # new messages, by the kept message they come before
    pending: list = []
    for m in items:
        if m["id"] in msgs:
            fresh_before[m["id"]] = pending
            pending = []
        else:
            pending.append(m)
    for k, (line, m, role) in msgs.items():
        if k in new_ids:
            for f in fresh_before.get(k, ()):
                out[f["id"]] = (lineno, f, "summary" if _is_snapshot(f) else "message")
            out[k] = (line, next(x for x in kept if x["id"] == k), role)
        else:
            out[k] = (line, m, role)           # compressed away: still the session's history
    for f in pending:
        out[f["id"]] = (lineno, f, "summary" if _is_snapshot(f) else "message")
    return out


def convert(meta: dict, messages: list[tuple[int, dict, str]], *, source_name: str, session: str,
            loc_key: str = "line", keep_meta: bool = False) -> Iterator[dict]:
    session = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) and meta["sessionId"] else session
    place = Place()
    answered: set = set()
    for pos, m, role in messages:
        src = {"format": FORMAT, "file": source_name, loc_key: pos}
        ts = ts_of(m.get("timestamp"))
        mid = m["id"]
        typ = m.get("type")
        parts = _parts(m.get("content"))
        if typ not in ("user", "gemini"):  # the CLI's own notices (and types of later releases)
            if keep_meta:
                yield R.make("event", id=mid, session=session, ts=ts, content=_text(parts), source=src,
                             meta={"type": typ})
            continue
        if role == "summary":
            yield R.make("summary", id=mid, session=session, ts=ts, role="user", content=_text(parts), source=src,
                         flags=["compact_summary"])
            continue
        if typ == "user":
            for p in parts:  # results sent back as a user turn (a history checkpoint writes them so)
                fr = p.get("functionResponse") if isinstance(p, dict) else None
                if isinstance(fr, dict) and fr.get("id") not in answered:
                    text, err = _response_text(fr)
                    answered.add(fr.get("id"))
                    yield R.make("message", id=f"{mid}#{fr.get('id')}", session=session, ts=ts, role="tool",
                                 tool_call_id=str(fr.get("id") or ""), name=fr.get("name"), content=text,
                                 flags=["error"] if err else None, source=src)
            text = _text(parts)
            if text.strip() or not any(isinstance(p, dict) and "functionResponse" in p for p in parts):
                yield R.make("message", id=mid, session=session, ts=ts, role="user", content=text, source=src)
            continue
        # a `gemini` message: its thoughts, its text and calls, then the calls' results
        thoughts = []
        for t in m.get("thoughts") or ():
            if isinstance(t, dict):
                line = ": ".join(x for x in (t.get("subject"), t.get("description")) if isinstance(x, str) and x)
                if line:
                    thoughts.append(line)
        thoughts += [p["text"] for p in parts if isinstance(p, dict) and p.get("thought") and isinstance(p.get("text"), str)]
        calls, results = [], []
        for p in parts:
            fc = p.get("functionCall") if isinstance(p, dict) else None
            if isinstance(fc, dict):
                cid = fc.get("id") or R.derive_id("gc", pos, mid, fc.get("name"), len(calls))
                calls.append(call(cid, fc.get("name"), fc.get("args") or {}))
        for tc in m.get("toolCalls") or ():
            if not isinstance(tc, dict) or not tc.get("id"):
                continue
            if not any(c["id"] == tc["id"] for c in calls):
                calls.append(call(tc["id"], tc.get("name"), tc.get("args") if tc.get("args") is not None else {}))
            if tc.get("result") is not None and tc["id"] not in answered:
                text, err = _result_text(tc["result"])
                answered.add(tc["id"])
                results.append(R.make("message", id=f"{mid}#{tc['id']}", session=session,
                                      ts=ts_of(tc.get("timestamp")) or ts, role="tool", tool_call_id=str(tc["id"]),
                                      name=tc.get("name"), content=text, source=src,
                                      flags=["error"] if err or tc.get("status") in ("error", "cancelled") else None))
        tok = m.get("tokens") if isinstance(m.get("tokens"), dict) else {}
        u = usage(input_total=tok.get("input"), cache_read=tok.get("cached"), output=tok.get("output"))
        turn = ("g", pos, mid)
        if thoughts:
            yield R.make("message", id=f"{mid}#thinking", session=session, ts=ts, role="assistant",
                         content="\n\n".join(thoughts), flags=["thinking"], source=src, _turn=turn)
        rec = R.make("message", id=mid, session=session, ts=ts, role="assistant", content=_text(parts),
                     tool_calls=calls, usage=u, source=src, _turn=turn)
        yield place.stamp(rec, model=m.get("model"))
        for r in results:
            r["_turn"] = turn
            yield r


def parse(source: Source, *, session: str, keep_meta: bool = False, skip_invalid: bool = False,
          skipped: list | None = None, **_) -> Iterator[dict]:
    """The JSONL session (read whole: a later line may change or remove an earlier message)."""
    meta, messages = resolve(iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped, live=True),
                             source.name, skipped=(skipped if skipped is not None else []) if skip_invalid else None)
    yield from convert(meta, messages, source_name=source.name, session=session, keep_meta=keep_meta)


def from_doc(doc: dict, *, source_name: str, session: str, keep_meta: bool = False) -> Iterator[dict]:
    """The single-JSON session: messages in order (a message id that repeats keeps its last version)."""
    msgs: dict = {}
    for i, m in enumerate(doc["messages"], 1):
        if not isinstance(m, dict) or not isinstance(m.get("id"), str):
            raise InputError(source_name, None, f"message {i}: expected a message record with a string id")
        try:
            _check_message(m, source_name, None)
        except InputError as e:
            raise InputError(source_name, None, f"message {i}: {e.reason}") from None
        msgs[m["id"]] = (i, m, "message")
    meta = {k: v for k, v in doc.items() if k != "messages"}
    yield from convert(meta, list(msgs.values()), source_name=source_name, session=session, loc_key="index",
                       keep_meta=keep_meta)
