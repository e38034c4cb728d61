"""How full the live context is, from the provider's own numbers (pure).

The last `usage` a provider recorded after the last compaction boundary is what the model
saw: input + cache read + cache creation + output tokens. The window comes from the model
named in the transcript (a small prefix map; `context_window` in config overrides it).
"""
from __future__ import annotations

from typing import Sequence

from .. import records as R
from .status import changed_by_ctx, reported_context, usage_of  # noqa: F401 - defined there, used here

# model-name prefix -> context window (tokens); the first match wins
WINDOWS = (("claude-", 200_000), ("gpt-5", 400_000), ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000),
           ("o3", 200_000), ("o4", 200_000), ("gemini-", 1_048_576))
DEFAULT_WINDOW = 200_000


def is_boundary(r: dict) -> bool:
    return r.get("kind") == "summary" and bool({"compact_boundary", "compact_summary"} & set(R.flags(r)))


def live(records: Sequence[dict]) -> list[dict]:
    """The records from the last compaction boundary on: the context the model has now (the
    boundary's own summary is in it, as `ctx status`, `count` and `drop` count it)."""
    for i in range(len(records) - 1, -1, -1):
        if is_boundary(records[i]):
            return list(records[i:])
    return list(records)


def seen_now(counted: int, reported: int | None, counted_at_report: int | None, changed: bool) -> tuple[int, str]:
    """What the model sees now, and how it is known: the provider's usage at its last response when
    it is fresh (plus ctx's count of what came after it), else ctx's own count (no usage recorded,
    or ctx changed the stream since). `counted`: ctx's count of the live records;
    `counted_at_report`: that count up to the record carrying the usage."""
    if reported is None or changed:
        return counted, "counted"
    since = max(0, counted - (counted_at_report or 0))
    return (reported, "provider-reported") if since == 0 else (reported + since, "provider-reported + counted since")


def seen_in(records: Sequence[dict], count) -> tuple[int, str]:
    """`seen_now` of a list of records (the hooks', compaction's): COUNT(list of records) -> list of
    token counts. Events cost nothing but may carry the usage (Codex's token_count)."""
    recs = live(records)
    at = next((i for i in range(len(recs) - 1, -1, -1) if usage_of(recs[i]) is not None), None)
    context = [i for i, r in enumerate(recs) if r.get("kind") != "event"]
    counts = list(count([recs[i] for i in context])) if context else []
    reported = reported_context(usage_of(recs[at])) if at is not None else None
    before = sum(n for i, n in zip(context, counts) if at is not None and i <= at)
    return seen_now(sum(counts), reported, before if at is not None else None,
                    any(changed_by_ctx(r) for r in recs))


def provider_usage(records: Sequence[dict]) -> tuple[int | None, str | None, int | None]:
    """(tokens, model, window the provider reported) from the newest usage after the boundary."""
    for r in reversed(live(records)):
        u = r.get("usage")
        if isinstance(u, dict) and any(isinstance(u.get(k), int) for k in ("input_tokens", "output_tokens")):
            total = reported_context({k: v for k, v in u.items() if isinstance(v, int)})
            meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
            return total, meta.get("model"), u.get("context_window") if isinstance(u.get("context_window"), int) \
                else None
    return None, None, None


def window_for(model: str | None, configured: int = 0, reported: int | None = None) -> int:
    if configured:
        return configured
    if reported:
        return reported
    for prefix, n in WINDOWS:
        if model and model.startswith(prefix):
            return n
    return DEFAULT_WINDOW


def model_of(records: Sequence[dict]) -> str | None:
    for r in reversed(records):
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        if isinstance(meta.get("model"), str):
            return meta["model"]
    return None


def window_measure(tokens: int, window: int, method: str, trigger_pct: float, curation_pct: float) -> dict:
    """The one measure of "how full" (hooks, status, compact): TOKENS the model sees over its WINDOW."""
    pct = tokens / window if window else 1.0
    return {"tokens": tokens, "window": window, "pct": pct, "method": method, "due": pct >= trigger_pct,
            "curation_due": pct >= curation_pct}
