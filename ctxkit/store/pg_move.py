"""Moving a home's store between the embedded files and PostgreSQL, exactly and resumably.

Chunks move as the exact text of their file (byte for byte, both ways); logs line by line;
the session index entry by entry; per-session state as its document, with its archive (what
left a kept section: sessions/ID/archive/SECTION.md) item by item; the archived CONTEXT.md
copies ($CTX_HOME/archive/*.md) as documents; `ctx maintain`'s state (maintain-state.json)
entry by entry; the workspace's memory (MEMORY.md, observations/) as its documents, into the
store's project. What the destination
already holds is skipped (so an interrupted move is finished by running it again), and
nothing there is ever overwritten: a chunk that differs is reported, not replaced.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from .cold import ColdStorage
from .home import LOG_NAMES


@dataclass
class MoveReport:
    counts: dict = field(default_factory=lambda: Counter())
    differs: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {**dict(self.counts), "differs": self.differs}


def _progress(note: Callable | None, what: str, n: int, total: int | None = None) -> None:
    if note and (n % 500 == 0 or (total is not None and n == total)):
        note(f"ctx store migrate: {what} {n}" + (f"/{total}" if total is not None else ""))


def _move_memory(src, dst, rep: MoveReport, note: Callable | None) -> None:
    """MEMORY.md and every observation from one MemoryStore into another: added where the
    destination has none, skipped where it has the same text, reported where it differs."""
    docs = src.documents()
    have = dict(dst.documents())
    for name, text in docs:
        kind = "memory" if name == "MEMORY.md" else "observations"
        if name not in have:
            if kind == "memory":
                dst.update_memory(lambda cur, text=text: text if not cur else None)
            else:
                dst.write_observation(name.split("/", 1)[1], text)
            rep.counts[f"{kind}_added"] += 1
        elif have[name] == text:
            rep.counts[f"{kind}_present"] += 1
        else:
            rep.counts[f"{kind}_differs"] += 1
            rep.differs.append(name)
    if docs and note:
        note(f"ctx store migrate: memory done ({len(docs)} documents)")


def to_pg(home, pg, note: Callable | None = None, workspace: str | None = None) -> MoveReport:
    """The home's embedded store (files), and `workspace`'s memory, into `pg` (a PgStore)."""
    rep = MoveReport()
    cold = ColdStorage(home.cold_storage_dir)
    files = [p for p, _ in cold.iter_files()]
    for i, path in enumerate(files, 1):
        with open(path, "rb") as f:
            raw = f.read().decode("utf-8")
        res = pg.cold.import_raw(raw)
        rep.counts[f"chunks_{res}"] += 1
        if res == "differs":
            rep.differs.append(path)
        _progress(note, "chunks", i, len(files))
    for name in LOG_NAMES:
        path = home.log_path(name)
        if not os.path.exists(path):
            continue
        have = Counter(pg.logs.lines(name))
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                if have[line] > 0:
                    have[line] -= 1
                    rep.counts["log_lines_present"] += 1
                    continue
                pg.logs.append_line(name, line)
                rep.counts["log_lines_added"] += 1
        if note:
            note(f"ctx store migrate: log {name} done")
    from . import sessions

    sidx = sessions.index_path(home)
    if os.path.exists(sidx):
        local = sessions.load_local(home)
        box: dict = {}

        def merge(idx):  # run again when a dropped connection retries the edit: counted once
            box["rep"] = MoveReport()
            _merge_sessions(idx, local, box["rep"])
        pg.sessions.update(merge)
        rep.counts.update(box["rep"].counts)
    for sid, text, version in _local_states(home):
        res = pg.state_file(sid).write_raw(text, version)
        rep.counts[f"states_{res}"] += 1
    for sid, section, items in _local_archives(home):
        added = pg.import_archived(sid, section, items)
        _tally(rep, "archived_items", added, len(items) - added)
    for name, text in _local_context_archives(home):
        res = pg.import_context_archive(name, text)
        rep.counts[f"context_archives_{res}"] += 1
        if res == "differs":
            rep.differs.append(os.path.join(home.path, "archive", name))
    for name in RUN_STATES:
        for key, entry in _local_run_state(home, name).items():
            res = pg.runstate.import_entry(name, key, entry)
            rep.counts[f"{name}_states_{res}"] += 1
            if res == "differs":
                rep.differs.append(f"{name}-state.json: {key}")
    if workspace:
        from .memory import FileMemory

        _move_memory(FileMemory(workspace), pg.memory, rep, note)
    if note:
        note(f"ctx store migrate: done: {_summary(rep)}")
    return rep


RUN_STATES = ("maintain",)   # the per-session states ctx keeps in the store (hooks-state.json stays local)


def _session_dirs(home):
    """(session id, folder, CONTEXT.md text or None) of every session folder of the home."""
    from ..core.context_md import parse

    root = os.path.join(home.path, "sessions")
    if not os.path.isdir(root):
        return
    for d in sorted(os.scandir(root), key=lambda e: e.name):
        if not d.is_dir(follow_symlinks=False):
            continue
        p = os.path.join(d.path, "CONTEXT.md")
        text = None
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, encoding="utf-8") as f:
                text = f.read()
        yield (parse(text).state.get("session") if text else None) or d.name, d.path, text


def _local_states(home):
    from ..core.context_md import parse

    for sid, _, text in _session_dirs(home):
        if text is not None:
            yield sid, text, parse(text).version


def _section_name(slug: str) -> str:
    """The kept section an archive file (archive/SLUG.md) is of."""
    from ..core.context_md import KEPT_SECTIONS
    from ..sources.workspace import ContextFile

    for s in KEPT_SECTIONS:
        if os.path.basename(ContextFile("").archive_path(s)) == slug + ".md":
            return s
    return slug


def _local_archives(home):
    """(session id, section, items oldest first) of every session's state archive."""
    from ..sources.workspace import ContextFile

    for sid, d, _ in _session_dirs(home):
        adir = os.path.join(d, "archive")
        if not os.path.isdir(adir) or os.path.islink(adir):
            continue
        for f in sorted(os.listdir(adir)):
            if f.endswith(".md") and not f.startswith("."):
                items = ContextFile(d).archived(_section_name(f[:-3]))
                if items:
                    yield sid, _section_name(f[:-3]), items


