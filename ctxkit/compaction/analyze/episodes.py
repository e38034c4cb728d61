"""The session as steps: a step starts when a work item is claimed, a plan step starts, or the user asks
for something new, and ends with its commit or the next start. Each step carries what it changed,
its checks, its errors, its commits and the choices the agent made in it."""
from __future__ import annotations

import re
from dataclasses import replace

from ..model import (CheckRun, Commit, Decision, ErrorState, Item, Plan, Read, Request, Said, Search, Step,
                     ToolError)
from .errors import NOT_THERE
from ...core.hygiene import near_duplicate
from .prose import decisions as said_decisions, findings as said_findings, report
from .changes import Changes
from .checks import states as check_states
from .requests import is_follow_up


def _plan_starts(evs: list) -> dict[int, str]:
    """Event index -> the plan step that went in progress there."""
    out: dict[int, str] = {}
    prev: dict[str, str] = {}
    for k, e in enumerate(evs):
        if isinstance(e, Plan):
            for text, status in e.steps:
                if status == "in_progress" and prev.get(text) != "in_progress":
                    out[k] = text
            prev = dict(e.steps)
    return out


def _plan_done(evs: list) -> set[str]:
    done: set[str] = set()
    for e in evs:
        if isinstance(e, Plan):
            done = {t for t, s in e.steps if s == "completed"}
    return done


def steps(evs: list, changes: Changes, errors: list[ErrorState], titles: dict[str, str],
          said_tests: dict[str, int] | None = None) -> list[Step]:
    """`titles`: item id -> title (from the items' states)."""
    plan_starts = _plan_starts(evs)
    plan_done = _plan_done(evs)
    read_at: dict[str, int] = {}        # path -> the last record it was read whole or in part at
    for e in evs:
        if isinstance(e, Read) and e.path and e.text:
            read_at[e.path] = e.at
    raw: list[dict] = []
    cur: dict | None = None

    def open_(title: str, source: str, k: int, item: str = "") -> None:
        nonlocal cur
        close(k)
        cur = {"title": title, "source": source, "start": k, "item": item, "done": False}

    def close(k: int) -> None:
        nonlocal cur
        if cur is not None and k > cur["start"]:
            cur["end"] = k
            raw.append(cur)
        cur = None

    for k, e in enumerate(evs):
        if isinstance(e, Item) and e.action == "claim":
            open_(titles.get(e.item) or e.title or e.item, "item", k, e.item)
        elif isinstance(e, Item) and e.action == "close" and cur is not None and cur["item"] == e.item:
            cur["done"] = True      # the step goes on to its commit, or to the next start
        elif k in plan_starts and not (cur and cur["source"] == "item" and not cur["done"]):
            open_(plan_starts[k], "plan", k)
        elif isinstance(e, Request) and not is_follow_up(e.text) and not (cur and cur["source"] == "item" and not cur["done"]):
            open_(e.text, "request", k)
        elif isinstance(e, Commit) and e.ok:
            if cur is None:
                cur = {"title": e.message.split("\n", 1)[0], "source": "commit", "start": k, "item": "", "done": False}
            cur["done"] = True
            close(k + 1)
        elif cur is None and not isinstance(e, (Said,)):
            cur = {"title": "", "source": "work", "start": k, "item": "", "done": False}
    close(len(evs))

    out: list[Step] = []
    for s in raw:
        seg = evs[s["start"]:s["end"]]
        if not seg:
            continue
        start_at = seg[0].at
        end_at = evs[s["end"]].at if s["end"] < len(evs) else None
        files = tuple(replace(f, tests_said=said_tests[f.path]) if said_tests and f.tests and f.path in said_tests
                      else f for f in changes.files(start_at, end_at))     # what the agent said it added, where it differs
        runs = [e for e in seg if isinstance(e, CheckRun)]
        commits = tuple(e for e in seg if isinstance(e, Commit) and e.ok)
        if s["source"] == "plan" and s["title"] in plan_done:
            s["done"] = True
        if s["source"] == "request" and s["end"] < len(evs) and isinstance(seg[-1], Said) and not seg[-1].before_action:
            s["done"] = True    # answered: the agent's last word before the next request was a reply
        reads = tuple(dict.fromkeys(changes.paths.rel(e.path) for e in seg if isinstance(e, Read) and e.path))
        searches = tuple(dict.fromkeys((e.pattern, changes.paths.rel(e.path)) for e in seg if isinstance(e, Search)))
        tool_errors = tuple(dict.fromkeys((e.tool, changes.paths.rel(e.target), e.text) for e in seg
                                          if isinstance(e, ToolError) and not _absent(e)
                                          and read_at.get(e.target, -1) < e.at))    # read after all: no failure left
        missing = tuple(dict.fromkeys((changes.paths.rel(e.target), e.text, _instead(e, seg, changes.paths))
                                      for e in seg if isinstance(e, ToolError) and _absent(e)))   # a look that found nothing
        decisions, found = [], []
        for e in seg:
            if isinstance(e, Said):
                decisions += [Decision(text=t, why=w, at=e.at) for t, w in said_decisions(e.text)]
                found += [x for x in said_findings(e.text) if x not in found]
        step_errors = tuple(x for x in errors if x.at >= start_at and (end_at is None or x.at < end_at))
        causes = [x.cause for x in step_errors if x.cause]
        found = [x for x in found if not any(x[:120] in c or c[:120] in x for c in causes)]   # told with the error
        said = next((e.text for e in reversed(seg) if isinstance(e, Said) and not e.before_action), "")
        closing = [e.text for k, e in enumerate(seg[:-1]) if isinstance(e, Said) and not e.before_action
                   and isinstance(seg[k + 1], Request) and e.text != said]   # a report a follow-up request came after
        points = list(dict.fromkeys(x for t in closing + [said] if t for x in report(t, 20)))
        title = s["title"] or (commits[0].message.split("\n", 1)[0] if commits else "")
        out.append(Step(title=title, source=s["source"] if title else "work", start=start_at,
                        end=end_at if end_at is not None else seg[-1].at + 1, item=s["item"], files=files,
                        checks=tuple(check_states(runs, changes)) if runs else (), errors=step_errors,
                        commits=commits, decisions=tuple(decisions[:4]), reads=reads, searches=searches[:20],
                        tool_errors=tool_errors[:8], missing=missing[:8], done=s["done"],
                        report=tuple(x for x in points if not _restates(x, files))[-20:],
                        findings=tuple(found[:6])))
    return _merge_empty(out)


