"""ctx completion bash|zsh|fish: shell completion scripts, from click's machinery."""
from __future__ import annotations

import os
import sqlite3

import click

SHELLS = ("bash", "zsh", "fish")


def script(shell: str) -> str:
    from click.shell_completion import get_completion_class

    from .main import cli

    cls = get_completion_class(shell)
    return cls(cli, {}, "ctx", "_CTX_COMPLETE").source()


def _home(ctx: click.Context):
    from ..store.home import Home

    root = ctx.find_root()
    return Home(root.meta.get("ctx.home_override") or os.environ.get("CTX_HOME") or os.path.expanduser("~/.ctx"))


def _index(home) -> str | None:
    """cold-storage/index.sqlite of the embedded store: sqlite3 only, no heavy imports."""
    p = os.path.join(home.cold_storage_dir, "index.sqlite")
    return p if os.path.exists(p) else None


def _ids(ctx, column: str, prefix: str) -> list[str]:
    """Ids in cold storage that start with `prefix`, from the configured store (the embedded
    index read-only, or the shared store's project); nothing on any error (a Tab never fails)."""
    from ..errors import CtxError
    from ..store.backend import store_project, store_url

    try:
        home = _home(ctx)
        url = store_url(home)
        if url:
            from ..store.pg import PgStore

            pg = PgStore(url, store_project(home), home, connect_timeout=2)
            try:
                return pg.cold.ids_starting(column, prefix, 200)
            finally:
                pg.close()
        p = _index(home)
        if not p:
            return []
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=1)
        try:
            return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM chunks WHERE {column} LIKE ? "
                                              f"ORDER BY {column} LIMIT 200", (prefix + "%",))]
        finally:
            con.close()
    except (CtxError, OSError, ImportError, sqlite3.Error):
        return []


def complete_session(ctx, param, incomplete):
    return _ids(ctx, "session", incomplete)


def complete_chunk(ctx, param, incomplete):
    return _ids(ctx, "chunk_id", incomplete)


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell):
    """Print the completion script for SHELL.

    \b
    Examples:
      ctx completion bash > ~/.local/share/bash-completion/completions/ctx
      ctx completion zsh > "${fpath[1]}/_ctx"
      ctx completion fish > ~/.config/fish/completions/ctx.fish
    """
    click.echo(script(shell), nl=False)
