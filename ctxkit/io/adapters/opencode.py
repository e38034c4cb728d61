"""opencode sessions -> ctx records: a session export (`opencode export ID`: `{info, messages:
[{info, parts}]}`) or opencode's SQLite database (`~/.local/share/opencode/opencode.db`: every
session in it, oldest first).

The shapes are opencode's own (anomalyco/opencode, packages/opencode/src/session/message-v2.ts
and session.sql.ts): a message's `info` (role, time, model, tokens, `summary` on the assistant
message that holds a compaction's summary) and its `parts` — `text` (`synthetic` ones the client
wrote, `ignored` ones never sent), `reasoning`, `tool` (`callID`, `tool`, `state` {status,
input, output | error}), `step-start` / `step-finish` (one model call each, with its tokens),
`file`, `compaction`, `subtask`, `patch`, `snapshot`. Each step of an assistant message becomes
its own assistant record (thinking, text and calls), followed by its calls' results; a call
still pending or running has no result (pairing marks it).
"""
from __future__ import annotations

import json
import os
from typing import Iterator

from ... import records as R
from ...errors import InputError
from .common import Place, call, text_of, ts_of, usage

FORMAT = "opencode"
SQLITE_MAGIC = b"SQLite format 3\x00"
COMPACTION_PROMPT = "What did we do so far?"   # what opencode sends for a `compaction` part


def sniff_doc(doc: object) -> bool:
    if not (isinstance(doc, dict) and isinstance(doc.get("info"), dict) and isinstance(doc.get("messages"), list)):
        return False
    msgs = doc["messages"]
    return all(isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)
               for m in msgs[:5]) and (bool(msgs) or isinstance(doc["info"].get("id"), str))


def is_sqlite(path: str) -> bool:
    if not path or path == "-" or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def from_doc(doc: dict, *, source_name: str, session: str) -> Iterator[dict]:
    info = doc["info"]
    for i, m in enumerate(doc["messages"], 1):
        if not (isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)):
            raise InputError(source_name, None, f"message {i}: expected {{info, parts}}")
    yield from _session(info, doc["messages"], source_name=source_name, session=session)


def from_db(path: str) -> Iterator[dict]:
    """Every session of an opencode.db, read-only."""
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise InputError(path, None, f"cannot open the SQLite database: {e}") from None
    con.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = {"session", "message", "part"} - tables
        if missing:
            raise InputError(path, None, f"an SQLite database, but not opencode's: no {', '.join(sorted(missing))} "
                                         f"table", hint="point ctx import at opencode.db or at a session export")
        sessions = [dict(r) for r in con.execute("SELECT * FROM session ORDER BY time_created, id")]
        for s in sessions:
            msgs = []
            for row in con.execute("SELECT * FROM message WHERE session_id=? ORDER BY time_created, id", (s["id"],)):
                info = dict(_data(path, "message", row), id=row["id"], sessionID=row["session_id"])
                parts = [dict(_data(path, "part", p), id=p["id"], messageID=p["message_id"])
                         for p in con.execute("SELECT * FROM part WHERE message_id=? ORDER BY id", (row["id"],))]
                msgs.append({"info": info, "parts": parts})
            info = {"id": s["id"], "directory": s.get("directory"), "title": s.get("title"),
                    "version": s.get("version"), "time": {"created": s.get("time_created")}}
            yield from _session(info, msgs, source_name=path, session=s["id"])
    except sqlite3.Error as e:
        raise InputError(path, None, f"cannot read the SQLite database: {e}") from None
    finally:
        con.close()


def _data(path: str, table: str, row) -> dict:
    try:
        d = json.loads(row["data"])
    except (TypeError, ValueError, RecursionError):
        raise InputError(path, None, f"{table} {row['id']}: its data is not JSON") from None
    if not isinstance(d, dict):
        raise InputError(path, None, f"{table} {row['id']}: its data is not a JSON object")
    return d


