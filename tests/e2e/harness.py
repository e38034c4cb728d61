"""Drive the real Claude Code CLI against the fake Anthropic API, with the hooks `ctx hook install`
writes.

Run inside a network namespace that has only loopback (tests/e2e/test_claude_code_e2e.py does:
`unshare -n sh -c 'ip link set lo up && exec python harness.py OUT'`). Everything it does is
written to OUT/results.json; the test asserts on that, on the fake API's request log
(OUT/requests.jsonl) and on ctx's home (OUT/ctx-home). Steps:

  project A, headless:  -p (a tool call) · --continue · -p "/compact" --continue ·
                        a 400 "prompt is too long" (auto-compaction) · a second session ·
                        --resume of that second session with /compact
  project B, headless:  a new session (must see nothing of A)
  project B, interactive: the terminal UI under tmux (two prompts, then /exit)
  project A, headless:  a prompt whose answer is the subagent tool (Agent, formerly Task): the
                        client runs a real subagent (which runs a command) and SubagentStop
                        fires with its own transcript · --continue of that session
  project C, headless:  ctx as a plugin (`ctx hook install claude-code --plugin`), validated,
                        added and installed by the client, its hooks the only ones there
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
from clients import binary, install_hooks, terminal_command  # noqa: E402

CLAUDE = binary("claude-code")
MODEL = "claude-sonnet-4-5-20250929"
KEY = "sk-ant-api03-fake-key-for-the-e2e-tests-0123456789"
VERSION = "2.1.332"
SUBAGENT_TASK = "Survey the zeta fixtures. RUN: echo subagent-zeta"


def setup(out: str) -> dict:
    from fake_anthropic import serve

    srv = serve(os.path.join(out, "requests.jsonl"))
    home = os.path.join(out, "home")
    os.makedirs(home, exist_ok=True)
    projects = {}
    for name in ("proj-a", "proj-b"):
        p = os.path.join(out, name)
        os.makedirs(p, exist_ok=True)
        subprocess.run(["git", "init", "-q", p], check=True)
        with open(os.path.join(p, "README.md"), "w") as f:
            f.write(f"# {name}\n")
        projects[name] = p
    # onboarding done, the key approved, both projects trusted: the interactive UI starts straight away
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump({"hasCompletedOnboarding": True, "lastOnboardingVersion": VERSION, "theme": "dark",
                   "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
                   "projects": {p: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                                    "allowedTools": []} for p in projects.values()}}, f)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTX_", "ANTHROPIC_", "CLAUDE"))}
    env.update({
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{srv.server_address[1]}", "ANTHROPIC_API_KEY": KEY,
        "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": home, "CTX_HOME": os.path.join(out, "ctx-home"), "PYTHONPATH": ROOT,
        # `ctx` as the hooks call it: this checkout's, from the Python running the tests
        "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
        "TERM": "xterm-256color",
    })
    installed = {}
    for name, p in projects.items():   # the project's hooks, as a user installs them
        installed[name] = install_hooks("claude-code", p, env, "--project")
    return {"env": env, "projects": projects, "server": srv, "out": out, "installed": installed}


# "SessionEnd:other [CMD] completed with status 0" (2.1.197), "Hooks: Stop [CMD] finished with status 0 (1559ms)",
# "Hooks: Stop [CMD] (plugin ctx@ctxkit) finished with status 0 (1213ms)" (2.1.332)
HOOK_LINE = re.compile(r"\] (?:Hooks: )?(\w+)(?::(\S*))? \[(.*?)\](?: \(plugin ([^)]*)\))? "
                       r"(?:completed|finished) with status (-?\d+)")


def hook_runs(debug_log: str) -> list[dict]:
    """Every command hook Claude Code ran, from its debug log: event, command, exit status."""
    if not os.path.exists(debug_log):
        return []
    out = []
    for line in open(debug_log, encoding="utf-8", errors="replace"):
        m = HOOK_LINE.search(line)
        if m:
            out.append({"event": m.group(1), "matcher": m.group(2), "command": m.group(3), "plugin": m.group(4),
                        "status": int(m.group(5))})
    return out


def headless(ctx: dict, name: str, project: str, prompt: str, *extra: str) -> dict:
    debug = os.path.join(ctx["out"], f"debug-{name}.log")
    cmd = [CLAUDE, "-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events",
           "--model", MODEL, "--allowedTools", "Bash,Read", "--debug-file", debug, *extra]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ctx["projects"][project], env=ctx["env"], capture_output=True, text=True,
                       timeout=180)
    events = []
    for line in p.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    result = next((e for e in reversed(events) if e.get("type") == "result"), {})
    hooks = [e for e in events if e.get("type") == "system" and str(e.get("subtype", "")).startswith("hook")]
    return {"name": name, "project": project, "prompt": prompt, "args": list(extra), "rc": p.returncode,
            "seconds": round(time.monotonic() - t0, 2), "session_id": result.get("session_id"),
            "is_error": result.get("is_error"), "result": result.get("result"), "hooks": hooks,
            "hook_runs": hook_runs(debug), "stderr": p.stderr[-2000:]}


def wait_idle(ctx: dict, seconds: float = 60.0) -> None:
    """Until ctx's detached workers (curation, cold storage at session end) are done."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p = subprocess.run(["pgrep", "-f", "ctxkit --home " + ctx["env"]["CTX_HOME"]], capture_output=True)
        if p.returncode != 0:
            return
        time.sleep(0.3)


def tmux(*args: str, env=None) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, env=env).stdout


