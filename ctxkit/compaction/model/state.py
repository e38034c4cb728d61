"""Where the work stands, derived once from the events (frozen dataclasses, no logic).

`analyze` builds a `State`; `render` states only what it holds. Nothing here is a sentence meant
for a reader except text quoted from the records (requests, the agent's words, error lines).
"""
from __future__ import annotations

from dataclasses import dataclass

from .events import Commit, Event

CREATED, MODIFIED, DELETED, MOVED = "created", "modified", "deleted", "moved"


@dataclass(frozen=True)
class Definition:
    """A named definition in code (function, class, type, module…) at a line where known."""
    name: str
    kind: str = ""
    line: int = 0
    end: int = 0                        # its last line, where a parser says (0: unknown)


@dataclass(frozen=True)
class FileChange:
    """A file's net change over a stretch of work."""
    path: str
    action: str                         # created | modified | deleted | moved
    added: tuple[str, ...] = ()         # definitions the change added
    changed: tuple[str, ...] = ()       # definitions whose body it edited
    removed: tuple[str, ...] = ()       # definitions it removed
    replaced: tuple[tuple[str, str], ...] = ()   # short one-line edits: (old, new)
    lines: int = 0                      # a created file's length
    edits: int = 0
    first_at: int = 0
    last_at: int = 0
    commit: str = ""                    # the commit that holds it ("" while not committed)
    committed_at: int = -1
    moved_to: str = ""
    names: tuple[str, ...] = ()         # identifiers its edits brought in (where no definition changed)
    lines_out: tuple[str, ...] = ()     # short lines its edits removed (where nothing else says what changed)
    lines_in: tuple[str, ...] = ()      # … and added
    intents: tuple[str, ...] = ()       # what the agent said each edit was for, in its words
    tests: tuple[str, ...] = ()         # test cases the changes added
    tests_said: int = 0                 # how many the agent later said it added, where that differs (0: no claim)
    docs: tuple[tuple[str, str], ...] = ()   # (definition, the first sentence of its doc comment)
    params: tuple[tuple[str, str], ...] = ()   # (added function, its parameters as its signature writes them)
    constants: tuple[tuple[str, str], ...] = ()   # (name, literal value) of the constants it sets
    moved_from: str = ""
    code: tuple[tuple[str, str], ...] = ()   # (definition, its short body on one line) of what it added or rewrote
    imports: tuple[str, ...] = ()       # the modules an edit brought into a file that was there before
    members: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()   # (type, members gained, lost)
    frame: str = ""                     # the module its changed definitions sit in, where an edit named it
    revised: tuple[str, ...] = ()       # a created file's definitions that later edits changed
    revised_why: str = ""               # … what the agent said the first of those edits was for
    undone: bool = False                # created and then deleted within the stretch
    messages: tuple[str, ...] = ()      # what its new code sends and takes ("broadcasts `{:done, id}` on `"jobs"`")
    brought: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (changed function, names its edits brought into it)
    outline: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()   # (new or changed function, what its own
                                        # comments say it does, the string values it works with)
    gone: tuple[str, ...] = ()          # functions its edits took out of use (no longer called or imported)


@dataclass(frozen=True)
class CheckState:
    """The latest run of one check (a kind run by one runner/command), and whether code changed after it."""
    kind: str
    runner: str
    command: str
    passed: bool | None
    at: int
    runs: int = 1
    history: tuple[bool | None, ...] = ()
    failures: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    summary: str = ""
    script: str = ""                    # what the task runner ran for it (`biome check --error-on-warnings`)
    truncated: bool = False
    edited_after: tuple[str, ...] = ()  # files changed after this run


@dataclass(frozen=True)
class ErrorState:
    """A distinct failure: its key line, where it came from, and whether a later run cleared it."""
    text: str
    source: str                         # the command or tool that failed
    at: int
    kind: str = ""                      # the check kind when it came from a check
    fixed_at: int = -1                  # the passing run that cleared it (-1: still open)
    fix_files: tuple[str, ...] = ()     # files changed between the failure and the fix
    fix_deleted: bool = False           # every one of them was deleted (the fix removed them)
    probe: bool = False                 # a look for something that is not there (`cat x`: no such file): an answer
    cause: str = ""                     # the agent's words on why, when it said
    fix: str = ""                       # the agent's words on the fix, when it said
    repeats: int = 1
    fix_change: str = ""                # the file the error names and what the first change to it after did
    fix_how: tuple[tuple[str, str], ...] = ()   # … that change's short replacements
    silenced: str = ""                  # the line that silenced the check instead (`//nolint:unparam`, `# noqa`)
    fixed_by: str = ""                  # the command that rewrote the code by itself (`bun run lint:fix`, `cargo fmt`)


@dataclass(frozen=True)
class ItemState:
    """A work item as its tracker's transitions left it."""
    tracker: str
    item: str
    title: str = ""
    status: str = "open"                # open | in_progress | closed
    detail: str = ""                    # its description as the tracker gave it
    summary: str = ""                   # … its first paragraph
    files: tuple[str, ...] = ()         # files its description names
    parent: str = ""                    # the item it is part of (an epic)
    done_when: tuple[str, ...] = ()     # its definition of done / acceptance criteria, as written
    closed_how: str = ""                # the reason it was closed with (what was done), as written
    first_at: int = 0
    claimed_at: int = -1
    closed_at: int = -1
    filed: bool = False                 # the session created it


@dataclass(frozen=True)
class RequestState:
    text: str
    at: int
    queued: bool = False
    command: str = ""
    acted: bool = True                  # the agent acted on it (a tool call, or an answer) after it
    work: int = 0                       # tool events between it and the next request


