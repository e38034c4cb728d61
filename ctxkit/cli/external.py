"""ctx external: git changes and outside edits since the last session."""
from __future__ import annotations


import click

from ..core.timeutil import parse_since
from ..errors import CtxError, UsageProblem
from ..sources.external import git_changes, modified_files, summary_lines
from ..services.awareness import last_session_time
from .common import emit_object, get_home, get_workspace, home_option, note, report_options, workspace_option


@click.command("external")
@click.option("--repo", metavar="DIR", type=click.Path(file_okay=False), help="The git repository to look at (default: the current directory's, if any).")
@click.option("--since", default="last-session", show_default=True, metavar="WHEN",
              help="last-session, a duration (12h, 2d) or an ISO time.")
@report_options
@workspace_option
@home_option
def external(repo, since, jq_expr, table, as_json, table_fmt):
    """What changed outside the agent: branch, modified files, commits since the last session.

    Outside a git repository: a note on stderr and no git part (exit 0); a --repo DIR that
    is not in a repository is an error (exit 1). Remote URLs never show credentials.

    \b
    Examples:
      ctx external --repo .
      ctx external --since 12h --json | jq '.git.commits_since | length'
    """
    home = get_home()
    if since == "last-session":
        when = last_session_time(home)
    else:
        try:
            when = parse_since(since)
        except ValueError as e:
            raise UsageProblem(f"--since: {e}") from None
    ch = git_changes(repo or ".", when)
    if not ch.get("repo"):
        if repo:
            raise CtxError(ch.get("note") or f"{repo} is not in a git repository")
        note(f"ctx: {ch.get('note') or 'not in a git repository'}: no git changes")
    files = modified_files(get_workspace(), when)
    emit_object({"since": when.isoformat() if when else None, "git": ch, "workspace_files": files},
                as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt,
                human=lambda: [click.echo(line) for line in summary_lines(ch, files)])
