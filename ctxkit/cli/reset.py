"""ctx reset: delete what ctx wrote under its home (never config.yaml)."""
from __future__ import annotations

import shutil

import click

from ..errors import UsageProblem
from .common import note, get_home, home_option


@click.command("reset")
@click.option("--force", is_flag=True, help="Really delete; without it, only say what would go.")
@home_option
def reset(force):
    """Delete logs, cold storage, caches and the maintain/hook state under the ctx home.

    config.yaml, workspaces and sessions' CONTEXT.md are kept. After a reset, `ctx
    maintain` and the hooks start afresh (they no longer remember what they did). Without --force nothing is deleted
    and the command exits 2 after listing what would be.

    \b
    Example:
      ctx reset            # what would be deleted
      ctx reset --force
    """
    home = get_home()
    from ..store.backend import not_supported

    not_supported(home, "ctx reset")
    paths = home.owned_paths()
    if not paths:
        note(f"nothing to delete under {home.path}")
        return
    if not force:
        for p in paths:
            note(f"would delete {p}")
        raise UsageProblem("refusing to delete without --force")
    import os

    for p in paths:
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)
        note(f"deleted {p}")
