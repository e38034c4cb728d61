"""Exceptions and exit codes shared by every layer (no click here)."""
from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    OVER_THRESHOLD = 3
    CONFLICT = 4
    JQ_ERROR = 5          # a --jq expression failed on the data (jq's own exit status)
    INTERRUPTED = 130


class CtxError(Exception):
    """A failure the user can act on; rendered as one line on stderr."""

    exit_code = ExitStatus.ERROR

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class InputError(CtxError):
    """Bad input data: always names the file and the line."""

    def __init__(self, source: str, line: int | None, reason: str, hint: str | None = None):
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}", hint)
        self.source = source
        self.line = line
        self.reason = reason


class ConfigError(CtxError):
    pass


class UsageProblem(CtxError):
    exit_code = ExitStatus.USAGE


class ConflictError(CtxError):
    exit_code = ExitStatus.CONFLICT


class PipeClosed(Exception):
    """The reader of stdout went away (`ctx ... | head`): stop quietly.

    Deliberately not an OSError, so click does not turn it into exit 1.
    """


class JqError(CtxError):
    """A --jq expression that failed at run time (jq exits 5)."""

    exit_code = ExitStatus.JQ_ERROR
