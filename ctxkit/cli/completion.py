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


def _index(ctx: click.Context) -> str | None:
    """cold-storage/index.sqlite, found from --home or the environment: sqlite3 only, no heavy imports."""
    root = ctx.find_root()
    home = root.meta.get("ctx.home_override") or os.environ.get("CTX_HOME") or os.path.expanduser("~/.ctx")
    p = os.path.join(home, "cold-storage", "index.sqlite")
    return p if os.path.exists(p) else None


def _query(ctx, sql: str, prefix: str) -> list[str]:
    p = _index(ctx)
    if not p:
        return []
    try:
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=1)
        rows = [r[0] for r in con.execute(sql, (prefix + "%",))]
        con.close()
        return rows
    except sqlite3.Error:
        return []


def complete_session(ctx, param, incomplete):
    return _query(ctx, "SELECT DISTINCT session FROM chunks WHERE session LIKE ? ORDER BY session LIMIT 200",
                  incomplete)


def complete_chunk(ctx, param, incomplete):
    return _query(ctx, "SELECT DISTINCT chunk_id FROM chunks WHERE chunk_id LIKE ? ORDER BY chunk_id LIMIT 200",
                  incomplete)


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
