"""Put recovered chunks back where their stubs stand (pure)."""
from __future__ import annotations

from typing import Sequence


def _stands_for(rec: dict) -> str | None:
    """The chunk id a record stands in for: a stub's, or a shrunk output's (its chunk is in
    cold storage whole)."""
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    if rec.get("kind") == "stub":
        return meta.get("chunk_id", rec.get("group"))
    if isinstance(meta.get("shrunk"), dict):
        return meta["shrunk"].get("chunk_id")
    return None


def is_stub_for(rec: dict, chunk_id: str, session: str | None = None) -> bool:
    if _stands_for(rec) != chunk_id:
        return False
    return session is None or rec.get("session") == session


def splice(records: Sequence[dict], chunk_id: str, session: str | None,
           chunk_records: Sequence[dict]) -> tuple[list[dict], bool]:
    """Replace the stub of `chunk_id` (or the shrunk chunk: all its records) with the chunk's
    original records."""
    records = list(records)
    at = next((i for i, r in enumerate(records) if is_stub_for(r, chunk_id, session)), None)
    if at is None:
        return records, False
    if records[at].get("kind") == "stub":
        return records[:at] + [dict(x) for x in chunk_records] + records[at + 1:], True
    group = records[at].get("group")
    start = at
    while start > 0 and records[start - 1].get("group") == group and group is not None:
        start -= 1
    end = at + 1
    while end < len(records) and records[end].get("group") == group and group is not None:
        end += 1
    return records[:start] + [dict(x) for x in chunk_records] + records[end:], True


def stubs(records: Sequence[dict]) -> list[tuple[str, str | None]]:
    """(chunk_id, session) of every stub and shrunk chunk in a stream, once each."""
    out, seen = [], set()
    for r in records:
        cid = _stands_for(r)
        if cid is not None and (cid, r.get("session")) not in seen:
            seen.add((cid, r.get("session")))
            out.append((cid, r.get("session")))
    return out
