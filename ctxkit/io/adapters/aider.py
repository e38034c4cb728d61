"""aider .aider.chat.history.md -> ctx records.

`# aider chat started at <datetime>` opens a session; `#### ` lines are user
input; `> ` lines are aider's own output (kept as events); everything else is
the assistant's reply.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Iterator

from ... import records as R
from ..jsonl import Source

FORMAT = "aider"
START = re.compile(r"^# aider chat started at (.+?)\s*$")
TOKENS = re.compile(r"Tokens:\s*([\d.,]+)(k?)\s+sent.*?([\d.,]+)(k?)\s+received", re.I)


def sniff_text(first_line: str) -> bool:
    return bool(START.match(first_line.strip()))


def _iso(text: str) -> str | None:
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), fmt).isoformat() + "Z"
        except ValueError:
            pass
    return None


def _num(n: str, k: str) -> int:
    v = float(n.replace(",", ""))
    return int(v * 1000) if k else int(v)


def parse(source: Source, **_: object) -> Iterator[dict]:
    session, ts, n = "aider", None, 0
    kind, buf, start_line = None, [], 0
    in_fence = False

    def emit():
        nonlocal kind, buf, n
        text = "\n".join(buf).strip("\n")
        if kind and text.strip():
            n += 1
            src = {"format": FORMAT, "file": source.name, "line": start_line}
            rid = f"{session}-{n:05d}"
            if kind == "user":
                yield R.make("message", id=rid, session=session, ts=ts, role="user", content=text, source=src)
            elif kind == "assistant":
                yield R.make("message", id=rid, session=session, ts=ts, role="assistant", content=text, source=src)
            else:
                m = TOKENS.search(text)
                usage = {"input_tokens": _num(m.group(1), m.group(2)),
                         "output_tokens": _num(m.group(3), m.group(4))} if m else None
                yield R.make("event", id=rid, session=session, ts=ts, role="system", content=text,
                             source=src, flags=["tool_output"] + (["usage"] if usage else []), usage=usage)
        kind, buf = None, []

    for lineno, raw in enumerate(source.lines(), 1):
        line = raw.rstrip("\n")
        m = START.match(line)
        if m:
            yield from emit()
            ts = _iso(m.group(1))
            session = "aider-" + re.sub(r"[^0-9A-Za-z]+", "", m.group(1))[:14]
            continue
        if kind == "assistant" and in_fence:
            this = "assistant"
        elif line.startswith("#### "):
            this = "user"
            line = line[5:]
        elif line.startswith("> ") or line.rstrip() == ">":
            this = "output"
            line = line[2:] if line.startswith("> ") else line[1:]
        elif not line.strip() and kind in ("user", "output"):
            continue
        else:
            this = "assistant"
        if this != kind:
            yield from emit()
            kind, start_line, in_fence = this, lineno, False
        if this == "assistant" and line.lstrip().startswith("```"):
            in_fence = not in_fence
        buf.append(line.rstrip() if this != "assistant" else line)
    yield from emit()
