"""Seed 004's session metadata, folded from a record stream one record at a time (pure):
records and message counts, first and last time, title, agents, primary files, tags.

A fold rather than a function of the whole list, so a command that streams its input can
keep it while the records pass by.
"""
from __future__ import annotations

import json
import re
from collections import Counter

PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "file")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{3,}")
STOP = frozenset("""this that with from have what when where which will would could should there their them then
than they your about into only also just like make made does done more most much need some such sure take very want
were been being each other over under after before again here please thanks thank okay yeah work working continue
file files code run running check look next first last still until while these those using used use""".split())


def _args(call: dict) -> dict:
    a = (call.get("function") or {}).get("arguments")
    if isinstance(a, str):
        try:
            a = json.loads(a)
        except (ValueError, RecursionError):
            return {}
    return a if isinstance(a, dict) else {}


class SessionTally:
    def __init__(self):
        self.sessions: dict[str, dict] = {}

    def add(self, r: dict, request: str | None = None) -> None:
        """Count record `r`; `request` is its user request when it is one (the caller's definition)."""
        sid = r.get("session")
        if not sid or not isinstance(sid, str) or r.get("kind") == "event":
            return
        s = self.sessions.get(sid)
        if s is None:
            s = self.sessions[sid] = {"records": 0, "messages": 0, "first": None, "last": None, "title": "",
                                      "agents": Counter(), "files": Counter(), "words": Counter(), "cwd": None}
        s["records"] += 1
        role = r.get("role")
        if role in ("user", "assistant") and r.get("kind", "message") == "message":
            s["messages"] += 1
        ts = r.get("ts")
        if isinstance(ts, str) and ts:
            s["first"] = min(s["first"] or ts, ts)
            s["last"] = max(s["last"] or ts, ts)
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        if isinstance(meta.get("cwd"), str) and not s["cwd"]:
            s["cwd"] = meta["cwd"].rstrip("/")
        if role == "assistant":
            s["agents"][str(meta.get("agent") or meta.get("model") or "assistant")] += 1
        for c in r.get("tool_calls") or ():
            if isinstance(c, dict):
                args = _args(c)
                for k in PATH_KEYS:
                    v = args.get(k)
                    if isinstance(v, str) and 0 < len(v) < 300 and "\n" not in v:
                        s["files"][v] += 1
                        break
        if request:
            s["agents"]["user"] += 1
            if not s["title"]:
                s["title"] = request
            s["words"].update(w.lower() for w in WORD.findall(request[:2000]) if w.lower() not in STOP)

    def summary(self, sid: str, n_files: int = 5, n_tags: int = 5) -> dict:
        s = self.sessions[sid]
        agents = [a for a, _ in s["agents"].most_common()]
        if len([a for a in agents if a not in ("user", "assistant")]) and "assistant" in agents:
            agents.remove("assistant")  # records without a model name are the same agent
        agents.sort(key=lambda a: a != "user")  # the user first, as in seed 004
        files: Counter = Counter()
        cwd = s["cwd"]
        for f, n in s["files"].items():
            if cwd and (f == cwd or f.startswith(cwd + "/")):
                f = f[len(cwd) + 1:]
            if f and f not in (".", "/"):
                files[f] += n
        return {"records": s["records"], "message_count": s["messages"], "first": s["first"], "last": s["last"],
                "title": s["title"], "agents": agents,
                "primary_files": [f for f, _ in files.most_common(n_files)],
                "tags": [w for w, n in s["words"].most_common(n_tags) if n >= 2]}
