"""The Stop hook on a long Claude Code session (the 3.4 MB corpus transcript): wall time (and
the hook's own CPU time, steadier on a busy machine) of `ctx hook claude-code Stop` on its
first run, when nothing is new, when one turn is new, and when one turn is new and curation
is due (the hook only starts the detached worker; the worker is not timed). Medians of 3.

    python bench/bench_hooks.py                  # this checkout
    python bench/bench_hooks.py --root /work/main  # another checkout, for a before/after

Goal: with one turn new, Stop parses only the appended lines (no re-read of the transcript).

Measured 2026-11-23 on the shared 2-core machine (load 12-20, so wall times are inflated;
CPU seconds are the hook's own), the 3.47 MB fa812bfe transcript, a last turn of 297 lines:

    main (fd10e17, re-reads the whole transcript, loads the tokenizer in line):
      first 3.59 s (0.68 CPU) · nothing new 0.52 s (0.11) · one turn new 3.51 s (0.69) ·
      one turn new, curation due 3.47 s (0.64)
    hookfix (reads only what was appended, approximate counts in the fold):
      first 2.37 s (0.43 CPU) · nothing new 0.53 s (0.10) · one turn new 1.55 s (0.31) ·
      one turn new, curation due 1.48 s (0.29)

What remains with one turn new is the fold itself: compaction builds the summary record over
the whole span on every call (the hook keeps only CONTEXT.md), and Python start-up.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import time

from _common import CORPUS, DATA, PY, ROOT, SMOKE, pick

SESSION = "fa812bfe-bench"


def _transcript() -> str:
    name = "claude-code_spotter_491e126e_session.jsonl" if SMOKE else "claude-code_spotter_fa812bfe_session.jsonl"
    return str(CORPUS / name)


def _is_prompt(line: bytes) -> bool:
    """A line where the user types a new prompt (a turn starts)."""
    try:
        o = json.loads(line)
    except ValueError:
        return False
    c = (o.get("message") or {}).get("content") if o.get("type") == "user" else None
    return isinstance(c, str) or (isinstance(c, list) and bool(c) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c))


CPU: dict[str, list[float]] = {}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _stop(root: str, home: str, path: str, cwd: str, env_extra: dict | None = None) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": home, "PYTHONPATH": root, **(env_extra or {})})
    payload = json.dumps({"hook_event_name": "Stop", "session_id": SESSION, "transcript_path": path, "cwd": cwd})
    t, c = time.perf_counter(), _cpu()
    p = subprocess.run([PY, "-m", "ctxkit", "hook", "claude-code", "Stop"], input=payload, text=True, env=env,
                       capture_output=True)
    took = time.perf_counter() - t
    _stop.cpu = _cpu() - c  # CPU seconds of the hook itself (wall time suffers from a busy machine)
    if p.returncode != 0:
        raise SystemExit(f"Stop failed: {p.stderr[-300:]}")
    return took


def _wait_workers(home: str, seconds: float = 120.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if subprocess.run(["pgrep", "-f", "ctxkit --home " + home], capture_output=True).returncode != 0:
            return
        time.sleep(0.2)


def _add(rows: dict, name: str, took: float) -> None:
    rows[name].append(took)
    CPU.setdefault(name, []).append(_stop.cpu)


def main(root: str | None = None) -> dict:
    root = root or str(ROOT)
    src = _transcript()
    lines = open(src, "rb").read().splitlines(keepends=True)
    cut = max(i for i in range(1, len(lines)) if _is_prompt(lines[i]))  # the last turn comes after it
    work = DATA / "hooks"
    cwd = work / "project"
    cwd.mkdir(parents=True, exist_ok=True)
    if not (cwd / ".git").exists():
        subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    rows: dict[str, list[float]] = {"first": [], "nothing_new": [], "one_turn_new": [], "one_turn_new_curation_due": []}
    for _ in range(pick(3, 1)):
        for case in ("plain", "curation"):
            home = str(work / f"home-{case}")
            shutil.rmtree(home, ignore_errors=True)
            path = str(work / f"{case}.jsonl")
            with open(path, "wb") as f:
                f.writelines(lines[:cut])
            extra = {"CTX_CURATION_TRIGGER_PCT": "0.01"} if case == "curation" else {}
            first = _stop(root, home, path, str(cwd))
            if case == "plain":
                _add(rows, "first", first)
                _add(rows, "nothing_new", _stop(root, home, path, str(cwd)))
            with open(path, "ab") as f:
                f.writelines(lines[cut:])
            took = _stop(root, home, path, str(cwd), extra)
            _add(rows, "one_turn_new" if case == "plain" else "one_turn_new_curation_due", took)
            _wait_workers(home)
    res = {"bench": "hooks-stop", "root": root, "transcript_mb": round(os.path.getsize(src) / 1e6, 2),
           "new_turn_lines": len(lines) - cut,
           **{f"{k}_s": round(statistics.median(v), 2) for k, v in rows.items()},
           **{f"{k}_cpu_s": round(statistics.median(v), 2) for k, v in CPU.items()},
           "goal": "one turn new: only the appended lines are parsed"}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", help="the checkout whose ctxkit to time (default: this one)")
    main(ap.parse_args().root)
