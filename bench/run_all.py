"""Run the benchmarks: one JSON line per result, then one table of the goals (never run by the tests).

    python bench/run_all.py [NAME ...] [--against DIR]

NAME: startup memory count ttok prompt semantic compact relevance streaming defaults crash hooks
hooks_huge drop_sets redact (default: all). `--against DIR` measures another checkout (its own ctxkit, this
interpreter, the same inputs) in the same run, runs alternating, and prints each figure and ratio
for both, e.g. `--against ../base` made with `git worktree add ../base main`. A benchmark that
fails is reported and the others still run; the exit status is 1 when one failed.
"""
import argparse
import compileall
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(__file__))

NAMES = ("startup", "memory", "count", "ttok", "prompt", "semantic", "compact", "relevance", "streaming", "defaults",
         "crash", "hooks", "hooks_huge", "drop_sets", "redact", "install")

# The goals: (what, bench, figure's key, "<=" or ">=", goal, whose work). A figure that is
# a list of rows (one per command) is judged by its worst row.
GOALS = [
    ("hooks on a 1 GB transcript, slowest call: s", "hooks-huge", "hook_worst_s", "<=", 5.0, "bounds"),
    ("hooks on a 1 GB transcript, largest peak RSS: MB", "hooks-huge", "hook_worst_rss_mb", "<=", 300, "bounds"),
    ("hooks on a 1 GB transcript: calls that fail or do not read it", "hooks-huge", "not_read_n", "<=", 0, "bounds"),
    ("ctx count on a 1 GB single line: peak RSS MB", "hooks-huge", "count_line_rss_mb", "<=", 300, "bounds"),
    ("ctx count throughput / bare tiktoken, same 50 MB", "count", "throughput_ratio", ">=", 0.8, "perf"),
    ("ctx count speed / ttok, same text", "ttok", "ctx_speedup", ">=", 1.0, "perf"),
    ("ctx status, 1k records: ms over python -c pass", "startup", "status_over_python_ms", "<=", 150, "perf"),
    ("ctx status, 1k records / python parsing the same JSON", "startup", "status_x_json_parse", "<=", None, "perf"),
    ("cold import + score + drop of fa812bfe (MiniLM): s", "cold-import-score-drop", "wall_s", "<=", 5.0, "perf"),
    ("cold import + score + drop / the bare model on the same texts", "cold-import-score-drop", "x_model", "<=", None,
     "perf"),
    ("semantic lookup from a fresh process (onnx), slowest: s", "semantic-lookup", "onnx_s", "<=", 1.0,
     "install"),
    ("semantic lookup (onnx), slowest / ctx --help", "semantic-lookup", "x_help", "<=", 10.0, "install"),
    ("extractive compaction of 1M tokens, many sessions: s", "compact-scaling-mem", "time_1m_s", "<=", 3.0, "lead"),
    ("extractive compaction of 1M tokens, one Claude Code session: s", "compact-scaling-cc", "time_1m_s", "<=", 3.0,
     "lead"),
    ("extractive compaction of 1M tokens, many sessions / parsing its JSON", "compact-scaling-mem", "x_json_1m",
     "<=", None, "lead"),
    ("extractive compaction of 1M tokens, one session / parsing its JSON", "compact-scaling-cc", "x_json_1m", "<=",
     None, "lead"),
]


def _ratio_goals():
    """The ratio goals, from the benchmark modules (one definition each)."""
    import bench_compact
    import bench_semantic
    import bench_startup

    return {"status_x_json_parse": bench_startup.STATUS_X_JSON, "x_model": bench_semantic.COLD_X_MODEL,
            "x_json_1m": bench_compact.GOAL_1M_X_JSON}


def _compile(root) -> None:
    """Bytecode for a checkout's ctxkit, as an installed package has it (PYTHONDONTWRITEBYTECODE
    would otherwise make every start-up compile the sources again, on one side only)."""
    ok = compileall.compile_dir(os.path.join(str(root), "ctxkit"), quiet=2, workers=0)
    if not ok:
        print(f"bench: note: could not write bytecode under {root}/ctxkit: its start-up compiles the sources",
              file=sys.stderr)


