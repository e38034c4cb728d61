"""ctx completion bash|zsh|fish: shell completion scripts, from click's machinery."""
from __future__ import annotations

import os

import click

SHELLS = ("bash", "zsh", "fish")


def script(shell: str) -> str:
    from click.shell_completion import get_completion_class

    from .main import cli

    cls = get_completion_class(shell)
    return cls(cli, {}, "ctx", "_CTX_COMPLETE").source()


def _ids(ctx, column: str, prefix: str) -> list[str]:
    """Ids in the configured store that start with `prefix` (found from --home or the
    environment; nothing heavy imported, nothing printed on any error: a Tab never fails)."""
    from ..errors import CtxError
    from ..store.backend import ids_starting
    from ..store.home import Home

    root = ctx.find_root()
    try:
        home = Home(root.meta.get("ctx.home_override") or os.environ.get("CTX_HOME") or os.path.expanduser("~/.ctx"))
    except (CtxError, OSError):
        return []
    return ids_starting(home, column, prefix)


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
