"""A disk spool for a record stream: commands that must see the whole stream before they
write (truncate keeps the newest groups that fit) park the groups in an unlinked temporary
file and keep only a few numbers per group in memory, so memory stays flat as input grows.
"""
from __future__ import annotations

import json
import tempfile
from typing import Callable, Iterable, Iterator


class GroupSpool:
    """Groups written to an anonymous temp file (mode 0600, gone on close); `info(group)` is
    what stays in memory for each one."""

    def __init__(self, info: Callable[[list[dict]], tuple]):
        self._f = tempfile.TemporaryFile("w+b")
        self._at: list[tuple[int, int]] = []
        self.info: list[tuple] = []
        self._make = info

    def extend(self, groups: Iterable[list[dict]]) -> "GroupSpool":
        for g in groups:
            data = json.dumps(g, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            self._at.append((self._f.tell(), len(data)))
            self._f.write(data)
            self.info.append(self._make(g))
        return self

    def __len__(self) -> int:
        return len(self._at)

    @property
    def bytes(self) -> int:
        """How much the spooled groups take on disk (their JSON)."""
        return sum(n for _, n in self._at)

    def size(self, i: int) -> int:
        return self._at[i][1]

    def group(self, i: int) -> list[dict]:
        off, n = self._at[i]
        self._f.seek(off)
        return json.loads(self._f.read(n))

    def groups(self, indices: Iterable[int]) -> Iterator[list[dict]]:
        for i in indices:
            yield self.group(i)
        self._f.seek(0, 2)

    def close(self) -> None:
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LineSpool(GroupSpool):
    """A GroupSpool that keeps each group as its records' JSON lines, exactly as a Writer prints
    them, so a group can be printed again without parsing it. `info(group, data)` also gets the
    group's bytes (to hash them)."""

    def extend(self, groups: Iterable[list[dict]]) -> "LineSpool":
        from ..io.jsonl import dumps

        self._f.seek(0, 2)
        for g in groups:
            data = "\n".join(dumps(r) for r in g).encode("utf-8")
            self._at.append((self._f.tell(), len(data)))
            self._f.write(data)
            self.info.append(self._make(g, data))
        return self

    def lines(self, i: int) -> list[str]:
        off, n = self._at[i]
        self._f.seek(off)
        return self._f.read(n).decode("utf-8").split("\n")

    def group(self, i: int) -> list[dict]:
        return [json.loads(x) for x in self.lines(i)]
