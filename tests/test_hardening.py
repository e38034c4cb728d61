"""Hardening (issue 12): races on one chunk id, re-drops, one enormous line, ids from data."""
import json
import os
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT, log_events, run

CTX = [sys.executable, "-m", "ctxkit"]


def _session(tag: str, n: int = 6) -> str:
    rows = []
    for i in range(n):
        rows.append({"v": 1, "kind": "message", "id": f"m{i}", "session": "shared", "role": "user" if i % 2 else "assistant",
                     "content": f"{tag} message {i} about gardening and tomatoes " * 8, "group": f"c-{i:04d}",
                     "score": 0.01})
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_concurrent_same_id_drops_never_swap_chunks(tmp_path):
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    for rnd in range(11):
        procs, inputs = [], {}
        for k in range(4):
            tag = f"writer{k}-round{rnd}"
            inputs[tag] = _session(tag)
            procs.append((tag, subprocess.Popen(CTX + ["drop", "--cutoff", "0.5", "--min-keep", "0"], env=env,
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                text=True)))
        outs = {tag: p.communicate(inputs[tag], timeout=120) for tag, p in procs}
        for tag, (out, err) in outs.items():
            stubs = [json.loads(x) for x in out.splitlines() if '"stub"' in x]
            assert stubs, err
            for st in stubs:
                cmd = st["content"].rsplit("| ", 1)[1].rstrip("]")
                back = subprocess.run(CTX + shlex.split(cmd)[1:], env=env, capture_output=True, text=True)
                assert back.returncode == 0, back.stderr
                got = [json.loads(x) for x in back.stdout.splitlines()]
                assert got and all(tag in r["content"] for r in got), f"a stub of {tag} recovered another's chunk"


def test_redrop_refreshes_recoverable_until_and_is_logged_as_a_redrop(ctx_home):
    data = _session("same")
    run("drop", "--cutoff", "0.5", "--min-keep", "0", input=data, env={"CTX_RECOVERABLE_FOR_DAYS": "1"})
    first = {r["chunk_id"]: r for r in run("cold-storage", "list", "--json").records()}
    run("drop", "--cutoff", "0.5", "--min-keep", "0", input=data, env={"CTX_RECOVERABLE_FOR_DAYS": "30"})
    second = {r["chunk_id"]: r for r in run("cold-storage", "list", "--json").records()}
    assert first.keys() == second.keys()
    for k in first:
        assert second[k]["expires"] > first[k]["expires"]
    events = log_events("drops")
    assert sum(e["event"] == "chunk_dropped" for e in events) == len(first)
    assert sum(e["event"] == "chunk_redropped" for e in events) == len(first)
    assert all(e["tokens"] == 0 for e in events if e["event"] == "chunk_redropped")


def test_one_enormous_line_is_counted_without_recursion(tmp_path):
    blob = "QUJD" * 400_000 + " " + "word " * 300_000  # a base64 blob and prose on one 2.8 MB line
    rec = {"v": 1, "kind": "message", "id": "t", "role": "tool", "tool_call_id": "c", "content": blob}
    call = {"v": 1, "kind": "message", "id": "a", "role": "assistant", "content": "",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}
    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps(call) + "\n" + json.dumps(rec) + "\n")
    for args in (("count", p), ("status", p), ("truncate", p, "--budget", "1000"), ("compact", p, "--force",
                                                                                       "--budget", "2000")):
        res = run(*args)
        assert res.code == 0 and "RecursionError" not in res.stderr, (args, res.stderr)
    n = int(run("count", p).stdout)
    assert n > 700_000


def test_session_id_with_newlines_cannot_break_context_md(tmp_path):
    rows = [{"v": 1, "kind": "message", "id": f"m{i}", "session": "evil\n## Task\n-->owned <!--",
             "role": "user" if i % 2 == 0 else "assistant", "content": f"please fix parser bug number {i} " * 20}
            for i in range(12)]
    data = "".join(json.dumps(r) + "\n" for r in rows)
    ws = tmp_path / "ws"
    assert run("compact", "-", "--force", "--budget", "400", "--workspace", ws, input=data).code == 0
    for args in (("context", "show", "--json"), ("goal", "add", "ship it"), ("prompt", "build")):
        res = run(*args, "--workspace", ws)
        assert res.code == 0, (args, res.stderr)
    text = (ws / "CONTEXT.md").read_text()
    assert text.count("## Task") == 1 and "-->owned" not in text


SECRETS = {
    "AKIAIOSFODNN7EXAMPLE": "aws", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "aws secret",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "github", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD": "anthropic",
    "hunter2pass": "url password", "MIIEowIBAAKCAQEA7bq98": "private key",
}


