"""Peak memory of the stream commands as input grows (issue 12): truncate, score (keyword),
drop and compact on ~50 MB and ~200 MB of corpus records, side by side. Flat means the
200 MB run needs about what the 50 MB run needs, not four times as much.

    cd bench && ../.venv/bin/python run_all.py streaming
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile

from _common import PY, ROOT, build_session, pick

SIZES_MB = pick((50, 200), (2, 4))  # smoke: build_session makes them 20 and 40 KB


def peak_rss_mb(args: list[str], path: str, home: str) -> tuple[float, int]:
    """Peak RSS of `ctx ARGS PATH` from GNU time (a forked child's own rusage would start from
    this process's memory)."""
    import shutil

    env = dict(os.environ, CTX_HOME=home, PYTHONPATH=str(ROOT))
    gtime = shutil.which("time") or "/usr/bin/time"
    p = subprocess.run([gtime, "-f", "%M", PY, "-m", "ctxkit", *args, path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env)
    return int(p.stderr.strip().splitlines()[-1]) / 1024, p.returncode


def scored(path, out_path) -> str:
    if not os.path.exists(out_path):
        rnd = random.Random(0)
        with open(path) as f, open(out_path, "w") as o:
            for line in f:
                r = json.loads(line)
                r["score"] = round(rnd.random(), 3)
                o.write(json.dumps(r) + "\n")
    return out_path


def one_long_line(mb: int = 50) -> None:
    """Issue 12: one message of 50 MB with no newline is counted in bounded memory (goal: under
    0.5 GB and about 2x the line over the interpreter's own)."""
    import string

    path = os.path.join(tempfile.gettempdir(), f"ctx-bench-line{mb}.jsonl")
    if not os.path.exists(path):
        rnd = random.Random(1)
        alphabet = string.ascii_letters + string.digits + "+/"
        blob = "".join(rnd.choice(alphabet) for _ in range(mb * 1024 * 1024))
        with open(path, "w") as f:
            f.write(json.dumps({"v": 1, "kind": "message", "id": "m1", "session": "s", "role": "tool",
                                "tool_call_id": "t", "content": blob}) + "\n")
    tiny = os.path.join(tempfile.gettempdir(), "ctx-bench-tiny.jsonl")
    with open(tiny, "w") as f:
        f.write(json.dumps({"v": 1, "kind": "message", "id": "m1", "session": "s", "role": "user",
                            "content": "hi"}) + "\n")
    for args in (["count"], ["status"], ["truncate", "--budget", "1000"]):
        with tempfile.TemporaryDirectory() as home:
            base, _ = peak_rss_mb(args, tiny, home)
            rss, code = peak_rss_mb(args, path, home)
        print(json.dumps({"bench": "streaming", "command": " ".join(args), "line_mb": mb, "rss_mb": round(rss, 1),
                          "rss_mb_tiny_input": round(base, 1), "over_interpreter_x_line": round((rss - base) / mb, 2),
                          "exit": code}))


def main() -> None:
    one_long_line(pick(50, 1))
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
