"""The long run of the suite's fuzzers (tests/test_any_json_in.py runs 60 fixed-seed examples):
hostile JSON values in every record field through every stream command, hook payloads with
wrong-typed fields for every handled event, and damaged state files (sessions.json, config.yaml,
CONTEXT.md, hooks-state.json, maintain-state.json, the token-count cache, a log). Prints runs and internal errors per family; the goal is 0 internal errors.

    cd bench && ../.venv/bin/python bench_fuzz.py [--runs 300] [--seed 1]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

GOOD = {"v": 1, "kind": "message", "id": "a", "session": "s", "role": "user", "content": "hello there"}
COMMANDS = (("import", "-"), ("count", "-"), ("status", "-"), ("truncate", "--budget", "50", "-"),
            ("score", "--embedder", "keyword", "-q", "x", "-"), ("drop", "--cutoff", "0.5", "-"),
            ("export", "--to", "anthropic"), ("compact", "--force", "--budget", "100", "-"), ("dedupe", "-"))
FIELDS = ("content", "tool_calls", "meta", "usage", "source", "group", "tokens", "score", "flags", "name", "ts",
          "role", "kind", "v", "id", "session", "tool_call_id")
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop", "SessionEnd",
          "Notification")
PAYLOAD_FIELDS = ("hook_event_name", "transcript_path", "session_id", "cwd", "prompt", "source", "message",
                  "custom_instructions", "trigger", "stop_hook_active")


def value(rng: random.Random, depth: int = 0):
    choices = [lambda: None, lambda: True, lambda: rng.randint(-10**6, 10**6), lambda: rng.random() * 1e308,
               lambda: "", lambda: "\ud83d half", lambda: "x" * rng.randint(1, 5000), lambda: 10 ** 40,
               lambda: "\x00\x1f", lambda: [value(rng, depth + 1) for _ in range(rng.randrange(3))],
               lambda: {str(rng.randrange(9)): value(rng, depth + 1) for _ in range(rng.randrange(3))},
               lambda: [[[[[[]]]]]], lambda: {"function": {"arguments": {"a": 1}}}, lambda: {"cwd": 5, "title": []}]
    return choices[rng.randrange(len(choices) if depth < 3 else 9)]()


def hostile_line(rng: random.Random) -> str:
    k = rng.randrange(8)
    if k == 0:
        return "[" * 50_000 + "]" * 50_000
    if k == 1:
        return json.dumps(dict(GOOD, id="b")).replace('"hello there"', '"x", "tokens": ' + "9" * 5000)
    if k == 2:
        return json.dumps(dict(GOOD, id="b")).replace('"hello there"', '"x", "score": NaN')
    return json.dumps({**GOOD, "id": "b", rng.choice(FIELDS): value(rng)})


def internal(res) -> bool:
    return "internal error" in res.stderr or "Traceback" in res.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    from conftest import run

    tally = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CTX_HOME"] = os.path.join(tmp, "home")
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(tmp, "tk"))
        ws = os.path.join(tmp, "ws")
        for i in range(a.runs):
            cmd = rng.choice(COMMANDS)
            data = json.dumps(GOOD) + "\n" + hostile_line(rng) + "\n"
            extra = ["--workspace", ws] if cmd[0] == "compact" else []
            skip = ["--skip-invalid"] if rng.random() < 0.5 and cmd[0] not in ("export", "count", "status", "dedupe") \
                else []
            res = run(*cmd, *extra, *skip, input=data)
            t = tally.setdefault("records", [0, 0, []])
            t[0] += 1
            if internal(res):
                t[1] += 1
                t[2].append(f"{cmd[0]}: {res.stderr.strip()[-160:]}")
        transcript = os.path.join(tmp, "t.jsonl")
        with open(transcript, "w") as f:
            f.write(json.dumps({"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user",
                                                                                        "content": "hi"}}) + "\n")
        for i in range(a.runs):
            event = rng.choice(EVENTS)
            payload = {"hook_event_name": event, "transcript_path": transcript, "session_id": "s", "cwd": tmp}
            payload[rng.choice(PAYLOAD_FIELDS)] = value(rng)
            res = run("hook", "claude-code", event, "--workspace", ws, input=json.dumps(payload))
            t = tally.setdefault("hook payloads", [0, 0, []])
            t[0] += 1
            if internal(res) or res.code == 2:
                t[1] += 1
                t[2].append(f"{event}: {res.stderr.strip()[-160:]}")
        home = os.environ["CTX_HOME"]
        states = {"sessions.json": lambda r: json.dumps(rng.choice([[], {"s": 5}, {"s": {"title": 5}}, "x", None,
                                                                    {"s": {"sessions": [1, None]}}])),
                  "config.yaml": lambda r: rng.choice([b"\xff\xfe bad", b"redact: [1\n", b"max_tokens: -5\n",
                                                       b"store: 5\n"]),
                  "CONTEXT.md": lambda r: rng.choice([b"# Context\n\xff\xfe\n", b"<!-- ctx:context v9 -->\n",
                                                      b"## Pending\n- [x\n" * 100])}
        damaged_json = [b'{"a": ', b'{"a": NaN}', b"[" * 100_000 + b"]" * 100_000, b'{"a": ' + b"9" * 5000 + b"}",
                        b'{"a": "\xff\xfe"}', b"[1, 2]", b'"x"', b"null",
                        b'{"s": 5, "cl100k_base": {"k": "x", "j": -1}, "sessions": [1]}']
        for name in ("hooks-state.json", "maintain-state.json", "cache/token-counts.json", "logs/drops.jsonl"):
            states[name] = lambda r: rng.choice(damaged_json)
        for i in range(a.runs):
            name = rng.choice(list(states))
            path = os.path.join(ws if name == "CONTEXT.md" else home, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            data = states[name](rng)
            with open(path, "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())
            cmd = rng.choice([("status", "-"), ("context", "show"), ("session", "list"), ("config", "validate"),
                              ("prompt", "build"), ("compact", "--force", "-"), ("maintain", "-"), ("drops",),
                              ("count", "-"), ("stats", "drops")])
            extra = ["--workspace", ws] if cmd[0] in ("context", "prompt", "compact") else []
            res = run(*cmd, *extra, input=json.dumps(GOOD) + "\n")
            t = tally.setdefault("state files", [0, 0, []])
            t[0] += 1
            if internal(res):
                t[1] += 1
                t[2].append(f"{name} / {cmd[0]}: {res.stderr.strip()[-160:]}")
            os.unlink(path)
    for fam, (n, bad, examples) in tally.items():
        print(f"{fam:<16} runs {n:>5}  internal errors {bad:>4}")
        for e in sorted(set(examples))[:5]:
            print(f"    {e}")


if __name__ == "__main__":
    main()
