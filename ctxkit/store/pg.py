"""The shared PostgreSQL store (psycopg 3): cold storage with its keyword (tsvector/GIN) and
vector (pgvector/HNSW, when present) index, the activity logs, per-session state with a
version column, and the session index. Rows carry their project; row-level security keeps a
role to its projects (docs/store.md, `ctx store grant-sql`).

Concurrency is decided by the database: INSERT … ON CONFLICT, a version checked on every
state update, and transaction-scoped advisory locks where a read-then-write must be one.
A connection lost mid-transaction leaves the old state (PostgreSQL rolls it back); the
operation is retried a bounded number of times, each retry noted on stderr.
Imported only when a postgresql:// store is configured.
"""
from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from datetime import datetime
from typing import Callable, Iterator

import psycopg

from ..core.timeutil import now, parse_ts
from ..errors import ConflictError, CtxError
from ..records import unicode_text
from .dsn import redact_dsn
from .cold import entry_text, parse_entry, records_hash, redact_entry
from .pg_schema import SCHEMA_VERSION, VECTOR_DIM, migrate as apply_migrations

RETRIES = 3
# hnsw.ef_search: the candidates asked for (the index returns no more than ef_search rows), at least this
EF_SEARCH = 40
TSV_MAX_CHARS = 200_000    # tsvector holds at most 1 MB: the keyword index sees a chunk's first 200k chars