def _figure(rows, bench, key, op, label):
    vals = [r[key] for r in rows if r.get("bench") == bench and r.get("checkout", "this") == label
            and isinstance(r.get(key), (int, float))]
    if not vals:
        return None
    return max(vals) if op == "<=" else min(vals)


def table(rows: list[dict], labels: list[str], failed: list[str], elapsed: float) -> str:
    from tabulate import tabulate

    ratios = _ratio_goals()
    out = []
    for what, bench, key, op, goal, who in GOALS:
        goal = ratios.get(key) if goal is None else goal
        line = [what, f"{op} {goal:g}"]
        for label in labels:
            v = _figure(rows, bench, key, op, label)
            met = "-" if v is None else ("met" if (v <= goal if op == "<=" else v >= goal) else "NOT met")
            line += ["-" if v is None else f"{v:g}", met]
        line.append("" if who == "perf" else f"({who})")
        out.append(line)
    line = ["make bench runs to its end", "no benchmark fails"]
    for _ in labels:
        line += [f"{len(failed)} failed" if failed else "all ran", "NOT met" if failed else "met"]
    out.append(line + [""])
    head = ["goal", "target"]
    for label in labels:
        head += [label, "met?"]
    head.append("owner")
    load = os.getloadavg()
    return (tabulate(out, headers=head, tablefmt="github") +
            f"\n\n{len(rows)} rows in {elapsed / 60:.1f} min; load average now {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
            f"on {os.cpu_count()} cpus" + (f"; failed: {', '.join(failed)}" if failed else ""))


class Rows:
    """stdout that also keeps every JSON object a benchmark prints on a line of its own."""

    def __init__(self, out):
        self.out, self.rows, self.buf = out, [], ""

    def write(self, text):
        self.buf += text
        *lines, self.buf = self.buf.split("\n")
        for line in lines:
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    self.rows.append(obj)
        return self.out.write(text)

    def flush(self):
        self.out.flush()

    def __getattr__(self, name):
        return getattr(self.out, name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    ap.add_argument("--against", metavar="DIR", help="another checkout measured beside this one in the same run")
    args, _ = ap.parse_known_args(argv)
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        ap.error(f"unknown benchmark {', '.join(unknown)} (known: {' '.join(NAMES)})")
    if args.against:
        against = os.path.abspath(args.against)
        if not os.path.isfile(os.path.join(against, "ctxkit", "__init__.py")):
            ap.error(f"--against {args.against}: not a ctxkit checkout (no ctxkit/__init__.py)")
        os.environ["CTX_BENCH_AGAINST"] = against
    import _common  # after CTX_BENCH_AGAINST is set

    labels = [label for label, _ in _common.checkouts()]
    if not _common.SMOKE:
        for _, root in _common.checkouts():
            _compile(root)
    started = time.perf_counter()
    failed: list[str] = []
    real, sys.stdout = sys.stdout, Rows(sys.stdout)
    try:
        for name in NAMES:
            if args.names and name not in args.names:
                continue
            try:
                __import__(f"bench_{name}").main()
            except (Exception, SystemExit) as e:  # one benchmark's failure never stops the others
                if isinstance(e, SystemExit) and e.code in (None, 0):
                    continue
                failed.append(name)
                detail = traceback.format_exc() if os.environ.get("CTX_DEBUG") else f"{type(e).__name__}: {e}"
                print(f"bench: {name} failed: {str(detail)[-1500:]}", file=sys.stderr, flush=True)
                print(json.dumps({"bench": name, "failed": str(e)[-300:]}), flush=True)
        rows = sys.stdout.rows
    finally:
        sys.stdout = real
    print("\n" + table(rows, labels, failed, time.perf_counter() - started), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
