"""A small fake Anthropic Messages API for the end-to-end tests (stdlib only, 127.0.0.1).

It answers POST /v1/messages as the real API does, streaming (SSE: message_start, content
blocks, message_delta with usage, message_stop) or not, logs every request body as one JSON
line, and is scripted by what the user typed:

- `RUN: <command>` in the newest user text -> a Bash tool_use; once the tool result is back, a
  text answer quoting it;
- `TOOLONG` in the newest user text -> a 400 "prompt is too long" once, which makes Claude Code
  compact on its own (trigger `auto`) and retry;
- `USAGE: <n>` -> the reported input_tokens are n (to look like a full window);
- `SUBAGENT: <task>` -> a tool_use of the client's subagent tool (`Agent`, called `Task` by
  earlier releases) whose prompt is <task>: the client runs a subagent, which asks this API
  in turn (a `RUN:` in <task> makes the subagent run a command), and hands its answer back;
- a background task's notification (2.1.332 runs the subagent tool in the background and
  reports its end as a `<task-notification>` in a new user turn) -> a text answer quoting the
  task's result;
- anything else -> a short text answer naming the words it saw.

A scripted prompt is acted on only while it is the newest message (a later turn that is not
the user's, such as a notification, never repeats its tool call).

Requests that are not the conversation (title, summary, compaction) get a plain text answer.
Run: python fake_anthropic.py PORTFILE LOGFILE  (writes the port it bound to PORTFILE).
"""
from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"n": 0, "toolong_done": set()}