def _absent(e: ToolError) -> bool:
    """A tool told that the path it was pointed at is not there (not an edit whose text did not match)."""
    return bool(e.target) and bool(NOT_THERE.search(e.text)) and not re.search(r"string|replace|match", e.text, re.I)


def _merge_empty(steps: list[Step]) -> list[Step]:
    """A step with no change, check or commit (reading, a question answered) folds into the next step, or
    stays when it is the last or carries a request of its own."""
    out: list[Step] = []
    carry: Step | None = None
    for s in steps:
        busy = s.files or s.checks or s.commits or s.errors
        if carry is not None:
            s = Step(**{**s.__dict__, "start": carry.start, "reads": tuple(dict.fromkeys(carry.reads + s.reads)),
                        "searches": carry.searches + s.searches, "tool_errors": carry.tool_errors + s.tool_errors,
                        "missing": carry.missing + s.missing,
                        "decisions": carry.decisions + s.decisions, "findings": carry.findings + s.findings,
                        "title": s.title or carry.title, "source": s.source if s.title else carry.source})
            carry = None
        if not busy and s.source in ("work",):
            carry = s
            continue
        out.append(s)
    if carry is not None and (carry.reads or carry.decisions or carry.searches or carry.tool_errors or carry.findings):
        out.append(carry)
    return out


def _restates(point: str, files) -> bool:
    """A point of the agent's account that says no more than what the step's edits already tell (its words
    within what an edit was for, the names it added or changed, the lines it brought in)."""
    body = point.split(": ", 1)[1] if ": " in point[:62] else point     # past the heading that names its kind
    told = " ".join(" ".join(f.intents + f.added + f.changed + f.lines_in) + " " +
                    " ".join(n for _, n in f.replaced) for f in files)
    return bool(told) and near_duplicate(body, told, 0.85)


def _instead(e, seg, paths) -> str:
    """The file in the same folder with the same name but for its extension that a later look in the step
    found (`.golangci.yaml` for a missing `.golangci.yml`), or ""."""
    folder, _, name = paths.rel(e.target).rstrip("/").rpartition("/")
    stem = name.rsplit(".", 1)[0]
    if len(stem) < 2:
        return ""
    for x in seg:
        if x.at > e.at and isinstance(x, (Search, Read)):
            for hit in (x.hits if isinstance(x, Search) else (x.path,)):
                where, _, other = paths.rel(hit).rstrip("/").rpartition("/")
                if where == folder and other != name and other.rsplit(".", 1)[0] == stem:
                    return paths.rel(hit)
    return ""
