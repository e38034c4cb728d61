"""Relevance dropping against the future, on three sets of cuts, side by side with another checkout.

The shared evaluation (../shared/eval/drop_eval.py, imported at run time, never copied) cuts each
corpus session, drops with `ctx drop --free 0.5` and with the defaults, and counts the chunks the
agent needed later that are still there. This script runs it on three sets of cuts:

- standard: cuts at 40/60/80 % of the records (the evaluation's own);
- held-out: cuts at 30/50/70/90 % (never used to choose a weight);
- continue: the standard cuts with a bare "continue" appended as the last user request, the case
  where the request says nothing and scoring must use what the agent is doing.

Per set and checkout it prints one JSON line and a table row: the needed chunks kept at
`--free 0.5` (ctx, dropping the oldest and random at the same tokens, means over runs), ctx's
wins/ties/losses against dropping the oldest, its lowest run, and the default pipeline's (no
flags) tokens freed and lowest recall. Asserts nothing.

    PYTHONPATH=$PWD python bench/bench_drop_sets.py [--against DIR] [--sets standard,held-out,continue]

--against DIR also runs another checkout (its own ctxkit, same venv) on the same sets in the same
run, e.g. `--against /work/main` from a branch. About 3 minutes per set and checkout.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import CORPUS, DATA, PY, ROOT, SMOKE

EVAL = CORPUS.parent / "eval"
SETS = {"standard": (0.4, 0.6, 0.8), "held-out": (0.3, 0.5, 0.7, 0.9), "continue": (0.4, 0.6, 0.8)}


def _one(name: str, out: str, only: str | None) -> None:
    """In a child process: run the evaluation on one set, its results in OUT/results.json."""
    sys.path.insert(0, str(EVAL))
    import drop_eval as D

    D.CUTS = SETS[name]
    if name == "continue":
        run_cut = D.run_cut

        def with_continue(session, recs, b, label, log):
            last = recs[b - 1]
            cont = {"v": 1, "kind": "message", "id": f"continue-{b}", "session": last.get("session"),
                    "ts": last.get("ts"), "role": "user", "content": "continue", "group": f"continue-{b}"}
            return run_cut(session, recs[:b] + [cont] + recs[b:], b + 1, label, log)

        D.run_cut = with_continue
    ctx = str(Path(sys.executable).with_name("ctx"))
    sys.argv = ["drop_eval", "--mode", "free50", "--out", out, "--ctx", ctx] + (["--only", only] if only else [])
    with open(os.devnull, "w") as quiet:   # the evaluation's progress lines; its run.log keeps them
        stdout, sys.stdout = sys.stdout, quiet
        try:
            D.main()
        finally:
            sys.stdout = stdout


def summary(results: list[dict]) -> dict:
    ctx = [r["ctx50"]["recall"] for r in results]
    old = [r["oldest50"]["recall"] for r in results]
    w = sum(1 for a, b in zip(ctx, old) if a > b + 1e-9)
    lo = sum(1 for a, b in zip(ctx, old) if a < b - 1e-9)
    both_full = sum(1 for a, b in zip(ctx, old) if a >= 1 - 1e-9 and b >= 1 - 1e-9)
    worst = min(results, key=lambda r: r["ctx50"]["recall"])
    return {
        "runs": len(results),
        "freed_at_free50": round(statistics.mean(r["ctx50"]["freed"] / r["tokens_before"] for r in results), 3),
        "ctx": round(statistics.mean(ctx), 3),
        "oldest": round(statistics.mean(old), 3),
        "random": round(statistics.mean(r["random50"]["recall"] for r in results), 3),
        "wins_ties_losses": f"{w}/{len(results) - w - lo}/{lo}",
        "ties_both_at_1": both_full,
        "lowest": round(worst["ctx50"]["recall"], 3),
        "lowest_run": f"{worst['session'].split(':', 1)[-1][:32]} {worst['cut']}",
        "losses": [f"{r['session'].split(':', 1)[-1][:32]} {r['cut']}" for r in results
                   if r["ctx50"]["recall"] < r["oldest50"]["recall"] - 1e-9],
        "default_freed": round(statistics.mean(r["ctx_default"]["freed"] / r["tokens_before"] for r in results), 3),
        "default_lowest": round(min(r["ctx_default"]["recall"] for r in results), 3),
    }


def main() -> None:
    if "--one" in sys.argv:
        i = sys.argv.index("--one")
        only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
        _one(sys.argv[i + 1], sys.argv[i + 2], only)
        return
    if not (EVAL / "drop_eval.py").exists():
        print(json.dumps({"bench": "drop-sets", "skipped": "no ../shared/eval/drop_eval.py"}))
        return
    sets = sys.argv[sys.argv.index("--sets") + 1].split(",") if "--sets" in sys.argv else list(SETS)
    checkouts = [("this", ROOT)]
    if "--against" in sys.argv:
        checkouts.append(("against", Path(sys.argv[sys.argv.index("--against") + 1]).resolve()))
    only = None
    if SMOKE:   # one small session, one set: that the script runs, not what it measures
        sets, only = ["standard"], "pydicom"
    DATA.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in sets:
        if name not in SETS:
            sys.exit(f"bench_drop_sets: unknown set {name!r} (sets: {', '.join(SETS)})")
        for label, checkout in checkouts:
            out = tempfile.mkdtemp(prefix=f"drop-sets-{name}-{label}-", dir=DATA)
            env = dict(os.environ, PYTHONPATH=str(checkout), HF_HUB_OFFLINE="1")
            env.pop("CTX_HOME", None)
            cmd = [PY, __file__, "--one", name, out] + (["--only", only] if only else [])
            p = subprocess.run(cmd, env=env, cwd=checkout, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"bench_drop_sets: the evaluation failed on {name} ({checkout}):\n{p.stderr[-2000:]}")
            with open(os.path.join(out, "results.json")) as f:
                results = json.load(f)["results"]
            row = {"bench": "drop-sets", "set": name, "checkout": str(checkout), **summary(results), "out": out}
            print(json.dumps(row), flush=True)
            rows.append(row)
    from tabulate import tabulate

    head = ["set", "checkout", "runs", "freed", "ctx", "oldest", "random", "W/T/L vs oldest", "both 1.0", "lowest",
            "default freed", "default lowest"]
    print(tabulate([[r["set"], Path(r["checkout"]).name, r["runs"], r["freed_at_free50"], r["ctx"], r["oldest"],
                     r["random"], r["wins_ties_losses"], r["ties_both_at_1"], r["lowest"], r["default_freed"],
                     r["default_lowest"]] for r in rows], headers=head, tablefmt="github"), file=sys.stderr)


if __name__ == "__main__":
    main()
