"""A tool call as a dialect sees it: the agent's tool name and arguments with its result (no logic)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Call:
    at: int                         # index of the assistant record that made the call
    name: str                       # the tool's name as the agent wrote it
    args: object                    # the arguments: a dict when they were a JSON object, else the raw text
    result: str | None = None       # the tool's answer (None: no result recorded)
    error: bool = False             # the transcript flags the result as an error
    id: str = ""
    ts: str | None = None
    result_at: int = -1             # index of the result record
    meta: dict = field(default_factory=dict, compare=False, hash=False)   # the call record's meta (read only)
    text: str = ""                  # the assistant text that came with the call
    running: bool = False           # the client says the command had not ended when it answered


@dataclass(frozen=True)
class Segment:
    """One simple command of a shell line, as tool entries see it."""
    argv: tuple[str, ...]           # the words, with leading `VAR=x`, `sudo`, `time`, `timeout N` … removed
    text: str                       # the segment as written
    index: int = 0                  # its position in the line
    count: int = 1                  # how many simple commands the line has
    op_before: str = ""             # the operator before it: && || ; | (or "")
    op_after: str = ""
    piped_to: tuple[str, ...] = ()  # the programs its output is piped into (tail, head, grep, tee …)
    heredoc: str = ""               # the body of a here-document it reads
    redirect: str = ""              # the file its output is written to (> or >>), when one
    append: bool = False
    cwd: str = ""                   # the directory it ran in, where a `cd` before it says


@dataclass(frozen=True)
class Verdict:
    """What a runner's own output says about a run."""
    passed: bool | None
    counts: tuple[tuple[str, int], ...] = ()
    failures: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    summary: str = ""
    kind: str = ""                  # the kind of check whose markers these are (test, lint, …)
    runner: str = ""


# what a reader, a lister or a tool says of a path that is not there (coreutils, PowerShell, cmd, the agents' tools)
NOT_THERE_WORDS = r"No such file or directory|Cannot find path|does not exist|cannot find the (?:file|path)"