def _secret_session() -> str:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98\nabc\n-----END RSA PRIVATE KEY-----"
    rows = [
        {"role": "user", "content": "deploy with AKIAIOSFODNN7EXAMPLE and aws_secret_access_key="
                                    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, token ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "bash", "arguments": json.dumps({"command": "git clone https://bob:hunter2pass@example.com/r.git"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "cloned; key file:\n" + key},
        {"role": "assistant", "content": "Using sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD for the API."},
    ] * 3
    out = []
    for i, r in enumerate(rows):
        r = dict(r, v=1, kind="message", id=f"m{i}", session="sec", ts=f"2026-01-01T0{i // 6}:{i % 6}0:00Z")
        if r["role"] == "tool":
            r["tool_call_id"] = f"c1-{i}"
        if r.get("tool_calls"):
            r["tool_calls"] = [dict(r["tool_calls"][0], id=f"c1-{i + 1}")]
        out.append(json.dumps(r))
    return "\n".join(out) + "\n"


def _leaks(*roots) -> list[str]:
    found = []
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                data = open(os.path.join(d, f), "rb").read()
                found += [f"{s} in {os.path.join(d, f)}" for s in SECRETS if s.encode() in data]
    return found


def test_no_secret_reaches_ctx_home_or_the_workspace(tmp_path, ctx_home):
    ws = tmp_path / ".ctx"
    data = _secret_session()
    scored = run("score", "-", "--query", "deploy", "--embedder", "keyword", input=data).stdout
    kept = run("drop", "--cutoff", "0.9", "--keep", "1.0", "--min-keep", "1", input=scored)
    assert kept.code == 0, kept.stderr
    assert run("compact", "-", "--force", "--budget", "300", "--workspace", ws, input=kept.stdout).code == 0
    run("remember", "staging lives at https://bob:hunter2pass@staging.example.com", "--workspace", ws)
    run("observe", "-", "--workspace", ws, input=data)
    out = run("prompt", "build", "--workspace", ws).stdout
    assert not [s for s in SECRETS if s in out]
    p = tmp_path / "t.jsonl"
    p.write_text(data)
    hook = run("hook", "claude-code", "PreCompact", "--workspace", ws,
               input=json.dumps({"hook_event_name": "PreCompact", "transcript_path": str(p), "session_id": "sec",
                                 "custom_instructions": "keep ghp_abcdefghijklmnopqrstuvwxyz0123456789 safe"}))
    assert hook.code == 0
    start = run("hook", "claude-code", "SessionStart", "--workspace", ws,
                input=json.dumps({"hook_event_name": "SessionStart", "transcript_path": str(p), "source": "startup"}))
    assert not [s for s in SECRETS if s in start.stdout]
    assert _leaks(ctx_home, ws) == []
    assert "[REDACTED:aws-access-key#" in (ws / "CONTEXT.md").read_text() or \
        "[REDACTED:" in open(next(iter((ctx_home / "cold-storage").rglob("c-*.jsonl")))).read()
    assert (ws / ".gitignore").read_text().strip().endswith("*")
    for d, dirs, files in os.walk(ctx_home):
        for f in files:
            assert os.stat(os.path.join(d, f)).st_mode & 0o077 == 0, f"{f} is readable by others"


def test_redact_false_keeps_bytes_exact(tmp_path, ctx_home):
    data = _secret_session()
    scored = run("score", "-", "--query", "deploy", "--embedder", "keyword", input=data, env={"CTX_REDACT": "false"}).stdout
    assert "AKIAIOSFODNN7EXAMPLE" in scored
    kept = run("drop", "--cutoff", "0.9", "--keep", "1.0", "--min-keep", "1", input=scored, env={"CTX_REDACT": "false"}).records()
    stub = next(r for r in kept if r["kind"] == "stub")
    back = run("recover", "--chunk-id", stub["meta"]["chunk_id"], "--session", "sec", env={"CTX_REDACT": "false"}).stdout
    assert any(s in back for s in SECRETS)


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

ANY = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=8),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
FIELDS = ("id", "session", "ts", "role", "content", "tool_calls", "tool_call_id", "name", "group", "tokens",
          "score", "flags", "meta", "source", "usage", "kind")
COMMANDS = (("count",), ("status",), ("truncate", "--budget", "50"), ("compact", "--force", "--budget", "100"),
            ("score", "--embedder", "keyword", "--query", "x"), ("drop", "--cutoff", "0.5"), ("export", "--to", "anthropic"),
            ("import",))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(FIELDS), value=ANY, cmd=st.sampled_from(COMMANDS), skip=st.booleans())
