"""Work items as their trackers' transitions left them (create, claim, close, reopen), and the agent's
plan or todo list as it last stood."""
from __future__ import annotations

import re

from ..model import Change, Item, ItemState, Plan, PlanApproved


def states(evs: list, task: str = "") -> list[ItemState]:
    """Work items; items only seen in a listing are kept when they belong with the work (a sibling or child
    of an item the session moved, or of one its task names)."""
    acc: dict[tuple, dict] = {}
    listed_only: set[tuple] = set()
    for e in evs:
        if not isinstance(e, Item) or not e.item:
            continue
        k = (e.tracker, e.item)
        if e.action == "list":
            if k not in acc:
                listed_only.add(k)
                acc[k] = {"tracker": e.tracker, "item": e.item, "title": e.title, "status": e.status or "open",
                          "detail": "", "first_at": e.at, "claimed_at": -1, "closed_at": -1}
            elif k in listed_only and e.status:
                acc[k]["status"] = e.status
            continue
        listed_only.discard(k)
        a = acc.setdefault(k, {"tracker": e.tracker, "item": e.item, "title": "", "status": "open", "detail": "",
                               "first_at": e.at, "claimed_at": -1, "closed_at": -1})
        if e.title:
            a["title"] = e.title
        if e.detail and e.action in ("create", "show") and (not a["detail"] or e.action == "create"):
            a["detail"] = e.detail
        if e.action == "create":
            a["filed"] = True
        if e.action == "claim":
            a["status"], a["claimed_at"] = "in_progress", e.at
        elif e.action == "close":
            a["status"], a["closed_at"] = "closed", e.at
            a["closed_how"] = e.detail or a.get("closed_how", "")    # the reason it was closed with: what was done
        elif e.action == "reopen":
            a["status"], a["closed_at"], a["closed_how"] = "open", -1, ""
        elif e.action == "show" and e.status:
            st = {"in_progress": "in_progress", "closed": "closed", "open": "open"}.get(e.status)
            if st and a["claimed_at"] < 0 and a["closed_at"] < 0:
                a["status"] = st
    ids = {a["item"] for a in acc.values()}
    moved = {i for (t, i) in acc if (t, i) not in listed_only}
    roots = {_root(i) for i in moved} | {_root(i) for i in ids if task and re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", task)}
    out = []
    for k, a in acc.items():
        if k in listed_only and _root(a["item"]) not in roots:
            continue
        parent = next((p for p in ids if p != a["item"] and a["item"].startswith(p + ".")), "")
        out.append(ItemState(**a, summary=_summary(a["detail"]), files=_files(a["detail"]), parent=parent,
                             done_when=_done_when(a["detail"])))
    return out


DONE_HEAD = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?(definition of done|acceptance criteria|acceptance|done when|"
                       r"requirements|verification|tests?|testing)(?:\*\*)?\s*:?\s*$", re.I)
BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)]|- \[[ x]\])\s+(.+)$")


def _done_when(detail: str) -> tuple[str, ...]:
    """The bullets under the description's definition of done, acceptance criteria or test requirements."""
    out: list[str] = []
    lines = (detail or "").splitlines()
    for k, ln in enumerate(lines):
        if DONE_HEAD.match(ln):
            for nxt in lines[k + 1:k + 15]:
                m = BULLET.match(nxt)
                if m:
                    out.append(" ".join(m.group(1).split()))
                elif nxt.strip() and not nxt.startswith((" ", "\t")):
                    break
    return tuple(dict.fromkeys(out))[:8]


def _root(item: str) -> str:
    return item.split(".", 1)[0]


PATH = re.compile(r"`([\w.~-]*/[\w./~-]*\.\w{1,6})`")


def _summary(detail: str) -> str:
    """The description's first paragraph that is prose (not a heading, a list or a label)."""
    for para in re.split(r"\n\s*\n", detail or ""):
        text = " ".join(para.split())
        if text and not text.startswith(("#", "-", "*", "|", "```")) and not text.endswith(":"):
            return text
    return ""


def _files(detail: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m for m in PATH.findall(detail or "") if "/" in m and "://" not in m))[:20]


def plan(evs: list) -> tuple[tuple[str, str], ...]:
    """The latest plan snapshot (text, status)."""
    last = None
    for e in evs:
        if isinstance(e, Plan):
            last = e
    return last.steps if last else ()


def approved_plan(evs: list) -> tuple[str, int, str]:
    """The last plan the user approved, where, and the file it was written to: (text, at, path); ("", -1, "")
    when none was. An approval that carries no text approves the markdown file the agent wrote last before
    it (its plan file); one that carries the text that file holds names the file too."""
    text, at, path, written, wrote = "", -1, "", "", ""
    for e in evs:
        if isinstance(e, Change) and e.ok and e.new and (e.path or "").lower().endswith((".md", ".markdown")):
            if e.via == "write":
                written, wrote = e.new, e.path
        elif isinstance(e, PlanApproved) and e.approved and (e.text or written):
            text, at = e.text or written, e.at
            path = wrote if not e.text or " ".join(e.text.split())[:200] == " ".join(written.split())[:200] else ""
    return text, at, path
