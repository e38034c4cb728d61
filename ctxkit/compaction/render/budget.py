"""Filling a token budget with whole lines: every candidate line has a level (0 first) and a place in the
output; lines are taken level by level, in place order, while they fit. A line may stand for a group
of alternatives (a short and a long form): the longest form that fits wins."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..model import Line, Rendered


@dataclass
class Piece:
    section: str
    text: str
    level: int
    order: tuple
    done: bool | None = None
    group: str = ""
    rank: tuple = ()                # its turn within its level, when not its place (steps take turns)
    parts: tuple = ()               # (group, label): what it lists that other lines may tell at length …
    frame: object = None            # … and its text from the labels those lines leave untold (all told: dropped)


FREE = ("Task", "Latest request")


def _line(p: Piece) -> str:
    """The line as CONTEXT.md's grammar writes it."""
    if p.section in FREE:
        return p.text + "\n"
    box = "" if p.done is None else ("[x] " if p.done else "[ ] ")
    return f"- {box}{p.text}\n"


def fill(pieces: list[Piece], budget: int, count, sections: list[str]) -> Rendered:
    chosen: dict[str, Piece] = {}
    cost: dict[str, int] = {}
    open_sections: set[str] = set()
    used = 0
    base: dict[str, Piece] = {}     # a list cut to what other lines leave untold: the whole list
    order = sorted(pieces, key=lambda p: (p.level, p.rank or p.order))
    sizes = {id(p): count(_line(p)) for p in order}
    for _ in range(2):      # a second pass spends what dropping redundant lines freed
        for p in order:
            key = p.group or f"#{id(p)}"
            if chosen.get(key) is p or key in base:
                continue
            c = sizes[id(p)]
            head = 0 if p.section in open_sections else count(f"## {p.section}\n") + 1
            old = cost.get(key)
            delta = c + head - (old or 0)
            if old is not None and c <= old:
                continue
            if used + delta > budget:
                continue
            chosen[key] = p
            cost[key] = c
            used += delta
            open_sections.add(p.section)
        gone: list[str] = []
        shrunk = False
        for k, p in list(chosen.items()):       # a list of what other lines tell: only the rest
            p = base.get(k, p)
            if p.parts:
                left = [label for g, label in p.parts if g not in chosen]
                if not left:
                    gone.append(k)
                elif len(left) < len(p.parts):
                    last = max(chosen[g].order for g, _ in p.parts if g in chosen)
                    q = replace(p, text=p.frame(left), order=last + (99,))     # after the lines that tell the others
                    c = count(_line(q))
                    if used + c - cost[k] > budget:
                        continue    # told otherwise it would not fit: the whole list stays
                    used += c - cost[k]
                    chosen[k], cost[k], base[k] = q, c, p
                    shrunk = True
        if not gone and not shrunk:
            break
        for k in gone:
            used -= cost.pop(k)
            chosen.pop(k)
            cost[k] = 1 << 30   # never taken again
    by_section: dict[str, list[Piece]] = {}
    for p in chosen.values():
        by_section.setdefault(p.section, []).append(p)
    task = " ".join(p.text for p in sorted(by_section.pop("Task", []), key=lambda p: p.order))
    latest = " ".join(p.text for p in sorted(by_section.pop("Latest request", []), key=lambda p: p.order))
    names = [s for s in sections if s in by_section] + [s for s in by_section if s not in sections]
    out = tuple((s, tuple(Line(p.text, p.done) for p in sorted(by_section[s], key=lambda p: p.order))) for s in names)
    return Rendered(task=task, latest=latest, sections=out, tokens=used)
