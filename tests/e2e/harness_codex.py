"""Drive the real OpenAI Codex CLI (`codex exec`) against the fake Responses API, with the hooks
and compact prompt `ctx hook install codex` writes.

Run inside a network namespace that has only loopback (tests/e2e/test_codex_e2e.py does, with
clients.run_confined). Everything it does is written to OUT/results.json; the test asserts on
that, on the fake API's request log (OUT/requests.jsonl) and on ctx's home (OUT/ctx-home).

Codex reads a custom provider from a scratch CODEX_HOME ([model_providers.fake] with base_url
and wire_api = "responses"), compacts on its own once a turn reports more input tokens than
model_auto_compact_token_limit, and runs a project's hooks once the project is trusted and
the hooks are (`--dangerously-bypass-hook-trust`: this harness vets them, they are the
installer's). Steps:

  project A:  a new session (a command) · resume with a second prompt · resume with a prompt
              whose reply reports a full window (Codex compacts: PreCompact, its summary
              request with ctx's compact prompt, PostCompact, SessionStart compact) · resume:
              "What is my task now?" · a second session · resume of the second session
  project B:  a new session (must see nothing of A) · the user's way to trust the hooks: the
              terminal UI under tmux shows "Hooks need review", "Trust all and continue" is
              chosen, /quit; then `codex exec` without the bypass runs them
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from clients import binary, install_hooks  # noqa: E402

CODEX = binary("codex")
KEY = "sk-fake-key-for-the-codex-e2e-tests-0123456789"
COMPACT_AT = 20_000   # model_auto_compact_token_limit: a reply reporting more makes Codex compact


def setup(out: str) -> dict:
    from fake_openai import serve

    srv = serve(os.path.join(out, "requests.jsonl"))
    codex_home = os.path.join(out, "codex-home")
    os.makedirs(codex_home, exist_ok=True)
    projects = {}
    for name in ("proj-a", "proj-b"):
        p = os.path.join(out, name)
        os.makedirs(p, exist_ok=True)
        subprocess.run(["git", "init", "-q", p], check=True)
        with open(os.path.join(p, "README.md"), "w") as f:
            f.write(f"# {name}\n")
        projects[name] = p
    trusted = "".join(f'\n[projects."{p}"]\ntrust_level = "trusted"\n' for p in projects.values())
    with open(os.path.join(codex_home, "config.toml"), "w") as f:
        f.write(f'model = "fake-model"\nmodel_provider = "fake"\nmodel_auto_compact_token_limit = {COMPACT_AT}\n'
                f'check_for_update_on_startup = false\n\n'
                f'[model_providers.fake]\nname = "fake"\nbase_url = "http://127.0.0.1:{srv.server_address[1]}/v1"\n'
                f'wire_api = "responses"\nenv_key = "FAKE_OPENAI_KEY"\n' + trusted)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTX_", "OPENAI_", "CODEX_"))}
    env.update({"CODEX_HOME": codex_home, "FAKE_OPENAI_KEY": KEY, "HOME": os.path.join(out, "home"),
                "CTX_HOME": os.path.join(out, "ctx-home"), "PYTHONPATH": ROOT, "NO_COLOR": "1",
                "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "/usr/bin:/bin")})
    os.makedirs(env["HOME"], exist_ok=True)
    installed = {name: install_hooks("codex", p, env, "--project") for name, p in projects.items()}
    return {"env": env, "projects": projects, "server": srv, "out": out, "installed": installed}


HOOK_LINE = re.compile(r"^hook: (\w+)(?: (\w+))?\s*$")
SESSION_LINE = re.compile(r"^session id: (\S+)", re.M)


def hook_lines(stderr: str) -> list[dict]:
    """What `codex exec` reports of each hook: "hook: Stop" when it starts, "hook: Stop Completed"
    (or Failed, Blocked, Stopped) when it ends."""
    out = []
    for line in stderr.splitlines():
        m = HOOK_LINE.match(line.strip())
        if m and m.group(2):
            out.append({"event": m.group(1), "status": m.group(2)})
    return out


def run(ctx: dict, name: str, project: str, prompt: str, resume: str | None = None, bypass: bool = True) -> dict:
    args = [CODEX, "exec", *(["--dangerously-bypass-hook-trust"] if bypass else []), "--skip-git-repo-check",
            "--color", "never"]
    args += ["resume", resume, prompt] if resume else [prompt]
    t0 = time.monotonic()
    p = subprocess.run(args, cwd=ctx["projects"][project], env=ctx["env"], capture_output=True, text=True,
                       timeout=180, stdin=subprocess.DEVNULL)
    m = SESSION_LINE.search(p.stderr)
    return {"name": name, "project": project, "prompt": prompt, "resume": resume, "rc": p.returncode,
            "seconds": round(time.monotonic() - t0, 2), "session_id": m.group(1) if m else None,
            "result": p.stdout.strip()[-2000:], "hooks": hook_lines(p.stderr), "stderr": p.stderr[-6000:]}


def trust_in_the_ui(ctx: dict, project: str) -> dict:
    """The terminal UI (no background daemon) under tmux: wait for its hook review, choose "Trust
    all and continue", quit. Returns what the screen showed and the hooks Codex recorded as trusted."""
    import shutil

    if not shutil.which("tmux"):
        return {"skipped": "tmux missing: the terminal UI cannot be driven"}
    sock = ["-L", "ctx-codex-e2e"]
    env = ctx["env"]
    cmd = "env " + " ".join(f"{k}='{v}'" for k, v in env.items() if not k.startswith("TMUX")) + \
        f" {CODEX} --no-daemon; sleep 5"
    subprocess.run(["tmux", *sock, "new-session", "-d", "-s", "ui", "-x", "160", "-y", "50", "-c",
                    ctx["projects"][project], cmd], env=dict(env, TERM="xterm-256color"))

    def screen() -> str:
        return subprocess.run(["tmux", *sock, "capture-pane", "-p", "-t", "ui"], capture_output=True, text=True).stdout

    def keys(*k: str) -> None:
        subprocess.run(["tmux", *sock, "send-keys", "-t", "ui", *k])

    end = time.monotonic() + 60
    while time.monotonic() < end and "Hooks need review" not in screen():
        time.sleep(0.5)
    review = screen()
    keys("Down")   # 1. Review hooks · 2. Trust all and continue · 3. Continue without trusting
    time.sleep(0.5)
    keys("Enter")
    time.sleep(2)
    keys("-l", "/quit")
    time.sleep(0.5)
    keys("Enter")
    end = time.monotonic() + 20
    while time.monotonic() < end and "ui" in subprocess.run(["tmux", *sock, "list-sessions"], capture_output=True,
                                                             text=True).stdout:
        time.sleep(0.3)
    subprocess.run(["tmux", *sock, "kill-server"], capture_output=True)
    import tomllib

    with open(os.path.join(env["CODEX_HOME"], "config.toml"), "rb") as f:
        state = tomllib.load(f).get("hooks", {}).get("state", {})
    return {"review": "\n".join(x for x in review.splitlines() if x.strip() and "\u28ff" not in x)[-1500:],
            "trusted": sorted(k for k, v in state.items() if v.get("trusted_hash"))}