def _no_nul(x):
    """PostgreSQL text and jsonb hold no NUL character and no lone UTF-16 surrogate (half an
    emoji): U+FFFD stands in for them in what ctx derives (index text, gists, state and memory
    documents, session entries, maintain state). A chunk's own text (`raw`) and a log line keep
    them exactly, as JSON escapes (`_as_file`)."""
    if isinstance(x, str):
        return unicode_text(x.replace("\x00", "\ufffd") if "\x00" in x else x)
    if isinstance(x, dict):
        return {_no_nul(k): _no_nul(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_no_nul(v) for v in x]
    return x


def _as_file(text: str) -> str:
    """JSON text as the embedded store's file holds it: a lone surrogate as its `\\udXXX` escape
    (atomic_write's encoding), so the stored text is valid UTF-8 and equal byte for byte."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


KEY_MARK = "\ufffe"   # a noncharacter: no real id starts with it


def _key(v):
    """An id (session, chunk, maintain key) as a key column holds it: itself, or, when it has a
    character PostgreSQL text cannot hold (NUL, a lone surrogate), KEY_MARK and its JSON escape,
    so the embedded store's ids are all kept exactly (`unkey` gives the id back). Clean ids,
    key forms included, are left as they are."""
    if not isinstance(v, str) or v == _no_nul(v):
        return v
    return KEY_MARK + json.dumps(v)[1:-1]


def unkey(k):
    if isinstance(k, str) and k.startswith(KEY_MARK):
        try:
            return json.loads('"' + k[1:] + '"')
        except ValueError:
            return k
    return k


def _ids(rows: list[tuple]) -> list[tuple]:
    """Rows that start (session, chunk id, …) with their ids exact (`unkey`)."""
    return [(unkey(r[0]), unkey(r[1]), *r[2:]) if r[0][:1] == KEY_MARK or r[1][:1] == KEY_MARK else r
            for r in rows]


def _lock_key(*parts: str) -> str:
    return _no_nul("\x1f".join(parts))


class PgError(CtxError):
    pass


class PgStore:
    kind = "postgresql"

    def __init__(self, url: str, project: str, home=None, connect_timeout: int = 10):
        self.url = url
        self.connect_timeout = connect_timeout
        self.project = project
        self.home = home
        self.where = redact_dsn(url)
        self._conn: psycopg.Connection | None = None
        self._checked = False
        self.cold = PgColdStore(self)
        self.logs = PgLogs(self)
        self.sessions = PgSessionIndex(self)
        self.memory = PgMemory(self)
        self.runstate = PgRunState(self)

    # ---- connection, errors, retries ----
    def _scrub(self, text: str) -> str:
        text = redact_dsn(text)
        try:
            pw = psycopg.conninfo.conninfo_to_dict(self.url).get("password")
        except psycopg.Error:
            pw = None
        if pw:
            text = text.replace(str(pw), "***")
        return " ".join(text.split())

    def error(self, e: BaseException, doing: str) -> PgError:
        return PgError(f"store {self.where}: {doing}: {self._scrub(str(e)) or type(e).__name__}")

    def connect(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, application_name="ctx",
                                             connect_timeout=self.connect_timeout)
            except psycopg.Error as e:
                raise self.error(e, "cannot connect") from None
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def run(self, fn: Callable, doing: str, check: bool = True, one_statement: bool = False):
        """fn(cursor) in one transaction; retried (bounded, noted) when the connection drops.
        `one_statement`: fn runs a single statement, its own transaction (no BEGIN and COMMIT
        round trips: a search's statements are each one)."""
        if check and not self._checked:
            self.require_schema()
        for attempt in range(1, RETRIES + 1):
            conn = self.connect()
            try:
                if one_statement:
                    with conn.cursor() as cur:
                        return fn(cur)
                with conn.transaction():
                    with conn.cursor() as cur:
                        return fn(cur)
            except psycopg.OperationalError as e:
                if not (conn.broken or conn.closed) or attempt == RETRIES:
                    raise self.error(e, doing) from None
                print(f"ctx: store connection lost while {doing} ({self._scrub(str(e))}); "
                      f"retry {attempt}/{RETRIES - 1}", file=sys.stderr, flush=True)
                self._conn = None
                time.sleep(0.2 * attempt)
            except psycopg.Error as e:
                raise self.error(e, doing) from None
        raise AssertionError("unreachable")

    # ---- schema ----
    def schema_version(self) -> int | None:
        def q(cur):
            cur.execute("SELECT to_regclass('ctx_schema_migrations') IS NOT NULL")
            if not cur.fetchone()[0]:
                return None
            cur.execute("SELECT COALESCE(MAX(version), 0) FROM ctx_schema_migrations WHERE version < 100")
            return cur.fetchone()[0]
        return self.run(q, "reading the schema version", check=False)

    def require_schema(self) -> None:
        v = self.schema_version()
        if v is None:
            raise PgError(f"store {self.where} has no ctx schema", hint="run `ctx store init` once")
        if v < SCHEMA_VERSION:
            raise PgError(f"store {self.where} is at schema version {v}; this ctx needs {SCHEMA_VERSION}",
                          hint="run `ctx store init` to migrate it")
        if v > SCHEMA_VERSION:
            raise PgError(f"store {self.where} is at schema version {v}, newer than this ctx ({SCHEMA_VERSION})",
                          hint="upgrade ctx")
        self._checked = True

    def init(self, note=None) -> list[str]:
        conn = self.connect()
        try:
            applied = apply_migrations(conn, note)
        except psycopg.Error as e:
            raise self.error(e, "initialising the schema") from None
        self._checked = False
        self.__dict__.pop("_found", None)
        return applied

    def _has(self, check: str, doing: str) -> bool:
        """Whether an optional part of the schema is there (`check`: a to_regclass / to_regproc
        call); asked once per connection's store, again after `init`."""
        found = self.__dict__.setdefault("_found", {})
        if check not in found:
            found[check] = self.run(lambda cur: cur.execute(f"SELECT {check} IS NOT NULL").fetchone()[0], doing)
        return found[check]

    def has_vectors(self) -> bool:
        return self._has("to_regclass('ctx_vectors')", "checking for pgvector")

    def vector_version(self) -> tuple[int, ...]:
        """pgvector's version on the server, (0,) without it."""
        if not hasattr(self, "_vector_version"):
            v = self.run(lambda cur: cur.execute("SELECT extversion FROM pg_extension WHERE extname='vector'")
                         .fetchone(), "checking pgvector", check=False)
            self._vector_version = tuple(int(x) for x in v[0].split(".") if x.isdigit()) if v else (0,)
        return self._vector_version

    def has_search_functions(self) -> bool:
        """Migration 103: keyword search through the functions that use the index for every role."""
        return self._has("to_regproc('ctx_keyword_match')", "checking for search functions")

    def has_vector_function(self) -> bool:
        """Migration 104: the nearest vectors through the function that uses the HNSW index for every role."""
        return self._has("to_regproc('ctx_vector_match')", "checking for vector search")

    def has_term_stats(self) -> bool:
        return self._has("to_regclass('ctx_terms')", "checking for term statistics")

    def unsafe_functions(self) -> list[str]:
        """One line per function of the store's schema that runs as its owner with unsafe settings
        (pg_security.py): empty on a store `ctx store migrate` brought up to date."""
        from .pg_security import findings

        return self.run(findings, "checking the store's functions", check=False)

    def check(self) -> dict:
        out: dict = {"store": self.where, "project": self.project}
        conn = self.connect()
        out["server"] = conn.info.parameter_status("server_version")
        out["reachable"] = True
        v = self.schema_version()
        out["schema_version"] = v
        out["schema_wanted"] = SCHEMA_VERSION

        def ext(cur):
            cur.execute("SELECT (SELECT extversion FROM pg_extension WHERE extname='vector'), "
                        "EXISTS (SELECT 1 FROM pg_available_extensions WHERE name='vector')")
            return cur.fetchone()
        installed, available = self.run(ext, "checking extensions", check=False)
        out["pgvector"] = installed or ("available, not installed (ctx store init installs it)" if available
                                        else "not available (semantic search scans keyword candidates)")
        if v:
            out["keyword_search"] = ("indexed by project, for every role" if self.has_search_functions() else
                                     "not indexed for agent roles (row-level security): run `ctx store init`")
            def counts(cur):
                res = {}
                tables = [("ctx_chunks", "chunks"), ("ctx_logs", "log_events"), ("ctx_sessions", "sessions"),
                          ("ctx_state", "session_states")]
                if v >= 2:
                    tables += [("ctx_memory", "memory_documents"), ("ctx_observations", "observations")]
                for t, name in tables:
                    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE project = %s", (self.project,))
                    res[name] = cur.fetchone()[0]
                return res
            out.update(self.run(counts, "counting rows", check=False))
        return out

    # ---- per-session state ----
    def state_file(self, session: str) -> "PgStateFile":
        return PgStateFile(self, session)

    def archive_context(self, base: str, text: str) -> str:
        """Keep a copy of a CONTEXT.md (`ctx context archive`, a session's end) under a new name
        (BASE.md, else BASE-2.md, …: never over an earlier copy); its locator."""
        from . import redaction

        text = _no_nul(redaction.text(text))

        def tx(cur):
            k = 1
            while True:
                name = f"{base}.md" if k == 1 else f"{base}-{k}.md"
                cur.execute("INSERT INTO ctx_context_archive (project, name, body) VALUES (%s,%s,%s) "
                            "ON CONFLICT DO NOTHING", (self.project, _no_nul(name), text))
                if cur.rowcount == 1:
                    return name
                k += 1
        return f"postgresql:{self.project}/archive/{self.run(tx, 'archiving session state')}"

    # ---- moving in and out (store/pg_move.py) ----
    def archived_items(self) -> Iterator[tuple[str, str, str]]:
        """(session, section, item) of every session's state archive, each section oldest first."""
        rows = self.run(lambda cur: cur.execute(
            "SELECT session, section, item FROM ctx_archive WHERE project=%s ORDER BY session, section, id",
            (self.project,)).fetchall(), "reading the state archive")
        return ((unkey(s), sec, i) for s, sec, i in rows)

    def import_archived(self, session: str, section: str, items: list[str]) -> int:
        """Add the items a session's archive of `section` lacks, in order (one transaction); how many."""
        def tx(cur):
            n = 0
            for item in items:
                cur.execute("INSERT INTO ctx_archive (project, session, section, item) VALUES (%s,%s,%s,%s) "
                            "ON CONFLICT DO NOTHING", (self.project, _key(session), section, _no_nul(item)))
                n += cur.rowcount
            return n
        return self.run(tx, "importing the state archive")

    def context_archives(self) -> list[tuple[str, str]]:
        """(name, text) of the CONTEXT.md copies `ctx context archive` and session ends keep."""
        return self.run(lambda cur: cur.execute(
            "SELECT name, body FROM ctx_context_archive WHERE project=%s ORDER BY name",
            (self.project,)).fetchall(), "reading archived CONTEXT.md copies")

    def import_context_archive(self, name: str, text: str) -> str:
        """Store an archived CONTEXT.md copy as it is: 'added', 'present' or 'differs'."""
        name, text = _no_nul(name), _no_nul(text)

        def tx(cur):
            cur.execute("INSERT INTO ctx_context_archive (project, name, body) VALUES (%s,%s,%s) "
                        "ON CONFLICT DO NOTHING", (self.project, name, text))
            if cur.rowcount == 1:
                return "added"
            row = cur.execute("SELECT body FROM ctx_context_archive WHERE project=%s AND name=%s",
                              (self.project, name)).fetchone()
            return "present" if row and row[0] == text else "differs"
        return self.run(tx, "importing an archived CONTEXT.md")

    # ---- ctx reset ----
    RESET_TABLES = (("ctx_chunks", "cold-storage chunks"), ("ctx_logs", "log events"),
                    ("ctx_runstate", "maintain states"))

    def reset_counts(self) -> dict[str, int]:
        """What `ctx reset` deletes of this project (cold storage, logs, maintain state), counted."""
        def q(cur):
            return {what: cur.execute(f"SELECT COUNT(*) FROM {t} WHERE project=%s", (self.project,)).fetchone()[0]
                    for t, what in self.RESET_TABLES}
        return self.run(q, "counting what a reset deletes")

    def reset(self) -> dict[str, int]:
        """Delete this project's cold storage (with its vectors), logs and maintain state in one
        transaction; memory, observations, session state and the session index stay (as the
        embedded reset keeps workspaces and sessions' CONTEXT.md)."""
        def tx(cur):
            out = {}
            for t, what in self.RESET_TABLES:
                cur.execute(f"DELETE FROM {t} WHERE project=%s", (self.project,))
                out[what] = cur.rowcount
            return out
        return self.run(tx, "resetting the project's data")


class PgColdStore:
    """ColdStore on PostgreSQL. A chunk's locator (its `path`) is postgresql:PROJECT/SESSION/CHUNK."""

    def __init__(self, store: PgStore):
        self.s = store
        self._paths: dict[str, tuple[str, str]] = {}

    def locator(self, session: str, chunk_id: str) -> str:
        p = f"postgresql:{self.s.project}/{session}/{chunk_id}"
        self._paths[p] = (session, chunk_id)
        return p

    def _parse(self, path: str) -> tuple[str, str]:
        if path in self._paths:
            return self._paths[path]
        prefix = f"postgresql:{self.s.project}/"
        if not path.startswith(prefix) or "/" not in path[len(prefix):]:
            raise PgError(f"{path}: not a chunk of this store's project ({self.s.project})")
        return tuple(path[len(prefix):].split("/", 1))  # type: ignore[return-value]

    def write(self, entry: dict) -> tuple[str, str, bool]:
        entry = redact_entry(entry)
        return self._put(entry)

    def import_raw(self, raw: str) -> str:
        """Store one chunk file's exact text (migration): 'added', 'present' or 'differs'."""
        entry = json.loads(raw)
        p = self.s.project

        def tx(cur):
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (_lock_key(p, entry["session_id"], entry["chunk_id"]),))
            cur.execute("SELECT raw FROM ctx_chunks WHERE project=%s AND session=%s AND chunk_id=%s",
                        (p, _key(entry["session_id"]), _key(entry["chunk_id"])))
            row = cur.fetchone()
            if row is not None:
                return "present" if row[0] == raw else "differs"
            self._insert(cur, entry, raw)
            return "added"
        return self.s.run(tx, "importing a chunk")

    def _insert(self, cur, entry: dict, raw: str) -> bool:
        text = entry_text(entry)
        cur.execute(
            "INSERT INTO ctx_chunks (project, session, chunk_id, raw, records_hash, ts, dropped_at, tokens, score, "
            "reason, prompt, recoverable_until, gist, body, bytes) VALUES "
            "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (project, session, chunk_id) DO NOTHING",
            (self.s.project, _key(entry["session_id"]), _key(entry["chunk_id"]), raw, records_hash(entry["records"]),
             *map(_no_nul, (entry.get("timestamp"), entry.get("dropped_at"))), entry.get("tokens"),
             entry.get("relevance_score"), *map(_no_nul, (entry.get("drop_reason"), entry.get("prompt_at_drop"),
                                                          entry.get("recoverable_until"), entry.get("gist"))),
             _no_nul(text[:TSV_MAX_CHARS] if len(text) > TSV_MAX_CHARS else text), len(raw.encode("utf-8"))))
        return cur.rowcount == 1

    def _put(self, entry: dict) -> tuple[str, str, bool]:
        p = self.s.project
        session, chunk = entry["session_id"], entry["chunk_id"]
        h = records_hash(entry["records"])

        def tx(cur):
            e = entry
            # one drop of one id at a time, across machines: the check-then-write is one
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_lock_key(p, session, chunk),))
            cur.execute("SELECT raw, records_hash FROM ctx_chunks WHERE project=%s AND session=%s AND chunk_id=%s",
                        (p, _key(session), _key(chunk)))
            row = cur.fetchone()
            if row is not None and row[1] != h:  # another chunk has this id: this one gets a content suffix
                e = dict(e, chunk_id=f"{chunk}-{h[:8]}")
                cur.execute("SELECT raw, records_hash FROM ctx_chunks WHERE project=%s AND session=%s "
                            "AND chunk_id=%s", (p, _key(session), _key(e["chunk_id"])))
                row = cur.fetchone()
            if row is None:
                raw = _as_file(json.dumps(e, ensure_ascii=False) + "\n")
                if not self._insert(cur, e, raw):
                    raise PgError(f"chunk {session}/{e['chunk_id']} appeared while it was being written")
                return e["chunk_id"], False
            existing = parse_entry(row[0], self.locator(session, e["chunk_id"]), "chunk in the store")
            until = max(filter(None, [existing.get("recoverable_until"), e.get("recoverable_until")]), default=None)
            if until != existing.get("recoverable_until"):
                existing = dict(existing, recoverable_until=until)
                raw = _as_file(json.dumps(existing, ensure_ascii=False) + "\n")
                cur.execute("UPDATE ctx_chunks SET raw=%s, recoverable_until=%s, bytes=%s "
                            "WHERE project=%s AND session=%s AND chunk_id=%s",
                            (raw, _no_nul(until), len(raw.encode()), p, _key(session), _key(existing["chunk_id"])))
            return existing["chunk_id"], True
        chunk_id, redrop = self.s.run(tx, f"storing chunk {session}/{chunk}")
        return self.locator(session, chunk_id), chunk_id, redrop

    def raw(self, session: str, chunk_id: str) -> str | None:
        return self.s.run(lambda cur: (cur.execute(
            "SELECT raw FROM ctx_chunks WHERE project=%s AND session=%s AND chunk_id=%s",
            (self.s.project, _key(session), _key(chunk_id))).fetchone() or (None,))[0], "reading a chunk")

    def load(self, path: str) -> dict:
        session, chunk = self._parse(path)
        raw = self.raw(session, chunk)
        if raw is None:
            raise PgError(f"no chunk {chunk!r} in session {session!r} in the store (purged meanwhile?)")
        return parse_entry(raw, path, "chunk in the store")

    def find(self, chunk_id: str, session: str | None = None) -> list[dict]:
        q = "SELECT session, chunk_id FROM ctx_chunks WHERE project=%s AND chunk_id=%s"
        args: list = [self.s.project, _key(chunk_id)]
        if session:
            q += " AND session=%s"
            args.append(_key(session))
        rows = self.s.run(lambda cur: cur.execute(q + " ORDER BY session", args).fetchall(), "finding a chunk")
        rows = [(unkey(s), unkey(c)) for s, c in rows]
        return [{"session": s, "chunk": c, "path": self.locator(s, c)} for s, c in rows]

    def rows(self, session: str | None = None, expired: bool = False, ref: datetime | None = None) -> list[dict]:
        q = ("SELECT session, chunk_id, tokens, score, reason, dropped_at, recoverable_until, gist, bytes "
             "FROM ctx_chunks WHERE project=%s")
        args: list = [self.s.project]
        if session:
            q += " AND session=%s"
            args.append(_key(session))
        q += " ORDER BY dropped_at, session, chunk_id"
        cols = ["session", "chunk", "tokens", "score", "reason", "dropped_at", "expires", "gist", "bytes"]
        out = [dict(zip(cols, r)) for r in self.s.run(lambda cur: cur.execute(q, args).fetchall(), "listing chunks")]
        for r in out:
            r["session"], r["chunk"] = unkey(r["session"]), unkey(r["chunk"])
            r["path"] = self.locator(r["session"], r["chunk"])
        if expired:
            t = ref or now()
            out = [r for r in out if (parse_ts(r["expires"]) or t) < t]
        return out

    def iter_raw(self, batch: int = 500) -> Iterator[tuple[str, str, str]]:
        """(session, chunk id, exact stored text) for every chunk of the project, in key order."""
        last = ("", "")
        while True:
            rows = self.s.run(lambda cur: cur.execute(
                "SELECT session, chunk_id, raw FROM ctx_chunks WHERE project=%s AND (session, chunk_id) > (%s, %s) "
                "ORDER BY session, chunk_id LIMIT %s", (self.s.project, *last, batch)).fetchall(), "reading chunks")
            if not rows:
                return
            yield from ((unkey(s), unkey(c), raw) for s, c, raw in rows)
            last = (rows[-1][0], rows[-1][1])

    def candidates(self, query: str, session: str | None, limit: int) -> list[tuple]:
        """(session, chunk_id, gist, text, rank) for keyword matches, best first (rank: lower is better,
        as the embedded index's bm25()), found in tiers as the embedded store finds them (the rarest
        terms first: core.keyword_tiers) so a common word does not rank every chunk. Each chunk found
        is ranked by every term of the query (ts_rank of one chunk costs the same for any query)."""
        from ..core.bm25 import tokenize
        from ..core.keyword_tiers import tiered

        terms = list(dict.fromkeys(tokenize(query)))
        return tiered(terms, self._term_counts, lambda op, ts, ex, scan, n:
                      self._ranked(op, ts, ex, session, scan, n, terms), limit)

    def _term_counts(self, terms, cap: int) -> list[int]:
        """How many of the project's chunks hold each term, in one round trip: a one-word term from
        the term statistics (migration 102), else counted in the GIN index up to `cap` (a term the
        parser splits, as refresh_token, is a phrase of its words)."""
        if self.s.has_search_functions():
            return list(self.s.run(lambda cur: cur.execute(
                "SELECT ctx_term_counts(%s, %s::text[], %s)", (self.s.project, list(terms), cap)).fetchone()[0],
                "searching chunks", one_statement=True))
        stats = self.s.has_term_stats()
        q = ("SELECT CASE WHEN %s AND t.term !~ '_' THEN (SELECT COALESCE(MAX(df), 0) FROM ctx_terms s "
             "WHERE s.project=%s AND s.term=t.term) ELSE (SELECT COUNT(*) FROM (SELECT FROM ctx_chunks c "
             "WHERE c.project=%s AND c.tsv @@ to_tsquery('simple', quote_literal(t.term)) LIMIT %s) x) END "
             "FROM unnest(%s::text[]) WITH ORDINALITY t(term, i) ORDER BY t.i")
        p = self.s.project
        rows = self.s.run(lambda cur: cur.execute(q, (stats, p, p, cap, list(terms))).fetchall(), "searching chunks")
        return [n for (n,) in rows]

    def _ranked(self, op: str, terms, excluded, session: str | None, scan: int, limit: int,
                rank_terms) -> list[tuple]:
        if self.s.has_search_functions():  # the first `scan` matches ranked, the best `limit` joined to their chunks
            q = ("SELECT * FROM ctx_keyword_match(%s, to_tsquery('simple', %s), to_tsquery('simple', %s), %s, "
                 "to_tsquery('simple', %s), %s, %s)")
            args = (self.s.project, _tsquery(terms, "|" if op == "any" else "&"),
                    _tsquery(excluded, "|") if excluded else None, _key(session) if session else None,
                    _tsquery(rank_terms, "|"), scan, limit)
            return _ids(self.s.run(lambda cur: cur.execute(q, args).fetchall(), "searching chunks", one_statement=True))
        # the queries as parameters, not built in SQL: the planner then sees them and estimates from the
        # column's statistics how many chunks match (a seq scan that stops early for common terms, the
        # GIN index for rare ones); built in SQL it would guess, and scan a million rows for two terms
        inner = "SELECT session, chunk_id, tsv FROM ctx_chunks WHERE project=%s AND tsv @@ to_tsquery('simple', %s)"
        args: list = [self.s.project, _tsquery(terms, "|" if op == "any" else "&")]
        if excluded:
            inner += " AND NOT tsv @@ to_tsquery('simple', %s)"
            args.append(_tsquery(excluded, "|"))
        if session:
            inner += " AND session=%s"
            args.append(_key(session))
        # the first `scan` matches ranked (by every query term), the best `limit` joined to their chunks
        q = ("SELECT c.session, c.chunk_id, c.gist, c.body, m.rank FROM (SELECT m.session, m.chunk_id, "
             f"-ts_rank(m.tsv, to_tsquery('simple', %s), 1) AS rank FROM ({inner} LIMIT %s) m "
             "ORDER BY rank, m.session, m.chunk_id LIMIT %s) m "
             "JOIN ctx_chunks c ON c.project=%s AND c.session=m.session AND c.chunk_id=m.chunk_id "
             "ORDER BY m.rank, c.session, c.chunk_id")
        args = [_tsquery(rank_terms, "|")] + args + [scan, limit, self.s.project]
        # never a prepared statement: its generic plan would guess again
        return _ids(self.s.run(lambda cur: cur.execute(q, args, prepare=False).fetchall(), "searching chunks"))

    def all_texts(self, session: str | None = None) -> list[tuple]:
        q = "SELECT session, chunk_id, gist, body FROM ctx_chunks WHERE project=%s"
        args: list = [self.s.project]
        if session:
            q += " AND session=%s"
            args.append(session)
        return _ids(self.s.run(lambda cur: cur.execute(q, args).fetchall(), "reading chunk texts"))

    def ids_starting(self, column: str, prefix: str, limit: int) -> list[str]:
        """The project's distinct session or chunk ids that start with `prefix` (shell completion)."""
        if column not in ("session", "chunk_id"):
            raise ValueError(column)
        like = "".join("\\" + ch if ch in "\\%_" else ch for ch in _key(prefix)) + "%"
        return [unkey(v) for (v,) in self.s.run(lambda cur: cur.execute(
            f"SELECT DISTINCT {column} FROM ctx_chunks WHERE project=%s AND {column} LIKE %s "
            f"ORDER BY {column} LIMIT %s", (self.s.project, like, limit)).fetchall(), "completing ids",
            check=False)]

    def count(self) -> int:
        return self.s.run(lambda cur: cur.execute("SELECT COUNT(*) FROM ctx_chunks WHERE project=%s",
                                                  (self.s.project,)).fetchone()[0], "counting chunks")

    def delete(self, session: str, chunk_id: str, path: str | None = None) -> None:
        def tx(cur):
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (_lock_key(self.s.project, session, chunk_id),))
            cur.execute("DELETE FROM ctx_chunks WHERE project=%s AND session=%s AND chunk_id=%s",
                        (self.s.project, _key(session), _key(chunk_id)))
        self.s.run(tx, f"deleting chunk {session}/{chunk_id}")

    def stats(self) -> list[dict]:
        q = ("SELECT session, COUNT(*), SUM(tokens), SUM(bytes), MIN(dropped_at), MAX(dropped_at) FROM ctx_chunks "
             "WHERE project=%s GROUP BY session ORDER BY session")
        rows = self.s.run(lambda cur: cur.execute(q, (self.s.project,)).fetchall(), "counting chunks")
        return [{"session": unkey(s), "chunks": n, "tokens": int(t or 0), "bytes": int(b or 0), "first_drop": f,
                 "last_drop": l} for s, n, t, b, f, l in rows]

    def reindex(self, bad: list | None = None) -> int:
        """The database keeps its index itself (GIN, HNSW): nothing to rebuild."""
        return self.count()

    # ---- vectors (pgvector) ----
    def vector_candidates(self, model: str, vector, session: str | None, limit: int) -> list[tuple] | None:
        """(session, chunk_id, gist, text, cosine similarity) nearest to `vector` by the HNSW index,
        or None when the store has no pgvector."""
        if not self.s.has_vectors():
            return None
        v = _vec(vector)
        if self.s.has_vector_function():
            q = "SELECT * FROM ctx_vector_match(%s, %s, %s::vector, %s, %s)"
            args: list = [self.s.project, model, v, _key(session) if session else None, limit]
        else:
            q, args = self._nearest_query(model, v, session, limit)
        iterative = self.s.vector_version() >= (0, 8)

        def tx(cur):
            cur.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(max(EF_SEARCH, min(limit, 1000))),))
            if iterative:  # pgvector 0.8+: the index scans on until the filter (project, session) lets enough through
                cur.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
            rows = cur.execute(q, args).fetchall()
            if session and len(rows) < limit:
                # the index's nearest held too few of this session's vectors: the session's own, exactly
                cur.execute("SELECT set_config('enable_indexscan', 'off', true)")
                rows = cur.execute(q, args).fetchall()
            return rows
        return _ids(self.s.run(tx, "searching vectors"))

    def _nearest_query(self, model: str, v: str, session: str | None, limit: int) -> tuple[str, list]:
        """The nearest vectors as a plain query (a store before migration 104)."""
        # the nearest first by the HNSW index (an ORDER BY … LIMIT on the vector table alone), then
        # their chunks; ef_search at least `limit`, or the index returns fewer rows than asked
        inner = ("SELECT project, session, chunk_id, embedding <=> %s::vector AS dist FROM ctx_vectors "
                 "WHERE project=%s AND model=%s")
        args: list = [v, self.s.project, model]
        if session:
            inner += " AND session=%s"
            args.append(_key(session))
        inner += " ORDER BY embedding <=> %s::vector LIMIT %s"
        args += [v, limit]
        return (f"SELECT c.session, c.chunk_id, c.gist, c.body, 1 - n.dist FROM ({inner}) n "
                "JOIN ctx_chunks c USING (project, session, chunk_id) ORDER BY n.dist"), args

    def missing_vectors(self, model: str, limit: int) -> list[tuple]:
        if not self.s.has_vectors():
            return []
        return self.s.run(lambda cur: cur.execute(
            "SELECT c.session, c.chunk_id, c.body FROM ctx_chunks c WHERE c.project=%s AND NOT EXISTS "
            "(SELECT 1 FROM ctx_vectors v WHERE v.project=c.project AND v.session=c.session "
            "AND v.chunk_id=c.chunk_id AND v.model=%s) LIMIT %s", (self.s.project, model, limit)).fetchall(),
            "finding chunks without vectors")

    def put_vectors(self, model: str, items: list[tuple[str, str, object]]) -> int:
        if not self.s.has_vectors() or not items:
            return 0

        def tx(cur):
            cur.executemany(
                "INSERT INTO ctx_vectors (project, session, chunk_id, model, embedding) VALUES (%s,%s,%s,%s,%s::vector) "
                "ON CONFLICT (project, session, chunk_id, model) DO NOTHING",
                [(self.s.project, s, c, model, _vec(v)) for s, c, v in items])
        self.s.run(tx, "storing vectors")
        return len(items)


