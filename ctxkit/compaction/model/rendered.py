"""What the renderer hands back: sections of one-line items, in order (no logic)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    text: str
    done: bool | None = None        # a checkbox item: True done, False open, None not a checkbox


@dataclass(frozen=True)
class Rendered:
    task: str
    latest: str
    sections: tuple[tuple[str, tuple[Line, ...]], ...]
    tokens: int = 0
