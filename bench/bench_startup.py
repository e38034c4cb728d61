"""Start-up: `ctx --help` and `ctx status` on a 1k-message session vs `python -c pass`.

Goal: at most 150 ms above bare Python start-up.
"""
from __future__ import annotations

import json

from _common import DATA, PY, build_session, timed


def main() -> dict:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / "startup-1k.jsonl"
    if not path.exists():
        big = build_session(target_tokens=400_000, name="startup-src")
        with open(big) as src, open(path, "w") as dst:
            for i, line in enumerate(src):
                if i >= 1000:
                    break
                dst.write(line)
    base = timed([PY, "-c", "pass"], repeat=7)
    help_ = timed([PY, "-m", "ctxkit", "--help"], repeat=7)
    status = timed([PY, "-m", "ctxkit", "status", str(path), "--json"], repeat=7)
    res = {"bench": "startup", "python_ms": round(base * 1000), "help_ms": round(help_ * 1000),
           "status_1k_ms": round(status * 1000), "help_over_python_ms": round((help_ - base) * 1000),
           "status_over_python_ms": round((status - base) * 1000), "goal": "<= 150 ms over python"}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
