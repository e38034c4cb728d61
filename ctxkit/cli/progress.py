"""Progress bars on stderr, only when stderr is a terminal (never in a pipe or a log), and
never under -q / CTX_QUIET. A bar is drawn at its first real count (so a model loading first
shows its spinner alone, not an empty bar), and moves with every count reported."""
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
        self.total, self.label = total, label
        self.done = 0
        self._cm = self._bar = None

    def update(self, n: int) -> None:
        if n <= 0:
            return
        n = min(n, self.total - self.done)  # never past 100 %
        if self._bar is None:
            self._cm = click.progressbar(length=self.total, label=self.label, file=sys.stderr,
                                         show_pos=True, show_eta=True)
            self._bar = self._cm.__enter__()
        self.done += n
        self._bar.update(n)

    def close(self) -> None:
        if self._cm is not None:
            self._cm.__exit__(None, None, None)
            self._cm = self._bar = None


def quiet() -> bool:
    """-q on the command line, or CTX_QUIET in the environment."""
    if os.environ.get("CTX_QUIET") not in (None, "", "0"):
        return True
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().meta.get("ctx.quiet"))


def progress_bar(total: int, label: str):
    if quiet() or total <= 0 or not sys.stderr.isatty():
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
            while True:   # the first frame at once: a load shorter than a frame still shows its label
                sys.stderr.write(f"\r{self.label} {self.FRAMES[i % 4]}")
                sys.stderr.flush()
                i += 1
                if self._stop.wait(0.1):
                    return
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

    if quiet() or not sys.stderr.isatty():
        return contextlib.nullcontext()
    return _Spinner(label)