def _tsquery(terms, op: str) -> str:
    """to_tsquery's text for terms joined by op, each term one quoted operand (as quote_literal)."""
    return f" {op} ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


def _vec(v) -> str:
    vals = [float(x) for x in v]
    if len(vals) != VECTOR_DIM:
        raise PgError(f"a {len(vals)}-dimensional vector; the store's vectors have {VECTOR_DIM}")
    return "[" + ",".join(f"{x:.7g}" for x in vals) + "]"


class PgLogs:
    def __init__(self, store: PgStore):
        self.s = store

    def append_line(self, name: str, line: str) -> None:
        self.s.run(lambda cur: cur.execute("INSERT INTO ctx_logs (project, name, line) VALUES (%s,%s,%s)",
                                           (self.s.project, name, _as_file(line))), f"appending to the {name} log")

    def lines(self, name: str, batch: int = 2000) -> Iterator[str]:
        last = 0
        while True:
            rows = self.s.run(lambda cur: cur.execute(
                "SELECT id, line FROM ctx_logs WHERE project=%s AND name=%s AND id > %s ORDER BY id LIMIT %s",
                (self.s.project, name, last, batch)).fetchall(), f"reading the {name} log")
            if not rows:
                return
            for _, line in rows:
                yield line
            last = rows[-1][0]


