"""Drive the real GitHub Copilot CLI against the fake Anthropic API (its own-key mode), with the
hooks `ctx hook install copilot` writes.

Run inside a network namespace that has only loopback (tests/e2e/test_copilot_e2e.py does, with
clients.run_confined). Everything it does is
written to OUT/results.json; the test asserts on that, on the fake API's request log
(OUT/requests.jsonl), on Copilot's own record of every hook it ran (`hook.start` / `hook.end`
events in each session's events.jsonl) and on ctx's home (OUT/ctx-home). Steps:

  setup:                 a scratch HOME whose config trusts both projects (what the client's trust
                         dialog writes); project A already has a hooks file of the user's own;
                         `ctx hook install copilot --project` in both projects
  project A, headless:   -p (a shell command) · -p "/compact" on it (--resume) ·
                         --resume after that · a second session · --resume of the first ·
                         a prompt whose answer runs a real subagent (`task`)
  project B, headless:   a new session (must see nothing of A)
  project A, interactive: the terminal UI under tmux: two prompts, /compact, two prompts, /exit
                         (no SessionStart after /compact: ctx's state comes back at
                         UserPromptSubmit, once)
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from clients import binary, client_dir, install_hooks, terminal_command  # noqa: E402

COPILOT = binary("copilot")
MODEL = "claude-sonnet-4.5"
KEY = "sk-ant-api03-fake-key-for-the-e2e-tests-0123456789"
# the native binary unpacks its JavaScript runtime (~235 MB) into the cache folder on first run:
# once per checkout, beside the installed client, not once per scratch HOME
CACHE = os.path.join(client_dir("copilot"), "node_modules", ".cache")
USER_HOOK = "true"
SUBAGENT_TASK = "Survey the zeta fixtures. RUN: echo subagent-zeta"


def setup(out: str) -> dict:
    from fake_copilot import serve

    srv = serve(os.path.join(out, "requests.jsonl"))
    home = os.path.join(out, "home")
    os.makedirs(os.path.join(home, ".copilot"), exist_ok=True)
    projects = {}
    for name in ("proj-a", "proj-b"):
        p = os.path.join(out, name)
        os.makedirs(p, exist_ok=True)
        subprocess.run(["git", "init", "-q", p], check=True)
        with open(os.path.join(p, "README.md"), "w") as f:
            f.write(f"# {name}\n")
        projects[name] = p
    # project A already has hooks of the team's own
    os.makedirs(os.path.join(projects["proj-a"], ".github", "hooks"))
    with open(os.path.join(projects["proj-a"], ".github", "hooks", "team.json"), "w") as f:
        f.write('{\n  "version": 1,\n  "hooks": {\n    "postToolUse": [\n'
                f'      {{"type": "command", "bash": "{USER_HOOK}", "timeoutSec": 5}}\n    ]\n  }}\n}}\n')
    # what "Yes, and remember this folder" in the client's trust dialog writes
    with open(os.path.join(home, ".copilot", "config.json"), "w") as f:
        json.dump({"trustedFolders": list(projects.values())}, f, indent=2)
    os.makedirs(CACHE, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CTX_", "COPILOT_", "GH_", "GITHUB_", "ANTHROPIC_"))}
    env.update({
        "COPILOT_PROVIDER_TYPE": "anthropic", "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{srv.server_address[1]}",
        "COPILOT_PROVIDER_API_KEY": KEY, "COPILOT_OFFLINE": "true", "COPILOT_MODEL": MODEL,
        "COPILOT_AUTO_UPDATE": "false", "XDG_CACHE_HOME": CACHE,
        "HOME": home, "CTX_HOME": os.path.join(out, "ctx-home"), "PYTHONPATH": ROOT,
        "TERM": "xterm-256color", "NO_COLOR": "1",
    })
    ctx = {"env": env, "projects": projects, "server": srv, "out": out, "home": home}
    ctx["install"] = [install(ctx, p) for p in projects.values()]
    return ctx


def install(ctx: dict, project: str) -> dict:
    """`ctx hook install copilot --project`, as a user runs it in the project."""
    res = install_hooks("copilot", project, ctx["env"], "--project")
    files = {os.path.basename(f): open(f).read() for f in glob.glob(os.path.join(project, ".github", "hooks", "*.json"))}
    return {"project": project, "stderr": res["stderr"][-2000:], "files": files}


def events_of(ctx: dict, session: str | None) -> list[dict]:
    if not session:
        return []
    path = os.path.join(ctx["home"], ".copilot", "session-state", session, "events.jsonl")
    out = []
    if os.path.exists(path):
        for line in open(path, encoding="utf-8", errors="replace"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def hook_runs(events: list[dict], since: str | None = None) -> list[dict]:
    """Every hook Copilot ran, from its own events (hook.start / hook.end): event, input, success,
    error. `since`: only those after that timestamp (one run of a resumed session)."""
    starts, out = {}, []
    for e in events:
        d = e.get("data") or {}
        if since and str(e.get("timestamp") or "") < since:
            continue
        if e.get("type") == "hook.start":
            starts[d.get("hookInvocationId")] = d
        elif e.get("type") == "hook.end":
            s = starts.get(d.get("hookInvocationId"), {})
            out.append({"event": d.get("hookType"), "success": d.get("success"), "error": d.get("error"),
                        "input": s.get("input"), "agent": e.get("agentId")})
    return out


def headless(ctx: dict, name: str, project: str, prompt: str, *extra: str) -> dict:
    cmd = [COPILOT, "-p", prompt, "--allow-all-tools", "--output-format", "json", *extra]
    now = time.time()
    started = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ctx["projects"][project], env=ctx["env"], capture_output=True, text=True,
                       timeout=180)
    events = []
    for line in p.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    settle()   # ctx's SessionEnd runs detached from the client: let it finish before the next command
    result = next((e for e in reversed(events) if e.get("type") == "result"), {})
    answer = [e["data"].get("content") for e in events if e.get("type") == "assistant.message"
              and not e.get("agentId") and (e.get("data") or {}).get("content")]
    sid = result.get("sessionId")
    return {"name": name, "project": project, "prompt": prompt, "args": list(extra), "rc": p.returncode,
            "seconds": round(time.monotonic() - t0, 2), "session_id": sid, "exit_code": result.get("exitCode"),
            "answer": "\n".join(answer), "errors": [e for e in events if e.get("type") in ("session.error", "error")],
            "hook_runs": hook_runs(events_of(ctx, sid), started), "stderr": p.stderr[-3000:]}


def settle(seconds: float = 30.0) -> None:
    """Until no `ctx hook copilot` process runs (SessionEnd is installed detached)."""
    time.sleep(0.3)
    end = time.monotonic() + seconds
    while time.monotonic() < end and subprocess.run(["pgrep", "-f", "ctx hook copilot "],
                                                    capture_output=True).returncode == 0:
        time.sleep(0.2)


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


def interactive(ctx: dict, project: str, steps: list[tuple[str, str]]) -> dict:
    """The terminal UI under tmux: each (prompt, text awaited on screen), then /exit."""
    env = ctx["env"]
    sock = ["-L", "ctx-e2e-copilot"]
    before = set(os.listdir(os.path.join(ctx["home"], ".copilot", "session-state")))
    # as from a user's shell: the terminal stays open once the client exits (its SessionEnd hook
    # is not cut off with the pane)
    tmux(*sock, "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", "-c", ctx["projects"][project],
         terminal_command(env, f"sh -c '{COPILOT} --allow-all-tools; echo CLIENT-EXITED; exec sleep 300'"), env=env)
    screens = []

    def screen() -> str:
        return tmux(*sock, "capture-pane", "-p", "-t", "e2e", "-S", "-300")

    def wait_for(text: str, seconds: float = 45.0) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if text in screen():
                return True
            time.sleep(0.3)
        screens.append(screen())
        return False

    ok = {"ready": wait_for("/ commands", 60)}
    for i, (prompt, want) in enumerate(steps):
        tmux(*sock, "send-keys", "-t", "e2e", "-l", prompt)
        time.sleep(0.5)
        tmux(*sock, "send-keys", "-t", "e2e", "Enter")
        ok[f"step{i + 1}"] = wait_for(want)
        time.sleep(1.5)   # Stop runs once the answer is on screen
    screens.append(screen())
    tmux(*sock, "send-keys", "-t", "e2e", "-l", "/exit")
    time.sleep(0.5)
    tmux(*sock, "send-keys", "-t", "e2e", "Enter")
    ok["exited"] = wait_for("CLIENT-EXITED", 30)
    settle()
    wait_idle(ctx)
    tmux(*sock, "kill-server")
    new = sorted(set(os.listdir(os.path.join(ctx["home"], ".copilot", "session-state"))) - before)
    sid = next((s for s in new if not s.startswith(".")), None)
    return {"name": "interactive", "project": project, "ok": ok, "screen": "\n".join(screens)[-8000:],
            "prompts": [s[0] for s in steps], "session_id": sid, "hook_runs": hook_runs(events_of(ctx, sid))}


def main(out: str) -> None:
    ctx = setup(out)
    runs = []
    t0 = time.monotonic()
    a1 = headless(ctx, "a1-first", "proj-a", "Build the alpha exporter. RUN: echo alpha-marker")
    runs.append(a1)
    s1 = a1["session_id"] or ""
    runs.append(headless(ctx, "a1-compact", "proj-a", "/compact", "--resume", s1))
    runs.append(headless(ctx, "a1-after", "proj-a", "Which alpha exporter step is next", "--resume", s1))
    wait_idle(ctx)
    runs.append(headless(ctx, "a2-first", "proj-a", "Fix the beta parser crash. RUN: echo beta-marker"))
    runs.append(headless(ctx, "a1-back", "proj-a", "Back to the first session", "--resume", s1))
    wait_idle(ctx)
    runs.append(headless(ctx, "b1-first", "proj-b", "Start the gamma dashboard. RUN: echo gamma-marker"))
    wait_idle(ctx)
    runs.append(headless(ctx, "c1-subagent", "proj-a", "Plan the omega importer. SUBAGENT: " + SUBAGENT_TASK))
    wait_idle(ctx)
    runs.append(interactive(ctx, "proj-a", [
        ("Start the delta renderer. RUN: echo delta-marker", "The command finished"),
        ("Also handle the delta legend", "Noted: Also handle the delta legend"),
        ("/compact", "Compaction completed"),
        ("Where does the delta renderer stand", "Noted: Where does the delta renderer stand"),
        ("Then add the delta tooltips", "Noted: Then add the delta tooltips"),
    ]))
    wait_idle(ctx)
    res = {"runs": runs, "seconds": round(time.monotonic() - t0, 1), "install": ctx["install"],
           "projects": ctx["projects"], "ctx_home": ctx["env"]["CTX_HOME"], "copilot_home": ctx["home"],
           "version": json.load(open(os.path.join(client_dir("copilot"), "node_modules", "@github", "copilot",
                                                   "package.json")))["version"]}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    ctx["server"].shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
