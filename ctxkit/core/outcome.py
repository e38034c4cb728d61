"""Has the session finished? Its terminal state, read from the shape of its last records (pure).

A successor told to "continue" a finished session redoes finished work: submits a patch again,
transfers a customer again, re-reads what a report already answered. The end states this knows:

- a patch submitted (SWE-agent's `submit`, with nothing edited after it);
- a customer handed over (a `transfer_to_human_agents` call that succeeded) or a dialogue the
  user ended (tau-bench's `###STOP###` / `###TRANSFER###`);
- a read-only session (nothing edited) that ended on the agent's report: the answer was given;
- an epic whose work items are all closed, with everything committed and pushed (items filed
  for follow-up stay open and are not started).

`detect` gives the lines for Current work (what the end state is, with its evidence) and Next step.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from .kinds import _calls, _command, _failed, _text  # one reading of calls and results
from .requests import END_MARKER, brief, request_text

TRANSFER = re.compile(r"^transfer_to_(?:human|agent|live)\w*$", re.I)
DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)
REPORT_MIN_CHARS = 600     # an ending message shorter than this is a remark, not a report
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "edit", "create", "str_replace_editor",
              "insert", "write_file", "replace"}


@dataclass
class Outcome:
    kind: str                                        # submitted | transferred | ended | reported | epic_done
    current: list = field(default_factory=list)     # lines for Current work
    next_step: list = field(default_factory=list)   # lines for Next step


def _missing(r: dict | None) -> bool:
    return r is None or "missing_result" in (r.get("flags") or ())


def _is_submit(name: str, args: dict) -> bool:
    return name == "submit" or _command(args).split("\n", 1)[0].strip() == "submit"


def _is_edit(name: str, args: dict) -> bool:
    return name in EDIT_TOOLS or bool(re.match(r"^(?:edit|create|insert)\b", _command(args)))


def detect(span: Sequence[dict], story=None) -> Outcome | None:
    """The session's end state, or None when it is not finished (or not in a way this knows)."""
    span = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    calls = _calls(span)
    for rule in (_transferred, _submitted, _ended):
        o = rule(span, calls)
        if o is not None:
            return o
    if story is not None:
        o = _epic_done(story, calls)
        if o is not None:
            return o
    return _reported(span, calls)


def _after(span: Sequence[dict], i: int) -> list[dict]:
    """The conversation after record `i`: later tool calls, or later requests of the user."""
    return [r for r in span[i + 1:] if r.get("tool_calls") or request_text(r)]


def _transferred(span, calls) -> Outcome | None:
    for i, name, args, res in reversed(calls):
        if not TRANSFER.match(name):
            continue
        if _failed(res) or _after(span, i):
            return None
        said = brief(_text(res), 80) if not _missing(res) else "no result recorded"
        why = args.get("summary") if isinstance(args.get("summary"), str) else ""
        cur = [f"Finished: the customer was handed over to a human agent (`{name}`: {said})."]
        if why:
            cur.append(f"Hand-over note the agent wrote: {brief(why, 200)}")
        return Outcome("transferred", cur, ["Nothing: the conversation was transferred to a human agent and is over; "
                                            "do not act on the reservation or transfer again."])
    return None


def _submitted(span, calls) -> Outcome | None:
    for k in range(len(calls) - 1, -1, -1):
        i, name, args, res = calls[k]
        if not _is_submit(name, args):
            continue
        if any(_is_edit(n, a) for _, n, a, _ in calls[k + 1:]):
            return None  # edited after the submission: the work went on
        files = DIFF_FILE.findall(_text(res))
        cur = []
        if files:
            plus = len(re.findall(r"(?m)^\+(?!\+\+)", _text(res)))
            minus = len(re.findall(r"(?m)^-(?!--)", _text(res)))
            cur.append(f"Finished: the patch was submitted (`submit`); its diff changes " +
                       ", ".join(f"`{f}`" for f in files[:6]) + f" (+{plus} −{minus} lines).")
        elif _missing(res):
            cur.append("Finished: the patch was submitted (`submit` was the last action; its result was not recorded).")
        else:
            cur.append("Finished: the patch was submitted (`submit`).")
        check = _last_run_before(calls[:k])
        if check:
            cur.append(check)
        nxt = ["Nothing: the fix is submitted and the task is over. SWE-agent does not commit; "
               "do not edit or submit again unless the submission is reported as failed."]
        return Outcome("submitted", cur, nxt)
    return None


def _last_run_before(calls) -> str:
    """The last command run after the last edit, with its output's first line: the verification."""
    last_edit = max((k for k, (_, n, a, _) in enumerate(calls) if _is_edit(n, a)), default=-1)
    for _, name, args, res in reversed(calls[last_edit + 1:]):
        cmd = _command(args)
        if not cmd or name in ("submit",) or re.match(r"^(?:rm|ls|cd|find_file|search_\w+|open|goto|scroll_\w+)\b", cmd):
            continue
        out = next((ln.strip() for ln in _text(res).splitlines() if ln.strip() and not ln.startswith("(")), "")
        state = "failed" if _failed(res) else "ran"
        return (f"Verified after the last edit: `{brief(cmd, 80)}` {state}" +
                (f", printing `{brief(out, 100)}`." if out else "."))
    if last_edit >= 0:
        return "Not run after the last edit: no test or reproduction script."
    return ""


