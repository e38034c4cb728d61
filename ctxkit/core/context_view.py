"""The condensed view of CONTEXT.md that goes into a system prompt (pure).

The file on disk keeps everything; a prompt gets at most `budget` tokens (seed 000: about
500): Now (focus, blocked), the Task, the latest request, where the work stands and what comes
next, active goals, pending steps, unresolved errors, recent
decisions, constraints and pinned facts, and the most recently written files. Whole bullets
only, the most vital first.
"""
from __future__ import annotations

from typing import Callable

from .context_md import Context, Item
from .requests import brief

# (section, how many of its newest items at most, newest first?)
# Now (Focus, Task, Blocked) leads, as in the design's CONTEXT.md, then where the work stands and
# what comes next; Recent (outcomes of the last sessions, newest first as written) follows the decisions.
PLAN = (("Now", 4, False), ("Current work", 6, False), ("Next step", 3, False), ("Pinned", 10, False),
        ("Constraints", 6, False), ("Goals", 6, False), ("Pending", 6, False), ("Errors", 4, True),
        ("Decisions", 4, True), ("Recent", 5, False), ("Progress", 3, True), ("Files", 10, True),
        ("Facts", 4, True), ("Key entities", 12, False), ("External", 3, False))


def _keep(name: str, it: Item) -> bool:
    if name == "Errors":
        return "— resolved" not in it.text and not it.text.endswith("resolved later")
    if name == "Pending":
        return it.done is not True  # (completed goals stay until they age out: core.context_md.aged_out)
    if name == "Files":
        return not it.text.endswith(("— read", "— searched"))
    return True


def condensed(ctx: Context, budget: int, count: Callable[[str], int], lead: tuple = ()) -> str:
    """The view within `budget` tokens. `lead`: sections that come first, after Task and the latest
    request (a previous session's Now and Recent, for a new session that only needs where it stood)."""
    lines: list[str] = []
    used = 0

    def put(text: str) -> bool:
        nonlocal used
        n = count(text + "\n")
        if used + n > budget:
            return False
        lines.append(text)
        used += n
        return True

    if ctx.task:
        put(f"## Task\n{brief(ctx.task, 300)}")
    if ctx.latest:
        put(f"## Latest request\n{brief(ctx.latest, 200)}")
    plan = [p for n in lead for p in PLAN if p[0] == n] + [p for p in PLAN if p[0] not in lead]
    for name, cap, newest_first in plan:
        items = [i for i in ctx.sections.get(name, []) if _keep(name, i)]
        if newest_first:
            items = list(reversed(items))
        items = items[:cap]
        if not items:
            continue
        if not put(f"## {name}"):
            break
        added = 0
        for it in items:
            if put(it.render()):
                added += 1
        if not added:
            lines.pop()
    return "\n".join(lines).strip()
