"""`ctx count` on a ~50 MB JSONL vs bare tiktoken encoding the same texts, same run, side by side
with another checkout (run_all.py --against).

Goal: ctx's throughput >= 0.8 of tiktoken's (batched, threaded encoding on both sides). The
goal is a ratio already: it means the same on a faster machine.
"""
from __future__ import annotations

import json
import os
import time

from _common import PY, alternate, build_session, checkouts, loadavg, run_once

GOAL = 0.8


def main(mb: int = 50) -> list[dict]:
    path = build_session(target_bytes=mb * 1024 * 1024, name="count")
    from ctxkit.backends.tokenizers import get_tokenizer, record_texts

    enc = get_tokenizer("cl100k_base").enc
    texts = []
    with open(path) as f:
        for line in f:
            texts.extend(record_texts(json.loads(line)))

    def bare() -> float:
        t = time.perf_counter()
        enc.encode_ordinary_batch(texts, num_threads=os.cpu_count() or 2)
        return time.perf_counter() - t

    cases = {"tiktoken": bare}
    for label, root in checkouts():
        run_once([PY, "-m", "ctxkit", "count", str(path)], root=root)  # warm: BPE cache, page cache, bytecode
        cases[label] = lambda root=root: run_once([PY, "-m", "ctxkit", "count", str(path)], root=root)
    best = alternate(cases, repeat=2)
    size = os.path.getsize(path) / 1024 / 1024
    rows = []
    for label, root in checkouts():
        res = {"bench": "count", "checkout": label, "root": str(root), "file_mb": round(size, 1),
               "tiktoken_s": round(best["tiktoken"], 2), "ctx_count_s": round(best[label], 2),
               "throughput_ratio": round(best["tiktoken"] / best[label], 2), "loadavg": loadavg(),
               "goal": f">= {GOAL}"}
        print(json.dumps(res), flush=True)
        rows.append(res)
    return rows


if __name__ == "__main__":
    main()
