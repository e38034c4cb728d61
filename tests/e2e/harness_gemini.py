"""Drive the real Gemini CLI against the fake Gemini API, with the hooks `ctx hook install gemini`
writes.

Run inside a network namespace that has only loopback (tests/e2e/test_gemini_e2e.py does, with
clients.run_confined). Everything it does is
written to OUT/results.json; the test asserts on that, on the fake API's request log
(OUT/requests.jsonl), on Gemini CLI's own telemetry (OUT/telemetry.log: one `hook_call` record
per hook it ran, with its exit code) and on ctx's home (OUT/ctx-home). Steps:

  setup:                 a scratch HOME (API-key auth, both projects trusted as a user trusts
                         them, telemetry to a local file); project A already has a hook of the
                         user's own; `ctx hook install gemini --project` in both projects
  project A, headless:   -p (a shell command) · --resume whose command makes the window look
                         full, so the client compresses on its own (auto) before sending the
                         command's result back · --resume after that · a second session ·
                         --resume of the first by id
  project B, headless:   a new session (must see nothing of A)
  project A, interactive: the terminal UI under tmux: two prompts, /compress, two prompts, /quit
                         (no SessionStart after /compress: ctx's state comes back at BeforeAgent,
                         once)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from clients import binary, client_dir, install_hooks, terminal_command  # noqa: E402

GEMINI = binary("gemini")
MODEL = "gemini-2.5-flash"
KEY = "fake-gemini-api-key-for-the-e2e-tests"
USER_HOOK = "true"   # a hook of the user's own, there before ctx is installed: it must survive and run


def setup(out: str) -> dict:
    from fake_gemini import serve

    srv = serve(os.path.join(out, "requests.jsonl"))
    home = os.path.join(out, "home")
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    projects = {}
    for name in ("proj-a", "proj-b"):
        p = os.path.join(out, name)
        os.makedirs(p, exist_ok=True)
        subprocess.run(["git", "init", "-q", p], check=True)
        with open(os.path.join(p, "README.md"), "w") as f:
            f.write(f"# {name}\n")
        projects[name] = p
    # project A's settings already run a hook of the user's before a shell command
    os.makedirs(os.path.join(projects["proj-a"], ".gemini"))
    with open(os.path.join(projects["proj-a"], ".gemini", "settings.json"), "w") as f:
        f.write('{\n  "hooks": {\n    "BeforeTool": [\n      {"matcher": "run_shell_command", '
                f'"hooks": [{{"type": "command", "command": "{USER_HOOK}", "timeout": 5000}}]}}\n    ]\n  }}\n}}\n')
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "privacy": {"usageStatisticsEnabled": False},
                   # 0.61.0's startup clean-up of old sessions runs beside `--resume` and can read the
                   # resumed file mid-rewrite, take it for empty and delete it (seen here, with or
                   # without hooks): the clean-up is off so the sessions under test stay
                   "general": {"disableAutoUpdate": True, "disableUpdateNag": True,
                               "sessionRetention": {"enabled": False}},
                   "telemetry": {"enabled": True, "target": "local", "logPrompts": False,
                                 "outfile": os.path.join(out, "telemetry.log")}}, f, indent=2)
    # what "Trust folder" in the client's dialog writes
    with open(os.path.join(home, ".gemini", "trustedFolders.json"), "w") as f:
        json.dump({p: "TRUST_FOLDER" for p in projects.values()}, f, indent=2)
    # Gemini CLI hides most of the environment from hooks when it thinks it runs in GitHub Actions
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CTX_", "GEMINI_", "GOOGLE_")) and k not in ("GITHUB_SHA", "SURFACE")}
    env.update({
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{srv.server_address[1]}", "GEMINI_API_KEY": KEY,
        "HOME": home, "CTX_HOME": os.path.join(out, "ctx-home"), "PYTHONPATH": ROOT,
        "TERM": "xterm-256color", "NO_COLOR": "1",
        # the client starts itself again with a larger heap unless told not to: 3 s a run, nothing
        # a hook sees changes
        "GEMINI_CLI_NO_RELAUNCH": "true",
    })
    ctx = {"env": env, "projects": projects, "server": srv, "out": out, "home": home}
    ctx["install"] = [install(ctx, p) for p in projects.values()]
    return ctx


def install(ctx: dict, project: str) -> dict:
    """`ctx hook install gemini --project`, as a user runs it in the project (the hooks it writes
    run ctx by the absolute path of the `ctx` beside this Python)."""
    res = install_hooks("gemini", project, ctx["env"], "--project")
    path = os.path.join(project, ".gemini", "settings.json")
    return {"project": project, "stderr": res["stderr"][-2000:],
            "settings": open(path).read() if os.path.exists(path) else None}


def headless(ctx: dict, name: str, project: str, prompt: str, *extra: str) -> dict:
    cmd = [GEMINI, "-p", prompt, "--output-format", "json", "-m", MODEL, "--yolo", *extra]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ctx["projects"][project], env=ctx["env"], capture_output=True, text=True,
                       timeout=180)
    try:
        out = json.loads(p.stdout[p.stdout.index("{"):]) if "{" in p.stdout else {}
    except ValueError:
        out = {}
    return {"name": name, "project": project, "prompt": prompt, "args": list(extra), "rc": p.returncode,
            "seconds": round(time.monotonic() - t0, 2), "session_id": out.get("session_id"),
            "response": out.get("response"), "error": out.get("error"), "stderr": p.stderr[-3000:]}


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
    """The terminal UI under tmux: each (prompt, text awaited on screen), then /quit."""
    env = ctx["env"]
    sock = ["-L", f"ctx-e2e-gemini-{os.getpid()}"]
    cmd = " ".join([GEMINI, "-m", MODEL, "--yolo"])
    tmux(*sock, "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", "-c", ctx["projects"][project],
         terminal_command(env, cmd), env=env)
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

    def wait_idle_ui(seconds: float = 60.0) -> None:
        """Until no hook runs (the UI says "Executing Hook" while one does): text typed meanwhile
        is queued behind it."""
        end, quiet = time.monotonic() + seconds, 0
        while time.monotonic() < end and quiet < 3:
            quiet = quiet + 1 if "Executing Hook" not in screen() else 0
            time.sleep(0.3)

    ok = {"ready": wait_for("Type your message", 60)}
    for i, (prompt, want) in enumerate(steps):
        wait_idle_ui()
        tmux(*sock, "send-keys", "-t", "e2e", "-l", prompt)
        time.sleep(0.5)
        tmux(*sock, "send-keys", "-t", "e2e", "Enter")
        ok[f"step{i + 1}"] = wait_for(want)
        time.sleep(1.0)
    wait_idle_ui()
    screens.append(screen())
    tmux(*sock, "send-keys", "-t", "e2e", "-l", "/quit")
    time.sleep(0.5)
    tmux(*sock, "send-keys", "-t", "e2e", "Enter")
    end = time.monotonic() + 30
    while time.monotonic() < end and "e2e" in tmux(*sock, "list-sessions"):
        time.sleep(0.3)
    tmux(*sock, "kill-server")
    return {"name": "interactive", "project": project, "ok": ok, "screen": "\n".join(screens)[-8000:],
            "prompts": [s[0] for s in steps]}


def hook_calls(path: str) -> list[dict]:
    """Gemini CLI's own record of every hook it ran (its local telemetry file: a stream of JSON
    objects), as {event, hook, exit_code, success, session}."""
    if not os.path.exists(path):
        return []
    text = open(path, encoding="utf-8", errors="replace").read()
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:   # a record cut short as the client exited
            break
        a = obj.get("attributes") if isinstance(obj, dict) else None
        if isinstance(a, dict) and a.get("event.name") == "gemini_cli.hook_call":
            out.append({"event": a.get("hook_event_name"), "hook": a.get("hook_name"), "exit_code": a.get("exit_code"),
                        "success": a.get("success"), "session": a.get("session.id"),
                        "stderr": str(a.get("stderr") or "")[:500]})
    return out


def main(out: str) -> None:
    ctx = setup(out)
    runs = []
    t0 = time.monotonic()
    a1 = headless(ctx, "a1-first", "proj-a", "Build the alpha exporter. RUN: echo alpha-marker")
    runs.append(a1)
    s1 = a1["session_id"] or "latest"
    # the command's answer says the window is 70 % full: before sending its result back, the client
    # compresses the conversation on its own (PreCompress auto, then its summary requests)
    runs.append(headless(ctx, "a1-full", "proj-a", "Keep going with the alpha exporter. RUN: echo alpha-full "
                                                   "USAGE: 740000", "--resume", s1))
    runs.append(headless(ctx, "a1-after", "proj-a", "Which alpha exporter step is next", "--resume", s1))
    wait_idle(ctx)
    a2 = headless(ctx, "a2-first", "proj-a", "Fix the beta parser crash. RUN: echo beta-marker")
    runs.append(a2)
    runs.append(headless(ctx, "a1-back", "proj-a", "Back to the first session", "--resume", s1))
    wait_idle(ctx)
    runs.append(headless(ctx, "b1-first", "proj-b", "Start the gamma dashboard. RUN: echo gamma-marker"))
    wait_idle(ctx)
    runs.append(interactive(ctx, "proj-a", [
        ("Start the delta renderer. RUN: echo delta-marker", "The command finished"),
        ("Also handle the delta legend", "Noted: Also handle the delta legend"),
        ("/compress", "compressed from"),
        ("Where does the delta renderer stand", "Noted: Where does the delta renderer stand"),
        ("Then add the delta tooltips", "Noted: Then add the delta tooltips"),
    ]))
    wait_idle(ctx)
    res = {"runs": runs, "seconds": round(time.monotonic() - t0, 1), "install": ctx["install"],
           "projects": ctx["projects"], "ctx_home": ctx["env"]["CTX_HOME"], "gemini_home": ctx["home"],
           "hook_calls": hook_calls(os.path.join(out, "telemetry.log")),
           "version": json.load(open(os.path.join(client_dir("gemini"), "node_modules", "@google", "gemini-cli",
                                                  "package.json")))["version"]}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    ctx["server"].shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