def wait_idle(ctx: dict, seconds: float = 60.0) -> None:
    """Until ctx's detached workers (the deferred SessionEnd, cold storage) are done."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p = subprocess.run(["pgrep", "-f", "ctxkit --home " + ctx["env"]["CTX_HOME"]], capture_output=True)
        if p.returncode != 0:
            return
        time.sleep(0.3)


def main(out: str) -> None:
    ctx = setup(out)
    runs = []
    t0 = time.monotonic()
    a1 = run(ctx, "a1-first", "proj-a", "Build the alpha exporter. RUN: echo alpha-marker")
    runs.append(a1)
    s1 = a1["session_id"] or ""
    wait_idle(ctx)
    runs.append(run(ctx, "a1-resume", "proj-a", "Also document the alpha exporter options", resume=s1))
    runs.append(run(ctx, "a1-full", "proj-a", f"Keep going with the alpha exporter USAGE: {COMPACT_AT * 3}",
                    resume=s1))
    runs.append(run(ctx, "a1-after", "proj-a", "What is my task now?", resume=s1))
    wait_idle(ctx)
    a2 = run(ctx, "a2-first", "proj-a", "Fix the beta parser crash. RUN: echo beta-marker")
    runs.append(a2)
    wait_idle(ctx)
    runs.append(run(ctx, "a2-resume", "proj-a", "Back to the beta parser", resume=a2["session_id"] or ""))
    wait_idle(ctx)
    runs.append(run(ctx, "b1-first", "proj-b", "Start the gamma dashboard. RUN: echo gamma-marker"))
    wait_idle(ctx)
    trust = trust_in_the_ui(ctx, "proj-b")
    if "skipped" not in trust:
        runs.append(run(ctx, "b2-trusted", "proj-b", "Trusted now: what next?", bypass=False))
        wait_idle(ctx)
    version = subprocess.run([CODEX, "--version"], capture_output=True, text=True, env=ctx["env"]).stdout.strip()
    res = {"runs": runs, "seconds": round(time.monotonic() - t0, 1), "projects": ctx["projects"],
           "ctx_home": ctx["env"]["CTX_HOME"], "codex_home": ctx["env"]["CODEX_HOME"], "version": version,
           "installed": ctx["installed"], "trust": trust}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    ctx["server"].shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
