"""ctx reset: delete what ctx wrote under its home (never config.yaml)."""
from __future__ import annotations

import shutil

import click

from ..errors import UsageProblem
from .common import note, get_home, home_option


@click.command("reset")
@click.option("-f", "--force", is_flag=True, help="Really delete.")
@click.option("-n", "--dry-run", is_flag=True, help="List what would be deleted (on stdout); delete nothing.")
@home_option
def reset(force, dry_run):
    """Delete logs, cold storage, caches and the maintain/hook state under the ctx home.

    Like `git clean`: nothing is deleted without -f, and -n lists what would go. Kept:
    config.yaml, workspaces, sessions' CONTEXT.md. On a shared PostgreSQL store, the
    project's cold storage, logs and maintain state go (one transaction), other projects'
    rows stay. The hooks and `ctx maintain` start afresh afterwards.

    \b
    Examples:
      ctx reset -n
      ctx reset --force
    """
    from ..store.backend import shared

    if force and dry_run:
        raise UsageProblem("-f/--force and -n/--dry-run cannot be used together")
    if not force and not dry_run:
        raise UsageProblem("refusing to delete without -f/--force", hint="-n/--dry-run lists what would go")
    home = get_home()
    store = shared(home)
    paths = home.owned_paths(local_only=store is not None)
    counts = {k: n for k, n in store.reset_counts().items() if n} if store is not None else {}
    where = f"{store.where} (project {store.project})" if store is not None else ""
    if not paths and not counts:
        note(f"nothing to delete under {home.path}" + (f" or in {where}" if where else ""))
        return
    if dry_run:
        for what, n in counts.items():
            click.echo(f"would delete {n} {what} in {where}")
        for p in paths:
            click.echo(f"would delete {p}")
        return
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
