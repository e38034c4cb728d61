"""Damaged JSON state files (bad JSON, NaN, nesting 100k deep, a 5,000-digit number, not UTF-8,
the wrong type at the top or inside) are never an internal error: a file ctx cannot rebuild
(the session index, a log, a chunk file, a tool registry) is one clear line naming the file,
exit 1; one ctx rebuilds as it goes (hook and maintain state, the token-count cache) is read
as empty and rewritten. All of them go through one checked loader (store.atomic.load_json).
The session index, the logs and the chunk files are the embedded store's files; their
PostgreSQL counterparts (damaged rows) are tests/test_store_pg_damage.py."""
import json
import os

import pytest

from conftest import run

GOOD = json.dumps({"v": 1, "kind": "message", "id": "a", "session": "s", "role": "user", "content": "hello there"})
DAMAGE = {
    "bad json": b'{"a": ',
    "nan": b'{"a": NaN}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "huge number": b'{"a": ' + b"9" * 5000 + b"}",
    "not utf-8": b'{"a": "\xff\xfe"}',
    "list": b"[1, 2]",
    "string": b'"x"',
    "null": b"null",
    "wrong inside": b'{"s": 5, "cl100k_base": {"k": "x", "j": -1}, "sessions": [1]}',
}
# file under the home, commands that read it, and whether ctx rebuilds it (a damaged one is read as empty)
STATE = {
    "sessions.json": ([("session", "list", "--json"), ("compact", "--force", "--budget", "100", "-")], False),
    "hooks-state.json": ([("hook", "claude-code", "UserPromptSubmit")], True),
    "maintain-state.json": ([("maintain", "-")], True),
    "cache/token-counts.json": ([("count", "-"), ("prompt", "build")], True),
    "logs/drops.jsonl": ([("drops",), ("stats", "drops")], False),
}


def _one_line_naming(res, path):
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr[-500:]
    assert res.code in (0, 1), (res.code, res.stderr)
    if res.code == 1:
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0], res.stderr
        assert res.stdout == ""


EMBEDDED_FILES = ("sessions.json", "logs/drops.jsonl")  # rows on PostgreSQL


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.embedded_only) if n in EMBEDDED_FILES else n
                                  for n in sorted(STATE)])
def test_a_damaged_state_file_is_one_line_or_rebuilt(ctx_home, tmp_path, name, damage):
    cmds, derived = STATE[name]
    path = ctx_home / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = DAMAGE[damage]
    if name.endswith(".jsonl"):
        data = json.dumps({"timestamp": "2026-01-01T00:00:00Z", "chunk_id": "c"}).encode() + b"\n" + data + b"\n"
    for cmd in cmds:
        path.write_bytes(data)
        stdin = GOOD + "\n"
        if cmd[0] == "hook":
            t = tmp_path / "t.jsonl"
            t.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "u",
                                     "message": {"role": "user", "content": "hi"}}) + "\n")
            stdin = json.dumps({"hook_event_name": "UserPromptSubmit", "transcript_path": str(t), "session_id": "s",
                                "cwd": str(tmp_path), "prompt": "hi"})
        ws = os.environ["CTX_WORKSPACE"]
        before = sorted(os.listdir(ws)) if os.path.isdir(ws) else []
        res = run(*cmd, input=stdin)
        _one_line_naming(res, path)
        if res.code == 1:  # nothing else written either
            assert (sorted(os.listdir(ws)) if os.path.isdir(ws) else []) == before, cmd
        if derived:
            assert res.code == 0, (cmd, res.stderr)
        elif damage not in ("wrong inside",) and not (name == "logs/drops.jsonl" and damage == "list"):
            # a file ctx cannot rebuild: named, and left as it is for the user to look at
            assert res.code == 1, (cmd, res.stderr)
            assert path.read_bytes() == data


@pytest.mark.embedded_only
@pytest.mark.parametrize("damage", sorted(set(DAMAGE) - {"wrong inside", "list", "string", "null"}))
def test_a_damaged_chunk_file_is_named(ctx_home, tmp_path, damage):
    recs = "\n".join(json.dumps({"v": 1, "kind": "message", "id": f"m{i}", "session": "s", "role": "assistant",
                                 "content": "the build log says nothing new here " * 30}) for i in range(6))
    scored = run("score", "-", "--embedder", "keyword", "--query", "unrelated", input=recs + "\n").stdout
    kept = run("drop", "--cutoff", "0.99", "--keep", "1.0", "--min-keep", "1", input=scored)
    stub = next(r for r in kept.records() if r["kind"] == "stub")
    path = stub["meta"]["cold_storage_path"]
    with open(path, "wb") as f:
        f.write(DAMAGE[damage])
    res = run("cold-storage", "show", stub["meta"]["chunk_id"], "--session", "s")
    _one_line_naming(res, path)
    assert res.code == 1
    res = run("recover", "--chunk-id", stub["meta"]["chunk_id"], "--session", "s")
    _one_line_naming(res, path)
    assert res.code == 1


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_tool_registry_is_named(ctx_home, tmp_path, damage):
    path = tmp_path / "tools.json"
    path.write_bytes(DAMAGE[damage])
    res = run("truncate", "--budget", "100", "--tools", path, "-", input=GOOD + "\n")
    _one_line_naming(res, path)
    assert res.code == 1


def test_a_damaged_hook_state_is_rewritten(ctx_home, tmp_path):
    p = ctx_home / "hooks-state.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(DAMAGE["deep"])
    t = tmp_path / "t.jsonl"
    t.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "u",
                             "message": {"role": "user", "content": "hi"}}) + "\n")
    res = run("hook", "claude-code", "SessionStart", input=json.dumps(
        {"hook_event_name": "SessionStart", "transcript_path": str(t), "session_id": "s", "cwd": str(tmp_path)}))
    assert res.code == 0, res.stderr


def test_no_state_file_is_read_with_a_bare_json_load():
    """One checked loader: no `json.load(` of an open file anywhere in ctxkit."""
    root = os.path.join(os.path.dirname(__file__), "..", "ctxkit")
    hits = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    for n, line in enumerate(fh, 1):
                        if "json.load(" in line:
                            hits.append(f"{f}:{n}")
    assert hits == []


@pytest.mark.parametrize("args", [("import", "-"), ("export", "--to", "openai"), ("export", "--to", "anthropic"),
                                  ("entities", "--print"), ("compact", "--force", "--budget", "50", "-"),
                                  ("drop", "--cutoff", "0.9", "-")])
def test_tool_call_arguments_nested_too_deep_or_too_long_are_text_not_a_crash(ctx_home, args):
    for inner in ("[" * 100_000 + "]" * 100_000, '{"n": ' + "9" * 5000 + "}", '{"a": NaN}'):
        call = {"v": 1, "kind": "message", "id": "b", "session": "s", "role": "assistant", "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": inner}}]}
        res_ = {"v": 1, "kind": "message", "id": "r", "session": "s", "role": "tool", "tool_call_id": "c1",
                "content": "ok"}
        res = run(*args, input="\n".join([GOOD, json.dumps(call), json.dumps(res_)]) + "\n")
        assert "internal error" not in res.stderr and res.code in (0, 1), (args, res.stderr[-300:])
