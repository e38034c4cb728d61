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


class _Spinner:
    """A spinner on stderr while something loads (a model): a thread redraws it every 0.1 s."""

    FRAMES = "|/-\\"

    def __init__(self, label: str):
        self.label = label
        self._stop = None

    def __enter__(self):
        import threading

        self._stop = threading.Event()

        def spin():
            i = 0
            while not self._stop.wait(0.1):
                sys.stderr.write(f"\r{self.label} {self.FRAMES[i % 4]}")
                sys.stderr.flush()
                i += 1
        self._t = threading.Thread(target=spin, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        sys.stderr.write("\r" + " " * (len(self.label) + 2) + "\r")
        sys.stderr.flush()
        return False


def spinner(label: str):
    """A spinner while `label` loads; nothing when stderr is not a terminal or with CTX_QUIET."""
    import contextlib

    quiet = os.environ.get("CTX_QUIET") not in (None, "", "0")
    if quiet or not sys.stderr.isatty():
        return contextlib.nullcontext()
    return _Spinner(label)