@dataclass(frozen=True)
class Decision:
    text: str                           # the agent's words (a choice it made)
    why: str = ""
    at: int = 0


@dataclass(frozen=True)
class Step:
    """A stretch of the work: one work item, plan step, or request, up to its commit or the next."""
    title: str
    source: str                         # item | plan | request | explore | commit
    start: int
    end: int
    item: str = ""
    files: tuple[FileChange, ...] = ()
    checks: tuple[CheckState, ...] = ()
    errors: tuple[ErrorState, ...] = ()
    commits: tuple[Commit, ...] = ()
    decisions: tuple[Decision, ...] = ()
    reads: tuple[str, ...] = ()
    searches: tuple[tuple[str, str], ...] = ()   # (pattern, where) of its searches
    tool_errors: tuple[tuple[str, str, str], ...] = ()   # (tool, target, what it said) of calls that failed
    missing: tuple[tuple[str, str, str], ...] = ()   # (path, what the tool said, the like-named file found
                                        # instead or "") a read or search was told is not there
    done: bool = False                  # its item closed, its plan step completed, or it ended in a commit
    report: tuple[str, ...] = ()        # the agent's own account at its end: its statements that stand alone
    findings: tuple[str, ...] = ()      # what the agent found out on the way: how the code works, why it failed


@dataclass(frozen=True)
class Environment:
    cwd: str = ""
    branch: str = ""
    model: str = ""
    languages: tuple[str, ...] = ()
    check_commands: tuple[str, ...] = ()    # the commands the project checks with, most used first
    finish: tuple[str, ...] = ()            # what the agent ran before each commit (the project's finish)
    commits: bool = False                   # the project commits (a commit ran in the records)
    closes_items: bool = False              # a finished work item was closed in its tracker before its commit
    forced: tuple[str, ...] = ()            # paths staged with `git add -f` (ignored by git)
    pushes: bool = False                    # the agent pushed after committing
    lacks: tuple[str, ...] = ()             # programs the shell does not have (a command failed for want of them)
    ran_in: str = ""                        # the directory the client last ran a command in (Codex's `workdir`)


NEXT_REQUEST, NEXT_FIX, NEXT_RUN, NEXT_ITEM_REST, NEXT_FINISH, NEXT_ITEM, NEXT_PLAN, NEXT_ANSWER, NEXT_RUNNING, \
    NEXT_DONE, NEXT_CONTINUE = ("request", "fix", "run", "item_rest", "finish", "next_item", "plan", "answer",
                                "running", "done", "continue")


@dataclass(frozen=True)
class NextStep:
    """One next step and what it rests on. `kind` is one of the NEXT_* names above."""
    kind: str
    target: str = ""                    # the request, the check command, the item id, the plan step
    detail: tuple[str, ...] = ()        # failing tests, error lines, files, the commands of the finish
    title: str = ""


@dataclass(frozen=True)
class Current:
    """What was in hand at the cut."""
    step: int = -1                      # index into State.steps (-1: none)
    uncommitted: tuple[FileChange, ...] = ()
    last: Event | None = None           # the last action
    last_said: str = ""                 # the agent's last words
    words: tuple[str, ...] = ()         # … the statements in them that stand alone
    said_at: int = -1                   # … the record they are in
    intention: str = ""                 # … their last sentences (what relevance scoring scores against)
    said_before_last: bool = False      # those words came before its last action
    running: tuple[str, ...] = ()       # commands still running in the background
    waiting: str = ""                   # a question put to the user and not answered
    found: str = ""                     # what the last searches (of one pattern) found, when the last action is one
    left_alike: tuple[tuple[str, str, str, str, int], ...] = ()   # (path, inserted line, the line it follows, the
                                        # line that marks the like place it was not repeated at, how many such places)
    others: tuple[str, ...] = ()        # what the last `git status` listed as changed that no change of the session made
    unseen: tuple[str, ...] = ()        # the commands the span ends on whose results were never recorded
    tree_clean: bool = False            # a `git status` showed files the session changed no longer changed


@dataclass(frozen=True)
class State:
    kind: str                           # code | explore | research | dialogue | chat | empty
    task: str
    task_at: int
    requests: tuple[RequestState, ...]
    steps: tuple[Step, ...]
    items: tuple[ItemState, ...]
    plan: tuple[tuple[str, str], ...]
    files: tuple[FileChange, ...]
    reads: tuple[str, ...]
    checks: tuple[CheckState, ...]
    errors: tuple[ErrorState, ...]
    commits: tuple[Commit, ...]
    decisions: tuple[Decision, ...]
    constraints: tuple[str, ...]
    env: Environment
    current: Current
    next: NextStep
    outcome: str = ""                   # submitted | transferred | delivered | pr | "" (still working)
    outcome_text: str = ""
    plan_text: str = ""                 # an approved plan's text
    plan_at: int = -1                   # … and where the user approved it
    plan_path: str = ""                 # … and the file the agent wrote it to, when it did
    findings: tuple[tuple[str, str], ...] = ()   # (where, what) an exploration found
    actions: tuple[tuple[str, str, bool, str], ...] = ()   # domain actions: (name, args, ok, result)
    sources: tuple[tuple[str, str], ...] = ()    # (url or query, what it said) of research
    related: tuple[tuple[str, str], ...] = ()    # (name, where) the session knows that the latest request names
    related_said: tuple[tuple[int, str], ...] = ()   # (at, the agent's sentence) about what the latest request names
    related_notes: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()   # (path, definition, comment, the calls
                                                                            # it heads) of code comments naming it
    related_calls: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = ()   # (caller, path, callees,
                                        # what calls it) among those
    raw_from: int = -1                  # records from this index on follow the summary as they were (-1: none)
