"""Progress bars on stderr, only when stderr is a terminal (never in a pipe or a log)."""
from __future__ import annotations

import os
import sys

import click


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


class _Bar:
    def __init__(self, total: int, label: str):
        self._cm = click.progressbar(length=total, label=label, file=sys.stderr)
        self._bar = self._cm.__enter__()

    def update(self, n: int) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


def progress_bar(total: int, label: str):
    quiet = os.environ.get("CTX_QUIET") not in (None, "", "0")
    if quiet or total <= 0 or not sys.stderr.isatty():
        return _NoBar()
    return _Bar(total, label)
