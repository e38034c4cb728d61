"""Semantic look-ups in a fresh process (issue 14), measured side by side in one run:
the ONNX path (default when `make setup` made the export) against sentence-transformers
(CTX_EMBED_ENGINE=torch), for cold-storage search, recover --query, memory search,
prompt build -q and score -q with a new query on a cached session; plus the cold
`import | score | drop` of corpus session fa812bfe.

Goals: each look-up <= 1.0 s and <= 10x `ctx --help`, >= 8x faster than the torch path,
peak RSS <= 300 MB; the cold pipeline <= 5 s.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid

from _common import CORPUS, DATA, ENV, PY, ROOT, SMOKE, corpus_files, pick

CTX = [PY, "-m", "ctxkit"]


def run(args, env, stdin=None):
    t = time.perf_counter()
    gtime = shutil.which("time") or "/usr/bin/time"
    p = subprocess.run([gtime, "-f", "%M", *CTX, *args], input=stdin, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{args} failed: {p.stderr[-400:]}")
    return time.perf_counter() - t, int(p.stderr.strip().splitlines()[-1]) / 1024


def setup(home, ws):
    session = CORPUS / "claude-code_spotter_491e126e_session.jsonl"
    if not session.exists():
        session = ROOT / "examples" / "claude-code_spotter_491e126e_session.jsonl"
    env = dict(ENV, CTX_HOME=str(home), CTX_WORKSPACE=str(ws))
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("".join(f"- fact {i}: the deploy uses blue-green slots and credo checks\n"
                                          for i in range(200)))
    imported = subprocess.run(CTX + ["import", str(session)], capture_output=True, text=True, env=env).stdout
    scored = subprocess.run(CTX + ["score", "-", "--embedder", "minilm", "-q", "credo setup"], input=imported,
                            capture_output=True, text=True, env=env).stdout
    subprocess.run(CTX + ["drop", "--cutoff", "0.6", "--keep", "0.9"], input=scored, capture_output=True,
                   text=True, env=env)
    (DATA / "sem-scored.jsonl").write_text(scored)
    return env


def main() -> list[dict]:
    DATA.mkdir(parents=True, exist_ok=True)
    home, ws = DATA / "sem-home", DATA / "sem-ws"
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(ws, ignore_errors=True)
    env = setup(home, ws)
    help_s = min(run(["--help"], env)[0] for _ in range(pick(3, 1)))
    rows = []
    looks = {
        "cold-storage search": lambda q: ["cold-storage", "search", q, "--embedder", "minilm", "--json"],
        "recover --query": lambda q: ["recover", "--query", q, "--embedder", "minilm"],
        "memory search": lambda q: ["memory", "search", q, "--embedder", "minilm", "--json"],
        "prompt build -q": lambda q: ["prompt", "build", "-q", q],
        "score -q": lambda q: ["score", str(DATA / "sem-scored.jsonl"), "-q", q, "--embedder", "minilm"],
    }
    if SMOKE:  # two lookups, onnx only: enough to know the commands still run
        looks = dict(list(looks.items())[2:4])
    for name, argv in looks.items():
        run(argv("warm the cache of the stored texts"), env)  # "on a cached session": only the query is new
        res = {"bench": "semantic-lookup", "command": name, "help_s": round(help_s, 3)}
        for engine in pick(("onnx", "torch"), ("onnx",)):
            e = dict(env, CTX_EMBED_ENGINE="" if engine == "onnx" else "torch")
            q = f"how was the {uuid.uuid4().hex[:6]} quality tooling set up"   # a new query: never cached
            wall, rss = run(argv(q), e)
            res[f"{engine}_s"], res[f"{engine}_rss_mb"] = round(wall, 3), round(rss, 1)
        if "torch_s" in res:
            res["speedup"] = round(res["torch_s"] / res["onnx_s"], 1)
        res["x_help"] = round(res["onnx_s"] / help_s, 1)
        res["goal"] = "onnx <= 1.0 s, <= 10x help, >= 8x torch, rss <= 300 MB"
        rows.append(res)
        print(json.dumps(res))
    fa = corpus_files()[0] if SMOKE else CORPUS / "claude-code_spotter_fa812bfe_session.jsonl"
    if fa.exists():
        cold = DATA / "sem-cold"
        shutil.rmtree(cold, ignore_errors=True)
        e = dict(env, CTX_HOME=str(cold))
        cmd = (f"{' '.join(CTX)} import {fa} | {' '.join(CTX)} score --embedder minilm --query-from last-user "
               f"| {' '.join(CTX)} drop > /dev/null")
        t = time.perf_counter()
        subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=e, check=True, capture_output=True)
        row = {"bench": "cold-import-score-drop", "session": fa.name[:36], "wall_s": round(time.perf_counter() - t, 2),
               "goal": "<= 5 s"}
        print(json.dumps(row))
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
