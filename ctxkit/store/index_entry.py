"""One entry of the session index, as ctx reads it (the embedded file and PostgreSQL alike)."""
from __future__ import annotations

_TYPES = {"session": str, "title": str, "started": str, "last_activity": str, "seen_at": str, "source": str,
          "status": str, "archive": str, "records": int, "message_count": int}


def index_entry(e: dict) -> dict:
    """An index entry with every field ctx reads of the type it reads (others dropped)."""
    out = {}
    for k, v in e.items():
        want = _TYPES.get(k)
        if want is int and (isinstance(v, bool) or not isinstance(v, int)):
            continue
        if want is str and not isinstance(v, str):
            continue
        if k in ("agents", "primary_files", "tags") and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            continue
        out[k] = v
    return out
