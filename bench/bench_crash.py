"""Crash safety, re-measured (issue 12: "the crash-safety figures unchanged, re-measured").

1. SIGKILLed drops: `ctx drop` killed at a random moment, 33 times, on one home. Every stub
   that reached the output must have its chunk in cold storage; every chunk file must parse.
2. Killed CONTEXT.md writers: `ctx goal add` and `ctx compact` killed at random moments, 53
   times. CONTEXT.md must parse after every kill (the old or the new version, never half).
3. Round trips: 60 chunks dropped, each recovered by id: the records must come back exactly
   (compared after redaction, which runs before anything is stored).

    cd bench && ../.venv/bin/python run_all.py crash
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import tempfile
import time

from _common import CORPUS, PY, ROOT, pick

KILLS_DROP, KILLS_CONTEXT, ROUND_TRIPS = pick((33, 53, 60), (2, 2, 2))
SESSION = pick("claude-code_spotter_fa812bfe_session.jsonl", "claude-code_spotter_491e126e_session.jsonl")


def ctx(args, home, stdin=None, **kw):
    env = dict(os.environ, CTX_HOME=home, PYTHONPATH=str(ROOT), CTX_QUIET="1")
    return subprocess.run([PY, "-m", "ctxkit", *args], input=stdin, capture_output=True, text=True, env=env, **kw)


def killed(args, home, stdin: str | None, delay: float) -> str:
    """Start `ctx ARGS`, SIGKILL it after `delay` seconds; what it printed by then."""
    env = dict(os.environ, CTX_HOME=home, PYTHONPATH=str(ROOT), CTX_QUIET="1")
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen([PY, "-m", "ctxkit", *args], stdin=subprocess.PIPE, stdout=out,
                             stderr=subprocess.DEVNULL, text=True, env=env)
        try:
            if stdin is not None:
                p.stdin.write(stdin)
            p.stdin.close()
        except BrokenPipeError:
            pass
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        out.seek(0)
        return out.read()


def drops(home: str, scored: str, rnd: random.Random) -> dict:
    stubs = missing = 0
    for k in range(KILLS_DROP):
        out = killed(["drop", "--cutoff", "0.5", "--keep", "0.8"], home, scored, rnd.uniform(0.2, 4.0))
        for line in out.splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue  # the kill cut the last line
            if r.get("kind") == "stub":
                stubs += 1
                meta = r.get("meta") or {}
                back = ctx(["recover", "--chunk-id", meta["chunk_id"], "--session", r["session"]], home)
                missing += back.returncode != 0 or not back.stdout.strip()
    re = ctx(["cold-storage", "reindex"], home)
    return {"kills": KILLS_DROP, "stubs_in_output": stubs, "stubs_without_chunk": missing,
            "reindex_exit": re.returncode, "reindex_said": (re.stderr.strip().splitlines() or [""])[-1][:120]}


def context_writes(home: str, ws: str, rnd: random.Random) -> dict:
    src = str(CORPUS / SESSION)
    bad = versions = 0
    seen = set()
    for k in range(KILLS_CONTEXT):
        if k % 2:
            killed(["goal", "add", f"goal {k}", "--workspace", ws], home, None, rnd.uniform(0.05, 1.0))
        else:
            killed(["compact", src, "--force", "--budget", str(rnd.randint(3000, 20000)), "--workspace", ws],
                   home, None, rnd.uniform(0.3, 4.0))
        if os.path.exists(os.path.join(ws, "CONTEXT.md")):
            show = ctx(["context", "show", "--json", "--workspace", ws], home)
            if show.returncode != 0:
                bad += 1
            else:
                seen.add(json.loads(show.stdout).get("version"))
    versions = len(seen)
    return {"kills": KILLS_CONTEXT, "unparseable_after_kill": bad, "distinct_versions_seen": versions}


def round_trips(home: str, scored: str) -> dict:
    out = ctx(["drop", "--cutoff", "0.99", "--keep", "1.0", "--min-keep", "0"], home, scored)
    originals = {}
    for line in scored.splitlines():
        r = json.loads(line)
        if r.get("group") and r.get("kind") != "event":
            originals.setdefault(r["group"], []).append(r)
    stubs = [json.loads(x) for x in out.stdout.splitlines() if '"kind":"stub"' in x]
    exact = tried = 0
    skip = {"score", "score_parts", "tokens", "tokenizer"}
    for s in stubs[:ROUND_TRIPS]:
        cid = s["meta"]["chunk_id"]
        back = ctx(["recover", "--chunk-id", cid, "--session", s["session"]], home)
        got = [json.loads(x) for x in back.stdout.splitlines()]
        want = originals.get(s["group"]) or originals.get(cid.split("~")[0].split(".")[0])
        tried += 1
        exact += [{k: v for k, v in r.items() if k not in skip} for r in got] == \
                 [{k: v for k, v in r.items() if k not in skip} for r in (want or [])]
    return {"round_trips": tried, "exact": exact}


def main() -> None:
    rnd = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        scored = ctx(["score", str(CORPUS / SESSION), "-q", "elixir tests", "--embedder", "keyword"], home).stdout
        print(json.dumps({"bench": "crash", "part": "sigkilled_drops", **drops(home, scored, rnd)}))
        print(json.dumps({"bench": "crash", "part": "context_md_kills",
                          **context_writes(home, os.path.join(tmp, "ws"), rnd)}))
        home2 = os.path.join(tmp, "home2")
        scored2 = ctx(["score", str(CORPUS / SESSION), "-q", "elixir tests", "--embedder", "keyword"], home2).stdout
        print(json.dumps({"bench": "crash", "part": "drop_recover", **round_trips(home2, scored2)}))


if __name__ == "__main__":
    main()
