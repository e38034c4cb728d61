"""Streaming JSONL in and out, with FILE:LINE errors.

Readers are generators: constant memory on any input size. Writers flush
after each line so a downstream stage sees records as they are made.
"""
from __future__ import annotations

import io
import re
import json
import sys
from typing import IO, Iterable, Iterator

from ..errors import InputError, PipeClosed


BAD_UTF8 = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of bytes that are not UTF-8


class TooLong(str):
    """Stands for a line over the size limit, read past without being held (a blank line to
    readers that do not check)."""

    def __new__(cls, size: int):
        obj = str.__new__(cls, "\n")
        obj.size = size
        return obj


class Source:
    """A named text input (a file path or '-' for stdin) that can be peeked."""

    def __init__(self, path: str | None = "-", stream: IO[str] | None = None):
        self.path = path or "-"
        self.name = "stdin" if self.path == "-" else self.path
        self._stream = stream
        self._peeked: list[str] = []
        self._opened = False
        self.allow_bad = False  # iter_json_lines reports bad lines itself (so --skip-invalid can skip them)
        self.allow_long = False  # ... and lines over max_chars
        self.max_chars: int | None = None  # the longest line read whole (config: max_record_mb)
        self.notes: list[str] = []  # what a reader passed over and says so on stderr (a half-written last line)

    def _readline(self, stream) -> str:
        limit = self.max_chars
        if not limit:
            return stream.readline()
        line = stream.readline(limit + 1)
        if len(line) > limit and not line.endswith("\n"):
            size = len(line)
            line = ""
            while True:  # read past the rest in bounded pieces
                rest = stream.readline(1 << 20)
                size += len(rest)
                if not rest or rest.endswith("\n"):
                    break
            return TooLong(size)
        return line

    def too_long(self, n: int, line: "TooLong") -> InputError:
        return InputError(self.name, n, f"a record of {line.size / (1 << 20):.1f} MB is over max_record_mb "
                                        f"({self.max_chars / (1 << 20):g} MB)",
                          hint="raise max_record_mb in config.yaml, or pass --skip-invalid to skip it")

    def _open(self) -> IO[str]:
        if self._stream is None:
            if self.path == "-":
                self._stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="surrogateescape") \
                    if hasattr(sys.stdin, "buffer") else sys.stdin
            else:
                try:
                    self._stream = open(self.path, "r", encoding="utf-8-sig", errors="surrogateescape")  # a BOM is not text
                except FileNotFoundError:
                    raise InputError(self.path, None, "no such file") from None
                except IsADirectoryError:
                    raise InputError(self.path, None, "is a directory, not a file") from None
                except PermissionError:
                    raise InputError(self.path, None, "permission denied") from None
        self._opened = True
        return self._stream

    def peek_lines(self, n: int = 1) -> list[str]:
        """Return up to n lines (including blank ones) without consuming them."""
        stream = self._open()
        while len(self._peeked) < n:
            line = self._readline(stream)
            if not line:
                break
            self._peeked.append(line)
        return self._peeked[:n]

    def first_nonblank(self, limit: int = 50) -> tuple[int, str] | None:
        """(1-based line number, text) of the first non-blank line, peeking only."""
        i = 0
        while i < limit:
            lines = self.peek_lines(i + 1)
            if len(lines) <= i:
                return None
            if lines[i].strip():
                return i + 1, lines[i]
            i += 1
        return None

    def lines(self) -> Iterator[str]:
        """The lines; bytes that are not UTF-8 are an error naming the line, never replaced silently."""
        stream = self._open()
        n = 0

        def check(line):
            if isinstance(line, TooLong) and not self.allow_long:
                raise self.too_long(n, line)
            if not self.allow_bad and BAD_UTF8.search(line):
                raise InputError(self.name, n, "invalid UTF-8 (is this a text file?)")
            return line
        while self._peeked:
            n += 1
            yield check(self._peeked.pop(0))
        box: list[str] = []
        while True:
            line = self._readline(stream)
            if not line:
                break
            n += 1
            box.append(line)
            del line  # a suspended generator holds no copy of a long line: the caller's is the only one
            yield check(box.pop())

    def read_all(self) -> str:
        """The whole input as one text (a JSON document); within max_chars when it is set (a
        longer one is an error naming the input, never read whole)."""
        stream = self._open()
        limit = self.max_chars
        if limit and self.peeked_too_long():
            raise self.too_big(limit)
        head = "".join(self._peeked)
        self._peeked = []
        text = head + (stream.read(max(0, limit + 1 - len(head))) if limit else stream.read())
        if limit and len(text) > limit:
            raise self.too_big(limit)
        m = BAD_UTF8.search(text)
        if m:
            raise InputError(self.name, text.count("\n", 0, m.start()) + 1, "invalid UTF-8 (is this a text file?)")
        return text

    def too_big(self, limit: int) -> InputError:
        return InputError(self.name, None, f"a document over max_record_mb ({limit / (1 << 20):g} MB) is not read whole",
                          hint="raise max_record_mb in config.yaml")

    def read_blocks(self, size: int = 1 << 20) -> Iterator[str]:
        """The rest of the text (what was peeked first) in blocks of about `size` characters, as
        it streams; bytes that are not UTF-8 are an error naming the line, as `read_all` gives it."""
        stream = self._open()
        block = "".join(self._peeked)
        self._peeked = []
        line = 1
        while True:
            block += stream.read(size)
            if not block:
                break
            m = BAD_UTF8.search(block)
            if m:
                raise InputError(self.name, line + block.count("\n", 0, m.start()), "invalid UTF-8 (is this a text file?)")
            line += block.count("\n")
            yield block
            block = ""

    def peeked_too_long(self) -> bool:
        """A line peeked so far was over max_chars (read past, not held)."""
        return any(isinstance(line, TooLong) for line in self._peeked)

    def close(self) -> None:
        if self._stream is not None and self.path != "-":
            self._stream.close()


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def loads(text: str, name: str = "-"):
    """json.loads for untrusted text: NaN/Infinity, numbers past 4,300 digits and nesting past
    the recursion limit are a clear InputError, never an internal one. With the `name` of a
    whole file, the error names the file and the line in it."""
    line = None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        line = e.lineno if name != "-" else None
        reason = f"invalid JSON: {e.msg} (column {e.colno})"
    except RecursionError:
        reason = "invalid JSON: nested too deeply"
    except ValueError as e:
        reason = f"invalid JSON: {str(e).split(';')[0]}"
    raise InputError(name, line, reason)


