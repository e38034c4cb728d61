"""Redaction: every common way of writing a secret is caught, wherever it travels (text, tool-call
arguments with JSON-escaped quotes, URLs, env dumps, command lines), in everything ctx writes and
prints, including what it derives; real transcripts lose nothing to false positives."""
import json
import os

import pytest

from conftest import CORPUS, FIXTURES, run
from ctxkit.core.redact import Redactor, strings_of

FORMS = [json.loads(line) for line in (FIXTURES / "secret_forms.jsonl").read_text().splitlines() if line.strip()]
SECRETS = [f["secret"] for f in FORMS]

# Text that looks like a secret to a careless pattern and must survive byte for byte.
SURVIVE = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
    "HEAD is at 0123456789abcdef0123456789abcdef01234567",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "/usr/lib/python3/dist-packages/setuptools/Command.py",
    "data = base64.b64decode('SGVsbG8gV29ybGQhIFRoaXMgaXMgYSB0ZXN0IGZvciBjdHg=')",
    "token = tokenizer.encode(text)",
    "password: str = Field(...)",
    "token: Optional[str] = None",
    "max_tokens=4096",
    "PWD=/home/user/project",
    "client = Client(api_key=api_key)",
    "secret_key=settings.SECRET_KEY",
    "mkdir -p build && ssh -p2222 host",
    '"token": "access_token"',
    "Bearer tokens are sent in the Authorization header.",
    "export API_KEY=$OPENAI_API_KEY",
    "password = os.environ['DB_PASSWORD']",
    'pad_token="[PAD]"',
    "the password: see the vault",
    "git log -p --stat",
    "TOKEN_COUNT=12",
    # what the rules added for lower-case assignments, credential files, command lines, prose and file
    # names must leave alone
    "      --pass: #34d399;",                                         # a CSS custom property
    "  - Token: gho_************************************",           # a token shown masked (gh auth status)
    "the password is required", "Your password is stored in the vault.", "the password is wrong!",
    "password reset to default", 'the password is "correct horse"', "login with password: see 1Password",
    "machine learning login page password reset",
    "docs/password_reset_2024.md", "src/token_counter.py", "token-2024abcd.json", "api-key-v2.md",
    "redis-cli -a $REDIS_PASSWORD ping", 'docker login -u bob -p "$TOKEN" ghcr.io',
    "echo $CR_PAT | docker login ghcr.io -u bob --password-stdin", 'sshpass -p "$PW" ssh h',
    "docker run -p 8080:80 nginx", "main.go:12:3: error: undefined", "00:11:22:33:44:55",
    "localhost:5432:*:postgres:*", '"auth": "Bearer"', '"auth": true', "sig=abc",
    "X-API-Key: ${API_KEY}", "client_secret=${CLIENT_SECRET}", "token: {{ .Values.token }} # set by helm",
    "password=$(cat /run/secrets/db)", "password=get_pw()", "password=cfg.pw2", "password=arg2",
    "kubectl get secret x -o jsonpath={.data.password}",
    'cache_key = "3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"',          # gitleaks' generic rule, confirmed by ctx
]


@pytest.mark.parametrize("form", FORMS, ids=[f["form"] for f in FORMS])
def test_every_form_is_caught_in_text_and_in_tool_call_arguments(form):
    r = Redactor()
    assert form["secret"] not in r.text(form["text"])
    rec = {"v": 1, "kind": "message", "id": "a", "role": "assistant", "content": "",
           "tool_calls": [{"id": "c", "type": "function",
                           "function": {"name": "bash", "arguments": json.dumps({"command": form["text"]})}}]}
    out = r.record(rec)
    assert form["secret"] not in json.dumps(out)
    json.loads(out["tool_calls"][0]["function"]["arguments"])  # still valid JSON
    assert rec["tool_calls"][0]["function"]["arguments"] == json.dumps({"command": form["text"]})  # not mutated
    obj = r.record(dict(rec, tool_calls=[{"id": "c", "function": {"name": "bash", "arguments": {"cmd": form["text"]}}}]))
    assert form["secret"] not in json.dumps(obj)  # arguments as an object


