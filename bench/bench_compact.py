"""Compaction benchmarks (issue 4), side by side in one run:

- every corpus session compacted (extractive) to 10 % of its tokens vs `ctx truncate` to the
  same budget: probe recall (artifact >= 0.95 and error >= 0.9 wanted) and compression
- the same for the llama summarizer with SmolLM2 on the smallest sessions (tokens/s, discarded bullets)
- extractive compaction of 16K / 64K / 1M-token sessions: time (1M <= 10 s) and peak RSS (<= 1 GB)
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from _common import CORPUS, DATA, ENV, PY, build_session, peak_rss_mb


def ctx(*args, input=None, env=None):
    return subprocess.run([PY, "-m", "ctxkit", *map(str, args)], input=input, capture_output=True, text=True,
                          env=env or ENV, check=True).stdout


def probes(session, candidate, env):
    rows = [json.loads(x) for x in ctx("eval", session, "--candidate", candidate, "--json", env=env).splitlines()]
    return {r["category"]: r.get("recall") for r in rows}


def quality(summarizer="extractive", files=None, timeout=120):
    out = []
    files = files or sorted(p for p in CORPUS.glob("*") if p.suffix in (".jsonl", ".json", ".traj"))
    for f in files:
        home = DATA / "compact-home"
        shutil.rmtree(home, ignore_errors=True)
        env = dict(ENV, CTX_HOME=str(home), CTX_SUMMARY_TIMEOUT_S=str(timeout))
        total = int(ctx("count", f, env=env))
        budget = max(100, total // 10)
        comp = DATA / "cand-compact.jsonl"
        comp.write_text(ctx("compact", f, "--budget", budget, "--force", "--summarizer", summarizer, env=env))
        trunc = DATA / "cand-trunc.jsonl"
        trunc.write_text(ctx("truncate", f, "--budget", budget, env=env))
        ev = [json.loads(x) for x in open(home / "logs" / "compaction.jsonl")][-1]
        pc, pt = probes(f, comp, env), probes(f, trunc, env)
        out.append({"bench": f"compact-{summarizer}", "session": f.name[:36], "tokens": total, "budget": budget,
                    "artifact": pc["artifact"], "error": pc["error"], "continuation": pc["continuation"],
                    "recall": pc["recall"], "compression": pc["compression"],
                    "truncate_artifact": pt["artifact"], "truncate_error": pt["error"],
                    "truncate_continuation": pt["continuation"], "truncate_recall": pt["recall"],
                    "truncate_compression": pt["compression"], "summarizer_used": ev.get("summarizer"),
                    "degraded": ev.get("degraded"), "tokens_per_s": ev.get("tokens_per_s"),
                    "bullets_kept": ev.get("model_bullets_kept"), "bullets_discarded": ev.get("model_bullets_discarded")})
    return out


def scaling():
    res = {"bench": "compact-scaling"}
    for label, n in (("16k", 16_000), ("64k", 64_000), ("1m", 1_000_000)):
        path = build_session(target_tokens=n, name="mem")
        home = DATA / "scale-home"
        shutil.rmtree(home, ignore_errors=True)
        env = dict(ENV, CTX_HOME=str(home))
        cmd = [PY, "-m", "ctxkit", "compact", str(path), "--budget", str(max(1000, n // 10)), "--force"]
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        res[f"time_{label}_s"] = round(time.perf_counter() - t, 2)
        shutil.rmtree(home, ignore_errors=True)
        os.environ.update({"CTX_HOME": str(home)})
        res[f"rss_{label}_mb"] = round(peak_rss_mb(cmd), 1)
    res["goal"] = "1m <= 10 s, rss <= 1024 MB, time ~linear"
    return res


def main(args=()):
    for row in quality():
        print(json.dumps(row))
    if "--no-llama" not in args:
        small = sorted((p for p in CORPUS.glob("*") if p.suffix in (".jsonl", ".json", ".traj")),
                       key=lambda p: p.stat().st_size)[:2]
        for row in quality("llama", small, timeout=180):
            print(json.dumps(row))
    print(json.dumps(scaling()))


if __name__ == "__main__":
    main(sys.argv[1:])
