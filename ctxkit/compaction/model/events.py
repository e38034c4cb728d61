"""What the agent did, as typed events (frozen dataclasses, no logic).

`extract` turns records into these once; nothing downstream reads a raw record or a tool name.
Every event carries `at`, the index of the record it came from in the list `extract` was given,
so a claim can be traced back, and `ts` where the record has one.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Event:
    at: int
    ts: str | None = field(default=None, kw_only=True)


# -- the user ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Request(Event):
    """Something the user asked for, in their words (a typed message, a queued one, a slash command's
    arguments). `command` is the slash command or skill it came through."""
    text: str
    queued: bool = False
    command: str | None = None


@dataclass(frozen=True)
class Interrupt(Event):
    """The user stopped the agent mid-turn."""


@dataclass(frozen=True)
class Answer(Event):
    """The user's answer to a question the agent asked (an AskUserQuestion reply, a bare yes/no)."""
    text: str


@dataclass(frozen=True)
class Rejected(Event):
    """A tool call the user (or a permission rule) refused: it did not run."""
    tool: str
    reason: str = ""


# -- the agent's words ------------------------------------------------------------------------

@dataclass(frozen=True)
class Said(Event):
    """Assistant prose (never thinking). `before_action` is true when a tool call followed it in
    the same turn."""
    text: str
    before_action: bool = False


@dataclass(frozen=True)
class Question(Event):
    """A question the agent put to the user."""
    text: str


# -- files ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Read(Event):
    path: str
    text: str = ""          # what the read returned (line-numbered listings keep their numbers)
    offset: int = 0         # first line shown, where the tool says


@dataclass(frozen=True)
class Search(Event):
    """A grep, a glob, a listing, a find. `hits` are the paths it returned, where it lists paths."""
    pattern: str
    path: str = ""
    hits: tuple[str, ...] = ()
    kind: str = "grep"      # grep | glob | list | find
    matches: tuple[str, ...] = ()   # the matching lines it showed (`174: def handle_event(…)`), where it shows lines
    empty: bool = False     # it found nothing


CREATE, MODIFY, DELETE, MOVE = "create", "modify", "delete", "move"


@dataclass(frozen=True)
class Change(Event):
    """A file the agent created, modified, deleted or moved. `old`/`new` are the replaced and
    replacing text of an edit (the whole content for a write); `ok` is false when the tool refused it."""
    path: str
    action: str             # create | modify | delete | move
    old: str = ""
    new: str = ""
    ok: bool = True
    via: str = "edit"       # edit | write | patch | shell
    to: str = ""            # a move's destination
    note: str = ""          # what the agent said with the call (its own account of the change)


# -- commands and what they were --------------------------------------------------------------

@dataclass(frozen=True)
class Command(Event):
    """A shell command as the agent ran it. `exit` is its status where the transcript has it;
    `failed` is the generic verdict (status, the tool's error flag, an error in the output)."""
    command: str
    output: str = ""
    exit: int | None = None
    failed: bool = False
    error_lines: tuple[str, ...] = ()
    cwd: str = ""
    background: bool = False
    running: bool = False   # still running when the record was written (a background shell)
    no_result: bool = False  # the transcript holds no result for it (cut off, lost): how it went is not known


TEST, LINT, TYPECHECK, BUILD, FORMAT = "test", "lint", "typecheck", "build", "format"


@dataclass(frozen=True)
class CheckRun(Event):
    """A test run, a lint, a type check, a build. `passed` is read from the runner's own output and
    the exit status (None: the result is not visible, e.g. cut by `| tail` with no summary line).
    `failures` names failing tests or files, `errors` holds the key error lines."""
    command: str
    kind: str               # test | lint | typecheck | build | format
    runner: str             # pytest, go test, mise run test, …
    passed: bool | None = None
    counts: tuple[tuple[str, int], ...] = ()
    failures: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    scope: str = ""
    truncated: bool = False
    summary: str = ""       # the runner's own result line (`FAIL pkg 0.598s`, `1309 pass, 0 fail`)
    script: str = ""        # what a task runner ran for it, as the runner echoed it (`biome check --error-on-warnings`)


