"""No input hangs ctx: 10 MB of one token (no dot, no space: base64 of zero bytes, a word, digits,
slashes) through `score`, `compact` and `status`, next to 10 MB of prose. The goal is a ratio
<= 2 (one token / prose) for every command; before the patterns were bounded a 200 KB token
took 50 s in `score`. Also: every module-level pattern in ctxkit on 40k and 160k runs of each
character class (the growth ratio is ~4 when linear, ~16 when quadratic).

    cd bench && ../.venv/bin/python bench_regex.py [--mb 10]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from _common import PY, ROOT

TOKENS = {"base64-zero": "A", "word": "x", "digits": "7", "slashes": "/", "base64": "QUJD", "dots": "a."}


def record_file(path: str, content: str, n: int = 4) -> None:
    """`n` records sharing the content (one token split evenly), then one question."""
    part = len(content) // n
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"v": 1, "kind": "message", "id": f"m{i}", "session": "b", "role": "assistant" if i else "user",
                                "content": content[i * part:(i + 1) * part]}) + "\n")
        f.write(json.dumps({"v": 1, "kind": "message", "id": "q", "session": "b", "role": "user",
                            "content": "what next?"}) + "\n")


def run(args: list[str], path: str, home: str) -> float:
    env = dict(os.environ, CTX_HOME=home, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    p = subprocess.run([PY, "-m", "ctxkit", *args, path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, env=env)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 3):
        print(f"  ! {' '.join(args)} exit {p.returncode}: {p.stderr.strip()[-200:]}")
    return dt


def commands(ws: str) -> dict[str, list[str]]:
    return {"score": ["score", "--embedder", "keyword", "-q", "deploy the service"],
            "compact": ["compact", "--force", "--budget", "2000", "--workspace", ws],
            "status": ["status", "--budget", "100000"]}


def pipeline_rows(mb: float) -> None:
    size = int(mb * 1_000_000)
    prose_unit = "The deploy failed because the config was stale, so we rebuilt it and ran the tests again. "
    with tempfile.TemporaryDirectory() as tmp:
        prose = os.path.join(tmp, "prose.jsonl")
        record_file(prose, (prose_unit * (size // len(prose_unit) + 1))[:size])
        base = {}
        for name, args in commands(os.path.join(tmp, "ws-prose")).items():
            base[name] = run(args, prose, os.path.join(tmp, "home-prose"))
        print(f"{'input (' + str(mb) + ' MB)':<22}" + "".join(f"{c:>18}" for c in base))
        print(f"{'prose':<22}" + "".join(f"{base[c]:>16.2f} s" for c in base))
        worst = 0.0
        for tname, unit in TOKENS.items():
            p = os.path.join(tmp, f"{tname}.jsonl")
            record_file(p, (unit * (size // len(unit) + 1))[:size])
            cells = []
            for name, args in commands(os.path.join(tmp, f"ws-{tname}")).items():
                dt = run(args, p, os.path.join(tmp, f"home-{tname}"))
                ratio = dt / base[name]
                worst = max(worst, ratio)
                cells.append(f"{dt:>8.2f} s ({ratio:4.2f}x)")
            print(f"{'one token: ' + tname:<22}" + "".join(f"{c:>18}" for c in cells))
        print(f"worst ratio one token / prose: {worst:.2f} (goal <= 2)")


def pattern_rows() -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from test_regex_bounds import _patterns  # the suite's list of every module-level pattern

    pats = _patterns()
    units = ["a", "A", "0", " ", ".", "/", "-", "_", "`", "=", ":", "\n", "\\", '"', "#", "*", "(", "a.", "a ",
             "a-", "aA0/+"]
    worst = (0.0, "")
    for name, rx in pats.items():
        for u in units:
            ts = []
            for n in (40_000, 160_000):
                text = (u * (n // len(u) + 1))[:n]
                best = float("inf")
                for _ in range(3):  # the best of three: a stray pause is not growth
                    t = time.perf_counter()
                    for _ in rx.finditer(text):
                        pass
                    best = min(best, time.perf_counter() - t)
                ts.append(best)
            if ts[1] > 0.02:
                g = ts[1] / max(ts[0], 1e-9)
                if g > worst[0]:
                    worst = (g, f"{name} on {u!r}")
    print(f"{len(pats)} patterns x {len(units)} character runs: worst growth 40k -> 160k = "
          f"{worst[0]:.1f}x ({worst[1] or 'none measurable'}; linear ~4, quadratic ~16)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--patterns-only", action="store_true")
    a = ap.parse_args()
    pattern_rows()
    if not a.patterns_only:
        pipeline_rows(a.mb)
