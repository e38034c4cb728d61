"""A small fake OpenAI Responses API for the end-to-end tests (stdlib only, 127.0.0.1).

It answers POST /v1/responses as the real API does when `stream` is true (SSE events:
response.created, response.output_item.done per output item, response.completed with usage),
logs every request body as one JSON line, and is scripted by what the user typed last:

- `RUN: <command>` -> an `exec_command` function call (Codex's shell tool); once its output
  is back, a text answer quoting it;
- `USAGE: <n>` -> the reported input_tokens are n (to look like a full window, so the client
  compacts on its own);
- a compaction request (Codex sends its compact prompt as the newest user turn, with no
  tools) -> a summary text;
- anything else -> a short text answer naming the words it saw.

GET requests (model lists) get an empty list. Run: python fake_openai.py PORTFILE LOGFILE.
"""
from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"n": 0}
SUMMARY = "SUMMARY-FROM-FAKE: the user ran scripted commands with the fake API; work continues."


def _texts(item: dict) -> list[str]:
    c = item.get("content")
    if isinstance(c, str):
        return [c]
    return [b.get("text", "") for b in c or () if isinstance(b, dict) and isinstance(b.get("text"), str)]


def last_user(body: dict) -> str:
    """The newest user message's text (not the client's own context blocks)."""
    for item in reversed(body.get("input") or []):
        if item.get("type") == "message" and item.get("role") == "user":
            texts = [t for t in _texts(item) if not t.lstrip().startswith("<environment_context>")]
            if texts:
                return "\n".join(texts)
    return ""


def is_compaction(body: dict) -> bool:
    """Codex's own summarization request: its compact prompt is the newest user text."""
    text = last_user(body)
    return "CONTEXT CHECKPOINT COMPACTION" in text or "handoff summary" in text.lower() \
        or "ctx-compact-prompt" in text.lower() or not body.get("tools")


def plan(body: dict) -> dict:
    """What to answer: {"items": [...], "input_tokens": n}."""
    with LOCK:
        STATE["n"] += 1
        n = STATE["n"]
    raw = json.dumps(body)
    tokens = max(1, len(raw) // 4)
    text = last_user(body)
    m = re.search(r"USAGE:\s*(\d+)", text)
    if m:
        tokens = int(m.group(1))
    items = body.get("input") or []
    last = items[-1] if items else {}
    if is_compaction(body):
        return {"items": [_message(n, SUMMARY)], "input_tokens": tokens, "kind": "compaction"}
    if last.get("type") == "function_call_output":
        out = str(last.get("output"))[:300]
        return {"items": [_message(n, f"The command finished: {out}")], "input_tokens": tokens}
    m = re.search(r"RUN:\s*(.+)", text)
    answered = any(i.get("type") == "function_call" for i in items[-3:])
    if m and not answered:
        return {"items": [{"type": "function_call", "call_id": f"call_fake{n:04d}", "name": "exec_command",
                           "arguments": json.dumps({"cmd": m.group(1).strip()})}], "input_tokens": tokens}
    words = " ".join(text.split()[:12])
    return {"items": [_message(n, f"Noted: {words}")], "input_tokens": tokens}


def _message(n: int, text: str) -> dict:
    return {"type": "message", "role": "assistant", "id": f"msg_fake{n:05d}",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


class Handler(BaseHTTPRequestHandler):
    log_path = "requests.jsonl"
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def _log(self, entry: dict) -> None:
        with LOCK, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def _send_json(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send_json(200, {"object": "list", "data": [], "models": []})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if not path.endswith("/responses"):
            self._log({"path": path, "body": body})
            return self._send_json(404, {"error": {"type": "not_found", "message": path}})
        p = plan(body)
        self._log({"path": path, "body": body, "answer": p})
        with LOCK:
            STATE["n"] += 1
            rid = f"resp_fake{STATE['n']:05d}"
        usage = {"input_tokens": p["input_tokens"], "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": p["input_tokens"] + 12}
        events = [{"type": "response.created", "response": {"id": rid}}]
        events += [{"type": "response.output_item.done", "item": it} for it in p["items"]]
        events.append({"type": "response.completed", "response": {"id": rid, "usage": usage}})
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


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
