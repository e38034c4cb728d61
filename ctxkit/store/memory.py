"""Long-term memory behind the store interface: MEMORY.md (one document, edited under a lock) and
the observations (one text per observation). The embedded store keeps them as files in the
workspace (MEMORY.md, observations/NAME.md); the shared store keeps them in PostgreSQL
(store/pg.py: PgMemory). Either way a name reads the same: `MEMORY.md`, `observations/NAME.md`.
"""
from __future__ import annotations

import glob
import os
from typing import Callable

MEMORY = "MEMORY.md"
OBSERVATIONS = "observations"


class FileMemory:
    """MEMORY.md and observations/ in the workspace folder (the embedded store)."""

    kind = "embedded"

    def __init__(self, workspace: str):
        self.workspace = workspace
        self.memory_path = os.path.join(workspace, MEMORY)

    def memory_text(self) -> str:
        from .atomic import read_text

        return read_text(self.memory_path) if os.path.lexists(self.memory_path) else ""

    def update_memory(self, change: Callable[[str], str | None]) -> str:
        """Locked read-modify-write of MEMORY.md: `change(text)` gives the new text (None: no
        change); written redacted and atomically. Returns where MEMORY.md is."""
        from . import redaction
        from .atomic import atomic_write, locked

        with locked(self.memory_path):
            text = self.memory_text()
            new = change(text)
            if new is not None and new != text:
                atomic_write(self.memory_path, redaction.text(new))
        return self.memory_path

    def write_observation(self, name: str, text: str, session: str | None = None) -> str:
        from . import redaction
        from .atomic import atomic_write

        path = os.path.join(self.workspace, OBSERVATIONS, name)
        atomic_write(path, redaction.text(text))
        return path

    def observation_names(self) -> list[str]:
        return [os.path.basename(p) for p in sorted(glob.glob(os.path.join(self.workspace, OBSERVATIONS, "*.md")))]

    def observations(self) -> list[tuple[str, str]]:
        """(name relative to the workspace, text) of every observation, oldest first."""
        from .atomic import read_text

        return [(f"{OBSERVATIONS}/{n}", read_text(os.path.join(self.workspace, OBSERVATIONS, n)))
                for n in self.observation_names()]

    def documents(self) -> list[tuple[str, str]]:
        """MEMORY.md (when there is one) and every observation: (relative name, text)."""
        out = [(MEMORY, self.memory_text())] if os.path.lexists(self.memory_path) else []
        return out + self.observations()
