"""The compaction engine: records -> events -> state -> the summary's sections.

    extract (dialects, tools, trackers) -> analyze (one set of rules, checked against itself) -> render

`compact_span` is the only entry services use; `state_of` gives the derived state to other commands
(scoring's current work, the hooks' steering text)."""
from __future__ import annotations

from dataclasses import dataclass

from .analyze import analyze, violations
from .analyze.prose import last_words
from .extract import call_args, events, read_call
from .model import Call
from .model import Rendered, State
from .render import render

__all__ = ["Summary", "call_events", "compact_span", "summarize", "last_words", "open_errors", "state_of"]


@dataclass(frozen=True)
class Summary:
    state: State
    rendered: Rendered
    violations: tuple[str, ...] = ()


def state_of(records: list[dict]) -> State:
    """Where the work in `records` stands (pure)."""
    return analyze(events(records))


def compact_span(records: list[dict], budget: int, count, raw_from: int = -1) -> Summary:
    """The summary of `records` within `budget` tokens (`count(text) -> int`). `raw_from`: the records from that
    index on follow the summary as they were, so it does not repeat what they say."""
    return summarize(state_of(records), budget, count, raw_from)


def summarize(st: State, budget: int, count, raw_from: int = -1) -> Summary:
    """compact_span for a state already derived (one state, written at two budgets)."""
    if raw_from >= 0:
        from dataclasses import replace

        st = replace(st, raw_from=raw_from)
    return Summary(state=st, rendered=render(st, budget, count), violations=tuple(violations(st)))


def call_events(call: dict, fmt: str | None, memo: dict) -> list:
    """What one tool call does, read before its result is known (for a reader that streams records): file
    changes and reads, plan updates, work-item moves. `memo` keeps a dialect's state between calls."""
    name = str((call.get("function") or {}).get("name") or call.get("name") or "")
    return read_call(Call(at=0, name=name, args=call_args(call), id=str(call.get("id") or "")), fmt, memo)


def open_errors(records: list[dict]) -> list[str]:
    """The errors `records` leave open: a failed check or command no later run cleared (the
    open ones of `state_of(records).errors`, found without analyzing the rest of the work)."""
    from .analyze.errors import open_texts

    return open_texts(events(records))
