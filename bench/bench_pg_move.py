"""What moving a home's state to PostgreSQL and back costs, and what shell completion of ids costs
on each store: a throwaway server (tests/pgcluster.py), a home seeded with N sessions (each a
CONTEXT.md whose Decisions lost 5 items to the archive, a maintain state) and N/4 archived
CONTEXT.md copies; `ctx store migrate` to the store, again (all present), back to a fresh home,
and again; then `ctx recover --chunk-id c-<Tab>` (median of 9) on both stores.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_pg_move.py --sessions 400
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def seed(home: str, n: int) -> None:
    from ctxkit.core.context_md import Item
    from ctxkit.store.home import Home
    from ctxkit.store.runstate import FileRunState
    from ctxkit.store.session_state import state_file

    os.environ["CTX_QUIET"] = "1"
    h = Home(home)
    for i in range(n):
        def add(ctx, i=i):
            ctx.state["session"] = f"s{i}"
            ctx.sections["Decisions"] = [Item(f"decision {i}.{k}") for k in range(6)]
        sf = state_file(h, f"s{i}")
        sf.update(add)
        sf.update(lambda ctx: ctx.sections.__setitem__("Decisions", ctx.sections["Decisions"][5:]))
        with FileRunState(h).hold("maintain", f"s{i}") as st:
            st.update({"through": i, "summarized_at": "2026-01-01T00:00:00Z"})
    os.makedirs(os.path.join(home, "archive"), exist_ok=True)
    for i in range(n // 4):
        with open(os.path.join(home, "archive", f"CONTEXT-s{i}-2026.md"), "w") as f:
            f.write(f"# Context\n\n## Task\ntask {i}\n")
    os.environ.pop("CTX_QUIET")


def ctx(env: dict, *args: str, stdin: str | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "ctxkit", *args], env=env, input=stdin, capture_output=True, text=True)
    return time.perf_counter() - t0, p


def completion_ms(env: dict) -> float:
    env = dict(env, COMP_WORDS="ctx recover --chunk-id c-", COMP_CWORD="3", _CTX_COMPLETE="bash_complete")
    times = sorted(ctx(env)[0] for _ in range(9))
    return round(times[4] * 1000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=400)
    args = ap.parse_args()
    from pgcluster import Cluster, usable_bin_dirs

    bins = usable_bin_dirs()
    if not bins:
        print("no PostgreSQL binaries: install postgresql or pgserver", file=sys.stderr)
        sys.exit(1)
    c = Cluster(bins[0][1]).start()
    tmp = tempfile.mkdtemp(prefix="ctx-bench-move-")
    try:
        url = c.url(c.new_db())
        base = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
        base["PYTHONPATH"] = str(ROOT)
        home, home2 = os.path.join(tmp, "home"), os.path.join(tmp, "home2")
        seed(home, args.sessions)
        env, env2 = dict(base, CTX_HOME=home), dict(base, CTX_HOME=home2)
        assert ctx(env, "store", "init", "--url", url)[1].returncode == 0
        for name, e, argv in (("to-pg", env, ("--to", url)), ("to-pg-again", env, ("--to", url)),
                              ("back", env2, ("--to", "embedded", "--from", url)),
                              ("back-again", env2, ("--to", "embedded", "--from", url))):
            s, p = ctx(e, "store", "migrate", *argv)
            assert p.returncode == 0, p.stderr[-500:]
            print(json.dumps({"bench": f"store-migrate-{name}", "sessions": args.sessions, "seconds": round(s, 2),
                              "done": p.stderr.strip().splitlines()[-1].split("done: ", 1)[-1]}))
        recs = "".join(json.dumps({"v": 1, "kind": "message", "id": f"m{i}", "session": "s1", "role": "assistant",
                                   "content": "the build log says nothing new here " * 30}) + "\n" for i in range(20))
        for store, e in (("embedded", env2), ("postgresql", dict(env2, CTX_STORE_URL=url))):
            scored = ctx(e, "score", "-", "--embedder", "keyword", "-q", "unrelated", stdin=recs)[1].stdout
            ctx(e, "drop", "--cutoff", "0.99", "--keep", "1.0", "--min-keep", "1", stdin=scored)
            print(json.dumps({"bench": "completion-chunk-ids", "store": store, "median_ms": completion_ms(e)}))
        print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus", file=sys.stderr)
    finally:
        c.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
