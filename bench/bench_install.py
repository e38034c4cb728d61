"""Installing ctx as a user does, and its first semantic search, measured in one run.

The two wheels are built (packaging/build.py) and installed with `uv tool install` into a scratch
HOME, without and with `[ml]`: the size of each tool environment, any torch / nvidia / triton
package in it, and the install's wall time (uv's download cache is the user's: warm after the
first run). In the `[ml]` environment, from a fresh process: the first semantic lookup in a
fresh home (the MiniLM weights hashed once, then remembered), the next one, and `ctx --help`
for scale; then `python -X importtime` of the lookup, its largest imports.

Goals: `[ml]` under 400 MB with no GPU stack; the first semantic search under 2 s; a lookup
<= 1.0 s (next goal 0.3 s) on this 2-core machine.

In a smoke run (CTX_BENCH_SMOKE=1) nothing is installed: the lookups run once from this checkout.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, PY, ROOT, SMOKE

HEAVY = re.compile(r"^(torch|nvidia|triton|sentence_transformers|transformers)\b", re.I)
LOOKUPS = {
    "memory search": ["memory", "search", "how was the quality tooling set up", "--embedder", "minilm", "--json"],
    "cold-storage search": ["cold-storage", "search", "credo dialyzer setup", "--embedder", "minilm", "--json"],
}


def user_env(root: Path) -> dict:
    home = root / "home"
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTX_", "UV_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PATH=f"{home}/.local/bin:/usr/local/bin:/usr/bin:/bin",
               UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR") or os.path.expanduser("~/.cache/uv"),
               UV_PYTHON_DOWNLOADS="never", XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_BIN_HOME=str(home / ".local" / "bin"))
    return env


def install(env: dict, spec: str, *extra: str) -> tuple[Path, float]:
    import uv

    t = time.perf_counter()
    subprocess.run([uv.find_uv_bin(), "tool", "install", "--reinstall", "--python", PY, "-c",
                    str(ROOT / "constraints.txt"), *extra, spec], env=env, check=True, capture_output=True)
    return Path(env["XDG_DATA_HOME"]) / "uv" / "tools" / "ctxkit-cli", time.perf_counter() - t


def tool_row(tool: Path, extra: str, secs: float) -> dict:
    site = next(tool.glob("lib/python3*/site-packages"))
    mb = sum(f.stat().st_size for f in tool.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6
    dists = [p.name for p in site.glob("*.dist-info")]
    return {"bench": "install", "extra": extra, "mb": round(mb, 1), "distributions": len(dists),
            "gpu_stack": sorted(p.name for p in site.iterdir() if HEAVY.match(p.name)),
            "install_s": round(secs, 1), "goal": "ml < 400 MB, no torch/nvidia/triton"}


def prepare(ctx: list[str], env: dict, work: Path) -> None:
    """A workspace with a MEMORY.md and some dropped chunks (keyword scoring: no model loaded here)."""
    ws = Path(env["CTX_WORKSPACE"])
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("".join(f"- fact {i}: the deploy uses blue-green slots and credo checks\n"
                                          for i in range(40)))
    demo = subprocess.run(ctx + ["examples", "claude-code_spotter_491e126e_session.jsonl"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    recs = subprocess.run(ctx + ["import", demo], env=env, capture_output=True, text=True, check=True).stdout
    scored = subprocess.run(ctx + ["score", "-", "--embedder", "keyword", "-q", "credo setup"], input=recs, env=env,
                            capture_output=True, text=True, check=True).stdout
    subprocess.run(ctx + ["drop", "--cutoff", "0.6", "--keep", "0.9"], input=scored, env=env, capture_output=True,
                   text=True, check=True, cwd=work)


def wall(cmd: list[str], env: dict) -> float:
    return timed(cmd, env)[0]


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one command: on a shared machine the CPU time
    says what the command costs when the wall time says how busy the machine was."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    w = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"{cmd} failed: {p.stderr[-400:]}")
    return w, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def lookups(ctx: list[str], python: str, env: dict, root: Path) -> list[dict]:
    rows = []
    help_s, help_cpu = min(timed(ctx + ["--help"], env) for _ in range(1 if SMOKE else 3))
    for name, args in LOOKUPS.items():
        e = dict(env, CTX_HOME=str(root / f"home-{name.split()[0]}"), CTX_WORKSPACE=str(root / f"ws-{name.split()[0]}"))
        prepare(ctx, e, root)
        first, first_cpu = timed(ctx + args, e)   # a fresh home: the weights' hash is computed here, once
        second, second_cpu = timed(ctx + args[:2] + ["what changed in mix.exs"] + args[3:], e)
        rows.append({"bench": "first-search", "command": name, "first_s": round(first, 3),
                     "next_s": round(second, 3), "help_s": round(help_s, 3), "first_cpu_s": round(first_cpu, 3),
                     "next_cpu_s": round(second_cpu, 3), "help_cpu_s": round(help_cpu, 3),
                     "load_avg": round(os.getloadavg()[0], 1),
                     "goal": "first < 2 s; a lookup <= 1.0 s (next 0.3 s)"})
    e = dict(env, CTX_HOME=str(root / "home-memory"), CTX_WORKSPACE=str(root / "ws-memory"))
    fresh = ["memory", "search", "which checks run before a deploy", "--embedder", "minilm", "--json"]  # not cached
    p = subprocess.run([python, "-X", "importtime", "-m", "ctxkit", *fresh], env=e, capture_output=True, text=True)
    cum = []
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) <= 1:  # top-level imports only
            cum.append((int(m.group(2)) / 1e6, m.group(4)))
    top = sorted(cum, reverse=True)[:8]
    rows.append({"bench": "first-search-imports", "total_import_s": round(sum(s for s, _ in cum), 3),
                 "largest": {n: round(s, 3) for s, n in top}})
    return rows


def main() -> list[dict]:
    rows = []
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DATA) as tmp:
        root = Path(tmp)
        if SMOKE:
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            from ctxkit.backends import onnx_minilm

            if not onnx_minilm.available():
                row = {"bench": "first-search", "skipped": "ctxkit-minilm is not installed here"}
                print(json.dumps(row))
                return [row]
            rows += lookups([PY, "-m", "ctxkit"], PY, env, root)
        else:
            p = subprocess.run([PY, str(ROOT / "packaging" / "build.py"), "--out", str(root / "dist")],
                               capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
            wheel, _ = p.stdout.split()
            env = user_env(root)
            tool, secs = install(env, f"ctxkit-cli @ {Path(wheel).as_uri()}")
            rows.append(tool_row(tool, "base", secs))
            tool, secs = install(env, f"ctxkit-cli[ml] @ {Path(wheel).as_uri()}", "--find-links", str(root / "dist"))
            rows.append(tool_row(tool, "ml", secs))
            ctx = [str(Path(env["HOME"]) / ".local" / "bin" / "ctx")]
            rows += lookups(ctx, str(tool / "bin" / "python"), env, root)
        for r in rows:
            print(json.dumps(r))
    return rows


if __name__ == "__main__":
    main()
