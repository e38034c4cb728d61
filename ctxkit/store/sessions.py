"""The session index ($CTX_HOME/sessions.json): started, last activity, records, title, source."""
from __future__ import annotations

import json
import os
from typing import Iterable

from ..core.timeutil import now_iso
from .atomic import atomic_write, locked
from .index_entry import index_entry


def index_path(home) -> str:
    return os.path.join(home.path, "sessions.json")


def load(home) -> dict:
    from .backend import shared

    if shared(home) is not None:
        return shared(home).sessions.load()

    return load_local(home)


def load_local(home) -> dict:
    """The session index in the home's own file (sessions.json), whatever the store."""
    from .atomic import load_json, no_links

    data = load_json(no_links(index_path(home)), "session index", default={})
    return {k: index_entry(v) for k, v in data.items() if isinstance(v, dict)}  # derived: a bad entry is rebuilt


def _title(text: str) -> str:
    import re

    text = re.sub(r"<[^>]+>", " ", text or "")
    text = " ".join(text.split())
    return text[:60] + ("…" if len(text) > 60 else "")


def tally(records: Iterable[dict], into=None):
    """Fold records into a SessionTally (requests found with the one definition of the user's request)."""
    from ..core.requests import request_text
    from ..core.session_meta import SessionTally

    t = into or SessionTally()
    for r in records:
        t.add(r, request_text(r) if r.get("role") == "user" else None)
    return t


def touch(home, records: Iterable[dict], source: str | None = None) -> list[str]:
    """Fold a stream's sessions into the index (locked read-modify-write)."""
    return commit(home, tally(records), source)


def check(home) -> None:
    """Raise the session index's damage now, before a command changes anything (drop, compact
    write the index last: a damaged one found then would leave their other writes half done)."""
    load(home)


def commit(home, t, source: str | None = None) -> list[str]:
    """Write a SessionTally's sessions into the index: started, last activity, records, message
    count, title, and seed 004's agents, primary files and tags."""
    if not t.sessions:
        return []
    from . import redaction

    def change(idx: dict) -> None:
        for sid in t.sessions:
            s = t.summary(sid)
            e = idx.get(sid, {})
            e["session"] = sid
            e["started"] = min(filter(None, [e.get("started"), s["first"]]), default=None)
            e["last_activity"] = max(filter(None, [e.get("last_activity"), s["last"]]), default=None)
            e["records"] = max(e.get("records", 0), s["records"])
            e["message_count"] = max(e.get("message_count", 0), s["message_count"])
            e["title"] = e.get("title") or _title(redaction.text(s["title"]))
            for k in ("agents", "primary_files", "tags"):
                if s[k]:
                    e[k] = [redaction.text(x) for x in s[k]]
            e["seen_at"] = now_iso()
            if source and source != "-":
                e["source"] = os.path.abspath(source)
            idx[sid] = e

    _update(home, change)
    return list(t.sessions)


def mark(home, session: str, **fields) -> None:
    """Set fields (status, archive, …) on one session's entry (locked read-modify-write)."""
    def change(idx: dict) -> None:
        e = idx.get(session, {"session": session})
        e.update({k: v for k, v in fields.items() if v is not None})
        e["seen_at"] = now_iso()
        idx[session] = e

    _update(home, change)


def _update(home, change) -> None:
    """`change(index dict)` under the store's lock, saved after (the file atomically, or the shared
    store's changed rows in one transaction, the whole edit retried when the connection drops)."""
    from .backend import shared

    if shared(home) is not None:
        shared(home).sessions.update(change)
        return
    p = index_path(home)
    with locked(p):
        idx = load(home)
        change(idx)
        atomic_write(p, json.dumps(idx, indent=1, sort_keys=True) + "\n")


def add_subagent(home, parent: str, agent_id: str, info: dict) -> None:
    """Record a subagent's run under its parent's entry (`subagents`), leaving the rest as it is."""
    def change(idx: dict) -> None:
        e = idx.get(parent, {"session": parent})
        subs = e.get("subagents") if isinstance(e.get("subagents"), dict) else {}
        subs[agent_id] = {**subs.get(agent_id, {}), **{k: v for k, v in info.items() if v is not None}}
        e["subagents"] = subs
        e["seen_at"] = now_iso()
        idx[parent] = e

    _update(home, change)


def of_project(home, root: str) -> list[dict]:
    """The project's sessions (entries whose `project` is ROOT), most recently active first."""
    rows = [e for e in load(home).values() if isinstance(e, dict) and e.get("project") == root]
    return sorted(rows, key=lambda e: e.get("last_activity") or e.get("seen_at") or "", reverse=True)


def resolve(home, prefix: str) -> str:
    """A session id from its unique prefix (the index, then the session store's folders)."""
    from ..errors import UsageProblem

    names = set(load(home))
    store = os.path.join(home.path, "sessions")
    if os.path.isdir(store):
        names |= set(os.listdir(store))
    if prefix in names:
        return prefix
    found = sorted(n for n in names if n.startswith(prefix))
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageProblem(f"no session starts with {prefix!r}", hint="ctx session list shows them")
    raise UsageProblem(f"{len(found)} sessions start with {prefix!r} ({', '.join(found[:3])}…); give more of the id")
