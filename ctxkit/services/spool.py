"""A disk spool for a record stream: commands that must see the whole stream before they
write (truncate keeps the newest groups that fit) park the groups in an unlinked temporary
file and keep only a few numbers per group in memory, so memory stays flat as input grows.
"""
from __future__ import annotations

import json
import tempfile
from typing import Callable, Iterable, Iterator


def _put(f, data: bytes) -> None:
    """Write to a spool's temp file; a full disk names the temp folder (TMPDIR), not nothing."""
    try:
        f.write(data)
    except OSError as e:
        from ..store.atomic import named

        raise named(e, f"{tempfile.gettempdir()} (a temporary file; TMPDIR sets the folder)") from None


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
            data = json.dumps(g, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
            self._at.append((self._f.tell(), len(data)))
            _put(self._f, data)
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
        return json.loads(self._f.read(n).decode("utf-8", "surrogatepass"))

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
        from ..io.seen import Seen

        self._f.seek(0, 2)
        for g in groups:   # a Seen record (read unparsed, known clean) is its line
            data = "\n".join(r.line if type(r) is Seen else dumps(r) for r in g).encode("utf-8")
            self._at.append((self._f.tell(), len(data)))
            _put(self._f, data)
            self.info.append(self._make(g, data))
        return self

    def lines(self, i: int) -> list[str]:
        off, n = self._at[i]
        self._f.seek(off)
        return self._f.read(n).decode("utf-8").split("\n")

    def group(self, i: int) -> list[dict]:
        return [json.loads(x) for x in self.lines(i)]


class OutputSpool:
    """What a command prints, held back until it has succeeded: in memory up to `mem` bytes,
    then in an anonymous temp file (mode 0600, gone on close), so memory stays bounded
    whatever the output's size. `commit()` copies it to `dest` (stdout); leaving the `with`
    on an exception discards it, so a command that fails — a bad input line N, a store
    that will not open, an interrupt — prints nothing at all (an error before the first
    byte). Text is stored as UTF-8; what the stream cannot encode (a lone surrogate) is
    written as its backslash escape, as ctx's stdout does."""

    MEM = 16 << 20

    def __init__(self, dest=None, mem: int | None = None):
        self._f = tempfile.SpooledTemporaryFile(max_size=self.MEM if mem is None else mem, mode="w+b")
        self._dest = dest
        self.size = 0

    def write(self, s: str) -> int:
        data = s.encode("utf-8", "backslashreplace")
        _put(self._f, data)
        self.size += len(data)
        return len(s)

    def flush(self) -> None:  # the whole output goes out at once, on success
        pass

    @property
    def spilled(self) -> bool:
        """True once the output outgrew memory and went to the temp file."""
        return bool(getattr(self._f, "_rolled", False))

    def commit(self) -> None:
        """Copy what was written to `dest` (default: stdout) and close. A reader that went
        away (`ctx … | head`) is PipeClosed, as for any ctx output."""
        import shutil
        import sys

        from ..errors import PipeClosed

        dest = self._dest if self._dest is not None else sys.stdout
        self._f.seek(0)
        try:
            buf = getattr(dest, "buffer", None)
            if buf is not None:
                dest.flush()
                shutil.copyfileobj(self._f, buf, 1 << 20)
                buf.flush()
            else:  # a text-only stream (tests, StringIO): decoded a block at a time
                import codecs

                dec = codecs.getincrementaldecoder("utf-8")()
                while True:
                    block = self._f.read(1 << 20)
                    dest.write(dec.decode(block, final=not block))
                    if not block:
                        break
            dest.flush()
        except BrokenPipeError:
            raise PipeClosed() from None
        finally:
            self.close()

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> "OutputSpool":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.close()
