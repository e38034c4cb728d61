"""`ctx count` on a ~50 MB JSONL vs bare tiktoken encoding the same texts, same run.

Goal: ctx's throughput >= 0.8 of tiktoken's (batched, threaded encoding on both sides).
"""
from __future__ import annotations

import json
import os
import time

from _common import PY, build_session, timed


def main(mb: int = 50) -> dict:
    path = build_session(target_bytes=mb * 1024 * 1024, name="count")
    # Warm both sides (tiktoken BPE load, page cache).
    timed([PY, "-m", "ctxkit", "count", str(path)])
    from ctxkit.backends.tokenizers import get_tokenizer, record_texts

    enc = get_tokenizer("cl100k_base").enc
    texts = []
    with open(path) as f:
        for line in f:
            texts.extend(record_texts(json.loads(line)))
    t = time.perf_counter()
    enc.encode_ordinary_batch(texts, num_threads=os.cpu_count() or 2)
    bare = time.perf_counter() - t
    ctx = timed([PY, "-m", "ctxkit", "count", str(path)], repeat=2)
    size = os.path.getsize(path) / 1024 / 1024
    res = {"bench": "count", "file_mb": round(size, 1), "tiktoken_s": round(bare, 2), "ctx_count_s": round(ctx, 2),
           "throughput_ratio": round(bare / ctx, 2), "goal": ">= 0.8"}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