def iter_json_lines(source: Source, *, skip_invalid: bool = False,
                    skipped: list | None = None, memo=None, live: bool = False) -> Iterator[tuple[int, object]]:
    """Yield (line_number, parsed) for each non-blank line; blank lines are skipped. With a
    `memo` (io.seen.LineMemo), a line it knows clean is yielded as its `Seen` record, unparsed.
    `live`: the input is an agent's transcript that may still be being written, so a last line
    that is not JSON and has no newline yet (half-written) is passed over with a note in
    `source.notes`; any other bad line stays an error."""
    source.allow_bad = source.allow_long = True
    if memo is not None:
        memo.reading = True
    for lineno, line in enumerate(source.lines(), 1):
        source.lineno = lineno
        if isinstance(line, TooLong):
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise source.too_long(lineno, line)
        if BAD_UTF8.search(line):
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise InputError(source.name, lineno, "invalid UTF-8 (is this a text file?)",
                             hint="fix the line or pass --skip-invalid")
        if not line.strip():
            continue
        if memo is not None:
            obj = memo.seen(line)
            if obj is not None:
                yield lineno, obj
                continue
        try:
            obj = loads(line)
            if memo is not None:
                memo.note(obj, line)
            del line  # parsed: only the object stays alive while the consumer works
        except InputError as e:
            if live and not line.endswith("\n"):  # only the last line can lack its newline
                source.notes.append(f"{source.name}:{lineno}: skipped a half-written last line "
                                    f"(the transcript is still being written)")
                continue
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise InputError(source.name, lineno, e.reason,
                             hint="fix the line or pass --skip-invalid") from None
        yield lineno, obj


SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(rec: object) -> str:
    """One JSON line. A lone surrogate (an emoji cut in half, as JavaScript writes it) stays the
    `\\udXXX` escape it came in as: the line is valid JSON and valid UTF-8."""
    s = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    if SURROGATE.search(s):
        s = SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", s)
    return s


class Writer:
    """Writes one JSON object per line and flushes each line."""

    def __init__(self, stream: IO[str] | None = None):
        self.stream = stream or sys.stdout
        self.count = 0

    def write(self, rec: object) -> None:
        from ..store import redaction  # everything ctx prints is redacted (config: redact)

        rec = redaction.output(rec)
        try:
            self.stream.write(dumps(rec) + "\n")
            self.stream.flush()
        except BrokenPipeError:
            raise PipeClosed() from None
        self.count += 1

    def write_line(self, line: str) -> None:
        """One line already in `dumps` form whose record the caller redacted (or knows redaction
        leaves unchanged)."""
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except BrokenPipeError:
            raise PipeClosed() from None
        self.count += 1

    def write_all(self, recs: Iterable[object]) -> int:
        for r in recs:
            self.write(r)
        return self.count
