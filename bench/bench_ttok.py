"""Side by side with ttok on the same plain text: ctx must not be slower (and another checkout
beside this one with run_all.py --against).

ttok is installed in the bench environment only (`make bench` does it). The goal is a ratio
already: it means the same on a faster machine.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

from _common import DATA, ENV, PY, alternate, build_session, checkouts, env_for, loadavg, run_once

GOAL = 1.0


def main() -> list[dict]:
    ttok = shutil.which("ttok") or os.path.join(os.path.dirname(PY), "ttok")
    src = build_session(target_bytes=8 * 1024 * 1024, name="ttok-src")
    text = DATA / "ttok.txt"
    if not text.exists():
        with open(src) as f, open(text, "w") as out:
            for line in f:
                out.write((json.loads(line).get("content") or "") + "\n")
    # both on o200k_base (ttok's default model is gpt-4o), from the same seeded offline cache
    from ctxkit.backends.tokenizers import seed_tiktoken_cache

    cache = str(DATA / "home" / "cache" / "tiktoken")
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    seed_tiktoken_cache("o200k_base", cache)
    ENV["TIKTOKEN_CACHE_DIR"] = cache
    try:
        run_once([ttok, "-i", str(text)])
    except (FileNotFoundError, RuntimeError, subprocess.CalledProcessError):
        row = {"bench": "ttok", "skipped": "ttok not installed (pip install ttok)"}
        print(json.dumps(row), flush=True)
        return [row]
    cases = {"ttok": lambda: run_once([ttok, "-i", str(text)])}
    for label, root in checkouts():
        cmd = [PY, "-m", "ctxkit", "count", str(text), "--model", "gpt-4o"]
        cases[label] = lambda root=root, cmd=cmd: run_once(cmd, root=root, env=env_for(root))
    best = alternate(cases, repeat=3)
    rows = []
    for label, root in checkouts():
        res = {"bench": "ttok", "checkout": label, "root": str(root),
               "text_mb": round(text.stat().st_size / 1024 / 1024, 1), "ttok_s": round(best["ttok"], 2),
               "ctx_s": round(best[label], 2), "ctx_speedup": round(best["ttok"] / best[label], 2),
               "loadavg": loadavg(), "goal": f">= {GOAL}"}
        print(json.dumps(res), flush=True)
        rows.append(res)
    return rows


if __name__ == "__main__":
    main()