def _session_row(row) -> tuple[str, dict]:
    """(session id, index entry) of a ctx_sessions row: every field of the type ctx reads (as
    the embedded index is read), the id exactly, in the key and in the entry's `session` (jsonb
    holds it with U+FFFD for a NUL or a lone surrogate)."""
    from .index_entry import index_entry

    sid, e = unkey(row[0]), index_entry(row[1]) if isinstance(row[1], dict) else {}
    if e.get("session") != sid and e.get("session") == _no_nul(sid):
        e = dict(e, session=sid)
    return sid, e


class PgSessionIndex:
    def __init__(self, store: PgStore):
        self.s = store

    def load(self) -> dict:
        rows = self.s.run(lambda cur: cur.execute("SELECT session, entry FROM ctx_sessions WHERE project=%s",
                                                  (self.s.project,)).fetchall(), "reading the session index")
        return dict(map(_session_row, rows))

    def update(self, change) -> None:
        """`change(index dict)` under one advisory lock per project, the changed entries saved in
        the same transaction; the whole read-change-write is retried (bounded, noted) when the
        connection drops, so it sees the index as it then is."""
        from psycopg.types.json import Jsonb

        def tx(cur):
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (_lock_key(self.s.project, "session-index"),))
            cur.execute("SELECT session, entry FROM ctx_sessions WHERE project=%s", (self.s.project,))
            idx = dict(map(_session_row, cur.fetchall()))
            old = json.loads(json.dumps(idx))
            change(idx)
            changed = [(self.s.project, _key(k), Jsonb(_no_nul(v))) for k, v in idx.items() if old.get(k) != v]
            if changed:
                cur.executemany(
                    "INSERT INTO ctx_sessions (project, session, entry) VALUES (%s,%s,%s) "
                    "ON CONFLICT (project, session) DO UPDATE SET entry = EXCLUDED.entry", changed)
        self.s.run(tx, "updating the session index")


