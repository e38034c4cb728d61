"""Check state: for each check (a kind run by one runner), its latest run, its history, and the code
changed after it. A check's state is its last run after the last edit of what it covers: a run
before a later code edit is reported as not run since."""
from __future__ import annotations

from ..model import CheckRun, CheckState
from .changes import Changes


def key(run: CheckRun) -> tuple[str, str]:
    return run.kind, run.runner


def states(evs: list, changes: Changes) -> list[CheckState]:
    """One state per check, ordered by its latest run. A last run whose result is not visible (still
    running, cut by a filter with no result line) stands, unless nothing changed since the run before it
    that had a result: then that one speaks."""
    runs: dict[tuple, list[CheckRun]] = {}
    for e in evs:
        if isinstance(e, CheckRun):
            runs.setdefault(key(e), []).append(e)
    out = []
    for k, rs in runs.items():
        shown = rs[-1]
        if shown.passed is None:
            known = [r for r in rs if r.passed is not None]
            if known and not [p for p in changes.edited_after(known[-1].at) if _changed_before(changes, p, shown.at)]:
                shown = known[-1]
        out.append(CheckState(kind=k[0], runner=k[1], command=shown.command, passed=shown.passed, at=shown.at,
                              runs=len(rs), history=tuple(r.passed for r in rs), failures=shown.failures,
                              errors=shown.errors, summary=shown.summary, truncated=shown.truncated,
                              script=next((r.script for r in reversed(rs) if r.script), ""),
                              edited_after=tuple(changes.edited_after(shown.at))))
    out.sort(key=lambda c: c.at)
    latest = {c.kind: c for c in out}
    # a check superseded by a later run of its kind is history: only the latest of a kind can be stale
    return [c if latest[c.kind] is c else CheckState(**{**c.__dict__, "edited_after": ()}) for c in out]


def _changed_before(changes: Changes, path: str, at: int) -> bool:
    return any(p == path and e.at < at for e, p in changes.events)


def latest_by_kind(checks: list[CheckState]) -> dict[str, CheckState]:
    """The most recent check of each kind."""
    out: dict[str, CheckState] = {}
    for c in sorted(checks, key=lambda c: c.at):
        out[c.kind] = c
    return out


BROAD = ("", ".", "./...", "...", "all", "test", "tests", "lint", "check", "typecheck", "build")


def clears(later: CheckState, failed: CheckState) -> bool:
    """A later passing run that answers for an earlier failing one: the same check, or one of the same kind
    over at least as much (the whole project, or a command naming what the failing one ran)."""
    if not later.passed or later.at <= failed.at or later.kind != failed.kind:
        return False
    if later.runner == failed.runner:
        return True
    scope = later.command.split()
    return any(w in BROAD for w in scope[-1:]) or all(w in later.command for w in failed.command.split()[1:3])


def failing(checks: list[CheckState]) -> list[CheckState]:
    """Checks whose latest run failed and that no later passing run clears."""
    return [c for c in checks if c.passed is False and not any(clears(o, c) for o in checks)]
