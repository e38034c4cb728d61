"""Peak RSS of `ctx status` on 16K, 64K and 1M-token sessions.

Goal: the 1M run <= 1.5x the 16K run (streaming, constant memory).
"""
from __future__ import annotations

import json

from _common import PY, build_session, peak_rss_mb


def main() -> dict:
    res = {"bench": "memory"}
    for label, n in (("16k", 16_000), ("64k", 64_000), ("1m", 1_000_000)):
        path = build_session(target_tokens=n, name="mem")
        res[f"rss_{label}_mb"] = round(peak_rss_mb([PY, "-m", "ctxkit", "status", str(path), "--json"]), 1)
    res["ratio_1m_over_16k"] = round(res["rss_1m_mb"] / res["rss_16k_mb"], 2)
    res["goal"] = "<= 1.5"
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
