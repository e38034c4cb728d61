"""Relevance dropping (issue 23): how well each score signal predicts what the agent needs later,
which weights rank best, and how fast import + score + drop runs. Prints measured figures beside
their goals; asserts nothing.

Quality uses the shared evaluation's own definitions (cut points, "needed later") by importing
../shared/eval/drop_eval.py at run time; without it, that part is skipped. Each corpus session is
cut at 40/60/80 %; the prefix is scored in-process with the keyword embedder (the signals other
than similarity do not depend on the embedder); for every message chunk but the newest 5 the
label is "needed later". Per signal: AUC (chance 0.5) of needed vs not, mean over runs.

    PYTHONPATH=$PWD python bench/bench_drop.py [--speed-only | --quality-only]
"""
from __future__ import annotations

import io
import itertools
import shutil
import json
import os
import statistics
import subprocess
import sys
import time

from _common import CORPUS, DATA, ENV, PY, build_session

EVAL = CORPUS.parent / "eval"
EMBEDDER = "minilm" if "--minilm" in sys.argv else "keyword"
SIGNALS = ("similarity", "recency", "importance", "working_set", "superseded")


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = 0.0
    for p in pos:
        for n in neg:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(pos) * len(neg))


class _Home:
    def __init__(self, path):
        from ctxkit.store.home import Home

        self.h = Home(str(path))

    def __getattr__(self, k):
        return getattr(self.h, k)


def _score(home, recs):
    from ctxkit.io.jsonl import Writer
    from ctxkit.services.embedding import make_embedder
    from ctxkit.services.scoring import score_stream

    buf = io.StringIO()
    score_stream(home, [dict(r) for r in recs], None, EMBEDDER, None, Writer(buf),
                 lambda h, n, k: make_embedder(h, n, k), "last-user")
    return [json.loads(x) for x in buf.getvalue().splitlines()]


def quality() -> None:
    if not (EVAL / "drop_eval.py").exists():
        print(json.dumps({"bench": "drop-signals", "skipped": "no ../shared/eval/drop_eval.py"}))
        return
    sys.path.insert(0, str(EVAL))
    import drop_eval as E

    from ctxkit.store.home import Home

    home = Home(str(DATA / "drop-home"))
    runs = []
    for src in E.SOURCES:
        recs = [json.loads(x) for x in subprocess.run([PY, "-m", "ctxkit", "import", src], capture_output=True,
                                                     text=True, env=ENV, check=True).stdout.splitlines()]
        groups = E.group_list(recs)
        msg = [g for g, idx in groups if g is not None and E.is_message_group(recs, idx)]
        if len(msg) < E.MIN_CHUNKS or sum(1 for r in recs if r.get("role") == "assistant") < E.MIN_ASSISTANT:
            continue
        for b in E.cut_points(recs):
            prefix, suffix = recs[:b], recs[b:]
            pg = E.group_list(prefix)
            needed, _ = E.decide_needed(prefix, suffix, pg)
            scored = _score(home, prefix)
            parts = {}
            for r in scored:
                if r.get("group") and "score_parts" in r:
                    parts[r["group"]] = r["score_parts"]
            mg = [g for g, idx in pg if g is not None and E.is_message_group(prefix, idx)][:-5]
            rows = [(bool(needed[g]["needed_terms"]), parts[g]) for g in mg if g in parts]
            runs.append((os.path.basename(src)[:28], b, rows))
    with open(DATA / "drop-signals.json", "w") as f:   # for a closer look at the runs
        json.dump(runs, f)
    print(json.dumps({"bench": "drop-signals", "runs": len(runs),
                      "chunks": sum(len(r) for _, _, r in runs),
                      "needed_share": round(statistics.mean(sum(n for n, _ in r) / max(1, len(r))
                                                            for _, _, r in runs), 2)}))
    for s in SIGNALS:
        a = [auc([p[s] for n, p in r if n], [p[s] for n, p in r if not n]) for _, _, r in runs]
        a = [x for x in a if x is not None]
        print(json.dumps({"signal": s, "auc_mean": round(statistics.mean(a), 3), "auc_min": round(min(a), 3),
                          "runs": len(a), "chance": 0.5}))
    grid = []
    for ws, sp, sim, rec, imp in itertools.product((0.0, 0.2, 0.4, 0.6), (0.0, 0.1, 0.2, 0.3),
                                                   (0.0, 0.05, 0.1, 0.3), (0.0, 0.05, 0.1, 0.2), (0.0, 0.05)):
        def sc(p):
            return sim * p["similarity"] + rec * p["recency"] + imp * p["importance"] + ws * p["working_set"] \
                - sp * p["superseded"]
        a = [auc([sc(p) for n, p in r if n], [sc(p) for n, p in r if not n]) for _, _, r in runs]
        a = [x for x in a if x is not None]
        grid.append((statistics.mean(a), min(a), dict(similarity=sim, recency=rec, importance=imp, working_set=ws,
                                                      superseded=sp)))
    grid.sort(key=lambda g: -g[0])
    for m, lo, w in grid[:5]:
        print(json.dumps({"weights": w, "auc_mean": round(m, 3), "auc_min": round(lo, 3)}))
    from ctxkit.store.config import KNOBS

    now = dict(similarity=KNOBS["similarity_weight"].default, recency=KNOBS["recency_weight"].default,
               importance=KNOBS["importance_weight"].default, working_set=KNOBS["working_set_weight"].default,
               superseded=KNOBS["superseded_weight"].default)

    def sc_now(p):
        return sum(now[k] * p[k] for k in SIGNALS if k != "superseded") - now["superseded"] * p["superseded"]
    a = [auc([sc_now(p) for n, p in r if n], [sc_now(p) for n, p in r if not n]) for _, _, r in runs]
    a = [x for x in a if x is not None]
    print(json.dumps({"weights": "defaults", **now, "auc_mean": round(statistics.mean(a), 3),
                      "auc_min": round(min(a), 3)}))
    base = next(g for g in grid if g[2] == dict(similarity=0.6, recency=0.2, importance=0.1, working_set=0.0,
                                                superseded=0.0))
    print(json.dumps({"weights": "before (0.6/0.2/0.1, no working set, no superseded)",
                      "auc_mean": round(base[0], 3), "auc_min": round(base[1], 3)}))


