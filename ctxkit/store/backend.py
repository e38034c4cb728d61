"""One store interface, two backends: the embedded store under $CTX_HOME (the default) and a
shared PostgreSQL store (`store: postgresql://…` in config.yaml, or CTX_STORE_URL).

The services ask `open_store(home)` for a Store and use its parts; they never know which
backend they have. The embedded backend wraps the file store as it is (atomic writes, locks,
redaction before write, containment checks); the PostgreSQL one lives in store/pg.py and is
imported only when chosen.
"""
from __future__ import annotations

import os
from datetime import datetime
from typing import Iterator, Protocol

from ..errors import CtxError
from .dsn import redact_dsn  # noqa: F401 - where callers find it


class ColdStore(Protocol):
    """Cold-storage chunks and their index/search (store/cold.py's ColdStorage is one)."""

    def write(self, entry: dict) -> tuple[str, str, bool]: ...           # (locator, chunk id, re-drop)
    def find(self, chunk_id: str, session: str | None = None) -> list[dict]: ...
    def load(self, path: str) -> dict: ...
    def rows(self, session: str | None = None, expired: bool = False, ref: datetime | None = None) -> list[dict]: ...
    def candidates(self, query: str, session: str | None, limit: int) -> list[tuple]: ...
    def all_texts(self, session: str | None = None) -> list[tuple]: ...
    def count(self) -> int: ...
    def delete(self, session: str, chunk_id: str, path: str) -> None: ...
    def stats(self) -> list[dict]: ...
    def reindex(self, bad: list | None = None) -> int: ...


class LogStore(Protocol):
    """The activity logs (drops, compaction, recovery, curation, context-health)."""

    def append_event(self, name: str, event: dict) -> None: ...
    def read_events(self, name: str) -> Iterator[dict]: ...


class SessionIndex(Protocol):
    """The session index: one entry per session, edited as a whole under a lock."""

    def load(self) -> dict: ...
    def update(self, change) -> None: ...   # change(index dict) under the lock, saved after


class StateStore(Protocol):
    """Per-session working state (CONTEXT.md) with versions: a ContextFile-like object per session."""

    def state_file(self, session: str): ...


class MemoryStore(Protocol):
    """Long-term memory: MEMORY.md and the observations (store/memory.py's FileMemory is one)."""

    memory_path: str     # where MEMORY.md is, for messages: a path or a postgresql: locator

    def memory_text(self) -> str: ...
    def update_memory(self, change) -> str: ...          # change(text) -> new text | None, under a lock
    def write_observation(self, name: str, text: str, session: str | None = None) -> str: ...
    def observation_names(self) -> list[str]: ...
    def observations(self) -> list[tuple[str, str]]: ...  # ("observations/NAME", text), oldest first
    def documents(self) -> list[tuple[str, str]]: ...     # MEMORY.md first, then the observations


class RunState(Protocol):
    """Per-session state of `ctx maintain`, held (locked) for a whole pass."""

    def hold(self, name: str, key: str): ...  # a context manager yielding a dict, saved on exit


class Store(Protocol):
    kind: str            # "embedded" | "postgresql"
    where: str           # for messages: a path, or the DSN without its password
    cold: ColdStore


def store_url(home) -> str:
    """The configured shared store's URL, or "" for the embedded store."""
    return (os.environ.get("CTX_STORE_URL") or home.config.get("store") or "").strip()


def store_project(home) -> str:
    return (os.environ.get("CTX_STORE_PROJECT") or home.config.get("store_project") or "default").strip()


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://")) or (
        "=" in url and not url.startswith(("/", ".", "~")))


class EmbeddedStore:
    """Everything under $CTX_HOME as files (the default)."""

    kind = "embedded"

    def __init__(self, home):
        from .cold import ColdStorage

        self.home = home
        self.where = home.path
        self.cold = ColdStorage(home.cold_storage_dir)


def open_store(home):
    """The home's store: the embedded one, or the shared PostgreSQL store it is configured for."""
    cached = home.__dict__.get("_ctx_store")
    if cached is not None:
        return cached
    url = store_url(home)
    if not url:
        store = EmbeddedStore(home)
    elif is_postgres_url(url):
        from .pg import PgStore

        store = PgStore(url, store_project(home), home)
    else:
        raise CtxError(f"store: {redact_dsn(url)!s} is not a postgresql:// URL",
                       hint="leave `store` empty for the embedded store under $CTX_HOME")
    home.__dict__["_ctx_store"] = store
    return store


def close_store(home) -> None:
    """End the home's store connection, if it opened one."""
    store = home.__dict__.pop("_ctx_store", None)
    if store is not None and hasattr(store, "close"):
        store.close()


def shared(home):
    """The shared store when one is configured, else None (the embedded path runs as before)."""
    if not store_url(home):
        return None
    return open_store(home)


def memory_store(home, workspace: str):
    """Where the workspace's long-term memory lives: the workspace folder (embedded), or the
    shared store's project (PostgreSQL: one memory per project, for the whole fleet)."""
    s = shared(home)
    if s is not None:
        return s.memory
    from .memory import FileMemory

    return FileMemory(workspace)


def ids_starting(home, column: str, prefix: str, limit: int = 200) -> list[str]:
    """The cold-storage session ids (`column` "session") or chunk ids ("chunk_id") that start with
    `prefix`, for shell completion: from the embedded index read-only (sqlite3 alone), or the
    shared store's project (2 s to connect); [] on any error."""
    import sqlite3

    if column not in ("session", "chunk_id"):
        raise ValueError(column)
    try:
        url = store_url(home)
        if url:
            from .pg import PgStore

            pg = PgStore(url, store_project(home), home, connect_timeout=2)
            try:
                return pg.cold.ids_starting(column, prefix, limit)
            finally:
                pg.close()
        p = os.path.join(home.cold_storage_dir, "index.sqlite")
        if not os.path.exists(p):
            return []
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=1)
        try:
            return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM chunks WHERE {column} LIKE ? "
                                              f"ORDER BY {column} LIMIT ?", (prefix + "%", limit))]
        finally:
            con.close()
    except (CtxError, OSError, ImportError, sqlite3.Error):
        return []


def run_state(home):
    s = shared(home)
    if s is not None:
        return s.runstate
    from .runstate import FileRunState

    return FileRunState(home)
