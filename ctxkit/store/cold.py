"""Cold storage: one file per dropped chunk (the source of truth) plus a rebuildable index.

cold-storage/{session}/{chunk_id}.jsonl holds one JSON line with seed 003's
fields and the chunk's original records. cold-storage/index.sqlite (FTS5) is
derived from the files and can always be rebuilt with `reindex`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
from datetime import datetime, timedelta
from typing import Iterator

from ..core.timeutil import iso, now, parse_ts
from ..errors import CtxError, InputError, UsageProblem
from .atomic import atomic_write, locked, makedirs
from .sqlite_files import open_read_only, rollback, writable

SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    session TEXT NOT NULL, chunk_id TEXT NOT NULL, path TEXT NOT NULL, ts TEXT, dropped_at TEXT,
    tokens INTEGER, score REAL, reason TEXT, prompt TEXT, recoverable_until TEXT, gist TEXT,
    text TEXT, hash TEXT, bytes INTEGER,
    PRIMARY KEY (session, chunk_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_text USING fts5(text);
"""


def check_id(value: str, what: str) -> str:
    """Ids given on the command line. Any printable id is looked up in the index (a query,
    never a path: files are named by safe_component), so a stub's own `ctx recover` command
    works for every id that data carried (a newline in it too: the stub's command quotes it).
    Empty ids, NUL and over-long ids are refused."""
    if not value or len(value) > 400 or "\x00" in value:
        raise UsageProblem(f"invalid {what} {value!r}: an id is 1 to 400 characters, no NUL")
    return value


def unsafe_id(value: str) -> bool:
    """An id that reads as a path (a '/', a '..', a NUL): looked up like any other, never opened, and
    refused as unsafe when no chunk or session carries it."""
    return "/" in value or ".." in value or "\x00" in value or "\\" in value


def safe_component(value: str) -> str:
    """A path component for an id that came from data: the id itself when safe, else a hash."""
    if value and SAFE.match(value) and ".." not in value:
        return value
    return "x-" + hashlib.sha256((value or "").encode("utf-8", "surrogatepass")).hexdigest()[:16]


def parse_entry(text: str, where: str, what: str = "cold-storage file") -> dict:
    """A chunk entry from its stored text (a chunk file's, a store row's), checked: damage (bad
    JSON, NaN, nesting too deep, a 5,000-digit number, not a chunk entry) is one InputError
    naming `where`."""
    from ..io.jsonl import loads

    try:
        data = loads(text, where)
    except InputError as e:
        raise InputError(where, e.line, f"corrupt {what}: {e.reason}") from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), list) or \
            not isinstance(data.get("session_id"), str) or not isinstance(data.get("chunk_id"), str):
        raise InputError(where, 1, f"corrupt {what}: not a chunk entry")
    return data


def entry_text(entry: dict) -> str:
    parts = []
    for r in entry.get("records", []):
        if r.get("content"):
            parts.append(r["content"])
        for c in r.get("tool_calls") or ():
            fn = c.get("function") or {}
            parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(parts)


def redact_entry(entry: dict) -> dict:
    """A chunk entry as every backend stores it: secrets redacted in records, prompt and gist."""
    from . import redaction

    return dict(entry, records=[redaction.record(r) for r in entry["records"]],
                prompt_at_drop=redaction.text(entry.get("prompt_at_drop") or "") or None,
                gist=redaction.text(entry.get("gist") or "") or None)


def records_hash(records: list) -> str:
    """A chunk's content identity: two drops of one id with different records get different chunks."""
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


# SQLite's result codes that say nothing of the database file itself (a full disk, a read-only file
# system, an I/O error, a lock): an index failing so is never set aside and rebuilt as damaged
SQLITE_NOT_DAMAGE = {3, 5, 6, 7, 8, 10, 13, 14}   # PERM, BUSY, LOCKED, NOMEM, READONLY, IOERR, FULL, CANTOPEN


