"""Time awareness (seed 000 §5), pure: gap classes, behaviour hints, session patterns."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
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
    days = (now.date() - last.date()).days
    if days == 1 and gap >= timedelta(hours=8):
        return "next-day", "Fresh start: review yesterday's CONTEXT.md and ask what's next."
    if days >= 2:
        return "long-break", (f"Fresh start after {gap.days} day{'s' if gap.days != 1 else ''}: review CONTEXT.md from the last "
                              "session and ask what's next.")
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


def duration(d: timedelta) -> str:
    """45 min, 2 h 10 min, 3 days."""
    m = int(d.total_seconds() // 60)
    if m < 60:
        return f"{max(m, 1)} min"
    if m < 24 * 60:
        return f"{m // 60} h" + (f" {m % 60} min" if m % 60 else "")
    return f"{m // (24 * 60)} day{'s' if m >= 48 * 60 else ''}"


# A new conversation after this long a pause is a new session (the last one has ended).
SESSION_GAP = timedelta(hours=2)


def zone_label(when: datetime, tz: tzinfo | None = None, key: str = "") -> str:
    """`UTC`, or the zone's abbreviation with its name or offset: `CET (Europe/Berlin)`."""
    if tz is None:
        return "UTC"
    local = when.astimezone(tz)
    abbr = local.tzname() or ""
    off = local.utcoffset() or timedelta(0)
    sign, off = ("-", -off) if off < timedelta(0) else ("+", off)
    offset = f"UTC{sign}{int(off.total_seconds() // 3600):02d}:{int(off.total_seconds() % 3600 // 60):02d}"
    if abbr in ("UTC", "GMT", "Z") and off:  # a POSIX zone whose name says nothing (`UTC-3`)
        abbr = ""
    if abbr and abbr == key:
        return abbr
    if key:
        return f"{abbr} ({key})" if abbr and not abbr.startswith(("+", "-")) else f"{offset} ({key})"
    return abbr if abbr and not abbr.startswith(("+", "-")) and abbr != key else offset


def local_time(when: datetime, fmt: str, tz: tzinfo | None = None, key: str = "") -> str:
    """`when` in zone `tz` (UTC when None), formatted, with the zone named."""
    shown = when.astimezone(tz) if tz is not None else when.astimezone(timezone.utc)
    return f"{shown.strftime(fmt)} {zone_label(when, tz, key)}"


def time_block(now: datetime, last: datetime | None, started: datetime | None, durations,
               last_session: dict | None = None, tz: tzinfo | None = None, zone: str = "") -> list[str]:
    """The Time lines. `last_session`: {"started", "ended" (datetimes), "topic"} of the last
    session before this one, for `Last session: 2 hours ago (45 min, testing TUI)`. `tz`: the
    user's zone (its name `zone`), as the seed's local time shows; UTC when None."""
    cls, hint = gap_class(last, now)
    lines = [f"Current: {local_time(now, '%A, %b %d, %Y, %H:%M', tz, zone)}",
             f"Last interaction: {ago(last, now)}"]
    new = last is None or now - last >= SESSION_GAP or (started is not None and now - started < GAPS[0][0])
    if new:
        lines.append("Session: Just started")
    elif started:
        lines.append(f"Session started: {local_time(started, '%Y-%m-%d %H:%M', tz, zone)}")
    if last_session and last_session.get("ended"):
        a, b = last_session.get("started"), last_session["ended"]
        what = ", ".join(x for x in ((duration(b - a) if a else ""), (last_session.get("topic") or "")) if x)
        lines.append(f"Last session: {ago(b, now)}" + (f" ({what})" if what else ""))
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
