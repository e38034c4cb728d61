"""Time awareness from the session index: now, the last interaction, the gap and what to do
about it (`ctx time`, `prompt build`, the SessionStart hook); when the last session was."""
from __future__ import annotations

from ..core.timeinfo import SESSION_GAP, ago, gap_class, pattern, time_block
from datetime import timedelta, timezone, tzinfo

from ..core.timeutil import iso, now, parse_ts
from ..store import sessions


class LibcZone(tzinfo):
    """The zone the C library reads from $TZ (a POSIX rule such as `CET-1CEST`): each instant's offset
    and name as `localtime` gives them, summer time included."""

    def fromutc(self, dt):
        import time

        lt = time.localtime(dt.replace(tzinfo=timezone.utc).timestamp())
        return (dt + timedelta(seconds=lt.tm_gmtoff)).replace(
            tzinfo=timezone(timedelta(seconds=lt.tm_gmtoff), lt.tm_zone))

    def utcoffset(self, dt):
        return None

    def dst(self, dt):
        return None

    def tzname(self, dt):
        return None


def user_zone():
    """(tzinfo, name) of the zone in $TZ, as the seed's Time block shows local time; (None, "") when
    TZ is unset or empty: ctx then says UTC, whatever the machine's zone (a hook or cron job runs
    without the user's shell). An IANA name (`Europe/Berlin`, `:Europe/Berlin`) is read with
    zoneinfo; anything else the C library understands (`CET-1CEST`) through the process's zone."""
    import os

    tz = os.environ.get("TZ", "")
    if not tz.strip():
        return None, ""
    key = tz[1:] if tz.startswith(":") else tz
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(key), key
    except Exception:  # noqa: BLE001 - not an IANA name (or no tz database): the C library's reading
        import re

        if re.fullmatch(r"[A-Za-z_]+(?:/[A-Za-z0-9_+-]+)+", key):  # an IANA name no database knows: UTC, as the C library would, said as UTC
            return None, ""
        import time

        time.tzset()
        return LibcZone(), key


def last_session_time(home):
    """The latest activity of any session in the index, or None."""
    idx = sessions.load(home)
    times = [parse_ts(e.get("last_activity")) for e in idx.values() if e.get("last_activity")]
    return max(times) if times else None


def time_facts(home, ref=None, project: str | None = None, strict: bool = True) -> dict:
    """project: only that project's sessions count (one project never learns another's topic);
    strict=False also counts sessions whose project is unknown (records piped in by hand)."""
    ref = ref or now()
    idx = sessions.load(home)

    def ours(e) -> bool:
        return project is None or e.get("project") == project or (not strict and not e.get("project"))

    entries = sorted((e for e in idx.values() if isinstance(e, dict) and e.get("last_activity") and ours(e)),
                     key=lambda e: e["last_activity"])
    lasts = [parse_ts(e.get("last_activity")) for e in entries]
    last = max(lasts) if lasts else None
    current = entries[-1] if entries else None
    # the newest session is still going when it was active within SESSION_GAP; else this is a new one
    going = current is not None and last is not None and ref - last < SESSION_GAP
    started = parse_ts(current.get("started")) if going else None
    before = entries[-2] if going and len(entries) >= 2 else (current if not going else None)
    last_session = None
    if before:
        last_session = {"started": parse_ts(before.get("started")), "ended": parse_ts(before.get("last_activity")),
                        "topic": before.get("title") or "", "session": before.get("session")}
    durations = []
    for e in entries[-10:]:
        a, b = parse_ts(e.get("started")), parse_ts(e.get("last_activity"))
        if a and b:
            durations.append(b - a)
    cls, hint = gap_class(last, ref)
    tz, zone = user_zone()
    ls = None
    if last_session and last_session["ended"]:
        ls = {"session": last_session["session"], "ended": iso(last_session["ended"]), "topic": last_session["topic"],
              "minutes": int((last_session["ended"] - last_session["started"]).total_seconds() // 60)
              if last_session["started"] else None}
    return {"now": iso(ref), "last_interaction": iso(last) if last else None, "ago": ago(last, ref),
            "session": current.get("session") if going else None,
            "session_started": iso(started) if started else None, "gap_class": cls, "hint": hint,
            "last_session": ls, "pattern": pattern(durations),
            "zone": zone or "UTC",
            "block": time_block(ref, last, started, durations, last_session, tz, zone)}