def _texts(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for b in content or ():
        if isinstance(b, dict) and b.get("type") == "text":
            out.append(b.get("text", ""))
    return out


def _last_user(body: dict) -> tuple[str, list[dict], bool]:
    """(newest user text that is not a reminder, tool results in the newest message, whether
    that text is in the newest message)."""
    msgs = body.get("messages") or []
    if not msgs:
        return "", [], False
    last = msgs[-1]
    results = [b for b in (last.get("content") if isinstance(last.get("content"), list) else [])
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        texts = [t for t in _texts(m.get("content")) if not t.lstrip().startswith("<system-reminder>")]
        if texts:
            return "\n".join(texts), results, m is last
    return "", results, False


def _notification(body: dict) -> str | None:
    """The result of a background task whose end the newest message reports, or None."""
    msgs = body.get("messages") or []
    if not msgs or msgs[-1].get("role") != "user":
        return None
    for t in _texts(msgs[-1].get("content")):
        if "<task-notification>" in t:
            m = re.search(r"<result>(.*?)(</result>|$)", t, re.S)
            return (m.group(1) if m else t)[-400:]
    return None


SUMMARY = ("<analysis>The conversation so far.</analysis>\n<summary>The user ran scripted commands with the fake "
           "API; work continues.</summary>")
# what Claude Code's summarization request asks for (2.1.332 sends it with the tools, to share
# the prompt cache; earlier releases sent it without)
COMPACTION_ASKS = ("Respond with TEXT ONLY", "Do NOT call any tools", "<summary> block", "summary of the conversation")


def _is_side_request(body: dict) -> bool:
    """Claude Code's own requests (titles, topics, compaction summaries): no tools offered."""
    return not body.get("tools")


def is_compaction(body: dict) -> bool:
    """Claude Code's summarization request: what it asks for is in the newest user message."""
    msgs = body.get("messages") or []
    texts = _texts(msgs[-1].get("content")) if msgs and msgs[-1].get("role") == "user" else []
    return any(a in t for t in texts for a in COMPACTION_ASKS)


def _quoted(result: dict) -> str:
    """A tool result's own output, without what the client appended (its system reminders): the
    scripted answer quotes the command's output as a model would, not the client's notes."""
    c = result.get("content")
    text = c if isinstance(c, str) else " ".join(_texts(c))
    return text.split("<system-reminder>")[0].strip()


def plan(body: dict) -> dict:
    """What to answer: {"status": 400, ...} or {"blocks": [...], "input_tokens": n}."""
    text, results, fresh = _last_user(body)
    raw = json.dumps(body)
    tokens = max(1, len(raw) // 4)
    m = re.search(r"USAGE:\s*(\d+)", text)
    if m:
        tokens = int(m.group(1))
    with LOCK:
        STATE["n"] += 1
        n = STATE["n"]
    if is_compaction(body):
        return {"blocks": [{"type": "text", "text": SUMMARY}], "input_tokens": tokens, "kind": "compaction"}
    if _is_side_request(body):
        if "summar" in raw.lower():
            return {"blocks": [{"type": "text", "text": SUMMARY}], "input_tokens": tokens, "kind": "compaction"}
        return {"blocks": [{"type": "text", "text": '{"title": "Fake session", "isNewTopic": true}'}],
                "input_tokens": tokens}
    note = _notification(body)
    if note is not None:
        return {"blocks": [{"type": "text", "text": f"The helper reported: {note}"}], "input_tokens": tokens}
    if not fresh and not results:
        return {"blocks": [{"type": "text", "text": "Noted."}], "input_tokens": tokens}
    if "TOOLONG" in text and not results:
        key = re.search(r"TOOLONG[^\n]*", text).group(0)   # the prompt's line (a retry after compaction
        with LOCK:                                          # carries the summary in the same turn)
            first = key not in STATE["toolong_done"]
            STATE["toolong_done"].add(key)
        if first:
            return {"status": 400, "error": {"type": "invalid_request_error",
                                             "message": "prompt is too long: 210000 tokens > 200000 maximum"}}
    if results:
        out = "; ".join(json.dumps(_quoted(r))[:200] for r in results)
        return {"blocks": [{"type": "text", "text": f"The command finished: {out}"}], "input_tokens": tokens}
    m = re.search(r"SUBAGENT:\s*(.+)", text)
    tools = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
    agent = next((t for t in ("Agent", "Task") if t in tools), None)
    if m and agent:
        return {"blocks": [{"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": agent,
                            "input": {"description": "scripted subagent", "prompt": m.group(1).strip(),
                                      "subagent_type": "general-purpose"}}],
                "input_tokens": tokens, "stop": "tool_use"}
    m = re.search(r"RUN:\s*(.+)", text)
    if m:
        return {"blocks": [{"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": "Bash",
                            "input": {"command": m.group(1).strip(), "description": "scripted command"}}],
                "input_tokens": tokens, "stop": "tool_use"}
    words = " ".join(text.split()[:12])
    return {"blocks": [{"type": "text", "text": f"Noted: {words}"}], "input_tokens": tokens}


def _message(body: dict, p: dict, n: int) -> dict:
    return {"id": f"msg_fake{n:05d}", "type": "message", "role": "assistant",
            "model": body.get("model", "claude-sonnet-4-5-20250929"), "content": p["blocks"],
            "stop_reason": p.get("stop", "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": p["input_tokens"], "output_tokens": 12,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


class Handler(BaseHTTPRequestHandler):
    log_path = "requests.jsonl"
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def _log(self, entry: dict) -> None:
        with LOCK, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self._send_json(200, {"ok": True})

    def _send_json(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self._log({"path": path, "body": body})
            return self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        if not path.endswith("/v1/messages"):
            self._log({"path": path, "body": body})
            return self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
        p = plan(body)
        self._log({"path": path, "body": body, "answer": p})
        if p.get("status"):
            return self._send_json(p["status"], {"type": "error", "error": p["error"]})
        with LOCK:
            STATE["n"] += 1
            k = STATE["n"]
        msg = _message(body, p, k)
        if not body.get("stream"):
            return self._send_json(200, msg)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        start = dict(msg, content=[], stop_reason=None, usage=dict(msg["usage"], output_tokens=1))
        events = [("message_start", {"type": "message_start", "message": start})]
        for i, b in enumerate(msg["content"]):
            if b["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": b["text"]}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": dict(b, input={})}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": json.dumps(b["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                         "usage": {"output_tokens": msg["usage"]["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


def serve(log_path: str, port: int = 0) -> ThreadingHTTPServer:
    Handler.log_path = log_path
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


if __name__ == "__main__":
    srv = serve(sys.argv[2])
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    threading.Event().wait()
