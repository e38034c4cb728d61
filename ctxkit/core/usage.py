"""How full the live context is, from the provider's own numbers (pure).

The last `usage` a provider recorded after the last compaction boundary is what the model
saw: input + cache read + cache creation + output tokens. The window comes from the model
named in the transcript (a small prefix map; `context_window` in config overrides it).
"""
from __future__ import annotations

from typing import Sequence

from .. import records as R
from .status import reported_context

# model-name prefix -> context window (tokens); the first match wins
WINDOWS = (("claude-", 200_000), ("gpt-5", 400_000), ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000),
           ("o3", 200_000), ("o4", 200_000), ("gemini-", 1_048_576))
DEFAULT_WINDOW = 200_000


def is_boundary(r: dict) -> bool:
    return r.get("kind") == "summary" and bool({"compact_boundary", "compact_summary"} & set(R.flags(r)))


def live(records: Sequence[dict]) -> list[dict]:
    """The records after the last compaction boundary: the context the model has now."""
    for i in range(len(records) - 1, -1, -1):
        if is_boundary(records[i]):
            return list(records[i + 1:])
    return list(records)


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