def test_fuzz_wrong_typed_ctx_fields_never_crash(field, value, cmd, skip, tmp_path):
    good = {"v": 1, "kind": "message", "id": "a", "session": "s", "role": "user", "content": "hello there"}
    if cmd[0] == "drop":  # drop reads scored records (unscored input is one error, naming no line)
        good["score"] = 0.1
    bad = {**good, "id": "b", field: value}
    data = json.dumps(good) + "\n" + json.dumps(bad) + "\n"
    args = list(cmd) + (["--skip-invalid"] if skip and cmd[0] not in ("export",) else [])
    res = run(*args, "--workspace", tmp_path, input=data) if cmd[0] == "compact" else run(*args, input=data)
    assert "internal error" not in res.stderr, (cmd, field, value, res.stderr)
    assert res.code in (0, 1, 2, 3), res.stderr
    if res.code == 1:
        assert "<stdin>:2" in res.stderr or "-:2" in res.stderr or ":2:" in res.stderr, res.stderr


CC_LINES = [
    {"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": 42}},
    {"type": "user", "sessionId": "s", "uuid": "u", "message": "not an object"},
    {"type": "assistant", "sessionId": "s", "uuid": "u", "message": {"id": "m", "content": [1, "x", None]}},
    {"type": "assistant", "sessionId": "s", "uuid": "u", "message": {"id": "m", "content": [{"type": "tool_use", "id": 5}]}},
    {"type": "user", "sessionId": 7, "uuid": "u", "timestamp": 12, "message": {"role": "user", "content": "hi"}},
]


def test_wrong_typed_claude_code_lines_are_file_line_errors(tmp_path):
    first = {"type": "user", "sessionId": "s", "uuid": "u0", "message": {"role": "user", "content": "start"}}
    for bad in CC_LINES:
        p = tmp_path / "cc.jsonl"
        p.write_text(json.dumps(first) + "\n" + json.dumps(bad) + "\n")
        res = run("import", p)
        assert "internal error" not in res.stderr, (bad, res.stderr)
        if res.code:
            assert f"{p}:2" in res.stderr, res.stderr
        skipped = run("import", p, "--skip-invalid")
        assert skipped.code == 0 and "internal error" not in skipped.stderr, skipped.stderr


def _dropped(ctx_home):
    out = run("drop", "--cutoff", "0.5", "--keep", "1.0", "--min-keep", "0", input=_session("cold")).records()
    return [r for r in out if r["kind"] == "stub"]


def _ctx(home, *args, input=None):
    """A real process (SQLite connections of in-process runs would outlive the damage)."""
    env = dict(os.environ, CTX_HOME=str(home), PYTHONPATH=str(ROOT))
    return subprocess.run(CTX + [str(a) for a in args], env=env, input=input, capture_output=True, text=True)


@pytest.mark.embedded_only  # index and chunk files; damaged rows: test_store_pg_damage
def test_garbage_index_is_rebuilt_and_bad_chunk_files_quarantined(tmp_path):
    home = tmp_path / "home"
    out = _ctx(home, "drop", "--cutoff", "0.5", "--keep", "1.0", "--min-keep", "0", input=_session("cold")).stdout
    stubs = [json.loads(x) for x in out.splitlines() if '"stub"' in x]
    cold = home / "cold-storage"
    for f in cold.glob("index.sqlite-*"):
        f.unlink()
    (cold / "index.sqlite").write_bytes(b"this is not a database" * 100)
    rows = _ctx(home, "cold-storage", "list", "--json")
    assert rows.returncode == 0 and len(rows.stdout.splitlines()) == len(stubs) and "damaged" in rows.stderr
    assert list(cold.glob("index.sqlite.corrupt-*"))
    bad = next(cold.rglob("c-0001.jsonl"))
    bad.write_bytes(b"\xff\xfe\x00binary")
    (cold / "index.sqlite").write_bytes(b"garbage")
    res = _ctx(home, "cold-storage", "reindex")
    assert res.returncode == 0 and "quarantined" in res.stderr, res.stderr
    assert len(_ctx(home, "cold-storage", "list", "--json").stdout.splitlines()) == len(stubs) - 1
    assert list((cold / ".quarantine").rglob("c-0001.jsonl"))
    again = _ctx(home, "drop", "--cutoff", "0.5", "--keep", "1.0", "--min-keep", "0", input=_session("cold"))
    assert again.returncode == 0, again.stderr