def test_the_whole_jwt_goes_and_placeholders_are_stable():
    r = Redactor()
    jwt = next(f for f in FORMS if f["form"] == "jwt whole")
    out = r.text(jwt["text"])
    assert "eyJ" not in out and jwt["secret"] not in out and out.count("[REDACTED:jwt#") == 1
    assert r.text(out) == out  # redacting twice changes nothing
    assert r.text("a " + jwt["text"]) .count(out.split()[1]) == 1


@pytest.mark.parametrize("text", SURVIVE)
def test_ordinary_text_survives(text):
    assert Redactor().text(text) == text


def test_no_false_positive_on_the_corpus():
    if not CORPUS.exists():
        pytest.skip("no corpus")
    r, hits = Redactor(), []
    for p in sorted(CORPUS.iterdir()):
        if p.name == "SOURCES.md" or not p.is_file():
            continue
        for line in p.read_text(encoding="utf-8", errors="replace").split("\n"):
            try:
                strings = list(strings_of(json.loads(line)))
            except ValueError:
                strings = [line]
            for s in strings:
                hits += [(p.name, s[a:b]) for a, b, _ in r.spans(s)]
    # the only secrets in the corpus: the Phoenix signing keys (`secret_key_base: "…"`) of config/dev.exs
    # and config/test.exs; readable, but the key itself, as any value of a `secret_key_base` is
    assert set(hits) <= {
        ("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl",
         "dev-only-secret-not-for-production-use-minimum-64-bytes-long-enough-placeholder"),
        ("claude-code_spotter_8463c716_session.jsonl",
         "test-only-secret-base-minimum-64-bytes-long-enough-for-phoenix-token-signing-ok")}


# ---- the full pipeline, every hook, every byte written or printed ----

def _session() -> list[dict]:
    recs, i = [], 0
    for f in FORMS:
        i += 1
        recs.append({"v": 1, "kind": "message", "id": f"u{i}", "session": "sec", "role": "user",
                     "content": f"deploy the service; note {f['text']}"})
        recs.append({"v": 1, "kind": "message", "id": f"h{i}", "session": "sec", "role": "assistant",
                     "flags": ["thinking"], "content": f"The user gave {f['text']}; I should use it."})
        recs.append({"v": 1, "kind": "message", "id": f"s{i}", "session": "sec", "role": "assistant",
                     "content": f"I will deploy with {f['text']} now."})
        recs.append({"v": 1, "kind": "message", "id": f"a{i}", "session": "sec", "role": "assistant", "content": "",
                     "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
                         "name": "bash", "arguments": json.dumps({"command": f"echo {f['text']}"})}}]})
        recs.append({"v": 1, "kind": "message", "id": f"t{i}", "session": "sec", "role": "tool",
                     "tool_call_id": f"c{i}", "content": f"output:\n{f['text']}\ndone"})
    bare = [f["secret"] for f in FORMS if f["form"] in ("aws bare secret", "gitlab glpat", "hugging face")]
    bare += [w for f in FORMS if f["form"] == "jwt whole" for w in f["text"].split() if w.startswith("eyJ")]
    recs.append({"v": 1, "kind": "message", "id": "last", "session": "sec", "role": "assistant",
                 "content": "Key entities: " + " ".join(bare) + ". Decided to rotate " + bare[0]})
    return recs