def interactive(ctx: dict, project: str) -> dict:
    """The terminal UI under tmux: two prompts, then /exit; returns what the screen showed."""
    env = ctx["env"]
    sock = ["-L", "ctx-e2e"]
    debug = os.path.join(ctx["out"], "debug-interactive.log")
    cmd = " ".join([CLAUDE, "--model", MODEL, "--allowedTools", "Bash,Read", "--debug-file", debug])
    tmux(*sock, "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", "-c", ctx["projects"][project],
         terminal_command(env, cmd), env=env)
    screens = []

    def screen() -> str:
        return tmux(*sock, "capture-pane", "-p", "-t", "e2e", "-S", "-200")

    def wait_for(text: str, seconds: float = 40.0) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            s = screen()
            if text in s:
                return True
            time.sleep(0.3)
        screens.append(screen())
        return False

    ok = {"ready": wait_for("? for shortcuts") or wait_for(">", 5)}
    for i, prompt in enumerate(("Interactive delta request about the renderer", "RUN: echo interactive-epsilon")):
        tmux(*sock, "send-keys", "-t", "e2e", "-l", prompt)
        time.sleep(0.5)
        tmux(*sock, "send-keys", "-t", "e2e", "Enter")
        want = "Noted: Interactive delta" if i == 0 else "interactive-epsilon"
        ok[f"answer{i + 1}"] = wait_for(want if i == 0 else "The command finished")
        time.sleep(1.0)
    screens.append(screen())
    tmux(*sock, "send-keys", "-t", "e2e", "-l", "/exit")
    time.sleep(0.5)
    tmux(*sock, "send-keys", "-t", "e2e", "Enter")
    end = time.monotonic() + 20
    while time.monotonic() < end and "e2e" in tmux(*sock, "list-sessions"):
        time.sleep(0.3)
    tmux(*sock, "kill-server")
    time.sleep(1.0)  # SessionEnd runs as the UI exits
    return {"name": "interactive", "project": project, "ok": ok, "screen": "\n".join(screens)[-6000:],
            "hook_runs": hook_runs(debug)}


def plugin(ctx: dict) -> dict:
    """ctx as a Claude Code plugin: `ctx hook install claude-code --plugin DIR` writes a marketplace;
    the client validates it and the repository's example, adds it and installs the plugin (in
    project C only, which has no hooks of its own), and a headless session there runs its hooks."""
    env, out = ctx["env"], ctx["out"]
    p = os.path.join(out, "proj-c")
    os.makedirs(p, exist_ok=True)
    subprocess.run(["git", "init", "-q", p], check=True)
    ctx["projects"]["proj-c"] = p
    market = os.path.join(out, "ctx-plugin")
    install_hooks("claude-code", p, env, "--plugin", market)
    steps = {}
    for name, args, cwd in (
            ("validate", ["plugin", "validate", market], out),
            ("validate-example", ["plugin", "validate", os.path.join(ROOT, "examples", "claude-code", "plugin")], out),
            ("marketplace-add", ["plugin", "marketplace", "add", market], p),
            ("install", ["plugin", "install", "ctx@ctxkit", "--scope", "project"], p)):
        r = subprocess.run([CLAUDE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
        steps[name] = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-1500:]}
    run = headless(ctx, "p1-plugin", "proj-c", "Start the plugin task. RUN: echo plugin-marker")
    return {"steps": steps, "run": run, "market": market}


def main(out: str) -> None:
    ctx = setup(out)
    runs = []
    t0 = time.monotonic()
    a1 = headless(ctx, "a1-first", "proj-a", "Build the alpha exporter. RUN: echo alpha-marker")
    runs.append(a1)
    s1 = a1["session_id"]
    runs.append(headless(ctx, "a1-continue", "proj-a", "Also document the alpha exporter options", "--continue"))
    runs.append(headless(ctx, "a1-compact", "proj-a", "/compact", "--continue"))
    runs.append(headless(ctx, "a1-toolong", "proj-a", "TOOLONG keep going with the alpha exporter", "--continue"))
    wait_idle(ctx)
    a2 = headless(ctx, "a2-first", "proj-a", "Fix the beta parser crash. RUN: echo beta-marker")
    runs.append(a2)
    runs.append(headless(ctx, "a2-compact", "proj-a", "/compact", "--resume", a2["session_id"] or ""))
    runs.append(headless(ctx, "a2-after", "proj-a", "What is my task now?", "--resume", a2["session_id"] or ""))
    runs.append(headless(ctx, "a1-resume", "proj-a", "Back to the first session", "--resume", s1 or ""))
    wait_idle(ctx)
    runs.append(headless(ctx, "b1-first", "proj-b", "Start the gamma dashboard. RUN: echo gamma-marker"))
    wait_idle(ctx)
    runs.append(interactive(ctx, "proj-b"))
    wait_idle(ctx)
    runs.append(headless(ctx, "c1-subagent", "proj-a", "Plan the omega importer. SUBAGENT: " + SUBAGENT_TASK,
                         "--allowedTools", "Bash,Read,Agent,Task"))
    wait_idle(ctx)
    runs.append(headless(ctx, "c1-after", "proj-a", "What did the helper find?", "--continue"))
    wait_idle(ctx)
    plug = plugin(ctx)
    runs.append(plug["run"])
    wait_idle(ctx)
    res = {"runs": runs, "seconds": round(time.monotonic() - t0, 1), "projects": ctx["projects"],
           "ctx_home": ctx["env"]["CTX_HOME"], "claude_home": ctx["env"]["HOME"], "plugin": plug["steps"],
           "version": subprocess.run([CLAUDE, "--version"], capture_output=True, text=True).stdout.strip()}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    ctx["server"].shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