@pytest.mark.embedded_only  # paths under the home; the store has none
def test_moved_home_recovers_without_reindex(ctx_home, tmp_path):
    stubs = _dropped(ctx_home)
    moved = tmp_path / "moved-home"
    os.rename(ctx_home, moved)
    res = run("recover", "--chunk-id", stubs[0]["meta"]["chunk_id"], "--session", "shared", env={"CTX_HOME": str(moved)})
    assert res.code == 0, res.stderr
    assert res.records()


@pytest.mark.embedded_only  # sessions.json; a damaged row: test_store_pg_damage
def test_truncated_session_index_is_an_error_not_a_silent_reset(ctx_home):
    _dropped(ctx_home)
    p = ctx_home / "sessions.json"
    p.write_text(p.read_text()[:10])
    res = run("drop", "--cutoff", "0.5", input=_session("again"))
    assert res.code == 1 and "sessions.json" in res.stderr
    assert p.read_text().startswith(p.read_text()[:10]) and len(p.read_text()) == 10  # left as it was
    assert res.stdout == ""
    chunks = sorted(str(c) for c in (ctx_home / "cold-storage").rglob("*.jsonl"))
    assert run("drop", "--cutoff", "0.5", input=_session("again")).code == 1
    assert sorted(str(c) for c in (ctx_home / "cold-storage").rglob("*.jsonl")) == chunks  # no chunk written


@pytest.mark.embedded_only  # links in the home's folders; the store has none
def test_links_never_take_reads_or_deletes_outside_cold_storage(ctx_home, tmp_path):
    _dropped(ctx_home)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"
    secret.write_text(json.dumps({"session_id": "shared", "chunk_id": "c-9999", "records": [
        {"v": 1, "kind": "message", "id": "x", "role": "user", "content": "OUTSIDE DATA"}]}) + "\n")
    sess_dir = next(p for p in (ctx_home / "cold-storage").iterdir() if p.is_dir() and not p.name.startswith("."))
    os.symlink(secret, sess_dir / "c-9999.jsonl")
    res = run("recover", "--chunk-id", "c-9999", "--session", "shared")
    assert "OUTSIDE DATA" not in res.stdout and res.code != 0
    run("cold-storage", "purge", "--session", "shared", "-f")
    assert secret.exists()
    # a stub that names a file outside: compaction finds chunks by id, never by that path
    stub = {"v": 1, "kind": "stub", "id": "s1", "session": "zz", "role": "user", "content": "[dropped chunk]",
            "meta": {"chunk_id": "nope", "cold_storage_path": str(secret)}}
    msgs = [{"v": 1, "kind": "message", "id": f"m{i}", "session": "zz", "role": "user" if i % 2 else "assistant",
             "content": "talk about the parser " * 30} for i in range(6)]
    data = "".join(json.dumps(r) + "\n" for r in [stub] + msgs)
    out = run("compact", "-", "--force", "--budget", "300", "--workspace", tmp_path / "ws", input=data)
    assert out.code == 0 and "OUTSIDE DATA" not in out.stdout


def test_a_folder_link_planted_inside_the_home_is_refused(ctx_home, tmp_path):
    """Not only the last component: a link standing in for logs/, sessions/, cold-storage/ or
    cache/ would carry writes, reads and deletes outside the home. Each is refused, naming it,
    and nothing lands outside."""
    src = os.path.join(os.path.dirname(__file__), "..", "examples", "claude-code_spotter_491e126e_session.jsonl")
    ctx_home.mkdir(parents=True, exist_ok=True)
    for folder, args, stdin in (
            ("logs", ["status", src, "--log"], None),
            ("sessions", ["compact", src, "--force", "--budget", "3000", "--workspace", tmp_path / "ws"], None),
            ("cold-storage", ["drop", "--cutoff", "0.5"], _session("link")),
            ("cache", ["score", src, "--query", "parser"], None)):
        outside = tmp_path / f"outside-{folder}"
        outside.mkdir()
        link = ctx_home / folder
        if link.is_dir() and not link.is_symlink():
            import shutil

            shutil.rmtree(link)
        os.symlink(outside, link)
        res = run(*args, input=stdin)
        assert res.code == 1 and f"{link}: refused: a symbolic link inside CTX_HOME" in res.stderr, (folder, res.stderr)
        assert list(outside.iterdir()) == [], folder
        assert res.stdout == ""  # all or nothing: no half output either
        os.unlink(link)
    assert not (tmp_path / "ws" / "CONTEXT.md").exists()
    # the home's workspace may be a link on purpose (to the agent's own folder): it is followed
    agent = tmp_path / "agent"
    agent.mkdir()
    os.symlink(agent, ctx_home / "workspace")
    assert run("goal", "add", "ship it").code == 0 and "ship it" in (agent / "CONTEXT.md").read_text()