class PgStateFile:
    """A session's CONTEXT.md in the store, with ContextFile's interface: read, exists, and
    update with a version (checked on write: a concurrent update is retried, never lost)."""

    def __init__(self, store: PgStore, session: str):
        self.s = store
        self.session = session
        self.key = _key(session)
        self.path = f"postgresql:{store.project}/sessions/{session}/CONTEXT.md"

    def _row(self):
        return self.s.run(lambda cur: cur.execute(
            "SELECT version, body FROM ctx_state WHERE project=%s AND session=%s",
            (self.s.project, self.key)).fetchone(), "reading session state")

    def exists(self) -> bool:
        return self._row() is not None

    def read(self):
        from ..core.context_md import Context, ContextFormatError, parse
        from ..errors import InputError

        row = self._row()
        if row is None:
            return Context()
        try:
            return parse(row[1])
        except ContextFormatError as e:
            raise InputError(self.path, e.line, e.reason) from None

    def update(self, change, if_version: int | None = None):
        """Read, change, bump and write in one transaction holding the session's state lock: every
        writer sees the one before it (nothing lost, nobody starved); the version column is checked
        on the write, and a caller's `if_version` that is not the stored one is a conflict."""
        from ..core.context_md import Context, parse, render
        from ..core.timeutil import now_iso
        from ..core.context_md import kept_before, left_kept_sections
        from .notes import note_archived
        from . import redaction

        def tx(cur):
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (_lock_key(self.s.project, self.session, "state"),))
            cur.execute("SELECT version, body FROM ctx_state WHERE project=%s AND session=%s",
                        (self.s.project, self.key))
            row = cur.fetchone()
            ctx = parse(row[1]) if row else Context()
            stored = row[0] if row else 0
            if if_version is not None and ctx.version != if_version:
                raise ConflictError(f"{self.path}: version is {ctx.version}, not {if_version}; nothing changed",
                                    hint="re-read it (ctx context show --json) and retry")
            before = kept_before(ctx)
            new = change(ctx) or ctx
            gone.clear()
            gone.update(left_kept_sections(before, new))
            for section, items in gone.items():  # nothing a user wrote leaves silently: kept, as archive/SECTION.md
                cur.executemany("INSERT INTO ctx_archive (project, session, section, item) VALUES (%s,%s,%s,%s) "
                                "ON CONFLICT DO NOTHING",
                                [(self.s.project, self.key, section, _no_nul(redaction.text(i))) for i in items])
            new.version = ctx.version + 1
            new.updated = now_iso()
            text = _no_nul(redaction.text(render(new)))
            if row is None:
                cur.execute("INSERT INTO ctx_state (project, session, version, body) VALUES (%s,%s,%s,%s) "
                            "ON CONFLICT (project, session) DO NOTHING", (self.s.project, self.key, stored + 1, text))
            else:
                cur.execute("UPDATE ctx_state SET version=%s, body=%s, updated_at=now() "
                            "WHERE project=%s AND session=%s AND version=%s",
                            (stored + 1, text, self.s.project, self.key, stored))
            if cur.rowcount != 1:  # only a writer that ignores the lock gets here
                raise ConflictError(f"{self.path}: changed by another writer; nothing changed")
            cur.execute("INSERT INTO ctx_state_history (project, session, version, body) VALUES (%s,%s,%s,%s) "
                        "ON CONFLICT DO NOTHING", (self.s.project, self.key, stored + 1, text))
            return parse(text) if text != render(new) else new
        gone: dict = {}
        out = self.s.run(tx, "saving session state")
        for section, items in gone.items():
            note_archived(len(items), section, self.archive_path(section))
        return out

    def archive_path(self, section: str) -> str:
        return f"postgresql:{self.s.project}/sessions/{self.session}/archive/{section.lower()}.md"

    def archived(self, section: str) -> list[str]:
        """The items that left `section` of this session's state, oldest first."""
        return [i for (i,) in self.s.run(lambda cur: cur.execute(
            "SELECT item FROM ctx_archive WHERE project=%s AND session=%s AND section=%s ORDER BY id",
            (self.s.project, self.key, section)).fetchall(), "reading the state archive")]

    def write_raw(self, text: str, version: int) -> str:
        """Migration: store a state document as it is ('added', 'present' or 'differs')."""
        def tx(cur):
            cur.execute("SELECT body FROM ctx_state WHERE project=%s AND session=%s", (self.s.project, self.key))
            row = cur.fetchone()
            if row is not None:
                return "present" if row[0] == text else "differs"
            cur.execute("INSERT INTO ctx_state (project, session, version, body) VALUES (%s,%s,%s,%s)",
                        (self.s.project, self.key, version, text))
            return "added"
        return self.s.run(tx, "importing session state")


