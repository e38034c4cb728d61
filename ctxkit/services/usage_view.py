"""What fills the window: the biggest chunks of a stream (ctx top)."""
from __future__ import annotations

import heapq
from typing import Iterable


def biggest_chunks(records: Iterable[dict], tok, limit: int, count_all: bool = False) -> tuple[list[dict], int, int]:
    """(the LIMIT biggest chunks as rows, biggest first; the tokens of all chunks counted; how
    many chunks) — from the last compaction boundary on unless COUNT_ALL. A row's `share` is of
    those tokens, `age` how long before now its last record was written. Memory: the top LIMIT."""
    from ..backends.tokenizers import count_records
    from ..core.groups import iter_groups
    from ..core.status import chunk_row
    from ..core.timeinfo import ago
    from ..core.timeutil import now, parse_ts
    from ..core.usage import is_boundary

    heap: list[tuple[int, int, dict]] = []
    total = chunks = 0
    for i, group in enumerate(iter_groups(records)):
        if not count_all and any(is_boundary(r) for r in group):
            heap, total, chunks = [], 0, 0   # compacted away: the model sees what follows
        context = [r for r in group if r.get("kind") != "event"]
        if not context:
            continue
        tokens = sum(count_records(tok, context, reuse=True))
        total += tokens
        chunks += 1
        item = (tokens, -i, context)
        if len(heap) < limit:
            heapq.heappush(heap, item)
        elif item[:2] > heap[0][:2]:
            heapq.heapreplace(heap, item)
    ref = now()
    rows = []
    for tokens, _, group in sorted(heap, key=lambda t: t[:2], reverse=True):
        row = chunk_row(group, tokens)
        when = parse_ts(row["ts"]) if row["ts"] else None
        rows.append({**row, "share": round(tokens / total, 4) if total else 0.0,
                     "age": ago(when, ref) if when else None})
    return rows, total, chunks
