"""Claude Code session JSONL -> ctx records.

One API response can be split over several `assistant` lines sharing
`message.id`, with tool results interleaved; we buffer one turn (an assistant
message and its results) and emit it whole.
"""
from __future__ import annotations

import json
from typing import Iterator

from ... import records as R
from ...errors import InputError
from ...core.requests import not_user_words
from ..jsonl import Source, iter_json_lines

FORMAT = "claude-code"
META_TYPES = {"progress", "file-history-snapshot", "queue-operation"}
KNOWN_TYPES = META_TYPES | {"user", "assistant", "system", "summary"}


def sniff(obj: object) -> bool:
    return isinstance(obj, dict) and obj.get("type") in KNOWN_TYPES and (
        "sessionId" in obj or "uuid" in obj or obj.get("type") in ("file-history-snapshot", "summary"))


def _block_text(content) -> str:
    """Flatten tool_result content (string or list of blocks) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text":
                    parts.append(b.get("text", ""))
                elif b.get("type") == "image":
                    parts.append("[image]")
                else:
                    parts.append(json.dumps(b, ensure_ascii=False))
            else:
                parts.append(str(b))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def _session(obj: dict, fallback: str) -> str:
    sid = obj.get("sessionId") or fallback
    if obj.get("isSidechain") and obj.get("agentId"):
        return f"{sid}.agent-{obj['agentId']}"
    return sid


class _Turn:
    """An assistant message being assembled from several lines."""

    def __init__(self, msg_id: str, obj: dict, src: dict, session: str):
        self.msg_id = msg_id
        self.first = obj
        self.src = src
        self.session = session
        self.texts: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[dict] = []
        self.results: list[dict] = []
        self.trailing: list[dict] = []  # bookkeeping events seen mid-turn, emitted after it
        self.usage = None
        self.model = None
        self.ts = obj.get("timestamp")

    def add(self, obj: dict) -> None:
        msg = obj.get("message") or {}
        self.usage = msg.get("usage") or self.usage
        self.model = msg.get("model") or self.model
        content = msg.get("content")
        if isinstance(content, str):
            self.texts.append(content)
            return
        for b in content or ():
            t = b.get("type")
            if t == "text":
                if b.get("text", "").strip():
                    self.texts.append(b["text"])
            elif t in ("thinking", "redacted_thinking"):
                self.thinking.append(b.get("thinking") or b.get("data") or "")
            elif t == "tool_use":
                self.calls.append({
                    "id": b.get("id"),
                    "type": "function",
                    "function": {"name": b.get("name", ""),
                                 "arguments": json.dumps(b.get("input", {}), ensure_ascii=False)},
                })

    def pending_ids(self) -> set:
        done = {r["tool_call_id"] for r in self.results}
        return {c["id"] for c in self.calls} - done

    def emit(self, turn_no: int) -> Iterator[dict]:
        if self.thinking:
            yield R.make("message", id=f"{self.msg_id}#thinking", session=self.session, ts=self.ts,
                         role="assistant", content="\n\n".join(self.thinking), flags=["thinking"],
                         source=self.src, _turn=turn_no)
        usage = None
        if self.usage and not isinstance(self.usage, dict):
            usage = self.usage   # not an object: the reader leaves it out with a note
        elif self.usage:
            usage = {k: self.usage.get(k) for k in ("input_tokens", "output_tokens",
                                                      "cache_read_input_tokens",
                                                      "cache_creation_input_tokens")
                     if self.usage.get(k) is not None}
        yield R.make("message", id=self.msg_id, session=self.session, ts=self.ts, role="assistant",
                     content="\n\n".join(self.texts), tool_calls=self.calls, source=self.src,
                     usage=usage, meta={"model": self.model} if self.model else None, _turn=turn_no)
        for r in self.results:
            r["_turn"] = turn_no
            yield r
        yield from self.trailing


# the line's fields kept in a record's meta, each only when it changes: (source field, meta key)
PLACE_KEYS = (("cwd", "cwd"), ("gitBranch", "branch"))


def parse(source: Source, *, keep_meta: bool = False, skip_invalid: bool = False,
          skipped: list | None = None, ignored: dict | None = None) -> Iterator[dict]:
    """`ignored`, when given, counts the bookkeeping lines read past, by type (never fatal)."""
    fallback = "claude-code"
    place_seen: dict[tuple, str] = {}   # (session, meta key) -> the working directory / git branch last recorded

    def with_cwd(rec: dict, obj: dict) -> dict:
        """The record gets meta.cwd (meta.branch) when the session's working directory (git branch)
        is new or changed."""
        for src, key in PLACE_KEYS:
            v = obj.get(src)
            if isinstance(v, str) and v and place_seen.get((rec.get("session"), key)) != v:
                place_seen[(rec.get("session"), key)] = v
                rec.setdefault("meta", {})[key] = v
        return rec
    turn: _Turn | None = None
    turn_no = 0
    call_owner: dict[str, _Turn] = {}

    def flush():
        nonlocal turn, turn_no
        if turn is not None:
            turn_no += 1
            yield from turn.emit(turn_no)
            for c in turn.calls:
                call_owner.pop(c["id"], None)
            turn = None

    queued: dict | None = None  # a message just enqueued, until we know whether it arrives as a user line

    def place(rec: dict):
        if turn is not None:
            turn.trailing.append(rec)  # never split a turn from its tool results
            return iter(())
        return iter([rec])

    for lineno, obj in iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped, live=True):
        if not isinstance(obj, dict):
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise InputError(source.name, lineno, "expected a JSON object (Claude Code record)")
        src = {"format": FORMAT, "file": source.name, "line": lineno}
        typ = obj.get("type")
        if typ == "attachment" and _rendered(obj):
            # what the client sent the model with the result or the prompt before it (Claude Code
            # 2.1.x: its <system-reminder>s): a record of its own where it stands, the client's
            rec = R.make("message", id=uuid, session=session, ts=ts, role="user", content=_rendered(obj),
                         source=src, flags=["meta"])
            if turn is not None:
                turn.trailing.append(rec)
            else:
                yield rec
            continue
        if queued is not None and (typ in ("user", "assistant", "system", "summary") or typ == "queue-operation"):
            q, queued = queued, None
            if not (typ == "queue-operation" and obj.get("operation") == "dequeue"):
                yield from place(q)
            # else taken off the queue at once: the same prompt follows as a user line (Claude Code
            # 2.1.x writes every prompt of `claude -p` so), and one record of it is enough
        session = _session(obj, fallback)
        ts = obj.get("timestamp")
        uuid = obj.get("uuid") or R.derive_id("cc", lineno, obj)
        if typ == "assistant":
            msg = obj.get("message") or {}
            mid = msg.get("id") or uuid
            if turn is None or turn.msg_id != mid:
                yield from flush()
                turn = _Turn(mid, obj, src, session)
            turn.add(obj)
            for c in turn.calls:
                call_owner[c["id"]] = turn
            continue
        if typ == "user":
            msg = obj.get("message") or {}
            content = msg.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            texts = []
            for i, b in enumerate(blocks):
                if not isinstance(b, dict):
                    texts.append(str(b))
                    continue
                if b.get("type") == "tool_result":
                    tid = b.get("tool_use_id")
                    rec = R.make("message", id=f"{uuid}#{tid}" if len(blocks) > 1 else uuid,
                                 session=session, ts=ts, role="tool", tool_call_id=tid,
                                 content=_block_text(b.get("content")), source=src,
                                 flags=["error"] if b.get("is_error") else None)
                    owner = call_owner.get(tid)
                    if owner is not None and owner is turn:
                        name = next((c["function"]["name"] for c in owner.calls if c["id"] == tid), None)
                        if name:
                            rec["name"] = name
                        owner.results.append(rec)
                    else:
                        # A result whose call we never saw: keep the text, never an orphan tool record.
                        yield from flush()
                        yield R.make("message", id=rec["id"], session=session, ts=ts, role="user",
                                     content=f"[tool result {tid}]\n{rec.get('content', '')}",
                                     source=src, flags=["orphan_result"])
                elif b.get("type") == "text":
                    texts.append(b.get("text", ""))
                elif b.get("type") == "image":
                    texts.append("[image]")
                else:
                    texts.append(json.dumps(b, ensure_ascii=False))
            if texts and any(t.strip() for t in texts):
                yield from flush()
                fl = []
                if obj.get("isMeta") or not_user_words("\n".join(texts)):
                    fl.append("meta")
                if obj.get("isCompactSummary"):
                    yield R.make("summary", id=uuid, session=session, ts=ts, role="user",
                                 content="\n".join(texts), source=src, flags=["compact_summary"])
                else:
                    yield with_cwd(R.make("message", id=uuid, session=session, ts=ts, role="user",
                                          content="\n".join(texts), source=src, flags=fl), obj)
            continue
        if typ == "summary":
            yield from flush()
            yield R.make("summary", id=obj.get("leafUuid") or uuid, session=session, ts=ts,
                         role="user", content=obj.get("summary", ""), source=src)
            continue
        if typ == "system":
            sub = obj.get("subtype")
            if sub == "compact_boundary":
                yield from flush()
                yield R.make("summary", id=uuid, session=session, ts=ts, role="system",
                             content=obj.get("content") or "[compact boundary]", source=src,
                             flags=["compact_boundary"], meta=obj.get("compactMetadata"))
            elif keep_meta:
                ev = R.make("event", id=uuid, session=session, ts=ts, role="system",
                            content=obj.get("content") or sub or "", source=src,
                            meta={"type": typ, "subtype": sub})
                if turn is not None:
                    turn.trailing.append(ev)
                else:
                    yield ev
            continue
        if typ == "queue-operation" and obj.get("operation") == "enqueue" and \
                isinstance(obj.get("content"), str) and obj["content"].strip():
            # a message the user typed while the agent worked: a user record at its place
            # (a task notification among them stays meta, as does the client's own entry for a
            # background command: a JSON object naming its task and tool call)
            text = obj["content"]
            queued = with_cwd(R.make("message", id=uuid if obj.get("uuid") else R.derive_id("queue", lineno, obj),
                                     session=session, ts=ts, role="user", content=text, source=src,
                                     flags=["meta"] if not_user_words(text) or _task_entry(text) else ["queued"]),
                            obj)
            continue
        if typ in META_TYPES or typ is None or typ not in KNOWN_TYPES:
            if ignored is not None:
                ignored[str(typ)] = ignored.get(str(typ), 0) + 1
            if keep_meta:
                data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
                ev = R.make("event", id=uuid if obj.get("uuid") else R.derive_id("meta", lineno, obj),
                            session=session, ts=ts or (obj.get("snapshot") or {}).get("timestamp"),
                            content="", source=src, meta={"type": typ, "data_type": data.get("type")})
                if turn is not None:
                    turn.trailing.append(ev)  # never split a turn for bookkeeping
                else:
                    yield ev
            continue
    if queued is not None:
        yield from place(queued)
    yield from flush()


def _rendered(obj: dict) -> str:
    """The text an `attachment` line says the client sent the model with the turn (Claude Code
    2.1.x: its `<system-reminder>`s, such as `<total_tokens>… tokens left</total_tokens>`)."""
    parts = obj.get("rendered")
    if not isinstance(parts, list):
        return ""
    return "\n".join(p["content"] for p in parts if isinstance(p, dict) and isinstance(p.get("content"), str)
                     and p["content"].strip())


def _task_entry(text: str) -> bool:
    """The client's queue entry for a background task (`{"task_id": …, "tool_use_id": …}`), not words."""
    t = text.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return False
    try:
        obj = json.loads(t)
    except ValueError:
        return False
    return isinstance(obj, dict) and bool({"task_id", "tool_use_id"} & set(obj))
