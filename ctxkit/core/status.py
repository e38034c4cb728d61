"""Context usage breakdown (pure): what a stream costs against a budget."""
from __future__ import annotations

from dataclasses import dataclass, field


def category(rec: dict) -> str | None:
    kind = rec.get("kind")
    if kind == "event":
        return None
    if kind == "summary":
        return "summaries"
    if kind == "stub":
        return "stubs"
    if rec.get("role") == "system":
        return "system"
    return "messages"


def reported_context(usage: dict) -> int:
    """Prompt + completion size the provider reported for one response."""
    return sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                 "cache_creation_input_tokens", "output_tokens"))


def usage_of(rec: dict) -> dict | None:
    """The provider's usage a record carries (its integer fields), or None."""
    u = rec.get("usage")
    if isinstance(u, dict) and any(isinstance(u.get(k), int) for k in ("input_tokens", "output_tokens")):
        return {k: v for k, v in u.items() if isinstance(v, int)}
    return None


def changed_by_ctx(rec: dict) -> bool:
    """ctx changed this record of the stream (a stub of a dropped chunk, a compaction summary, a
    shrunk output): a provider's usage recorded before such a change is stale."""
    flags = rec.get("flags") if isinstance(rec.get("flags"), list) else ()
    return rec.get("kind") == "stub" or bool({"compaction", "shrunk"} & set(flags))


@dataclass
class Usage:
    budget: int
    trigger_pct: float
    hard_pct: float
    curation_pct: float = 0.40
    tools: int = 0
    parts: dict = field(default_factory=lambda: {"system": 0, "tools": 0, "messages": 0,
                                                 "summaries": 0, "stubs": 0})
    records: int = 0
    chunks: int = 0
    sessions: set = field(default_factory=set)
    reported: int | None = None
    counted_at_report: int | None = None
    changed: bool = False            # ctx changed the stream (drop, shrink, compact): usage is stale
    reported_window: int | None = None   # the window the provider reported (Codex)
    _last_group: object = None
    _running: int = 0

    def add(self, rec: dict) -> None:
        cat = category(rec)
        n = rec.get("tokens") or 0
        if cat:
            self.parts[cat] += n
            self.records += 1
            self._running += n
            g = rec.get("group")
            if g is None or g != self._last_group:
                self.chunks += 1
            self._last_group = g
        if rec.get("session"):
            self.sessions.add(rec["session"])
        if changed_by_ctx(rec):
            self.changed = True
        usage = usage_of(rec)
        if usage:
            self.reported = reported_context(usage)
            self.counted_at_report = self._running
            self.reported_window = usage.get("context_window")

    @property
    def total(self) -> int:
        return sum(self.parts.values())

    @property
    def pct_used(self) -> float:
        return self.total / self.budget if self.budget > 0 else float("inf")

    def as_dict(self) -> dict:
        pct = self.pct_used
        d = {
            "total": self.total,
            **self.parts,
            "budget": self.budget,
            "available": self.budget - self.total,
            "pct_used": round(pct, 4),
            "compaction_trigger_pct": self.trigger_pct,
            "hard_limit_pct": self.hard_pct,
            "curation_trigger_pct": self.curation_pct,
            "curation_due": pct >= self.curation_pct,
            "compaction_due": pct >= self.trigger_pct,
            "over_hard_limit": pct >= self.hard_pct,
            "next_compaction_at": int(self.trigger_pct * self.budget),
            "records": self.records,
            "chunks": self.chunks,
            "sessions": sorted(self.sessions),
        }
        if self.reported is not None:
            counted = self.counted_at_report or 0
            d["reported_tokens"] = self.reported
            d["counted_at_report"] = counted
            d["count_error_pct"] = round((counted - self.reported) / self.reported, 4) if self.reported else None
            d["counted_since_report"] = self._running - counted
        d["changed_by_ctx"] = self.changed
        return d


def chunk_row(group: list[dict], tokens: int) -> dict:
    """What one chunk is, for "what is eating the window": its id, kind, tokens, when, the tools it
    called, the file it names and a gist (core.drop)."""
    from .drop import gist, named_file

    tools, files = [], []
    for r in group:
        for c in r.get("tool_calls") or ():
            fn = c.get("function") or {}
            if fn.get("name") and fn["name"] not in tools:
                tools.append(fn["name"])
            f = named_file(fn.get("arguments"))
            if f and f not in files:
                files.append(f)
    kinds = {r.get("kind") for r in group}
    kind = "summary" if "summary" in kinds else "stub" if "stub" in kinds else \
        "tool" if tools or any(r.get("role") == "tool" for r in group) else (group[0].get("role") or "message")
    ts = next((r["ts"] for r in reversed(group) if isinstance(r.get("ts"), str)), None)
    return {"chunk_id": group[0].get("group") or group[0].get("id"), "kind": kind, "tokens": tokens, "ts": ts,
            "tool": ", ".join(tools) or None, "file": files[0] if files else None,
            "records": len(group), "gist": gist(group, 100)}