def _claude_transcript(path):
    lines = []
    for k, f in enumerate(FORMS):
        lines.append({"type": "user", "sessionId": "sec", "uuid": f"u{k}", "timestamp": "2026-01-01T00:00:00Z",
                      "message": {"role": "user", "content": f"use {f['text']} please"}})
        lines.append({"type": "assistant", "sessionId": "sec", "uuid": f"a{k}", "timestamp": "2026-01-01T00:00:01Z",
                      "message": {"id": f"m{k}", "role": "assistant", "content": [
                          {"type": "thinking", "thinking": f"The secret is {f['text']}", "signature": "c2ln"},
                          {"type": "text", "text": f"Running with {f['text']}"},
                          {"type": "tool_use", "id": f"tu{k}", "name": "Bash", "input": {"command": f["text"]}}]}})
        lines.append({"type": "user", "sessionId": "sec", "uuid": f"r{k}", "timestamp": "2026-01-01T00:00:02Z",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"tu{k}", "content": f["text"]}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _leaks(text_or_bytes, where) -> list[str]:
    data = text_or_bytes.encode() if isinstance(text_or_bytes, str) else text_or_bytes
    return [f"{s!r} in {where}" for s in SECRETS if s.encode() in data or json.dumps(s)[1:-1].encode() in data]


def test_no_secret_form_survives_the_pipeline_the_hooks_or_the_output(tmp_path, ctx_home, test_store_url):
    ws = tmp_path / "ws" / ".ctx"
    ws.parent.mkdir()
    data = "".join(json.dumps(r) + "\n" for r in _session())
    printed = []

    def go(*args, input=None):
        res = run(*args, input=input)
        printed.append((" ".join(map(str, args)), res.stdout + res.stderr))
        return res

    imported = go("import", "-", input=data)
    assert imported.code == 0, imported.stderr
    scored = go("score", "-", "--query", "deploy", "--embedder", "keyword", input=imported.stdout)
    assert scored.code == 0, scored.stderr
    kept = go("drop", "--cutoff", "0.9", "--keep", "1.0", "--min-keep", "1", input=scored.stdout)
    assert kept.code == 0, kept.stderr
    assert go("compact", "-", "--force", "--budget", "300", "--workspace", ws, input=data).code == 0
    go("compact", "-", "--force", "--budget", "300", "--workspace", ws, input=kept.stdout)
    for args in (("count", "-"), ("status", "-"), ("export", "--to", "anthropic"), ("truncate", "--budget", "200")):
        go(*args, input=data)
    go("context", "show", "--workspace", ws)
    go("context", "show", "--json", "--workspace", ws)
    go("prompt", "build", "--workspace", ws)
    go("prompt", "build", "--explain", "--workspace", ws)
    go("remember", "staging: " + FORMS[0]["text"], "--workspace", ws)
    go("remember", next(f["text"] for f in FORMS if f["form"] == "ctx remember db password"), "--workspace", ws)
    go("decision", "log", "use " + FORMS[1]["text"], "--workspace", ws)
    go("recover", "--query", "deploy", "--limit", "3")
    go("observe", "-", "--workspace", ws, input=data)
    go("cold-storage", "list", "--json")
    go("cold-storage", "search", "deploy", "--json")
    go("session", "list", "--json")
    go("logs", "--json")
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript)
    for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop",
                  "Notification", "SessionEnd"):
        every = "\n".join(f["text"] for f in FORMS)
        payload = {"hook_event_name": event, "transcript_path": str(transcript), "session_id": "sec",
                   "cwd": str(tmp_path / "ws"), "prompt": "deploy with " + every, "source": "startup",
                   "message": FORMS[3]["text"], "custom_instructions": "keep " + every}
        res = go("hook", "claude-code", event, "--workspace", ws, input=json.dumps(payload))
        assert res.code == 0, (event, res.stderr)
        if event == "Stop":   # the hooks' transcript cache lives until the session ends: read it now
            caches = list((ctx_home / "cache" / "transcripts").glob("*"))
            assert caches
            cached = [x for c in caches for x in _leaks(c.read_bytes(), str(c))]
    leaks = [x for where, out in printed for x in _leaks(out, where)] + cached
    for root in (ctx_home, tmp_path / "ws"):
        for d, _, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                leaks += _leaks(p, "a file's name")
                if not os.path.islink(p):
                    leaks += _leaks(open(p, "rb").read(), p)
    assert leaks == [], "\n".join(leaks)
    assert "[REDACTED:" in (ws / "CONTEXT.md").read_text() or list(ctx_home.rglob("*.jsonl"))
    # the sinks the walk read: cold storage and its index, the signal and transcript caches, logs, sessions
    written = {os.path.relpath(os.path.join(d, f), ctx_home) for d, _, fs in os.walk(ctx_home) for f in fs}
    assert any("signal" in w for w in written)
    if not test_store_url:  # on PostgreSQL these are in the database, read back above
        for where in ("cold-storage/", "logs/", "sessions"):
            assert any(w.startswith(where) for w in written), (where, sorted(written)[:40])