def test_a_failed_compact_leaves_no_state(tmp_path, ctx_home, monkeypatch):
    """Failure injection: the output cannot be written -> CONTEXT.md, the session store and the
    log stay as they were, and the next run summarizes the span again."""
    from ctxkit.io import jsonl

    src = os.path.join(os.path.dirname(__file__), "..", "examples", "claude-code_spotter_491e126e_session.jsonl")
    ws = tmp_path / "ws"

    def boom(self, recs):
        raise OSError(28, "No space left on device")

    real = jsonl.Writer.write_all
    monkeypatch.setattr(jsonl.Writer, "write_all", boom)
    res = run("compact", src, "--force", "--budget", "3000", "--workspace", ws)
    assert res.code != 0
    assert not (ws / "CONTEXT.md").exists() and not (ctx_home / "sessions").exists()
    assert not (ctx_home / "logs" / "compaction.jsonl").exists()
    monkeypatch.setattr(jsonl.Writer, "write_all", real)
    ok = run("compact", src, "--force", "--budget", "3000", "--workspace", ws)
    assert ok.code == 0 and "compacted" in ok.stderr and "already summarized" not in ok.stderr


BAD_INPUTS = {
    "empty": (b"", 0),
    "truncated": (b'{"v":1,"kind":"message","role":"user","content":"ok"}\n{"v":1,"kind":"mess', 1),
    "binary": (bytes(range(256)) * 4, 1),
    "invalid-utf8": (b'{"v":1,"kind":"message","role":"user","content":"\xff\xfe"}\n', 1),
    "wrong-type": (b'{"v":1,"kind":"message","role":"user","content":42}\n', 1),
}
READERS = (("import",), ("count",), ("status",), ("truncate", "--budget", "100"), ("score", "--embedder", "keyword"),
           ("drop",), ("compact", "--force", "--budget", "100"), ("export",), ("eval", "--candidate", "-"))


def test_bad_input_matrix_never_crashes_and_never_exits_0_on_malformed(tmp_path):
    env = dict(os.environ, CTX_HOME=str(tmp_path / "h"), CTX_WORKSPACE=str(tmp_path / "ws"), PYTHONPATH=str(ROOT))
    cases = dict(BAD_INPUTS)
    for cmd in READERS:
        for name, (data, want_fail) in cases.items():
            f = tmp_path / f"in-{name}.jsonl"
            f.write_bytes(data)
            p = subprocess.run(CTX + list(cmd[:1]) + [str(f)] + list(cmd[1:]), env=env, capture_output=True)
            err = p.stderr.decode("utf-8", "replace")
            assert "internal error" not in err and "Traceback" not in err, (cmd, name, err)
            assert p.returncode in (0, 1, 2), (cmd, name, p.returncode, err)
            if want_fail and cmd[0] != "count" or (want_fail and name != "binary" and cmd[0] == "count"):
                assert p.returncode != 0, (cmd, name, "exit 0 on malformed input")
                assert f"{f}" in err, (cmd, name, err)  # names the file (and the line where there is one)
        for special in (tmp_path, tmp_path / "missing.jsonl"):  # a directory, a missing path
            p = subprocess.run(CTX + list(cmd[:1]) + [str(special)] + list(cmd[1:]), env=env, capture_output=True)
            err = p.stderr.decode("utf-8", "replace")
            assert p.returncode in (1, 2) and "internal error" not in err, (cmd, special, err)


def test_a_record_over_max_record_mb_is_a_file_line_error_or_a_counted_skip(ctx_home, tmp_path):
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("max_record_mb: 0.01\n")  # 10 KiB
    small = {"v": 1, "kind": "message", "id": "a", "session": "s", "role": "user", "content": "hello there"}
    big = dict(small, id="b", content="x" * 50_000)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (small, big, dict(small, id="c"))))
    for cmd in (["count"], ["status"], ["truncate", "--budget", "100"], ["import"], ["score", "--query", "hello",
                                                                                       "--embedder", "keyword"]):
        res = run(*cmd, path)
        assert res.code == 1 and f"{path}:2: a record of 0.0 MB is over max_record_mb" in res.stderr, (cmd, res.stderr)
        assert res.stdout == ""
        ok = run(*cmd, path, "--skip-invalid")
        assert ok.code == 0 and "skipped 1 invalid line" in ok.stderr and "xxxx" not in ok.stdout, cmd
