"""A small fake Gemini API (generativelanguage v1beta) for the Gemini CLI end-to-end tests
(stdlib only, 127.0.0.1).

It answers what Gemini CLI asks with an API key and `GOOGLE_GEMINI_BASE_URL` pointing here:
`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` (the conversation, streamed as
server-sent events), `:generateContent` (the client's own side requests: its compression
summary, the next-speaker check) and `:countTokens`. Every request body is logged as one JSON
line. The conversation is scripted by what the user typed (context a hook injected, inside
`<hook_context>`, is never read as the user's words):

- `RUN: <command>` -> a `run_shell_command` call; once its result is back, a text answer
  quoting it;
- `USAGE: <n>` -> the reported promptTokenCount is n (a window that looks full makes the
  client compress on its own, trigger `auto`, before its next request);
- anything else -> a short text answer naming the words it saw.

Run: python fake_gemini.py PORTFILE LOGFILE  (writes the port it bound to PORTFILE).
"""
from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"n": 0}
HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.S)
SNAPSHOT = ("<state_snapshot>\n<overall_goal>Scripted work with the fake API.</overall_goal>\n"
            "<current_plan>Carry on.</current_plan>\n</state_snapshot>")


def _user_words(content: dict) -> str:
    """What the user typed in one content: text parts, without injected context."""
    out = []
    for p in content.get("parts") or ():
        t = p.get("text") if isinstance(p, dict) else None
        if isinstance(t, str) and not t.lstrip().startswith(("<session_context>", "<state_snapshot>")):
            out.append(HOOK_CONTEXT.sub("", t).strip())
    return "\n".join(x for x in out if x)


def _function_responses(content: dict) -> list[dict]:
    return [p["functionResponse"] for p in content.get("parts") or () if isinstance(p, dict) and "functionResponse" in p]


def plan(body: dict, stream: bool) -> dict:
    """What to answer: {"parts": [...], "prompt_tokens": n}."""
    raw = json.dumps(body)
    tokens = max(1, len(raw) // 4)
    system = json.dumps(body.get("systemInstruction") or "")
    gen = body.get("generationConfig") or {}
    with LOCK:
        STATE["n"] += 1
        n = STATE["n"]
    if "state_snapshot" in system:  # the client's own compression (and its self-check)
        return {"parts": [{"text": SNAPSHOT}], "prompt_tokens": tokens, "kind": "compression"}
    if "Summarize the user's primary intent" in raw:   # the client's title for its session list
        return {"parts": [{"text": "Scripted session"}], "prompt_tokens": tokens, "kind": "side"}
    if gen.get("responseJsonSchema") or gen.get("responseSchema"):  # next-speaker check and the like
        return {"parts": [{"text": json.dumps({"reasoning": "The answer is complete.", "next_speaker": "user"})}],
                "prompt_tokens": tokens, "kind": "side"}
    contents = [c for c in body.get("contents") or () if isinstance(c, dict)]
    last = contents[-1] if contents else {}
    results = _function_responses(last) if last.get("role") == "user" else []
    if results:
        out = "; ".join(json.dumps(r.get("response"))[:200] for r in results)
        return {"parts": [{"text": f"The command finished: {out}"}], "prompt_tokens": tokens, "kind": "answer"}
    text = ""
    for c in reversed(contents):
        if c.get("role") == "user":
            text = _user_words(c)
            if text:
                break
    m = re.search(r"USAGE:\s*(\d+)", text)
    if m:
        tokens = int(m.group(1))
    tools = {f.get("name") for t in body.get("tools") or () if isinstance(t, dict)
             for f in t.get("functionDeclarations") or () if isinstance(f, dict)}
    m = re.search(r"RUN:\s*(.+)", text)
    if m and "run_shell_command" in tools:
        cmd = m.group(1).split(" USAGE:")[0].strip()
        return {"parts": [{"functionCall": {"name": "run_shell_command", "id": f"call_fake{n:04d}",
                                            "args": {"command": cmd, "description": "scripted command"}}}],
                "prompt_tokens": tokens, "kind": "tool"}
    words = " ".join(text.split()[:12])
    return {"parts": [{"text": f"Noted: {words}"}], "prompt_tokens": tokens, "kind": "answer"}


def _response(p: dict, model: str) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": p["parts"]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": p["prompt_tokens"], "candidatesTokenCount": 12,
                              "totalTokenCount": p["prompt_tokens"] + 12},
            "modelVersion": model}


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
        self._log({"path": self.path.split("?")[0], "method": "GET"})
        self._send_json(200, {"models": []})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        m = re.match(r"^/v1(?:beta|alpha)?/models/([^:/]+):(\w+)$", path)
        if not m:
            self._log({"path": path, "body": body})
            return self._send_json(404, {"error": {"code": 404, "message": f"no such method: {path}",
                                                   "status": "NOT_FOUND"}})
        model, method = m.groups()
        if method == "countTokens":
            self._log({"path": path, "body": body})
            return self._send_json(200, {"totalTokens": max(1, len(raw) // 4)})
        if method not in ("generateContent", "streamGenerateContent"):
            self._log({"path": path, "body": body})
            return self._send_json(404, {"error": {"code": 404, "message": f"no such method: {method}",
                                                   "status": "NOT_FOUND"}})
        p = plan(body, method == "streamGenerateContent")
        self._log({"path": path, "body": body, "answer": p})
        resp = _response(p, model)
        if method == "generateContent":
            return self._send_json(200, resp)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(f"data: {json.dumps(resp)}\r\n\r\n".encode())
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
