"""The next step and what comes after it, in words."""
from __future__ import annotations

import re

from ..model import (NEXT_ANSWER, NEXT_CONTINUE, NEXT_DONE, NEXT_FINISH, NEXT_FIX, NEXT_ITEM, NEXT_ITEM_REST,
                     NEXT_PLAN, NEXT_REQUEST, NEXT_RUN, NEXT_RUNNING, State)
from .phrases import bare_commands, code, command, cut, joined, names, quote, sentence
from .facts import in_progress, item_name, same_file
from .task import plan_parts


def next_text(st: State) -> str:
    n = st.next
    if n.kind == NEXT_REQUEST and n.title == "started":
        latest = "the latest request above" if st.requests and n.target == st.requests[-1].text and \
            len(st.requests) > 1 else quote(n.target, 300)
        return f"Carry on with what the user asked last ({latest}); the agent has started on it (the last action above)."
    if n.kind == NEXT_REQUEST:
        seen = already(st)     # a request on what exists: first, what the code does about it now
        if st.requests and len(st.requests) > 1 and n.target == st.requests[-1].text:
            return "Do what the user asked last (the latest request above); the agent has not started on it." + seen
        return f"Do what the user asked last; the agent has not started on it: {quote(n.target, 500)}" + seen
    if n.kind == NEXT_ANSWER:
        return f"The user has not answered the agent's question yet ({quote(n.target, 240)}): go on as they answer."
    if n.kind == NEXT_RUNNING and n.title == "unseen":
        cmds = [n.target] + [d for d in n.detail if d in st.current.unseen]
        said = [d for d in n.detail if d not in st.current.unseen]
        asked = "the latest request above" if len(st.requests) > 1 else "the task above"
        then = f"go on as the agent said it would: {quote(said[0], 240)}" if said else f"finish what was asked ({asked})"
        what = names([command(c, 120).strip("`") for c in cmds], 3)
        return (f"Check what {what} did: the session ends before {'their results were' if len(cmds) > 1 else 'its result was'} "
                f"recorded, so whether {'they' if len(cmds) > 1 else 'it'} worked is not known; then {then}.")
    if n.kind == NEXT_RUNNING:
        return f"Read the result of {command(n.target)}, which was still running, and act on it."
    if n.kind == NEXT_FIX:
        check = next((c for c in reversed(st.checks) if c.command == n.target), None)
        kind = {"test": "failing tests", "lint": "lint errors", "typecheck": "type errors", "build": "build errors",
                "format": "formatting"}.get(n.title, "failures")
        if check is not None and not check.failures and check.truncated and check.passed is False:
            return (f"Find and fix the {kind}: {command(n.target)} ended in {code(cut(check.summary or 'a failure', 140))}, "
                    f"but its output was cut by a filter before the failing ones; run it again without the filter to "
                    f"see them, fix them, and run it until it passes.")
        what = names([d for d in n.detail], 6) if n.detail else "the failures"
        return f"Fix the {kind} of {command(n.target)} ({what}), then run it again until it passes."
    if n.kind == NEXT_RUN and n.title == "failed":
        check = next((c for c in reversed(st.checks) if c.command.split(" | ")[0] == n.target), None)
        what = f" ({names(list(dict.fromkeys(check.failures)), 4)})" if check is not None and check.failures else ""
        return (f"Run {command(n.target)} again: it failed{what} and the code changed after it "
                f"({names(n.detail, 4)}); fix what still fails.")
    if n.kind == NEXT_RUN:
        cmds = [n.target] + [d for d in n.detail if " " in d and not d.startswith(("cmd/", "src/"))][:2]
        files = [d for d in n.detail if d not in cmds]
        cmds = bare_commands(cmds, least=3)     # a run over a long list of files: the check, not the list
        return (f"Run {names(cmds, 3)} again: code changed since {'they' if len(cmds) > 1 else 'it'} last ran"
                + (f" ({names(files, 4)})" if files else "") + ".")
    if n.kind == NEXT_ITEM_REST:
        it = next((i for i in st.items if i.item == n.target), None)
        label = item_name(it) if it else n.target
        rest = f" What is left of its plan: {names(n.detail, 6)}." if n.detail else ""
        return f"Finish {label}, in progress.{rest}"
    if n.kind == NEXT_PLAN:
        return f"Carry on with the plan step {quote(n.target, 240)}."
    if n.kind == NEXT_FINISH:
        how = f"run {names(bare_commands(n.detail, least=3), 3)}, then " if n.detail else ""
        return f"Finish the uncommitted work ({n.target}) as this project does: {how}commit it."
    if n.kind == NEXT_ITEM:
        it = next((i for i in st.items if i.item == n.target), None)
        return f"Start the next open work item: {item_name(it) if it else n.target}."
    if n.kind == NEXT_CONTINUE:
        then = f"; then run {names(bare_commands(n.detail, least=3), 3)} again: code changed since they last ran" \
            if n.detail else ""
        if st.current.found:    # the look it announced is done: what it found is the Last action's
            item = in_progress(st)
            goal = _criterion(n.target, item.done_when) if item is not None else ""
            why = f" ({item.item} is done when: {quote(goal, 200)})" if goal else ""
            return f"Act on what the agent's last search found ({cut(st.current.found, 200)}), as it set out to: " \
                   f"{quote(n.target, 300)}{why}{then}."
        return f"Go on as the agent said it would: {quote(n.target, 300)}{then}."
    if st.outcome == "submitted":
        return "Nothing: the work was submitted."
    if st.outcome == "transferred":
        return "Nothing for the agent: the conversation is with a human agent now."
    return "The work asked for is done: wait for the user's next request."


