"""Where the agents keep their transcripts, and this project's among them (no file argument needed).

Claude Code: `~/.claude/projects/<the session's cwd, every character but a letter or digit as ->/
<session id>.jsonl` (`$CLAUDE_CONFIG_DIR` instead of ~/.claude). Codex: `~/.codex/sessions/YYYY/MM/DD/
rollout-*.jsonl` ($CODEX_HOME), whose first line (session_meta) names its cwd. Gemini CLI:
`~/.gemini/tmp/<sha256 of the cwd, or a short name with a .project_root file>/chats/session-*.json[l]`
($GEMINI_CLI_HOME). Copilot CLI: `~/.copilot/session-state/<id>/events.jsonl` ($COPILOT_HOME), whose
first line (session.start) names its cwd.

A transcript belongs to this project when the directory it was started in lies inside the
project (the repository root of the directory asked about: store.project). Reading a transcript
is the importers' job (io.adapters); here only its first lines are peeked at for the `cwd` an
agent wrote down when the transcript's place does not say it.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from dataclasses import dataclass

from ..store.project import project_root

AGENTS = ("claude-code", "codex", "gemini", "copilot")   # the order a tie is broken in
PEEK_BYTES = 1 << 20    # a first line longer than this (Codex's instructions) names no cwd we read
PEEK_LINES = 30         # Claude Code writes snapshots and hook progress before the first line with a cwd


@dataclass(frozen=True)
class Found:
    """One agent transcript of the project."""
    agent: str
    session: str
    path: str
    mtime: float
    size: int
    cwd: str | None = None

    def as_dict(self) -> dict:
        from datetime import datetime, timezone

        return {"agent": self.agent, "session": self.session, "path": self.path, "size": self.size,
                "modified": datetime.fromtimestamp(self.mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "cwd": self.cwd}


def claude_home() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def claude_key(path: str) -> str:
    """Claude Code's folder name for a working directory: every character but a letter or digit is '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _inside(path: str | None, root: str) -> bool:
    if not path:
        return False
    p = os.path.realpath(os.path.abspath(path))
    return p == root or p.startswith(root.rstrip(os.sep) + os.sep)


def _peek_cwd(path: str, find) -> str | None:
    """The cwd FIND(obj) returns for one of the first lines of PATH, or None."""
    try:
        with open(path, "rb") as f:
            for _ in range(PEEK_LINES):
                line = f.readline(PEEK_BYTES)
                if not line:
                    return None
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                cwd = find(obj) if isinstance(obj, dict) else None
                if isinstance(cwd, str):
                    return cwd
    except OSError:
        return None
    return None


def _found(agent: str, session: str, path: str, cwd: str | None) -> Found | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Found(agent, session, path, st.st_mtime, st.st_size, cwd)


def _claude(here: str, root: str) -> list[Found]:
    base = os.path.join(claude_home(), "projects")
    if not os.path.isdir(base):
        return []
    chain, d = [], here
    while True:   # the directories from here up to the project's root: a session started in one of them
        chain.append(d)
        if d == root or os.path.dirname(d) == d:
            break
        d = os.path.dirname(d)
    exact = {claude_key(d): d for d in chain}
    out = []
    for name in sorted(os.listdir(base)):
        if name in exact:
            cwd = exact[name]
        elif name.startswith(claude_key(root) + "-"):   # a subfolder of the project (or a look-alike)
            cwd = None
        else:
            continue
        for path in glob.glob(os.path.join(glob.escape(os.path.join(base, name)), "*.jsonl")):
            if os.path.basename(path).startswith("agent-"):   # a subagent's transcript (older clients), not a session
                continue
            c = cwd or _peek_cwd(path, lambda o: o.get("cwd"))
            if _inside(c, root):
                f = _found("claude-code", os.path.basename(path)[:-len(".jsonl")], path, c)
                if f:
                    out.append(f)
    return out


