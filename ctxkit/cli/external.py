"""ctx external: git changes and outside edits since the last session."""
from __future__ import annotations


import click

from ..core.timeutil import parse_since, parse_ts
from ..errors import UsageProblem
from ..sources.external import git_changes, modified_files, summary_lines
from ..store import sessions
from .common import emit_object, get_home, get_workspace, home_option, jq_option, workspace_option


def last_session_time(home):
    idx = sessions.load(home)
    times = [parse_ts(e.get("last_activity")) for e in idx.values() if e.get("last_activity")]
    return max(times) if times else None


@click.command("external")
@click.option("--repo", default=".", show_default=True, metavar="DIR", type=click.Path(file_okay=False), help="The git repository to look at.")
@click.option("--since", default="last-session", show_default=True, metavar="WHEN",
              help="last-session, a duration (12h, 2d) or an ISO time.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@jq_option
@workspace_option
@home_option
def external(repo, since, as_json, jq_expr):
    """What changed outside the agent: branch, modified files, commits since the last session.

    Not a git repository: a note, exit 0, an empty result. Remote URLs never show credentials.

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
    ch = git_changes(repo, when)
    files = modified_files(get_workspace(), when)
    emit_object({"since": when.isoformat() if when else None, "git": ch, "workspace_files": files},
                as_json=as_json, jq_expr=jq_expr,
                human=lambda: [click.echo(line) for line in summary_lines(ch, files)])