def _local_context_archives(home):
    """(name, text) of the archived CONTEXT.md copies in $CTX_HOME/archive/ (files, not folders)."""
    from .atomic import read_text

    d = os.path.join(home.path, "archive")
    if not os.path.isdir(d):
        return
    for e in sorted(os.scandir(d), key=lambda e: e.name):
        if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file(follow_symlinks=False):
            yield e.name, read_text(e.path)


def _local_run_state(home, name: str) -> dict:
    from .atomic import load_json
    from .runstate import FileRunState

    state = load_json(FileRunState(home).path(name), f"{name} state", default={})
    return {k: v for k, v in state.items() if isinstance(v, dict)}


def to_embedded(home, pg, note: Callable | None = None, workspace: str | None = None) -> MoveReport:
    """`pg`'s rows for its project into the home's embedded store (files + index), and its
    memory into `workspace`."""
    from .atomic import append_line, atomic_write, locked, makedirs

    rep = MoveReport()
    cold = ColdStorage(home.cold_storage_dir)
    total = pg.cold.count()
    for i, (session, chunk, raw) in enumerate(pg.cold.iter_raw(), 1):
        _put_file(cold.chunk_path(session, chunk), raw, "chunks", rep)
        _progress(note, "chunks", i, total)
    if total or rep.counts:
        cold.reindex()
    for name in LOG_NAMES:
        path = home.log_path(name)
        have: Counter = Counter()
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                have = Counter(line.rstrip("\n") for line in f if line.strip())
        for line in pg.logs.lines(name):
            if have[line] > 0:
                have[line] -= 1
                rep.counts["log_lines_present"] += 1
                continue
            append_line(path, line)
            rep.counts["log_lines_added"] += 1
    from . import sessions

    remote = pg.sessions.load()
    if remote:
        p = sessions.index_path(home)
        with locked(p):
            local = sessions.load_local(home)
            _merge_sessions(local, remote, rep)
            atomic_write(p, json.dumps(local, indent=1, sort_keys=True) + "\n")
    from .pg import unkey
    from .session_state import safe_id

    for sid, body in pg.run(lambda cur: cur.execute(
            "SELECT session, body FROM ctx_state WHERE project=%s ORDER BY session", (pg.project,)).fetchall(),
            "reading session state"):
        sid = unkey(sid)
        d = os.path.join(home.path, "sessions", safe_id(sid))
        p = os.path.join(d, "CONTEXT.md")
        makedirs(d)
        with locked(p):
            if os.path.exists(p):
                rep.counts["states_present"] += 1
            else:
                atomic_write(p, body)
                rep.counts["states_added"] += 1
    from ..sources.workspace import ContextFile

    archived: dict = {}
    for sid, section, item in pg.archived_items():
        archived.setdefault((sid, section), []).append(item)
    for (sid, section), items in archived.items():
        cf = ContextFile(os.path.join(home.path, "sessions", safe_id(sid)))
        p = cf.archive_path(section)
        makedirs(os.path.dirname(p))
        with locked(p):  # as ContextFile keeps it: the items it lacks are added, in order
            have = cf.archived(section)
            new = [i for i in items if i not in have]
            if new:
                atomic_write(p, "".join(f"- {x}\n" for x in have + new))
        _tally(rep, "archived_items", len(new), len(items) - len(new))
    for name, text in pg.context_archives():
        p = os.path.join(home.path, "archive", name)
        if os.path.basename(name) != name or name.startswith("."):
            rep.differs.append(f"archive/{name}: not a plain file name; left in the store")
            continue
        _put_file(p, text, "context_archives", rep, redacted=True)
    for name in RUN_STATES:
        remote = pg.runstate.entries(name)
        if not remote:
            continue
        from .atomic import load_json
        from .runstate import FileRunState

        p = FileRunState(home).path(name)
        with locked(p):
            state = load_json(p, f"{name} state", default={})
            before = dict(state)
            for key, entry in remote.items():
                if key not in state:
                    state[key] = entry
                    rep.counts[f"{name}_states_added"] += 1
                elif state[key] == entry:
                    rep.counts[f"{name}_states_present"] += 1
                else:
                    rep.counts[f"{name}_states_differs"] += 1
                    rep.differs.append(f"{p}: {key}")
            if state != before:
                atomic_write(p, json.dumps(state, indent=1, sort_keys=True) + "\n")
    if workspace:
        from .memory import FileMemory

        _move_memory(pg.memory, FileMemory(workspace), rep, note)
    if note:
        note(f"ctx store migrate: done: {_summary(rep)}")
    return rep


