"""Notify once per crossing: `ctx status --notify-if-pct P --notify-once` exits 3 the first time usage
reaches P, not on every run while it stays there (a cron job then mails once, not every ten minutes).
What each session last was (over or under) is kept in the run state ($CTX_HOME/notify-state.json, or
the shared store's), changed under its lock and written atomically."""
from __future__ import annotations


def crossed(home, key: str, over: bool) -> bool:
    """True when `over` is new for `key`: under (or never seen) at the last call, over now. Falling back
    under re-arms it."""
    from ..store.backend import run_state

    with run_state(home).hold("notify", key) as st:
        was = bool(st.get("over"))
        st["over"] = over
    return over and not was