def _pipeline(path, home, pythonpath, drop_args) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys of the processes) of import | score | drop."""
    import resource

    env = dict(ENV, CTX_HOME=str(home), CTX_QUIET="1", PYTHONPATH=pythonpath)
    shutil.rmtree(home, ignore_errors=True)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(f"{PY} -m ctxkit import {path} | {PY} -m ctxkit score --embedder keyword | "
                   f"{PY} -m ctxkit drop {drop_args} > /dev/null", shell=True, env=env, check=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def speed() -> None:
    """import + score + drop of a 100k-token session (this checkout beside main when
    ../main exists), and scoring 10k chunks of ~400 characters with every signal twice in one
    home: cold, then warm (the second run over the same session, its signals cached; embeddings
    are the keyword kind, so this is the cost the signals add to a warm rescoring). CPU seconds
    are the figure to compare with the goal (wall time depends on what else the machine runs).
    Then the same 10k chunks through the CLI as a user or a hook runs it (`ctx score FILE`,
    cold then warm, start-up and reading the input included)."""
    path = build_session(target_tokens=100_000, name="drop100k")
    root = str(DATA.parent.parent)
    row = {"bench": "drop-speed", "session_tokens": 100_000, "goal_s": 5.0}
    row["this_wall_s"], row["this_cpu_s"] = (round(x, 2) for x in _pipeline(path, DATA / "speed-home", root,
                                                                           "--free 0.5"))
    row["this_cpu_vs_goal"] = round(row["this_cpu_s"] / 5.0, 2)
    main = DATA.parent.parent.parent / "main"
    if (main / "ctxkit").is_dir() and main.resolve() != DATA.parent.parent.resolve():
        row["main_wall_s"], row["main_cpu_s"] = (round(x, 2) for x in _pipeline(path, DATA / "speed-home",
                                                                               str(main), ""))
    import io as _io

    from ctxkit.core.groups import iter_groups
    from ctxkit.io.jsonl import Writer
    from ctxkit.services.embedding import make_embedder
    from ctxkit.services.scoring import score_stream
    from ctxkit.store.home import Home

    from _common import corpus_records

    base = [g for g in iter_groups(corpus_records()) if g and g[0].get("group")]
    big, k = [], 0
    while k < 10_000:
        for g in base:
            big += [dict(r, group=f"g{k}", content=(r.get("content") or "")[:400]) for r in g]
            k += 1
            if k >= 10_000:
                break
    shutil.rmtree(DATA / "warm-home", ignore_errors=True)
    h = Home(str(DATA / "warm-home"))
    for run in ("cold", "warm"):   # warm: the second run over the same session (the signal cache filled)
        t, c = time.perf_counter(), time.process_time()
        r = score_stream(h, big, None, "keyword", None, Writer(_io.StringIO()),
                         lambda hh, nn, kk: make_embedder(hh, nn, kk))
        row.update({f"score_10k_{run}_wall_s": round(time.perf_counter() - t, 2),
                    f"score_10k_{run}_cpu_s": round(time.process_time() - c, 2),
                    f"score_10k_{run}_reused_chunks": r.reused})
    row.update({"chunks": k, "goal_warm_10k_s": 1.0,
                "warm_cpu_vs_goal": round(row["score_10k_warm_cpu_s"] / 1.0, 2)})
    row.update(_cli_rescoring(big))
    print(json.dumps(row))


def _cli_rescoring(big: list[dict]) -> dict:
    """What a user or a hook pays: `ctx score --embedder keyword FILE` over the same 10k chunks,
    run twice in one home (the second run warm: input lines and signals known), as CPU seconds
    (user + sys) of the process, start-up included."""
    import resource

    from ctxkit.io.jsonl import dumps

    path = DATA / "score10k.jsonl"
    with open(path, "w") as f:
        for r in big:
            f.write(dumps(r) + "\n")
    home = DATA / "cli-warm-home"
    shutil.rmtree(home, ignore_errors=True)
    env = dict(ENV, CTX_HOME=str(home), CTX_QUIET="1")
    out, outs = {}, []
    for run in ("cold", "warm"):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run([PY, "-m", "ctxkit", "score", "--embedder", "keyword", str(path)], env=env,
                           capture_output=True, check=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        outs.append(p.stdout)
        out[f"cli_score_10k_{run}_wall_s"] = round(time.perf_counter() - t, 2)
        out[f"cli_score_10k_{run}_cpu_s"] = round((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), 2)
    out["cli_warm_cpu_vs_goal"] = round(out["cli_score_10k_warm_cpu_s"] / 1.0, 2)
    out["cli_warm_vs_cold_cpu"] = round(out["cli_score_10k_warm_cpu_s"] / max(0.01, out["cli_score_10k_cold_cpu_s"]), 2)
    out["cli_warm_output_identical"] = outs[0] == outs[1]
    return out


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if "--speed-only" not in sys.argv:
        quality()
    if "--quality-only" not in sys.argv:
        speed()