def then_text(st: State) -> str:
    """The open work after the next step: finishing the item in progress the way the earlier ones were
    finished, then the next open item or plan step."""
    n = st.next
    if n.kind in (NEXT_ITEM, NEXT_PLAN, NEXT_ANSWER, NEXT_DONE, NEXT_REQUEST) or \
            n.kind == NEXT_CONTINUE and in_progress(st) is None:
        return ""
    parts = []
    current = in_progress(st)
    if current is not None and n.kind in (NEXT_FIX, NEXT_RUN, NEXT_RUNNING, NEXT_CONTINUE):
        missing = [p for p in current.files if not any(same_file(f.path, p) for f in st.files)]
        if missing:
            parts.append(f"finish {current.item}: write or change the files it names that no edit touched yet "
                         f"({names(missing, 4)})")
    if current is not None and n.kind in (NEXT_FIX, NEXT_RUN, NEXT_RUNNING, NEXT_ITEM_REST, NEXT_CONTINUE):
        how = []
        if st.env.closes_items:
            how.append(f"close {current.item}")
        if st.env.commits:
            forced = [p for p in st.env.forced if any(f.path == p for f in st.current.uncommitted)]
            how.append("commit" + (f" (stage {names(forced, 2)} with `git add -f`: git ignores it)" if forced else ""))
        if st.env.pushes:
            how.append("push")
        if how:
            parts.append(f"{joined(how)} as the earlier items were")
    elif n.kind in (NEXT_FIX, NEXT_RUN) and st.current.uncommitted and st.env.commits:
        parts.append("commit the work, as the project does")
    parents = {i.parent for i in st.items if i.parent}
    nxt = next((i for i in st.items if i.status == "open" and i.item not in parents), None)
    parent = next((i for i in st.items if current is not None and i.item == current.parent and i.status != "closed"), None)
    if parent is not None and nxt is None and st.env.closes_items and \
            not any(i.parent == parent.item and i.status != "closed" and i is not current for i in st.items):
        parts.append(f"close {parent.item}: {current.item} is the last of its open parts")    # the parent's own close
    if nxt is not None and (n.kind != NEXT_ITEM_REST or nxt.item != n.target):
        how = ""
        if nxt.summary or nxt.detail:
            steps = plan_parts(nxt.detail)
            how = f" ({names(steps, 3)})" if steps else f" ({cut(nxt.summary or nxt.detail, 160)})"
        parts.append(f"the next open item, {item_name(nxt)}{how}")
    else:
        step = next((t for t, s in st.plan if s == "pending"), None)
        if step and n.kind != NEXT_PLAN:
            parts.append(f"the next plan step, {quote(step, 200)}")
    return sentence("; then ".join(parts)) if parts else ""


def _criterion(said: str, criteria) -> str:
    """The item's criterion the agent's words are about: one that names what they name in backticks
    (`terminal_scrolled`), or shares two of their longer words."""
    named = set(re.findall(r"`([^`]+)`", said))
    words = {w.lower() for w in re.findall(r"[A-Za-z_]{6,}", said)}
    for c in criteria:
        theirs = {w.lower() for w in re.findall(r"[A-Za-z_]{6,}", c)}
        if named & set(re.findall(r"`([^`]+)`", c)) or len(words & theirs) >= 2:
            return c
    return ""


def already_parts(st: State) -> tuple[str, str]:
    """What the code the session saw already does about the pending request: (from a comment and the calls
    under it: "`consolidateColocatedFiles` runs in `executeRemediation` (“2.5. …”)", from the calls: "`a`, `b`
    reach `p`, `q` through `helper`"), each "" where the session saw none."""
    note = next((f"{names(list(calls), 2)} {'runs' if len(calls) == 1 else 'run'} in {code(w)} ({quote(n, 120)})"
                 for p, w, n, calls in st.related_notes if calls and w), "")
    reach = next((f"{names(list(callees), 3)} {'reaches' if len(callees) == 1 else 'reach'} {names(list(by), 4)} "
                  f"through {code(c)}" for c, p, callees, by in st.related_calls if by), "")
    return note, reach


def already(st: State) -> str:
    """The next step's word on what the code already does about the pending request: check that first."""
    said = [x for x in already_parts(st) if x]
    if said:
        return f" The code already does part of it: {'; '.join(said)}. See what that covers before changing anything."
    if st.related_notes or st.related_calls:
        return " Code the session already saw deals with it (below): see what that covers before changing anything."
    return ""