def test_a_secret_used_as_a_session_id_or_an_object_key_is_kept_nowhere(tmp_path, ctx_home):
    """Keys of JSON objects are redacted like values wherever ctx keeps or prints them: a secret
    used as a session id keys no entry of the session index, and a key of a tool's input stays hidden."""
    secret = "ghp_" + "Zq8Xw2Lp9Tk4Vm7Nc1Bd6FhJ3sA5eR0yU2iO4pQ"
    r = Redactor()
    out = r.value({secret: {"x": 1}, "plain": {"password=hunter2x": "ok"}})
    assert secret not in json.dumps(out) and "hunter2x" not in json.dumps(out)
    assert out["plain"] == {r.text("password=hunter2x"): "ok"} and len(out) == 2
    rec = {"v": 1, "kind": "message", "id": "a", "role": "assistant", "content": "",
           "meta": {secret: "v"}, "tool_calls": [{"id": "c", "type": "function", "function": {
               "name": "Bash", "arguments": json.dumps({"env": {secret: "1"}, "command": "ls"})}}]}
    assert secret not in json.dumps(r.record(rec))
    ws = tmp_path / "ws" / ".ctx"
    ws.parent.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": secret, "uuid": "u0",
                                      "timestamp": "2026-01-01T00:00:00Z",
                                      "message": {"role": "user", "content": "deploy the service"}}) + "\n")
    printed, leaks = [], []

    def walk(when):
        for x in ctx_home.rglob("*"):
            if secret in str(x):
                leaks.append(f"{when}: a file's name: {x}")
            elif x.is_file() and not x.is_symlink() and secret.encode() in x.read_bytes():
                leaks.append(f"{when}: {x}")

    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        payload = {"hook_event_name": event, "transcript_path": str(transcript), "session_id": secret,
                   "cwd": str(tmp_path / "ws"), "prompt": "deploy", "source": "startup"}
        res = run("hook", "claude-code", event, "--workspace", ws, input=json.dumps(payload))
        assert res.code == 0, (event, res.stderr)
        printed.append(res.stdout + res.stderr)
        walk(event)  # the transcript cache lives until SessionEnd
    # a session under that id through import, score and drop to cold storage
    recs = [{"v": 1, "kind": "message", "id": f"m{i}", "session": secret, "role": "user" if i % 2 else "assistant",
             "content": f"step {i} of the deploy"} for i in range(12)]
    scored = run("score", "-", "--embedder", "keyword", "--query", "deploy",
                 input="".join(json.dumps(r) + "\n" for r in recs))
    dropped = run("drop", "--free", "0.9", "--min-keep", "1", input=scored.stdout)
    assert dropped.code == 0, dropped.stderr
    for res in (scored, dropped, run("session", "list", "--json"), run("cold-storage", "list", "--json")):
        printed.append(res.stdout + res.stderr)
    walk("after a drop")
    assert "[REDACTED:github-token#" in dropped.stdout
    index = ctx_home / "sessions.json"
    assert not index.exists() or secret not in index.read_text()
    leaks += [f"printed: {p[:200]}" for p in printed if secret in p]
    assert leaks == [], "\n".join(leaks)
