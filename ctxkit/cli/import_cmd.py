"""ctx import: any supported agent transcript -> ctx records."""
from __future__ import annotations

import click

from ..io.jsonl import Writer
from ..services.spool import OutputSpool
from .common import InputRecords, home_option, input_options


@click.command("import")
@input_options
@click.option("--keep-meta", is_flag=True,
              help="Keep progress, file-history and other bookkeeping lines as event records.")
@click.option("--stream", is_flag=True,
              help="Write each record as soon as it is read (for a transcript still being written, "
                   "`tail -f … | ctx import --stream`). Without it, nothing is written until the whole input "
                   "has been read: a bad line N fails the import before its first byte.")
@home_option
def import_cmd(file, from_, skip_invalid, keep_meta, stream):
    """Convert an agent transcript to ctx records (JSONL on stdout).

    Reads Claude Code, Codex, GitHub Copilot CLI, Gemini CLI, opencode
    (an export or opencode.db), OpenHands, Cline, OpenAI messages (JSON or
    JSONL), SWE-agent .traj, tau-bench and aider chat history; --from auto
    sniffs the format and says so when it cannot tell. Source ids and
    timestamps are kept; every tool call is paired with its result, and an
    assistant turn with tool calls and all its results share one `group`.
    Text the agent's client added (reminders, environment context,
    AGENTS.md) is kept and flagged: it is never taken for a request. A
    half-written last line of a transcript still being written is skipped
    with a note on stderr.

    \b
    Examples:
      ctx import ~/.claude/projects/x/abc.jsonl > s.jsonl
      ctx import ~/.gemini/tmp/proj/chats/session-x.jsonl | ctx count
      ctx import ~/.local/share/opencode/opencode.db > opencode.jsonl
      ctx import run.traj --from swe-agent | ctx count
      cat messages.json | ctx import - | jq -c 'select(.role=="tool")'
    """
    records = InputRecords(file, from_, skip_invalid, keep_meta=keep_meta)
    if stream:
        Writer().write_all(records)
        return
    with OutputSpool() as out:  # a bad line N fails the import before its first byte
        Writer(out).write_all(records)
