"""Write seed 001's template from distilled facts, filling a token budget (pure).

The budget is a target to fill, not only a cap: sections take turns adding their next-best
bullet until nothing more fits, so sections share the budget by what the span actually has.
Whole bullets only; a bullet that does not fit is skipped, never cut. The Task and the latest
request always come first. Files are written compactly: paths relative to the session's
working directory, grouped by folder, the most-touched first, each with its last action.
"""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import Callable

from .context_md import Context, Item
from .distill import Distilled, Fact
from .hygiene import gate
from .requests import brief

Count = Callable[[str], int]

# (section, bullets added per round): Files are cheap and vital, so they move faster
RATES = (("Errors", 1), ("Pending", 2), ("Progress", 1), ("Decisions", 1), ("Constraints", 1),
         ("Files", 4), ("Facts", 2), ("Key entities", 3))
TASK_CAP = 600
LATEST_CAP = 400


def rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def file_bullets(files: "OrderedDict[str, tuple[str, int]]", cwd: str | None) -> list[Item]:
    """Written files before read ones, grouped by folder (the busiest folder first), the
    most-touched file first in each folder."""
    by_dir: "OrderedDict[str, list[tuple[str, str, int, int]]]" = OrderedDict()
    for order, (path, (action, n)) in enumerate(files.items()):
        p = rel(path, cwd)
        by_dir.setdefault(os.path.dirname(p), []).append((p, action, n, order))

    def dir_key(kv):
        items = kv[1]
        written = sum(1 for _, a, _, _ in items if a != "read")
        return (-written, -sum(n for _, _, n, _ in items), -max(o for *_, o in items))

    out = []
    for _, items in sorted(by_dir.items(), key=dir_key):
        for p, action, n, _ in sorted(items, key=lambda t: (t[1] == "read", -t[2], -t[3])):
            out.append(Item(text=f"`{p}` — {action}"))
    return out


def _facts_items(facts: list[Fact], cap: int = 260) -> list[Item]:
    kept, _ = gate([brief(f.text, cap) for f in facts])
    return [Item(text=t) for t in kept]


def candidates(d: Distilled) -> "OrderedDict[str, list[Item]]":
    """Every bullet the facts support, best first within each section."""
    c: "OrderedDict[str, list[Item]]" = OrderedDict()
    open_errs = [e for e in d.errors if e.status != "resolved"]
    done_errs = [e for e in d.errors if e.status == "resolved"]
    errs = []
    for e in list(reversed(open_errs)) + list(reversed(done_errs)):
        src = f" (from {e.source})" if e.source else ""
        tail = " — resolved" if e.status == "resolved" else ""
        errs.append(Item(text=brief(e.text, 220) + src + tail))
    c["Errors"] = errs
    c["Pending"] = [Item(text=brief(f.text, 200) + (" (in progress)" if f.status == "in_progress" else ""),
                         done=False) for f in d.plan]
    c["Progress"] = [Item(text=brief(f.text, 200)) for f in reversed(d.progress)]
    c["Decisions"] = _facts_items(d.decisions)
    c["Constraints"] = _facts_items(d.constraints, 200)
    c["Files"] = file_bullets(d.files, d.cwd)
    facts = _facts_items(d.findings)
    # no fact repeats a decision
    facts = [f for f in facts if not any(f.text == x.text for x in c["Decisions"])]
    c["Facts"] = facts
    c["Key entities"] = [Item(text=f"`{e.text}`") for e in d.entities]
    return c


def write(d: Distilled, budget: int, count: Count) -> Context:
    """The template filled from `d` within `budget` tokens (as counted by `count`)."""
    ctx = Context()
    # on a small budget the request texts give way: about a quarter of it, 4 characters a token
    task_cap = max(160, min(TASK_CAP, budget))
    ctx.task = brief(d.task, task_cap) if d.task else ""
    if d.latest and brief(d.latest, task_cap) != ctx.task and not ctx.task.startswith(d.latest):
        ctx.latest = brief(d.latest, max(120, min(LATEST_CAP, budget // 2)))
    if not ctx.task:
        ctx.task = "(no user request found in this span)"
    used = count(f"## Task\n{ctx.task}\n") + (count(f"## Latest request\n{ctx.latest}\n") if ctx.latest else 0)
    cands = candidates(d)
    pos = {name: 0 for name in cands}
    chosen: dict[str, list[Item]] = {name: [] for name in cands}
    progress = True
    while progress:
        progress = False
        for name, rate in RATES:
            items = cands.get(name) or []
            added = 0
            while added < rate and pos[name] < len(items):
                it = items[pos[name]]
                pos[name] += 1
                cost = count(it.render() + "\n") + (0 if chosen[name] else count(f"## {name}\n\n"))
                if used + cost > budget:
                    continue  # a smaller bullet further down may still fit
                chosen[name].append(it)
                used += cost
                added += 1
                progress = True
    for name, items in chosen.items():
        if not items:
            continue
        if name == "Files":
            order = {i.text: k for k, i in enumerate(cands[name])}
            items = sorted(items, key=lambda i: order[i.text])
        ctx.sections[name] = items
    missing = [n for n in ("Errors", "Files", "Decisions") if not cands.get(n)]
    if missing and budget - used > 40:
        ctx.sections.setdefault("Notes", []).append(
            Item(text="Not found in this span: " + ", ".join(m.lower() for m in missing) + "."))
    return ctx


def everything(d: Distilled) -> Context:
    """The template with every bullet the facts support (the CONTEXT.md on disk keeps all)."""
    return write(d, budget=10 ** 9, count=lambda s: 0)
