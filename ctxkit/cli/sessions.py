"""ctx sessions: this project's agent transcripts, where the agents keep them."""
from __future__ import annotations

import click

from .common import emit_listing, get_home, home_option, jq_option, output_options


@click.command("sessions")
@click.argument("directory", required=False, metavar="[DIR]", type=click.Path(file_okay=False, exists=True))
@click.option("-n", "--limit", type=click.IntRange(min=0), default=10, show_default=True, metavar="N",
              help="The newest N (0: all); window use is measured for each, reading its transcript.")
@jq_option
@output_options
@home_option
def sessions(directory, limit, jq_expr, table, as_json, table_fmt):
    """List this project's agent sessions, newest first, with how full each window is.

    Looks where Claude Code, Codex, Gemini CLI and Copilot CLI keep their
    transcripts (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp,
    ~/.copilot/session-state) for those started inside this project (the
    repository root of DIR, by default the current directory). The first is what `ctx status`,
    `score`, `drop`, `compact` and `count` read when given no FILE on a terminal.

    \b
    Examples:
      ctx sessions -t
      ctx sessions --jq .path -r | head -1
      ctx sessions -n 3 --json
    """
    from ..services.discovery import project_sessions, window_use

    home = get_home()
    where = directory or click.get_current_context().find_root().meta.get("ctx.cwd")
    found = project_sessions(where)
    rows = []
    for f in found[:limit] if limit else found:
        w = window_use(home, f)
        rows.append({**f.as_dict(), "model": w.get("model"),
                     "window_pct": round(w["pct"], 4) if "pct" in w else None, "window_tokens": w.get("tokens"),
                     "window": w.get("window"), "window_method": w.get("method"), "error": w.get("error")})
    if not rows:
        click.echo("ctx: no agent session of this project found (looked for sessions started inside "
                   f"{_root(where)})", err=True)
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 view="agent-sessions")


def _root(where: str | None) -> str:
    from ..store.project import project_root

    return project_root(where)