def _codex(root: str) -> list[Found]:
    from .agents.codex import codex_home

    out = []
    for path in glob.glob(os.path.join(os.path.expanduser(codex_home()), "sessions", "*", "*", "*", "rollout-*.jsonl")):
        meta = {}

        def find(o):
            p = o.get("payload") if o.get("type") == "session_meta" and isinstance(o.get("payload"), dict) else {}
            meta.update(p)
            return p.get("cwd")

        cwd = _peek_cwd(path, find)
        if _inside(cwd, root):
            sid = meta.get("id") if isinstance(meta.get("id"), str) else os.path.basename(path)[:-len(".jsonl")]
            f = _found("codex", sid, path, cwd)
            if f:
                out.append(f)
    return out


def _gemini(here: str, root: str) -> list[Found]:
    from .agents.gemini import gemini_home

    tmp = os.path.join(os.path.expanduser(gemini_home()), "tmp")
    if not os.path.isdir(tmp):
        return []
    out = []
    for name in os.listdir(tmp):
        folder = os.path.join(tmp, name)
        cwd = None
        marker = os.path.join(folder, ".project_root")   # newer clients: a short name and this file
        if os.path.isfile(marker):
            try:
                with open(marker, encoding="utf-8") as fh:
                    cwd = fh.read().strip()
            except (OSError, UnicodeDecodeError):
                continue
        else:   # older clients: the folder is the sha256 of the directory the session started in
            d = here
            while True:
                if hashlib.sha256(d.encode()).hexdigest() == name:
                    cwd = d
                    break
                if d == root or os.path.dirname(d) == d:
                    break
                d = os.path.dirname(d)
        if not _inside(cwd, root):
            continue
        for path in glob.glob(os.path.join(glob.escape(folder), "chats", "session-*.json*")):
            if path.endswith((".json", ".jsonl")):
                f = _found("gemini", os.path.basename(path).rsplit(".", 1)[0], path, cwd)
                if f:
                    out.append(f)
    return out


def _copilot(root: str) -> list[Found]:
    from .agents.copilot import copilot_home

    out = []
    for path in glob.glob(os.path.join(glob.escape(copilot_home()), "session-state", "*", "events.jsonl")):
        def find(o):
            data = o.get("data") if isinstance(o.get("data"), dict) else {}
            ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
            return ctx.get("cwd")

        cwd = _peek_cwd(path, find)
        if _inside(cwd, root):
            f = _found("copilot", os.path.basename(os.path.dirname(path)), path, cwd)
            if f:
                out.append(f)
    return out


def project_sessions(cwd: str | None = None) -> list[Found]:
    """Every agent transcript of the project CWD (default: the current directory) belongs to,
    newest first (a tie: Claude Code, Codex, Gemini CLI, Copilot CLI)."""
    here = os.path.realpath(os.path.abspath(cwd or os.getcwd()))
    root = project_root(here)
    found = _claude(here, root) + _codex(root) + _gemini(here, root) + _copilot(root)
    return sorted(found, key=lambda f: (-f.mtime, AGENTS.index(f.agent), f.path))


def newest(cwd: str | None = None) -> Found | None:
    rows = project_sessions(cwd)
    return rows[0] if rows else None


def window_use(home, found: Found) -> dict:
    """How full the session's window is now (services.hooks.measure, the figure `ctx status` leads
    with), or {"error": why} when its transcript cannot be read."""
    from ..errors import CtxError
    from .hooks import measure, records_of

    try:
        return measure(home, records_of(found.path))
    except (CtxError, OSError, ValueError) as e:
        return {"error": str(e).splitlines()[0] if str(e) else type(e).__name__}


def recorded_cwd(source, records: int = 200) -> str | None:
    """The working directory the agent recorded (its importer's meta.cwd, within the first RECORDS
    records) in SOURCE, a transcript's path or records already read, when that directory exists
    here; else None."""
    from ..errors import CtxError
    from ..io.adapters import open_records
    from ..io.jsonl import Source

    try:
        recs = open_records(Source(source), skip_invalid=True, redact=False) if isinstance(source, str) else source
        for i, r in enumerate(recs):
            meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
            if isinstance(meta.get("cwd"), str):
                return meta["cwd"] if os.path.isdir(meta["cwd"]) else None
            if i >= records:
                break
    except (CtxError, OSError, ValueError):
        return None
    return None
