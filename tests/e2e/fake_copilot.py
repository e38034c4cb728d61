"""The fake Anthropic Messages API (tests/e2e/fake_anthropic.py), scripted for GitHub Copilot CLI
in its own-key mode (`COPILOT_PROVIDER_TYPE=anthropic`, `COPILOT_PROVIDER_BASE_URL` here).

The server, its SSE stream and its request log are fake_anthropic's; only what the model
answers differs, because Copilot speaks to the model in its own words:

- its shell tool is `bash` and its subagent tool `task` (Claude Code's are `Bash` and `Agent`);
- a prompt reaches the model as the newest text block of the newest user message, wrapped in
  `<current_datetime>`, with context a hook injected in `<system_reminder>` (and at session
  start, in text blocks before it): only the user's own words are read;
- its compaction is a conversation request whose newest user text asks for "a detailed summary
  of the conversation so far": the answer is a summary in Copilot's sections.

So: `RUN: <command>` -> a `bash` call, then a text answer quoting its result; `SUBAGENT: <task>`
-> a `task` call (Copilot runs a subagent that asks this API in turn); anything else -> "Noted: …".
Run: python fake_copilot.py PORTFILE LOGFILE.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_anthropic  # noqa: E402

WRAPPERS = re.compile(r"<(current_datetime|system_reminder|reminder)>.*?</\1>", re.S)
COMPACTION = "Please create a detailed summary of the conversation so far"
SUMMARY = ("<overview>Scripted work with the fake API.</overview>\n<history>The user ran scripted commands."
           "</history>\n<work_done>Commands ran.</work_done>\n<technical_details>None.</technical_details>\n"
           "<important_files>None.</important_files>\n<next_steps>Carry on.</next_steps>\n"
           "<checkpoint_title>Scripted work</checkpoint_title>")


def user_words(body: dict) -> tuple[str, list[dict]]:
    """(what the user typed last, tool results in the newest message)."""
    msgs = body.get("messages") or []
    if not msgs:
        return "", []
    last = msgs[-1]
    content = last.get("content") if isinstance(last.get("content"), list) else []
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        texts = [WRAPPERS.sub("", t).strip() for t in fake_anthropic._texts(m.get("content"))]
        texts = [t for t in texts if t]
        if texts:
            return texts[-1], results   # the prompt is the newest block; earlier ones are injected context
    return "", results


def plan(body: dict) -> dict:
    text, results = user_words(body)
    tokens = max(1, len(json.dumps(body)) // 4)
    with fake_anthropic.LOCK:
        fake_anthropic.STATE["n"] += 1
        n = fake_anthropic.STATE["n"]
    if text.startswith(COMPACTION):
        return {"blocks": [{"type": "text", "text": SUMMARY}], "input_tokens": tokens, "kind": "compaction"}
    if not body.get("tools"):   # the client's own side requests (titles and the like)
        return {"blocks": [{"type": "text", "text": "Scripted session"}], "input_tokens": tokens, "kind": "side"}
    if results:
        out = "; ".join(json.dumps(r.get("content"))[:200] for r in results)
        return {"blocks": [{"type": "text", "text": f"The command finished: {out}"}], "input_tokens": tokens}
    tools = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
    m = re.search(r"SUBAGENT:\s*(.+)", text)
    if m and "task" in tools:
        return {"blocks": [{"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": "task",
                            "input": {"description": "scripted subagent", "prompt": m.group(1).strip(),
                                      "agent_type": "general-purpose", "name": "zeta-survey"}}],
                "input_tokens": tokens, "stop": "tool_use"}
    m = re.search(r"RUN:\s*(.+)", text)
    if m and "bash" in tools:
        return {"blocks": [{"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": "bash",
                            "input": {"command": m.group(1).strip(), "description": "scripted command"}}],
                "input_tokens": tokens, "stop": "tool_use"}
    words = " ".join(text.split()[:12])
    return {"blocks": [{"type": "text", "text": f"Noted: {words}"}], "input_tokens": tokens}


# fake_anthropic's handler asks its module's `plan` what to answer: this process serves Copilot
fake_anthropic.plan = plan


def serve(log_path: str, port: int = 0):
    return fake_anthropic.serve(log_path, port)


if __name__ == "__main__":
    srv = serve(sys.argv[2])
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    threading.Event().wait()
