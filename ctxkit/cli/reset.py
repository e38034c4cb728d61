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

    config.yaml, workspaces and sessions' CONTEXT.md are kept. On a shared PostgreSQL store
    the project's cold storage, logs and maintain state are deleted there (one transaction;
    other projects, memory, observations and session state are kept), and the local caches and
    hook state here. After a reset, `ctx
    maintain` and the hooks start afresh (they no longer remember what they did). Without --force nothing is deleted
    and the command exits 2 after listing what would be.

    \b
    Example:
      ctx reset            # what would be deleted
      ctx reset --force
    """
    from ..store.backend import shared

    home = get_home()
    store = shared(home)
    paths = home.owned_paths(local_only=store is not None)
    counts = {k: n for k, n in store.reset_counts().items() if n} if store is not None else {}
    where = f"{store.where} (project {store.project})" if store is not None else ""
    if not paths and not counts:
        note(f"nothing to delete under {home.path}" + (f" or in {where}" if where else ""))
        return
    if not force:
        for what, n in counts.items():
            note(f"would delete {n} {what} in {where}")
        for p in paths:
            note(f"would delete {p}")
        raise UsageProblem("refusing to delete without --force")
    import os

    if counts:
        for what, n in store.reset().items():
            note(f"deleted {n} {what} in {where}")
    for p in paths:
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)
        note(f"deleted {p}")
