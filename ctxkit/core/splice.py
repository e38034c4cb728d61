"""Put recovered chunks back where their stubs stand (pure)."""
from __future__ import annotations

from typing import Sequence


def is_stub_for(rec: dict, chunk_id: str, session: str | None = None) -> bool:
    if rec.get("kind") != "stub":
        return False
    meta = rec.get("meta") or {}
    if meta.get("chunk_id", rec.get("group")) != chunk_id:
        return False
    return session is None or rec.get("session") == session


def splice(records: Sequence[dict], chunk_id: str, session: str | None,
           chunk_records: Sequence[dict]) -> tuple[list[dict], bool]:
    """Replace the stub of `chunk_id` with the chunk's original records."""
    out: list[dict] = []
    done = False
    for r in records:
        if not done and is_stub_for(r, chunk_id, session):
            out.extend(dict(x) for x in chunk_records)
            done = True
        else:
            out.append(r)
    return out, done


def stubs(records: Sequence[dict]) -> list[tuple[str, str | None]]:
    """(chunk_id, session) of every stub in a stream."""
    return [((r.get("meta") or {}).get("chunk_id", r.get("group")), r.get("session"))
            for r in records if r.get("kind") == "stub"]