@dataclass(frozen=True)
class Commit(Event):
    message: str
    hash: str = ""
    files: tuple[str, ...] = ()
    all_changes: bool = False   # `git commit -a`, `git add -A && git commit`: every change so far
    ok: bool = True
    amend: bool = False
    count: int = 0              # "N files changed", where the output says


@dataclass(frozen=True)
class Stage(Event):
    """Files added to the git index (`git add`); `all` for `git add -A` / `git add .`."""
    paths: tuple[str, ...] = ()
    all: bool = False
    force: bool = False     # `git add -f`: the paths are ignored by git


@dataclass(frozen=True)
class TreeStatus(Event):
    """What `git status` showed: the paths with changes (staged, unstaged or untracked; a directory ends in
    `/`), within `scope` (the pathspecs it was given; empty: the whole tree). A file changed before it and
    not among `changed` holds no change any more (committed or undone, seen or not)."""
    changed: tuple[str, ...] = ()
    scope: tuple[str, ...] = ()
    where: str = ""         # the directory it ran in, where a `cd` before it or the client says
    branch: str = ""        # the branch it said the tree is on


@dataclass(frozen=True)
class Push(Event):
    remote: str = ""
    branch: str = ""
    ok: bool = True


@dataclass(frozen=True)
class Branch(Event):
    name: str
    created: bool = False


@dataclass(frozen=True)
class Install(Event):
    manager: str
    packages: tuple[str, ...] = ()
    ok: bool = True


@dataclass(frozen=True)
class PullRequest(Event):
    action: str             # create | update | merge | view | checks
    number: str = ""
    title: str = ""
    url: str = ""
    ok: bool = True


# -- work items and plans ---------------------------------------------------------------------

@dataclass(frozen=True)
class Item(Event):
    """A work item's transition in a tracker (beads, GitHub issues, the agent's task list)."""
    tracker: str
    item: str               # its id
    action: str             # create | claim | close | update | show | reopen
    title: str = ""
    status: str = ""
    detail: str = ""        # a description, a reason, what `show` printed


@dataclass(frozen=True)
class Plan(Event):
    """The agent's plan or todo list as it stood after this call: (text, status) pairs, status one
    of pending, in_progress, completed."""
    steps: tuple[tuple[str, str], ...]
    source: str = "todo"


@dataclass(frozen=True)
class PlanApproved(Event):
    """A plan the agent presented for approval (ExitPlanMode and the like); `approved` when the user
    accepted it."""
    text: str
    approved: bool = True


# -- everything else --------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolError(Event):
    """A tool call that failed and is none of the above (a refused read, a failed fetch)."""
    tool: str
    text: str
    target: str = ""


@dataclass(frozen=True)
class Delegate(Event):
    """Work handed to a subagent; `result` is what it answered."""
    agent: str
    description: str
    prompt: str = ""
    result: str = ""


@dataclass(frozen=True)
class Fetch(Event):
    url: str
    text: str = ""
    ok: bool = True


@dataclass(frozen=True)
class WebSearch(Event):
    query: str
    text: str = ""


@dataclass(frozen=True)
class Skill(Event):
    """A skill, slash command or instruction file the work runs under."""
    name: str
    text: str = ""


@dataclass(frozen=True)
class Action(Event):
    """A domain tool call with no file or shell meaning (book a flight, query an API): name,
    arguments and result, as the tool gave them."""
    name: str
    args: str = ""
    result: str = ""
    ok: bool = True


@dataclass(frozen=True)
class Submit(Event):
    """The work was handed in (a patch submitted, an answer given, a completion attempted)."""
    text: str = ""


@dataclass(frozen=True)
class Transfer(Event):
    """The conversation was handed to a person."""
    reason: str = ""


@dataclass(frozen=True)
class Place(Event):
    """Where the work happens, from the transcript's own metadata."""
    cwd: str = ""
    branch: str = ""
    model: str = ""


@dataclass(frozen=True)
class Summary(Event):
    """A compaction summary already in the stream (ctx's own or the agent's)."""
    text: str
    by: str = "ctx"
