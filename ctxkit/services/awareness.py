"""Time awareness from the session index: now, the last interaction, the gap and what to do
about it (`ctx time`, `prompt build`, the SessionStart hook); when the last session was."""
from __future__ import annotations

from ..core.timeinfo import SESSION_GAP, ago, gap_class, pattern, time_block
from ..core.timeutil import iso, now, parse_ts
from ..store import sessions


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
    ls = None
    if last_session and last_session["ended"]:
        ls = {"session": last_session["session"], "ended": iso(last_session["ended"]), "topic": last_session["topic"],
              "minutes": int((last_session["ended"] - last_session["started"]).total_seconds() // 60)
              if last_session["started"] else None}
    return {"now": iso(ref), "last_interaction": iso(last) if last else None, "ago": ago(last, ref),
            "session": current.get("session") if going else None,
            "session_started": iso(started) if started else None, "gap_class": cls, "hint": hint,
            "last_session": ls, "pattern": pattern(durations),
            "block": time_block(ref, last, started, durations, last_session)}
