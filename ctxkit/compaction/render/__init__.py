"""State -> the summary's sections, within a token budget. Sentences live only here and are never read back."""
from __future__ import annotations

import re

from ..model import Rendered, State
from .budget import fill
from .kinds import kind_lines
from .sections import SECTIONS, Writer


FULL = 8000     # a budget this large is a whole CONTEXT.md, not a summary squeezed into a context window


def render(st: State, budget: int, count) -> Rendered:
    w = Writer(st, full=budget >= FULL)
    w.task()
    w.current()
    w.next_step()
    w.items()
    w.requests()
    kind_lines(w, st)
    w.steps()
    w.files()
    w.project()
    steps = sorted({p.section for p in w.pieces if p.section.startswith("Step ")},
                   key=lambda s: int(s.split()[1].rstrip(":")))
    out = fill(w.pieces, budget, count, SECTIONS + steps + ["Findings", "Actions and results", "Sources", "Files"])
    return _renumbered(out)


STEP = re.compile(r"^Step (\d+): ")


def _renumbered(r: Rendered) -> Rendered:
    """Steps numbered in the order they are written (a step the budget left out leaves no gap)."""
    k = 0
    sections = []
    for name, lines in r.sections:
        if STEP.match(name):
            k += 1
            name = STEP.sub(f"Step {k}: ", name)
        sections.append((name, lines))
    return Rendered(task=r.task, latest=r.latest, sections=tuple(sections), tokens=r.tokens)