class PgMemory:
    """MEMORY.md and the observations of the store's project (MemoryStore): MEMORY.md is one row
    with a version column, edited under an advisory lock; an observation is one row by name."""

    kind = "postgresql"

    def __init__(self, store: PgStore):
        self.s = store
        self.memory_path = f"postgresql:{store.project}/MEMORY.md"

    def _row(self, cur):
        return cur.execute("SELECT version, body FROM ctx_memory WHERE project=%s", (self.s.project,)).fetchone()

    def memory_text(self) -> str:
        row = self.s.run(self._row, "reading MEMORY.md")
        return row[1] if row else ""

    def update_memory(self, change) -> str:
        """`change(text)` -> the new text (None: unchanged), read and written in one transaction
        under the project's memory lock, the version checked on the write; redacted before it is
        sent. Retried whole (change called again) when the connection drops."""
        from . import redaction

        def tx(cur):
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_lock_key(self.s.project, "memory"),))
            row = self._row(cur)
            text = row[1] if row else ""
            new = change(text)
            if new is None or new == text:
                return
            new = _no_nul(redaction.text(new))
            if row is None:
                cur.execute("INSERT INTO ctx_memory (project, version, body) VALUES (%s, 1, %s) "
                            "ON CONFLICT (project) DO NOTHING", (self.s.project, new))
            else:
                cur.execute("UPDATE ctx_memory SET version=version+1, body=%s, updated_at=now() "
                            "WHERE project=%s AND version=%s", (new, self.s.project, row[0]))
            if cur.rowcount != 1:  # only a writer that ignores the lock gets here
                raise ConflictError(f"{self.memory_path}: changed by another writer; nothing changed")
        self.s.run(tx, "saving MEMORY.md")
        return self.memory_path

    def write_observation(self, name: str, text: str, session: str | None = None) -> str:
        from . import redaction

        text = _no_nul(redaction.text(text))
        self.s.run(lambda cur: cur.execute(
            "INSERT INTO ctx_observations (project, name, session, body) VALUES (%s,%s,%s,%s) "
            "ON CONFLICT (project, name) DO UPDATE SET body=EXCLUDED.body, session=EXCLUDED.session, "
            "created_at=now()", (self.s.project, name, _no_nul(session), text)), "saving an observation")
        return f"postgresql:{self.s.project}/observations/{name}"

    def observation_names(self) -> list[str]:
        return [n for (n,) in self.s.run(lambda cur: cur.execute(
            "SELECT name FROM ctx_observations WHERE project=%s ORDER BY name", (self.s.project,)).fetchall(),
            "listing observations")]

    def observations(self) -> list[tuple[str, str]]:
        return [(f"observations/{n}", b) for n, b in self.s.run(lambda cur: cur.execute(
            "SELECT name, body FROM ctx_observations WHERE project=%s ORDER BY name", (self.s.project,)).fetchall(),
            "reading observations")]

    def documents(self) -> list[tuple[str, str]]:
        row = self.s.run(self._row, "reading MEMORY.md")
        return ([("MEMORY.md", row[1])] if row else []) + self.observations()