def _ended(span, calls) -> Outcome | None:
    """The user ended the dialogue with an end marker (tau-bench's `###STOP###`)."""
    last_user = next((r for r in reversed(span) if r.get("role") == "user" and "observation" not in (r.get("flags") or ())),
                     None)
    if last_user is None or not END_MARKER.search(_text(last_user)):
        return None
    idx = span.index(last_user)
    if any(r.get("tool_calls") for r in span[idx + 1:]):
        return None
    return Outcome("ended", ["Finished: the user ended the conversation."],
                   ["Nothing: the conversation is over; wait for a new request."])


def _last_status(calls) -> list[str] | None:
    """The files the session's last `git status` showed changed (none: clean), or None without one."""
    for _, name, args, res in reversed(calls):
        if re.search(r"\bgit status\b", _command(args)) and not _missing(res):
            text = _text(res)
            return re.findall(r"(?m)^\s*(?:modified|deleted|new file):\s+(\S+)", text) + \
                re.findall(r"(?m)^\s*[ MADRU?]{1,2}\s+(\S+)$", text if "--short" in _command(args) or
                           "-s" in _command(args).split() else "")
    return None


def _epic_done(story, calls=()) -> Outcome | None:
    parent = story.parent
    if not parent or story.item_status.get(parent) != "closed":
        return None
    eps = story.episodes
    last_commit = max((k for k, e in enumerate(eps) if e.commits), default=-1)
    if last_commit < 0 or any(e.files for e in eps[last_commit + 1:]):
        return None  # changed since the last commit: not finished
    if not any(e.pushed for e in eps[last_commit:]):
        return None
    children = [i for i, _ in story.listed]
    closed = [i for i in children if story.item_status.get(i) == "closed" or dict(story.listed).get(i)]
    filed = {i for e in eps for i, _ in e.created}
    left = [i for i in children if i not in closed]
    t = story.titles.get(parent)
    cur = [f"Finished: epic `{parent}`" + (f" — {brief(t, 90)}" if t else "") +
           f" is complete ({len(closed)} of its {len(children)} items done), committed and pushed."]
    dirty = _last_status(calls) or []
    if dirty:
        cur.append("The last `git status` still showed changed, not committed: " +
                   ", ".join(f"`{p}`" for p in dirty[:6]) + (" …" if len(dirty) > 6 else "") + ".")
    nxt = []
    if left:
        named = ", ".join(f"`{i}`" + (f" ({brief(story.titles[i], 80)})" if story.titles.get(i) else "") for i in left)
        how = "filed for follow-up" if all(i in filed for i in left) else "still open"
        cur.append(f"{named} {'was' if len(left) == 1 else 'were'} {how}, not started.")
        nxt.append(f"Nothing of `{parent}` is left. {named} {'is' if len(left) == 1 else 'are'} {how}, not part of "
                   f"the request: wait for the user before starting {'it' if len(left) == 1 else 'them'}.")
    else:
        nxt.append(f"Nothing of `{parent}` is left: wait for the user's next request.")
    return Outcome("epic_done", cur, nxt)


def _reported(span, calls) -> Outcome | None:
    """A session that changed nothing and ended on the agent's report (an exploration subagent, a
    question answered): the report is the deliverable."""
    if not calls or any(_is_edit(n, a) for _, n, a, _ in calls):
        return None
    last = next((r for r in reversed(span) if r.get("role") in ("assistant", "user", "tool")), None)
    if last is None or last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    text = _text(last)
    if len(text) < REPORT_MIN_CHARS or text.rstrip().endswith("?"):
        return None
    heads = re.findall(r"(?m)^#{1,4}\s+(.+)$", text)
    cur = ["Finished: the agent delivered its report (the last message; nothing was changed)" +
           (f", in {len(heads)} sections" if len(heads) > 1 else "") + "."]
    return Outcome("reported", cur, ["Nothing: the report answers the request; the caller reads it. Do not explore again."])


def unfinished_call(span: Sequence[dict]) -> str | None:
    """The session's last tool call when it has no recorded result (the session stopped while it
    ran): whether it took effect is unknown. Its command or name, else None."""
    span = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    calls = _calls(span)
    if not calls:
        return None
    i, name, args, res = calls[-1]
    if not _missing(res) or _is_submit(name, args) or TRANSFER.match(name):
        return None
    if any(r.get("role") == "assistant" and _text(r).strip() for r in span[i + 1:]):
        return None  # the agent went on talking: it saw the call end
    cmd = _command(args)
    return brief(" ".join(cmd.split()), 160) if cmd else name


def dirty_after_commit(span: Sequence[dict]) -> list[str]:
    """The files the last `git status` showed changed when it ran after the span's last commit
    (a status before the commit is stale); [] without one."""
    span = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    calls = _calls(span)
    last_commit = max((k for k, (_, _, a, _) in enumerate(calls) if re.search(r"\bgit\s+commit\b", _command(a))),
                      default=-1)
    return _last_status(calls[last_commit + 1:]) or []
