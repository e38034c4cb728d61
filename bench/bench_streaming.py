"""Peak memory of the stream commands as input grows (issue 12): truncate, score (keyword),
drop and compact on ~50 MB and ~200 MB of corpus records, side by side. Flat means the
200 MB run needs about what the 50 MB run needs, not four times as much.

    cd bench && ../.venv/bin/python run_all.py streaming
"""
from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import tempfile

from _common import PY, ROOT, build_session

SIZES_MB = (50, 200)


def peak_rss_mb(args: list[str], stdin_path: str, home: str) -> tuple[float, int]:
    env = dict(os.environ, CTX_HOME=home, PYTHONPATH=str(ROOT))
    with open(stdin_path, "rb") as f:
        p = subprocess.Popen([PY, "-m", "ctxkit", *args], stdin=f, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(p.pid, 0)
    return usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def scored(path, out_path) -> str:
    if not os.path.exists(out_path):
        rnd = random.Random(0)
        with open(path) as f, open(out_path, "w") as o:
            for line in f:
                r = json.loads(line)
                r["score"] = round(rnd.random(), 3)
                o.write(json.dumps(r) + "\n")
    return out_path


def main() -> None:
    rows = {}
    for mb in SIZES_MB:
        src = str(build_session(target_bytes=mb * 1024 * 1024, name="stream"))
        sc = scored(src, src.replace(".jsonl", "-scored.jsonl"))
        for name, args, inp in (("truncate", ["truncate", "--budget", "8000"], src),
                                ("score", ["score", "-q", "elixir tests", "--embedder", "keyword"], src),
                                ("drop", ["drop"], sc),
                                ("compact", ["compact", "--force", "--budget", "8000"], src)):
            with tempfile.TemporaryDirectory() as home:
                rss, code = peak_rss_mb(args, inp, home)
            rows.setdefault(name, {})[mb] = (rss, code)
    for name, by in rows.items():
        small, big = by[SIZES_MB[0]][0], by[SIZES_MB[-1]][0]
        print(json.dumps({"bench": "streaming", "command": name,
                          **{f"rss_mb_at_{mb}mb": round(by[mb][0], 1) for mb in SIZES_MB},
                          "exit": [by[mb][1] for mb in SIZES_MB],
                          "growth": round(big / small, 2), "input_growth": SIZES_MB[-1] / SIZES_MB[0]}))


if __name__ == "__main__":
    main()