def _put_file(path: str, text: str, what: str, rep: MoveReport, redacted: bool = False) -> None:
    """`text` written to `path` where there is no file (atomically, under its lock); an existing
    file is compared byte for byte and left as it is ('WHAT_present' or 'WHAT_differs')."""
    from .atomic import atomic_write, locked, makedirs

    makedirs(os.path.dirname(path))
    with locked(path):
        if os.path.exists(path):
            with open(path, "rb") as f:
                same = f.read() == text.encode("utf-8")
            rep.counts[f"{what}_present" if same else f"{what}_differs"] += 1
            if not same:
                rep.differs.append(path)
        else:
            atomic_write(path, text, redacted=redacted)
            rep.counts[f"{what}_added"] += 1


def _tally(rep: MoveReport, what: str, added: int, present: int) -> None:
    for k, n in ((f"{what}_added", added), (f"{what}_present", present)):
        if n:
            rep.counts[k] += n


def _merge_sessions(into: dict, incoming: dict, rep: MoveReport) -> None:
    """Session entries the destination lacks are added; the ones it has are left as they are."""
    for sid, e in incoming.items():
        if sid in into:
            rep.counts["sessions_present"] += 1
        else:
            into[sid] = e
            rep.counts["sessions_added"] += 1


def _summary(rep: MoveReport) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(rep.counts.items())) or "nothing to move"
