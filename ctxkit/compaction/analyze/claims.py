"""What the agent says it did, set against what its edits show: a count of tests it says it added."""
from __future__ import annotations

import re

from ..model import Said
from ...core.text import sentences

COUNT = re.compile(r"\b(?:added|adds|wrote|writes|created)\s+(\d+)\s+(?:new\s+)?(?:unit\s+)?tests?\b|"
                   r"\b(\d+)\s+(?:new\s+)?tests?\s+(?:were\s+|are\s+|have\s+been\s+)?(?:added|written|created)\b", re.I)


def tests_said(evs: list, files) -> dict[str, int]:
    """path -> the number of tests the agent said it added to that file, where its edits show another: a
    claim that names the file, or, where the session's edits added tests to one file only, any claim made
    after them (its last word wins)."""
    tested = [f for f in files if f.tests]
    out: dict[str, int] = {}
    if not tested:
        return out
    first = min(f.first_at for f in tested)
    for e in evs:
        if not isinstance(e, Said) or e.at < first or "test" not in e.text.lower() or not COUNT.search(e.text):
            continue        # only what was said after a test was written, and names a count of them
        for s in sentences(e.text) + [ln for ln in e.text.splitlines() if ln.lstrip().startswith("|")]:   # and tables
            m = COUNT.search(s)
            if not m:
                continue
            before = [f for f in tested if f.first_at <= e.at]
            named = [f for f in before if f.path.rsplit("/", 1)[-1] in s]
            f = named[0] if len(named) == 1 else before[0] if len(before) == 1 and len(tested) == 1 else None
            if f is not None:
                out[f.path] = int(m.group(1) or m.group(2))
    return {p: n for p, n in out.items() if n != next(len(f.tests) for f in tested if f.path == p)}
