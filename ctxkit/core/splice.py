"""Put recovered chunks back where their stubs stand (pure)."""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence


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


def splice_stream(records: Iterable[dict], chunks: Sequence[tuple[str, str | None, Sequence[dict]]]) \
        -> Iterator[dict]:
    """`splice` of each chunk of `chunks` ((chunk_id, session, its original records)) over a
    stream, group by group: the first stub of each is replaced by the chunk's records, a shrunk
    chunk's whole group likewise; memory is one group's, whatever the stream's length."""
    from .groups import iter_groups

    left = list(chunks)
    for g in iter_groups(records):
        out: list[dict] = []
        for r in g:
            hit = next((c for c in left if is_stub_for(r, c[0], c[1])), None) if left else None
            if hit is None:
                out.append(r)
                continue
            left.remove(hit)
            if r.get("kind") == "stub":
                out.extend(dict(x) for x in hit[2])
                continue
            out = [dict(x) for x in hit[2]]   # a shrunk chunk: its whole group
            break
        yield from out


def stubs(records: Iterable[dict]) -> list[tuple[str, str | None]]:
    """(chunk_id, session) of every stub and shrunk chunk in a stream, once each."""
    out, seen = [], set()
    for r in records:
        cid = _stands_for(r)
        if cid is not None and (cid, r.get("session")) not in seen:
            seen.add((cid, r.get("session")))
            out.append((cid, r.get("session")))
    return out
