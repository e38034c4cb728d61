"""Hooks on a 1 GB Claude Code transcript, and `ctx count` on a 1 GB single line: wall seconds and
peak RSS of each call (GNU time: the child's own peak, not this process's), for this checkout
and another (run_all.py --against), in the same run.

    python bench/bench_hooks_huge.py               # CTX_BENCH_HUGE_MB=1024 by default

The transcript is the corpus's Claude Code sessions repeated under one session id with fresh
uuids, message ids and tool-call ids per copy, built once in the bench's data folder (never in
git). Calls, in order, on a fresh home: Stop (the first read), Stop with nothing new,
UserPromptSubmit and Stop after one turn is appended, Stop after the session grew by 16 MB more
(past what a reader keeps: a new window); then Codex's Stop and UserPromptSubmit on a 1 GB
rollout built the same way (the detached curation worker a Stop starts is waited for before the
next call, and not timed). Goal: every call <= 5 s and <= 300 MB.
A call that exits non-zero, or says the transcript was "not read", is reported as such.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

from _common import CORPUS, DATA, PY, checkouts, loadavg, pick, skipped

SESSION = "b16b0a7e-huge-4bd1-9c3e-5e55101d0000"
GOAL_S, GOAL_MB = 5.0, 300
CALL_TIMEOUT = 180   # seconds: a call still running then is stopped and reported (exit 124)
_IDS = re.compile(rb'"(uuid|parentUuid|leafUuid|sessionId|id|tool_use_id|promptId|call_id)":"([^"]+)"')
CODEX_SESSION = "019efc87-huge-7971-91df-0c9512a00000"


def _fresh(line: bytes, n: int) -> bytes:
    def sub(m):
        key, val = m.group(1), m.group(2)
        if key == b"sessionId":
            return b'"sessionId":"' + SESSION.encode() + b'"'
        return b'"' + key + b'":"' + val + b"-" + str(n).encode() + b'"'
    return _IDS.sub(sub, line)


def build(mb: int) -> str:
    """The transcript of `mb` MB (built once; a half-built one is never used: written then renamed)."""
    path = DATA / f"huge-{mb}mb.jsonl"
    if path.exists():
        return str(path)
    DATA.mkdir(parents=True, exist_ok=True)
    srcs = sorted(p for p in CORPUS.glob("claude-code_*_session.jsonl")) + \
        sorted(p for p in CORPUS.glob("claude-code_*.jsonl") if "_session" not in p.name and "agent-" not in p.name)
    if not srcs:
        raise SystemExit("no Claude Code transcript in the corpus")
    lines = [ln + b"\n" for p in srcs for ln in open(p, "rb").read().splitlines() if ln.strip()]
    tmp = str(path) + ".tmp"
    want, n, size = mb << 20, 0, 0
    with open(tmp, "wb") as f:
        while size < want:
            chunk = b"".join(_fresh(ln, n) for ln in lines)
            f.write(chunk)
            size += len(chunk)
            n += 1
    os.replace(tmp, path)
    return str(path)


def build_codex(mb: int) -> str:
    """A Codex rollout of `mb` MB: the corpus rollouts' session_meta line once, then their other
    lines repeated with fresh ids (built once, written then renamed)."""
    path = DATA / f"huge-codex-{mb}mb.jsonl"
    if path.exists():
        return str(path)
    srcs = sorted(CORPUS.glob("codex_*.jsonl"))
    if not srcs:
        raise SystemExit("no Codex rollout in the corpus")
    lines = [ln + b"\n" for p in srcs for ln in open(p, "rb").read().splitlines() if ln.strip()]
    head = next(ln for ln in lines if b'"type":"session_meta"' in ln)
    head = re.sub(rb'"(session_id|id)":"[^"]+"', lambda m: b'"' + m.group(1) + b'":"' + CODEX_SESSION.encode() + b'"',
                  head, count=2)
    body = [ln for ln in lines if b'"type":"session_meta"' not in ln]
    tmp = str(path) + ".tmp"
    want, n, size = mb << 20, 0, len(head)
    with open(tmp, "wb") as f:
        f.write(head)
        while size < want:
            chunk = b"".join(_fresh(ln, n) for ln in body)
            f.write(chunk)
            size += len(chunk)
            n += 1
    os.replace(tmp, path)
    return str(path)


def _one_line(mb: int) -> str:
    """One line of `mb` MB of text (no newline anywhere): an input `ctx count` does not recognise."""
    path = DATA / f"oneline-{mb}mb.txt"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        words = b"lorem ipsum dolor sit amet consectetur adipiscing elit " * 20000
        tmp = str(path) + ".tmp"
        with open(tmp, "wb") as f:
            left = mb << 20
            while left > 0:
                f.write(words[:left])
                left -= len(words[:left])
        os.replace(tmp, path)
    return str(path)


def _run_rss(root, cmd, stdin, env) -> dict:
    """Wall seconds, peak RSS (MB, from GNU time: the child's own) and exit status of one call, with
    what it said on stderr."""
    gtime = shutil.which("time") or "/usr/bin/time"
    t = time.perf_counter()
    p = subprocess.run([gtime, "-f", "RSS_KB=%M CPU=%U+%S", "timeout", str(CALL_TIMEOUT), *cmd], input=stdin,
                       capture_output=True, env=env, cwd=str(root))
    took = time.perf_counter() - t
    err = p.stderr.decode(errors="replace")
    m = re.search(r"RSS_KB=(\d+) CPU=([\d.]+)\+([\d.]+)", err)
    err = re.sub(r"RSS_KB=\S+ CPU=\S+\s*", "", err).strip()
    _wait_workers(env["CTX_HOME"])   # curation runs detached, off the hook's path: not timed, not overlapped
    return {"s": round(took, 2), "cpu_s": round(float(m.group(2)) + float(m.group(3)), 2) if m else None,
            "rss_mb": round(int(m.group(1)) / 1024, 1) if m else None, "exit": p.returncode, "stderr": err[-200:]}


def _wait_workers(home: str, seconds: float = 300.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if subprocess.run(["pgrep", "-f", "ctxkit --home " + home], capture_output=True).returncode != 0:
            return
        time.sleep(0.2)


def main(mb: int | None = None) -> list[dict]:
    mb = mb or int(os.environ.get("CTX_BENCH_HUGE_MB") or pick(1024, 8))
    if not (shutil.which("time") or os.path.exists("/usr/bin/time")):
        skipped("hooks on a huge transcript", "GNU time is not installed (peak RSS)")
        return []
    path = build(mb)
    codex = build_codex(mb)
    last_turn = _last_turn(path)
    grow = pick(16 << 20, 1 << 20)
    line = _one_line(mb)
    rows = []
    for label, root in checkouts():
        work = DATA / f"hooks-huge-{label}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "project").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(work / "project")], check=True)
        t_path = str(work / "transcript.jsonl")
        shutil.copyfile(path, t_path)   # the calls append to it
        env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
        env.update({"CTX_HOME": str(work / "home"), "PYTHONPATH": str(root)})
        hook = [PY, "-m", "ctxkit", "hook", "claude-code"]

        def payload(event, **kw):
            return json.dumps({"hook_event_name": event, "session_id": SESSION, "transcript_path": t_path,
                               "cwd": str(work / "project"), **kw}).encode()

        calls = {}
        calls["stop_first"] = _run_rss(root, hook + ["Stop"], payload("Stop"), env)
        calls["stop_nothing_new"] = _run_rss(root, hook + ["Stop"], payload("Stop"), env)
        with open(t_path, "ab") as f:
            f.write(last_turn)
        calls["prompt_one_turn_new"] = _run_rss(root, hook + ["UserPromptSubmit"],
                                                payload("UserPromptSubmit", prompt="what next?"), env)
        calls["stop_one_turn_new"] = _run_rss(root, hook + ["Stop"], payload("Stop"), env)
        with open(t_path, "ab") as f:   # the session grows past what a reader keeps: a new window
            k = 0
            while k * len(last_turn) < grow:
                f.write(b"".join(_fresh(ln + b"\n", 1000000 + k) for ln in last_turn.splitlines() if ln.strip()))
                k += 1
        calls["stop_after_growing"] = _run_rss(root, hook + ["Stop"], payload("Stop"), env)
        c_path = str(work / "rollout.jsonl")
        shutil.copyfile(codex, c_path)

        def codex_payload(event, **kw):
            return json.dumps({"hook_event_name": event, "session_id": CODEX_SESSION, "transcript_path": c_path,
                               "cwd": str(work / "project"), **kw}).encode()

        codex_hook = [PY, "-m", "ctxkit", "hook", "codex"]
        calls["codex_stop_first"] = _run_rss(root, codex_hook + ["Stop"], codex_payload("Stop"), env)
        calls["codex_prompt"] = _run_rss(root, codex_hook + ["UserPromptSubmit"],
                                         codex_payload("UserPromptSubmit", prompt="what next?"), env)
        calls["count_one_line"] = _run_rss(root, [PY, "-m", "ctxkit", "count", line], None, env)
        worst_s = max(c["s"] for c in calls.values())
        worst_mb = max(c["rss_mb"] or 0 for c in calls.values())
        not_read = [k for k, c in calls.items() if "not read" in c["stderr"] or c["exit"] != 0]
        for k, c in calls.items():
            row = {"bench": "hooks-huge", "checkout": label, "root": str(root), "call": k,
                   "transcript_mb": round(os.path.getsize(path) / 2**20), **c}
            print(json.dumps(row), flush=True)
        res = {"bench": "hooks-huge", "checkout": label, "root": str(root), "transcript_mb": mb,
               "hook_worst_s": max(c["s"] for k, c in calls.items() if k != "count_one_line"),
               "hook_worst_rss_mb": max(c["rss_mb"] or 0 for k, c in calls.items() if k != "count_one_line"),
               "count_line_s": calls["count_one_line"]["s"], "count_line_rss_mb": calls["count_one_line"]["rss_mb"],
               "worst_s": worst_s, "worst_rss_mb": worst_mb, "not_read_or_failed": not_read, "not_read_n": len(not_read),
               "loadavg": loadavg(), "goal": f"every call <= {GOAL_S} s and <= {GOAL_MB} MB, none 'not read'"}
        print(json.dumps(res), flush=True)
        rows.append(res)
        shutil.rmtree(work, ignore_errors=True)
    return rows


def _last_turn(path: str) -> bytes:
    """A last turn to append: the transcript's final prompt and what follows it, with fresh ids."""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (4 << 20)))
        tail = f.read().split(b"\n")[1:]
    lines = [ln + b"\n" for ln in tail if ln.strip()]
    cut = max((i for i, ln in enumerate(lines) if b'"type":"user"' in ln and b"tool_result" not in ln), default=0)
    return b"".join(_fresh(ln, 999999) for ln in lines[cut:])


if __name__ == "__main__":
    main()
