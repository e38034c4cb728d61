"""Time awareness (seed 000 §5), pure: gap classes, behaviour hints, session patterns."""
from __future__ import annotations

from datetime import datetime, timedelta
from statistics import median
from typing import Sequence

GAPS = [  # (upper bound, class, hint)
    (timedelta(minutes=5), "continue", "Continue naturally."),
    (timedelta(minutes=30), "brief", "Brief \"back to it\"."),
    (timedelta(hours=2), "reorient", "Re-orient: check CONTEXT.md before acting."),
]


def gap_class(last: datetime | None, now: datetime) -> tuple[str, str]:
    if last is None:
        return "first", "First session: introduce yourself briefly and ask what to work on."
    gap = now - last
    for bound, cls, hint in GAPS:
        if gap < bound:
            return cls, hint
    if last.date() != now.date() and gap >= timedelta(hours=8):
        return "next-day", "Fresh start: review yesterday's CONTEXT.md and ask what's next."
    return "summarize", "Summarize where we left off before continuing."


def ago(last: datetime | None, now: datetime) -> str:
    if last is None:
        return "never (first session)"
    d = now - last
    if d < timedelta(minutes=5):
        return "just now"
    if d < timedelta(hours=1):
        return f"{int(d.total_seconds() // 60)} min ago"
    if d < timedelta(hours=24):
        h = int(d.total_seconds() // 3600)
        return f"{h} hour{'s' if h != 1 else ''} ago"
    days = d.days
    return f"{days} day{'s' if days != 1 else ''} ago"


def pattern(durations: Sequence[timedelta]) -> str:
    """quick check-in / deep work / debugging, from recent session lengths."""
    if not durations:
        return "unknown (no earlier sessions)"
    m = median(d.total_seconds() for d in durations) / 60
    if m < 15:
        return "quick check-in"
    if m < 90:
        return "debugging" if len(durations) >= 3 and max(durations) - min(durations) > timedelta(minutes=30) \
            else "focused session"
    return "deep work"


def time_block(now: datetime, last: datetime | None, started: datetime | None, durations) -> list[str]:
    cls, hint = gap_class(last, now)
    lines = [f"Current: {now.strftime('%A, %b %d, %Y, %H:%M')} UTC",
             f"Last interaction: {ago(last, now)}"]
    if started:
        lines.append(f"Session started: {started.strftime('%Y-%m-%d %H:%M')} UTC")
    lines.append(f"Pattern: {pattern(durations)}")
    lines.append(f"Hint: {hint}")
    return lines


def session_started(ts: str | datetime | None, fallback: datetime | None = None) -> str:
    """Seed 002's first history message: `[Session started: 2026-01-13 14:30 (local)]`.
    From the session's first timestamp; without one, from `fallback` (or now)."""
    from .timeutil import now, parse_ts

    when = parse_ts(ts) if isinstance(ts, str) else ts
    when = when or fallback or now()
    return f"[Session started: {when.astimezone().strftime('%Y-%m-%d %H:%M')} (local)]"
