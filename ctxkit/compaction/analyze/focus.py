"""Where the work stands at the cut, and the one next step, derived from the state in a fixed order:

1. the user's latest request, when the agent has not acted on it yet;
2. a question the agent put to the user and that is not answered: the answer;
3. a check still running: its result;
4. a failing check on the changed code (its failing tests and errors);
5. what the agent said it was looking into, when its last action was that look (then the checks);
6. code changed since the project's checks last ran: run them;
7. what the work item or plan step in progress still lacks;
8. the project's own finish for uncommitted work (commit only where the project commits or the user asked);
9. the next open work item or plan step;
10. nothing left: the work is done.
"""
from __future__ import annotations

import re

from ..model import (NEXT_ANSWER, NEXT_CONTINUE, NEXT_DONE, NEXT_FINISH, NEXT_FIX, NEXT_ITEM, NEXT_ITEM_REST,
                     NEXT_PLAN, NEXT_REQUEST, NEXT_RUN, NEXT_RUNNING, Answer, Command, Current, Event, NextStep,
                     Question, Read, Request, Said, Search, State)
from .prose import intent, is_final, last_words, report, sentences
from .requests import is_follow_up
from .checks import failing, latest_by_kind
from .environment import plain
from ..registry import entries

ASKS_COMMIT = re.compile(r"\bcommit\b|\bpush\b|\bopen (?:a |the )?(?:draft )?(?:pr|pull request)\b", re.I)


def current(evs: list, steps: list, uncommitted: list) -> Current:
    last: Event | None = None
    last_said, said_at = "", -1
    for e in evs:
        if isinstance(e, Said):
            last_said, said_at = e.text, e.at
        elif not isinstance(e, (Request, Answer)):
            last = e
    running = []
    done_cmds: set[str] = set()
    for e in reversed(evs):
        if isinstance(e, Command):
            if e.running and e.command not in done_cmds:
                running.append(e.command)
            done_cmds.add(e.command)
    unseen: list[str] = []
    blind = {e.at for e in evs if isinstance(e, Command) and e.no_result}
    for e in reversed(evs):     # the commands at the end whose results never came (with what was read from them)
        if isinstance(e, (Said, Request, Answer)):
            continue
        if e.at not in blind:
            break
        if isinstance(e, Command) and e.no_result:
            unseen.insert(0, e.command)
    waiting = ""
    tail = [e for e in evs if not isinstance(e, Said) or e.at > (last.at if last else -1)]
    q = next((e for e in reversed(evs) if isinstance(e, (Question, Request, Answer))), None)
    if isinstance(q, Question):
        waiting = q.text
    elif last_said and last_said.rstrip().endswith("?") and (last is None or said_at > last.at) and \
            not any(isinstance(e, (Request, Answer)) and e.at > said_at for e in tail):
        waiting = sentences(last_said)[-1] if sentences(last_said) else last_said[-300:]
    return Current(step=len(steps) - 1, uncommitted=tuple(uncommitted), last=last, last_said=last_said,
                   found=found_by(evs, last),
                   words=tuple(report(last_said, 4)) if last_said else (), said_at=said_at,
                   intention=last_words(last_said),
                   said_before_last=bool(last is not None and said_at >= 0 and said_at <= last.at), running=tuple(running),
                   unseen=tuple(dict.fromkeys(unseen)),
                   waiting=waiting)


def found_by(evs: list, last) -> str:
    """What the last searches found, when the last action is a search: the files and lines of the
    trailing searches of the same pattern ("" when they listed nothing the reader can use)."""
    if not isinstance(last, Search):
        return ""
    run = [e for e in evs if isinstance(e, Search) and e.pattern == last.pattern and e.at <= last.at]
    files: list[str] = []
    lines: list[str] = []
    for e in run[-3:]:
        files += [h for h in e.hits if h not in files]
        lines += [m for m in e.matches if m not in lines]
    if last.empty and not files and not lines:
        return "nothing"
    out = []
    if files:
        out.append(("only in " if len(files) == 1 else "in ") + ", ".join(f"`{f}`" for f in files[:4]) +
                   (f" and {len(files) - 4} more" if len(files) > 4 else ""))
    if lines:
        shown = [m if len(m) <= 120 else m[:117].rstrip() + "…" for m in lines[:2]]
        out.append("; ".join(f"`{m}`" for m in shown if m.count("`") == 0) or f"{len(lines)} matching lines")
    return ": ".join(out) if len(out) == 2 else (out[0] if out else "")


def next_step_placeholder() -> NextStep:
    return NextStep(NEXT_DONE)