def _session(info: dict, messages: list, *, source_name: str, session: str) -> Iterator[dict]:
    session = info.get("id") if isinstance(info.get("id"), str) and info["id"] else session
    place = Place()
    cwd = info.get("directory") if isinstance(info.get("directory"), str) else None
    title = info.get("title") if isinstance(info.get("title"), str) else None
    for i, m in enumerate(messages, 1):
        mi, parts = m["info"], [p for p in m["parts"] if isinstance(p, dict)]
        src = {"format": FORMAT, "file": source_name, "index": i}
        mid = str(mi.get("id") or R.derive_id("oc", i, session))
        ts = ts_of((mi.get("time") or {}).get("created") if isinstance(mi.get("time"), dict) else None)
        role = mi.get("role")
        if role == "user":
            texts, client = [], []
            for p in parts:
                t = p.get("type")
                if t == "text" and not p.get("ignored") and isinstance(p.get("text"), str):
                    (client if p.get("synthetic") else texts).append(p["text"])
                elif t == "file":
                    texts.append(f"[file: {p.get('filename') or ''}]")
                elif t == "compaction":
                    client.append(COMPACTION_PROMPT)
                elif t == "subtask" and isinstance(p.get("prompt"), str):
                    texts.append(p["prompt"])
            if not texts and not client:
                continue
            model = mi.get("model").get("modelID") if isinstance(mi.get("model"), dict) else None
            model = model if isinstance(model, str) else None
            # the user's words, then what the client added to the same message (a file it read for the
            # prompt, the compaction request) in a record of its own, flagged meta
            for k, (words, fl) in enumerate(((texts, None), (client, ["meta"]))):
                if words:
                    rec = R.make("message", id=mid if k == 0 or not texts else f"{mid}#client", session=session,
                                 ts=ts, role="user", content="\n".join(words), source=src, flags=fl)
                    yield place.stamp(rec, cwd=cwd, title=title, model=model)
            continue
        if role != "assistant":
            raise InputError(source_name, None, f"message {i}: unknown role {role!r} (expected user or assistant)")
        path = mi.get("path") if isinstance(mi.get("path"), dict) else {}
        model = mi.get("modelID") if isinstance(mi.get("modelID"), str) else None
        if mi.get("summary") is True:  # the compaction's summary
            text = "\n".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str))
            yield R.make("summary", id=mid, session=session, ts=ts, role="assistant", content=text, source=src,
                         flags=["compact_summary"])
            continue
        steps = _steps(parts)
        for k, step in enumerate(steps):
            sid = mid if k == 0 else f"{mid}#step{k + 1}"
            turn = ("oc", session, sid)
            if step["thinking"]:
                yield R.make("message", id=f"{sid}#thinking", session=session, ts=ts, role="assistant",
                             content="\n\n".join(step["thinking"]), flags=["thinking"], source=src, _turn=turn)
            tok = step["tokens"] or (mi.get("tokens") if k == len(steps) - 1 else None)
            tok = tok if isinstance(tok, dict) else {}
            cache = tok.get("cache") if isinstance(tok.get("cache"), dict) else {}
            rec = R.make("message", id=sid, session=session, ts=ts, role="assistant", content="\n".join(step["text"]),
                         tool_calls=[c for c, _ in step["tools"]], source=src, _turn=turn,
                         usage=usage(input_fresh=tok.get("input"), cache_read=cache.get("read"),
                                     cache_write=cache.get("write"), output=tok.get("output")))
            yield place.stamp(rec, cwd=path.get("cwd") if isinstance(path.get("cwd"), str) else cwd, model=model)
            for c, state in step["tools"]:
                status = state.get("status")
                if status not in ("completed", "error"):
                    continue  # pending or running: no result was recorded
                text = text_of(state.get("output")) if status == "completed" else text_of(state.get("error"))
                end = state.get("time").get("end") if isinstance(state.get("time"), dict) else None
                yield R.make("message", id=f"{sid}#{c['id']}", session=session, ts=ts_of(end) or ts, role="tool",
                             tool_call_id=c["id"], name=c["function"]["name"], content=text, source=src,
                             flags=["error"] if status == "error" else None, _turn=turn)


def _steps(parts: list) -> list[dict]:
    """An assistant message's parts cut at each `step-start`: one model call each."""
    steps: list[dict] = []

    def new():
        steps.append({"thinking": [], "text": [], "tools": [], "tokens": None})

    for p in parts:
        t = p.get("type")
        if t == "step-start" or not steps:
            if t == "step-start" and steps and not _used(steps[-1]):
                continue
            new()
            if t == "step-start":
                continue
        cur = steps[-1]
        if t == "reasoning" and isinstance(p.get("text"), str) and p["text"].strip():
            cur["thinking"].append(p["text"])
        elif t == "text" and isinstance(p.get("text"), str) and not p.get("ignored"):
            cur["text"].append(p["text"])
        elif t == "tool" and p.get("callID"):
            state = p.get("state") if isinstance(p.get("state"), dict) else {}
            cur["tools"].append((call(p["callID"], p.get("tool"), state.get("input") or {}), state))
        elif t == "step-finish" and isinstance(p.get("tokens"), dict):
            cur["tokens"] = p["tokens"]
    return [s for s in steps if _used(s)]


def _used(step: dict) -> bool:
    return bool(step["thinking"] or step["text"] or step["tools"])
