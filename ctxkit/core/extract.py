"""The extractive summarizer (pure, deterministic, no model): distill the span into typed facts
(core.distill), then write seed 001's template from them (core.writeup)."""
from __future__ import annotations

from typing import Sequence

from .context_md import Context

MAX_LEN = 200


def latest_request(records: Sequence[dict]) -> str:
    """The newest real request, brief (core.requests is the one definition)."""
    from .requests import brief, last_request

    t = last_request(records)
    return brief(t, MAX_LEN) if t else ""


def summarize(span: Sequence[dict], task_from: Sequence[dict] | None = None, budget: int | None = None,
              count=None) -> Context:
    """Fill the template from a span: distill typed facts, then write them (within `budget`
    tokens when given, else every bullet the facts support)."""
    from .distill import distill
    from .writeup import everything, write

    d = distill(span, task_from)
    if budget is None or count is None:
        return everything(d)
    return write(d, budget, count)