class PgRunState:
    """`ctx maintain`'s per-session state (RunState): held by a session-level advisory lock for the
    whole pass; the row's version is checked when it is written back."""

    def __init__(self, store: PgStore):
        self.s = store

    def entries(self, name: str) -> dict[str, dict]:
        """Every entry of the `name` state ({key: entry}), for moving it out."""
        return {unkey(k): v for k, v in self.s.run(lambda cur: cur.execute(
            "SELECT key, value FROM ctx_runstate WHERE project=%s AND name=%s ORDER BY key",
            (self.s.project, name)).fetchall(), f"reading the {name} state")}

    def import_entry(self, name: str, key: str, entry: dict) -> str:
        """Store one entry as it is where there is none: 'added', 'present' or 'differs'."""
        from psycopg.types.json import Jsonb

        entry = _no_nul(entry)

        def tx(cur):
            cur.execute("INSERT INTO ctx_runstate (project, name, key, version, value) VALUES (%s,%s,%s,1,%s) "
                        "ON CONFLICT DO NOTHING", (self.s.project, name, _key(key), Jsonb(entry)))
            if cur.rowcount == 1:
                return "added"
            row = cur.execute("SELECT value FROM ctx_runstate WHERE project=%s AND name=%s AND key=%s",
                              (self.s.project, name, _key(key))).fetchone()
            return "present" if row and row[0] == entry else "differs"
        return self.s.run(tx, f"importing the {name} state")

    @contextmanager
    def hold(self, name: str, key: str):
        from psycopg.types.json import Jsonb

        p = self.s.project
        lock = _lock_key(p, "runstate", name, key)
        row = None
        conn = self.s.connect()
        if not self.s._checked:
            self.s.require_schema()
        try:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (lock,))
        except psycopg.Error as e:
            raise self.s.error(e, f"locking the {name} state") from None
        try:
            row = self.s.run(lambda cur: cur.execute(
                "SELECT version, value FROM ctx_runstate WHERE project=%s AND name=%s AND key=%s",
                (p, name, _key(key))).fetchone(), f"reading the {name} state")
            entry = dict(row[1]) if row and isinstance(row[1], dict) else {}
            before = json.dumps(entry, sort_keys=True)
            yield entry
            if json.dumps(entry, sort_keys=True) != before:
                def tx(cur):
                    if row is None:
                        cur.execute("INSERT INTO ctx_runstate (project, name, key, version, value) "
                                    "VALUES (%s,%s,%s,1,%s) ON CONFLICT DO NOTHING", (p, name, _key(key), Jsonb(_no_nul(entry))))
                    else:
                        cur.execute("UPDATE ctx_runstate SET version=version+1, value=%s, updated_at=now() "
                                    "WHERE project=%s AND name=%s AND key=%s AND version=%s",
                                    (Jsonb(_no_nul(entry)), p, name, _key(key), row[0]))
                    if cur.rowcount != 1:  # the lock was lost with a dropped connection, and someone wrote
                        raise ConflictError(f"the {name} state of {key} changed meanwhile; not saved",
                                            hint="run it again")
                self.s.run(tx, f"saving the {name} state")
        finally:
            try:
                if not (conn.closed or conn.broken):
                    conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock,))
            except psycopg.Error:
                pass  # a lost connection released it


def state_versions(store: PgStore, session: str) -> list[int]:
    return [v for (v,) in store.run(lambda cur: cur.execute(
        "SELECT version FROM ctx_state_history WHERE project=%s AND session=%s ORDER BY version",
        (store.project, _key(session))).fetchall(), "reading state versions")]