def next_step(st: State) -> NextStep:
    reqs = st.requests
    latest = reqs[-1] if reqs else None
    if latest is not None and not latest.acted:
        return NextStep(NEXT_REQUEST, target=latest.text)
    if st.current.waiting:
        return NextStep(NEXT_ANSWER, target=st.current.waiting)
    if st.current.running:
        return NextStep(NEXT_RUNNING, target=st.current.running[0])
    if st.current.unseen:
        # the span ends on commands whose results were never recorded: what they did is the first thing to learn
        said = intent(st.current.last_said) if st.current.said_before_last else ""
        return NextStep(NEXT_RUNNING, target=st.current.unseen[0], title="unseen",
                        detail=st.current.unseen[1:3] + ((said,) if said else ()))
    changed = bool(st.current.uncommitted) or any(f.commit == "" for f in st.files)
    for c in reversed(failing(list(st.checks))):
        detail = tuple(dict.fromkeys(c.failures))[:6] + tuple(c.errors[:3])
        if not detail and c.summary:
            detail = (c.summary,)
        if c.edited_after:   # changed since it failed: run it again before fixing anything more
            return NextStep(NEXT_RUN, target=plain(c.command), detail=tuple(c.edited_after[:4]), title="failed",
                            )
        return NextStep(NEXT_FIX, target=c.command, detail=detail, title=c.kind)
    stale = [c for c in latest_by_kind(list(st.checks)).values() if c.edited_after and c.kind != "format"]
    cmds = tuple(dict.fromkeys(plain(c.command) for c in sorted(stale, key=lambda c: c.at)))
    stated = intent(st.current.last_said) if st.current.said_before_last else ""
    if stated and isinstance(st.current.last, (Read, Search)):
        # mid-edit: the agent said what it was looking into and looked; that comes before running the checks
        return NextStep(NEXT_CONTINUE, target=stated, detail=cmds if changed else ())
    if stale and changed:
        return NextStep(NEXT_RUN, target=cmds[0], detail=cmds[1:] + tuple(stale[0].edited_after[:4]))
    parents = {i.parent for i in st.items if i.parent}
    item = next((i for i in reversed(st.items) if i.status == "in_progress" and i.item not in parents), None)
    if item is not None:
        rest = _item_rest(st, item)
        return NextStep(NEXT_ITEM_REST, target=item.item, title=item.title, detail=rest)
    doing = next((t for t, s in st.plan if s == "in_progress"), None)
    if doing is not None:
        return NextStep(NEXT_PLAN, target=doing)
    asked_commit = any(ASKS_COMMIT.search(r.text) for r in reqs)
    if st.current.uncommitted and latest is not None and latest.acted and len(reqs) > 1 and \
            not is_follow_up(latest.text) and not ASKS_COMMIT.search(latest.text) and \
            latest.at > max(f.last_at for f in st.current.uncommitted):
        # the user asked for something else after the last change, and the agent is on it: that goes on
        # first ("clean up and delete the untracked files" is not "commit them")
        return NextStep(NEXT_REQUEST, target=latest.text, title="started")
    if st.current.uncommitted and (st.env.commits or asked_commit):
        return NextStep(NEXT_FINISH, target=", ".join(f.path for f in st.current.uncommitted[:6]),
                        detail=st.env.finish or st.env.check_commands[:2])
    pending_item = next((i for i in st.items if i.status == "open" and i.item not in parents), None)
    pending_plan = next((t for t, s in st.plan if s == "pending"), None)
    if pending_plan is not None:
        return NextStep(NEXT_PLAN, target=pending_plan)
    if pending_item is not None and not _filing(st):
        return NextStep(NEXT_ITEM, target=pending_item.item, title=pending_item.title)
    final = not st.current.said_before_last and is_final(st.current.last_said)
    stated = intent(st.current.last_said) if not st.current.said_before_last and not final else ""
    if stated:
        return NextStep(NEXT_CONTINUE, target=stated)
    return NextStep(NEXT_DONE, target=latest.text if latest else "")


def _filing(st: State) -> bool:
    """The session's work was to file items in a project's tracker (an epic and its tasks), not to do them:
    every item it knows it created there, and it claimed or closed none. Starting one is the user's call."""
    shared = {getattr(t, "name", "") for t in entries("trackers")}
    asks_work = any(WORK_ON.search(r.text) and not NOT_YET.search(r.text) for r in st.requests[-3:])
    return bool(st.items) and all(i.filed and i.tracker in shared and i.claimed_at < 0 and i.closed_at < 0
                                  for i in st.items) and not asks_work


# a request that asks for the work itself too, not only for items that describe it ("…, then start on the first")
WORK_ON = re.compile(r"\b(?:then|and)\s+(?:\w+\s+){0,2}(?:fix|implement|start|work on|tackle|resolve|do)\b|"
                     r"\b(?:get going|start working|begin work)", re.I)
NOT_YET = re.compile(r"\b(?:don'?t|do not|not yet|no need to|wait before|before you)\b.{0,40}"
                     r"\b(?:start|fix|implement|work|do)", re.I)


def _item_rest(st: State, item) -> tuple[str, ...]:
    """What the item in progress still lacks: the files its description names that no change touched since
    it was claimed, and the open steps of the agent's plan."""
    since = item.claimed_at if item.claimed_at >= 0 else item.first_at
    touched = {f.path for f in st.files if f.last_at >= since}
    missing = tuple(p for p in item.files if not any(t == p or t.endswith("/" + p) or p.endswith("/" + t) for t in touched))
    return missing[:6] + tuple(t for t, s in st.plan if s != "completed")[:6]