def is_damage(err: sqlite3.DatabaseError) -> bool:
    """Whether an error opening an index means the index is damaged (not the disk full or read-only)."""
    code = getattr(err, "sqlite_errorcode", None)
    if code is None:
        return True
    return (code & 0xFF) not in SQLITE_NOT_DAMAGE


class ColdStorage:
    def __init__(self, root: str):
        self.root = root
        self.index_path = os.path.join(root, "index.sqlite")
        self._db: sqlite3.Connection | None = None

    # ---- files (source of truth) ----
    def chunk_path(self, session: str, chunk_id: str) -> str:
        return os.path.join(self.root, safe_component(session), safe_component(chunk_id) + ".jsonl")

    def write(self, entry: dict) -> tuple[str, str, bool]:
        """Durably store one chunk (temp file + fsync + rename) and index it:
        (path, chunk_id, redrop).

        The check-then-write holds the chunk's lock, so concurrent writers of one id cannot
        race: if a different chunk already has this id in this session, the new one gets a
        content-hash suffix (both survive, each stub names its own content). The same chunk
        written again is a re-drop: its `recoverable_until` is refreshed.
        """
        entry = redact_entry(entry)
        session, chunk = entry["session_id"], entry["chunk_id"]
        path = self.chunk_path(session, chunk)
        makedirs(os.path.dirname(path))
        pending = self._pending_mark(path)  # a drop killed between file and index is indexed next open
        with locked(path):
            existing = self._read_file(path) if os.path.exists(path) else None
            if existing is not None and existing.get("records") != entry["records"]:
                entry = dict(entry, chunk_id=f"{chunk}-{records_hash(entry['records'])[:8]}")
                path = self.chunk_path(session, entry["chunk_id"])
                existing = self._read_file(path) if os.path.exists(path) else None
            if existing is None:
                atomic_write(path, json.dumps(entry, ensure_ascii=False) + "\n", redacted=True)
                redrop = False
            else:
                redrop = True
                until = max(filter(None, [existing.get("recoverable_until"), entry.get("recoverable_until")]),
                            default=None)
                if until != existing.get("recoverable_until"):
                    existing = dict(existing, recoverable_until=until)
                    atomic_write(path, json.dumps(existing, ensure_ascii=False) + "\n", redacted=True)
                entry = existing
        self._index_add(entry, path)
        self._pending_clear(pending)
        return path, entry["chunk_id"], redrop

    # ---- self-checking ----
    def _pending_dir(self) -> str:
        return os.path.join(self.root, ".pending")

    def _pending_mark(self, path: str) -> str:
        d = self._pending_dir()
        makedirs(d)
        mark = os.path.join(d, hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:24])
        try:
            fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(os.path.relpath(path, self.root))
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            from .atomic import named

            self._pending_clear(mark)
            raise named(e, mark) from None
        return mark

    def _pending_clear(self, mark: str) -> None:
        try:
            os.unlink(mark)
        except FileNotFoundError:
            pass

    def repair_pending(self) -> int:
        """Index the chunk files of drops that died between the file and the index (their
        marks are left in .pending/); a mark with no file is only removed. Returns how many
        chunks were indexed."""
        d = self._pending_dir()
        if not os.path.isdir(d):
            return 0
        n = 0
        for mark in sorted(os.scandir(d), key=lambda e: e.name):
            if not mark.is_file(follow_symlinks=False):
                continue
            try:
                with open(mark.path) as f:
                    rel = f.read().strip()
                path = os.path.join(self.root, rel)
                if rel and os.path.isfile(path) and not os.path.islink(path):
                    with locked(path):
                        entry = self._read_file(path)
                        self._index_add(entry, path)
                    n += 1
            except (OSError, InputError):
                pass
            self._pending_clear(mark.path)
        return n

    def check(self, repair: bool = True) -> dict:
        """Chunk files against the index: files missing from it (indexed again with `repair`),
        rows whose file is gone (removed with `repair`)."""
        files = {}
        for path, entry in self.iter_files([]):
            files[(entry["session_id"], entry["chunk_id"])] = (path, entry)
        rows = {(s, c) for s, c in self.db.execute("SELECT session, chunk_id FROM chunks")}
        missing = sorted(k for k in files if k not in rows)
        orphans = sorted(k for k in rows if k not in files)
        if repair:
            for k in missing:
                self._index_add(files[k][1], files[k][0])
            for s, c in orphans:
                self.db.execute("BEGIN IMMEDIATE")
                old = self.db.execute("SELECT rowid FROM chunks WHERE session=? AND chunk_id=?", (s, c)).fetchone()
                if old:
                    self.db.execute("DELETE FROM chunks_text WHERE rowid=?", old)
                    self.db.execute("DELETE FROM chunks WHERE rowid=?", old)
                self.db.execute("COMMIT")
        return {"chunk_files": len(files), "indexed": len(rows), "missing_from_index": [f"{s}/{c}" for s, c in missing],
                "index_without_file": [f"{s}/{c}" for s, c in orphans], "repaired": repair and bool(missing or orphans)}

    def _contained(self, path: str) -> str:
        """`path` if it resolves inside the storage root through no link, else an error."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if not (real == root or real.startswith(root + os.sep)) or os.path.islink(path):
            raise InputError(path, None, "refused: the path leaves cold storage (a symbolic link?)")
        return path

    def _read_file(self, path: str) -> dict:
        self._contained(path)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            raise InputError(path, None, f"cannot read cold-storage file: {e.strerror}") from None
        with os.fdopen(fd, "rb") as f:
            if not os.path.isfile(path):
                raise InputError(path, None, "not a regular file")
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, None, f"corrupt cold-storage file: not UTF-8 ({e.reason})") from None
        return parse_entry(text, path)

    def iter_files(self, bad: list | None = None) -> Iterator[tuple[str, dict]]:
        """(path, entry) for every chunk file. With `bad`, an unreadable file is moved to
        .quarantine/ and listed there instead of stopping the walk."""
        if not os.path.isdir(self.root):
            return
        for sess in sorted(os.scandir(self.root), key=lambda e: e.name):
            if not sess.is_dir(follow_symlinks=False) or sess.name.startswith("."):
                continue
            for f in sorted(os.scandir(sess.path), key=lambda e: e.name):
                if not (f.name.endswith(".jsonl") and not f.name.startswith(".")) or f.is_symlink():
                    continue
                try:
                    yield f.path, self._read_file(f.path)
                except InputError as e:
                    if bad is None:
                        raise
                    q = os.path.join(self.root, ".quarantine", sess.name)
                    makedirs(q)
                    os.replace(f.path, os.path.join(q, f.name))
                    bad.append(f"{e} (moved to {os.path.join(q, f.name)})")

    # ---- index (derived) ----
    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            makedirs(self.root)
            try:
                self._open_db()
            except sqlite3.DatabaseError as e:  # a damaged index is derived data: set it aside, rebuild
                if not is_damage(e):  # a full disk, a read-only home, a lock: the index is fine, say so
                    raise CtxError(f"{self.index_path}: {e} (the index is left as it is)") from None
                self._set_aside(e)
                self._open_db()
        return self._db

    def _open_db(self) -> None:
        fresh = not os.path.exists(self.index_path)
        from .atomic import no_links

        no_links(self.index_path)  # the index and every folder above it up to CTX_HOME
        if not fresh and not writable(self.root):
            self._db = open_read_only(self.index_path)   # a snapshot or a backup: read, never written
            return
        db = sqlite3.connect(self.index_path, timeout=60, isolation_level=None)
        try:
            os.chmod(self.index_path, 0o600)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            stale = not fresh and db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] and \
                not db.execute("SELECT COUNT(*) FROM chunks_text").fetchone()[0]
            db.execute("SELECT session, chunk_id, path, text, hash, bytes FROM chunks LIMIT 1").fetchall()
        except sqlite3.DatabaseError:
            db.close()
            raise
        self._db = db
        if (fresh and any(True for _ in self.iter_files())) or stale:
            self.reindex()  # a new index, or one from before the text table: rebuild from the files
        elif os.path.isdir(self._pending_dir()) and any(True for _ in os.scandir(self._pending_dir())):
            self.repair_pending()

    def _set_aside(self, err) -> None:
        from ..core.timeutil import now_iso

        self._db = None
        dest = f"{self.index_path}.corrupt-{now_iso().replace(':', '')}"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.index_path + suffix):
                os.replace(self.index_path + suffix, dest + suffix)
        import sys

        print(f"ctx: {self.index_path} was damaged ({err}); moved to {dest} and rebuilt from the chunk files",
              file=sys.stderr)

    def _row(self, entry: dict, path: str, text: str) -> tuple:
        from ..records import unicode_text

        # SQLite takes Unicode text only: a lone surrogate is U+FFFD in the index (the chunk file keeps it)
        return tuple(unicode_text(v) if isinstance(v, str) else v for v in self._fields(entry, path, text))

    def _fields(self, entry: dict, path: str, text: str) -> tuple:
        return (entry["session_id"], entry["chunk_id"], os.path.relpath(path, self.root), entry.get("timestamp"),
               entry.get("dropped_at"),
               entry.get("tokens"), entry.get("relevance_score"), entry.get("drop_reason"),
               entry.get("prompt_at_drop"), entry.get("recoverable_until"), entry.get("gist"), text,
               hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest(),
               os.path.getsize(path) if os.path.exists(path) else 0)

    def _index_add(self, entry: dict, path: str) -> None:
        text = entry_text(entry)
        row = self._row(entry, path, text)
        db = self.db
        with self.index_errors():
            db.execute("BEGIN IMMEDIATE")
            try:
                self._insert(db, entry, path, row, text)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise

    @contextlib.contextmanager
    def index_errors(self):
        """An index that cannot be written (the disk full, the home read-only) is a one-line error
        naming it, never an internal one; the chunk files, the truth, are as they were."""
        try:
            yield
        except sqlite3.OperationalError as e:
            raise CtxError(f"{self.index_path}: {e} (the cold-storage index; the chunk files are intact)") from None

    def _insert(self, db, entry: dict, path: str, row: tuple | None = None, text: str | None = None) -> None:
        if row is None:
            text = entry_text(entry)
            row = self._row(entry, path, text)
        # the FTS row shares the chunk's rowid: replacing a chunk is two keyed deletes, not a scan
        old = db.execute("SELECT rowid FROM chunks WHERE session=? AND chunk_id=?", row[:2]).fetchone()
        if old:
            db.execute("DELETE FROM chunks_text WHERE rowid=?", old)
            db.execute("DELETE FROM chunks WHERE rowid=?", old)
        cur = db.execute("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
        db.execute("INSERT INTO chunks_text(rowid, text) VALUES (?, ?)", (cur.lastrowid, row[11]))

    def reindex(self, bad: list | None = None) -> int:
        """Rebuild the index from the files (the files are the truth), whatever state the index
        is in: the new index is built beside the old one and swapped in by one rename, so a
        reader (or a kill) sees the old index or the new, never a half-filled one. Unreadable
        chunk files are quarantined and listed in `bad`, not fatal."""
        from .atomic import clean_stale_tmp, no_links

        makedirs(self.root)
        with locked(self.index_path):
            no_links(self.index_path)
            clean_stale_tmp(self.root, recursive=True)
            new_path = self.index_path + ".new"
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.lexists(new_path + suffix):
                    os.unlink(new_path + suffix)
            entries = list(self.iter_files(bad if bad is not None else []))
            db = sqlite3.connect(no_links(new_path), timeout=60, isolation_level=None)
            try:
                with self.index_errors():
                    os.chmod(new_path, 0o600)
                    db.executescript(SCHEMA)
                    db.execute("BEGIN IMMEDIATE")
                    for path, entry in entries:
                        self._insert(db, entry, path)
                    db.execute("COMMIT")
            except BaseException:
                rollback(db)
                db.close()
                for suffix in ("", "-wal", "-shm", "-journal"):   # no half-built index left beside the old
                    if os.path.lexists(new_path + suffix):
                        os.unlink(new_path + suffix)
                raise
            db.close()
            fd = os.open(new_path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            if self._db is not None:
                self._db.close()
                self._db = None
            for suffix in ("-wal", "-shm"):  # the old index's journal belongs to the old file
                if os.path.lexists(self.index_path + suffix):
                    os.unlink(self.index_path + suffix)
            os.replace(new_path, self.index_path)
            from .atomic import fsync_dir

            fsync_dir(self.root)
            for mark in (os.scandir(self._pending_dir()) if os.path.isdir(self._pending_dir()) else ()):
                self._pending_clear(mark.path)  # every file is in the new index
            self._open_db()
            return len(entries)

    def rows(self, session: str | None = None, expired: bool = False, ref: datetime | None = None) -> list[dict]:
        q = "SELECT session, chunk_id, tokens, score, reason, dropped_at, recoverable_until, gist, path, bytes " \
            "FROM chunks"
        args: list = []
        if session:
            q += " WHERE session=?"
            args.append(session)
        q += " ORDER BY dropped_at, session, chunk_id"
        cols = ["session", "chunk", "tokens", "score", "reason", "dropped_at", "expires", "gist", "path", "bytes"]
        out = [dict(zip(cols, r)) for r in self.db.execute(q, args)]
        for r in out:  # the chunk's file follows from its ids, under this root
            r["path"] = self._indexed_path(r["session"], r["chunk"], r["path"])
        if expired:
            t = ref or now()
            out = [r for r in out if (parse_ts(r["expires"]) or t) < t]
        return out

    def find(self, chunk_id: str, session: str | None = None) -> list[dict]:
        q = "SELECT session, chunk_id, path FROM chunks WHERE chunk_id=?"
        args = [chunk_id]
        if session:
            q += " AND session=?"
            args.append(session)
        # the files first: they are the truth, named by the ids, so finding a chunk by its id reads
        # no index (it works on a full disk and a read-only home, and when the index lags the files)
        found = self._find_files(chunk_id, session)
        if not found:
            found = [{"session": s, "chunk": c, "path": self._indexed_path(s, c, p)}
                     for s, c, p in self.db.execute(q, args)]
        return found

    def _find_files(self, chunk_id: str, session: str | None) -> list[dict]:
        if session:
            dirs = [safe_component(session)]
        elif os.path.isdir(self.root):
            dirs = sorted(e.name for e in os.scandir(self.root) if e.is_dir(follow_symlinks=False)
                          and not e.name.startswith("."))
        else:
            dirs = []
        found = []
        for d in dirs:
            p = os.path.join(self.root, d, safe_component(chunk_id) + ".jsonl")
            if os.path.lexists(p):
                e = self._read_file(p)
                if e["chunk_id"] == chunk_id and (not session or e["session_id"] == session):
                    found.append({"session": e["session_id"], "chunk": e["chunk_id"], "path": p})
        return found

    def load(self, path: str) -> dict:
        return self._read_file(path)

    def _indexed_path(self, session: str, chunk_id: str, stored: str | None) -> str:
        """The file of an index row: from its ids; but an id with a lone surrogate is U+FFFD in
        the index (its file is named by the exact id), so its row's stored path is used, when
        it stays under this root."""
        if "\ufffd" in session + chunk_id and stored:
            p = os.path.join(self.root, stored)
            try:
                return self._contained(p)
            except InputError:
                pass
        return self.chunk_path(session, chunk_id)

    def candidates(self, query: str, session: str | None, limit: int) -> list[tuple]:
        """(session, chunk_id, gist, text, bm25) for keyword matches, best first, ranked in tiers
        (rare terms first: core.keyword_tiers) so a common word does not rank every chunk."""
        from ..core.bm25 import tokenize
        from ..core.keyword_tiers import tiered

        return tiered(tokenize(query), self._term_counts, lambda op, ts, ex, scan, n:
                      self._ranked(op, ts, ex, session, scan, n), limit)

    def _term_counts(self, terms, cap: int) -> list[int]:
        q = "SELECT COUNT(*) FROM (SELECT rowid FROM chunks_text WHERE chunks_text MATCH ? LIMIT ?)"
        return [self.db.execute(q, (_fts_phrase(t), cap)).fetchone()[0] for t in terms]

    def _ranked(self, op: str, terms, excluded, session: str | None, scan: int, limit: int) -> list[tuple]:
        match = "(" + (" OR " if op == "any" else " AND ").join(map(_fts_phrase, terms)) + ")"
        if excluded:
            match += " NOT (" + " OR ".join(map(_fts_phrase, excluded)) + ")"
        inner = "SELECT chunks_text.rowid AS rid, bm25(chunks_text) AS rank FROM chunks_text"
        args: list = [match]
        if session:
            inner += " JOIN chunks s ON s.rowid = chunks_text.rowid WHERE chunks_text MATCH ? AND s.session=?"
            args.append(session)
        else:
            inner += " WHERE chunks_text MATCH ?"
        # the first `scan` matches ranked, the best `limit` of them joined to their chunks
        q = (f"SELECT c.session, c.chunk_id, c.gist, c.text, m.rank FROM (SELECT rid, rank FROM ({inner} LIMIT ?) "
             "ORDER BY rank, rid LIMIT ?) m JOIN chunks c ON c.rowid = m.rid ORDER BY m.rank, c.session, c.chunk_id")
        return list(self.db.execute(q, args + [scan, limit]))

    def all_texts(self, session: str | None = None) -> list[tuple]:
        q = "SELECT session, chunk_id, gist, text FROM chunks"
        args = []
        if session:
            q += " WHERE session=?"
            args.append(session)
        return list(self.db.execute(q, args))

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def delete(self, session: str, chunk_id: str, path: str) -> None:
        path = self.chunk_path(session, chunk_id)
        try:
            self._contained(path)
            os.unlink(path)
        except FileNotFoundError:
            pass
        d = os.path.dirname(path)
        try:
            os.rmdir(d)
        except OSError:
            pass
        db = self.db
        with self.index_errors():
            db.execute("BEGIN IMMEDIATE")
            try:
                old = db.execute("SELECT rowid FROM chunks WHERE session=? AND chunk_id=?",
                                 (session, chunk_id)).fetchone()
                if old:
                    db.execute("DELETE FROM chunks_text WHERE rowid=?", old)
                    db.execute("DELETE FROM chunks WHERE rowid=?", old)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise

    def stats(self) -> list[dict]:
        q = ("SELECT session, COUNT(*), SUM(tokens), SUM(bytes), MIN(dropped_at), MAX(dropped_at) FROM chunks "
             "GROUP BY session ORDER BY session")
        return [{"session": s, "chunks": n, "tokens": t or 0, "bytes": b or 0, "first_drop": f, "last_drop": l}
                for s, n, t, b, f, l in self.db.execute(q)]


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '') + '"'


def new_entry(session: str, chunk_id: str, records: list[dict], tokens: int, reason: str, score,
              prompt: str | None, days: int, gist: str, when: datetime | None = None) -> dict:
    t = when or now()
    ts = [r.get("ts") for r in records if r.get("ts")]
    return {
        "chunk_id": chunk_id,
        "session_id": session,
        "timestamp": max(ts) if ts else iso(t),
        "dropped_at": iso(t),
        "records": records,
        "tokens": tokens,
        "drop_reason": reason,
        "relevance_score": score,
        "prompt_at_drop": prompt,
        "recoverable_until": iso(t + timedelta(days=days)),
        "gist": gist,
    }
