"""The real agent clients the end-to-end tests drive, one folder each under tests/e2e/clients/
(package.json + the committed package-lock.json that pins it; `make setup` runs `npm ci` in
each), and the one way every e2e test runs its harness: inside `unshare -n` with only loopback.

    from clients import binary, why_not, run_confined
    why = why_not("codex")            # None, or why the test must skip (no npm, no unshare, …)
    res = run_confined("harness_codex.py", out)   # results.json written by the harness
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BINARIES = {"claude-code": "claude", "codex": "codex", "gemini": "gemini", "copilot": "copilot"}


def client_dir(agent: str) -> str:
    return os.path.join(HERE, "clients", agent)


def binary(agent: str) -> str:
    """The pinned client's executable (node_modules/.bin/NAME in its folder)."""
    return os.path.join(client_dir(agent), "node_modules", ".bin", BINARIES[agent])


def why_not(agent: str, need_tmux: bool = False) -> str | None:
    """None when the real client can run here confined to loopback; else the reason to skip."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "node/npm not installed: the real client cannot run (apt-get install nodejs npm)"
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare/ip missing: the client cannot be confined to a loopback-only network namespace"
    if need_tmux and not shutil.which("tmux"):
        return "tmux missing: the interactive UI cannot be driven"
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot create a network namespace here (unshare -n: {probe.stderr.strip()[:120]}); run as root"
    if not os.path.exists(binary(agent)):
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=client_dir(agent),
                           capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(binary(agent)):
            return f"npm ci in {client_dir(agent)} failed: {p.stderr.strip()[-200:]}"
    return None


def run_confined(harness: str, out: str, timeout: int = 900) -> dict:
    """Run tests/e2e/HARNESS OUT inside a network namespace with only loopback (the client can
    reach nothing but the fake API on 127.0.0.1); the harness's results.json."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env["PYTHONPATH"] = ROOT
    p = subprocess.run(["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$1" "$2"', sys.executable,
                        os.path.join(HERE, harness), out], env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def install_hooks(agent: str, project: str, env: dict, *extra: str) -> dict:
    """`ctx hook install AGENT EXTRA…` in PROJECT as a user runs it (this checkout's ctx); the
    files it wrote."""
    p = subprocess.run([sys.executable, "-m", "ctxkit", "hook", "install", agent, *extra], cwd=project, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return {"stderr": p.stderr}


SUMMARIES: list[str] = []


def report(line: str) -> None:
    """One summary line for the test session's end (tests/conftest.py prints them), so CI
    logs say what each real client did whatever pytest captured."""
    SUMMARIES.append(line)


def terminal_command(env: dict, cmd: str) -> str:
    """The shell command a tmux pane runs to start a client's terminal UI as from a user's terminal:
    exactly ENV (`env -i`, so nothing of the tmux server's own environment), without tmux's or CI's
    markers. With CI, CONTINUOUS_INTEGRATION or any CI_* set, some clients (Gemini CLI) take their
    terminal for non-interactive and draw nothing."""
    keep = {k: v for k, v in env.items()
            if k not in ("TMUX", "TMUX_PANE", "CI", "CONTINUOUS_INTEGRATION") and not k.startswith("CI_")}
    keep.setdefault("TERM", "xterm-256color")
    return "env -i " + " ".join(f"{k}={shlex.quote(v)}" for k, v in keep.items()) + " " + cmd
