"""Framework secrets in config files and env dumps (Phoenix/Rails `secret_key_base`, `SECRET_KEY_BASE=`,
Django `SECRET_KEY = '…'`, Joken's `default_signer`, `AZURE_STORAGE_KEY=`) are redacted wherever ctx
keeps or sends a tool output that shows them: the stream it prints, cold storage and its index, the
signal cache, a dropped chunk's stub and a shrunk output's note. Names lists never carry a key or a
piece of one, and stderr never echoes a secret the user typed."""
import json
import os
import re

import pytest

from conftest import FIXTURES, run
from ctxkit.core.redact import Redactor, nameable
from ctxkit.core.shrink import names_of, shrink_text
from ctxkit.store import redaction

STYLES = ("phoenix secret_key_base", "rails secret_key_base hex", "env SECRET_KEY_BASE", "django SECRET_KEY",
          "django SECRET_KEY generated", "joken default_signer", "azure storage key", "camelCase storage key",
          "phx.gen.secret output", "rails secret output", "openssl rand -base64 output")
FORMS = {f["form"]: f for f in map(json.loads, (FIXTURES / "secret_forms.jsonl").read_text().splitlines())
         if f["form"] in STYLES}


def test_every_style_has_a_form():
    assert sorted(FORMS) == sorted(STYLES)


def _pieces(secret: str) -> list[str]:
    """The runs of 8+ letters and digits of a secret: what a names list picked out of it before."""
    return [p for p in re.findall(r"[A-Za-z0-9]+", secret) if len(p) >= 8]


def _session(form: dict) -> str:
    """An agent reading a config file: 120 lines of output, the secret in the middle, then more work."""
    lines = [f"line {i}: ok" for i in range(120)]
    lines[60:60] = form["text"].split("\n")
    recs = [{"id": "u1", "role": "user", "content": "fix the mailer"},
            {"id": "a1", "role": "assistant", "content": "", "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "Bash",
                                                              "arguments": json.dumps({"command": "cat config/x"})}}]},
            {"id": "t1r", "role": "tool", "tool_call_id": "t1", "name": "Bash", "content": "\n".join(lines)}]
    recs += [{"id": f"z{i}", "role": "assistant", "content": f"mailer step {i}"} for i in range(6)]
    return "".join(json.dumps(dict(v=1, kind="message", session="leak", ts=f"2026-01-01T00:{i:02d}:00Z", **r)) + "\n"
                   for i, r in enumerate(recs))


def _leaks(data: bytes, secret: str, where: str) -> list[str]:
    found = [s for s in [secret, *_pieces(secret)] if s.encode() in data or json.dumps(s)[1:-1].encode() in data]
    return [f"{s!r} in {where}" for s in found]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("shrunk", [True, False], ids=["shrink-note", "stub"])
def test_a_config_secret_reaches_no_output_no_store_and_no_names_list(style, shrunk, ctx_home, test_store_url):
    form = FORMS[style]
    scored = run("score", "-", "--embedder", "keyword", input=_session(form))
    assert scored.code == 0, scored.stderr
    args = ("--free", "0.5", "--min-keep", "2") if shrunk else ("--free", "0.9", "--min-keep", "2", "--no-shrink")
    dropped = run("drop", *args, input=scored.stdout)
    assert dropped.code == 0, dropped.stderr
    marker = "[ctx shrunk this output" if shrunk else "[dropped chunk"
    assert marker in dropped.stdout  # the note or the stub is there, and says what it says without the secret
    listed = run("cold-storage", "list", "--json")
    searched = run("cold-storage", "search", "mailer", "--json")
    chunk = json.loads(listed.stdout.splitlines()[0])
    recovered = run("recover", "--chunk-id", chunk["chunk_id"], "--session", chunk["session_id"])
    assert recovered.code == 0, recovered.stderr
    assert "[REDACTED:" in recovered.stdout and "line 119: ok" in recovered.stdout  # the output, its secret hidden
    leaks = []
    for where, out in (("score", scored), ("drop", dropped), ("cold-storage list", listed),
                       ("cold-storage search", searched), ("recover", recovered)):
        leaks += _leaks((out.stdout + out.stderr).encode(), form["secret"], where)
    walked = set()
    for d, _, files in os.walk(ctx_home):
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                walked.add(os.path.relpath(p, ctx_home).split(os.sep)[0] + ("/" + f if f == "index.sqlite" else ""))
                leaks += _leaks(open(p, "rb").read(), form["secret"], p)
    assert leaks == [], "\n".join(leaks)
    # the signal cache was written and read above, and so were cold storage and its index: files here,
    # or a PostgreSQL store read back through `cold-storage list/search` and `recover` (CTX_TEST_STORE=pg)
    assert "cache" in walked and ("cold-storage" in walked or test_store_url)


def test_names_lists_carry_no_key_or_piece_of_one():
    text = "\n".join(f["text"] for f in FORMS.values())
    group = [{"v": 1, "kind": "message", "id": "t", "role": "tool", "content": text}]
    shrunk = shrink_text("\n".join([f"step {i}" for i in range(60)] + [text] + [f"more {i}" for i in range(60)]),
                         set())
    assert shrunk is not None
    for listed in (names_of(group, 10_000), shrunk.names):  # a stub's names, a shrink note's
        names = redaction.names(listed, group)
        assert "SECRET_KEY_BASE" in names and "MyAppWeb.ErrorHTML" in names  # the names an agent knows stay
        for f in FORMS.values():
            assert not any(p in n for n in names for p in _pieces(f["secret"])), f["form"]
            assert not any(n in f["secret"] for n in names), f["form"]


@pytest.mark.parametrize("name", ["SECRET_KEY_BASE", "secret_key_base", "lib/my_app_web/endpoint.ex",
                                  "base64ToUint8Array", "handleOAuth2Callback", "utf8mb4_unicode_ci",
                                  "9fceb02d0ae598e95dc970b74767f19372d61af8", "Spotter.Services.Tmux.list_panes/0",
                                  "monochromatic2025MAY24-pnpmTest", "config/dev.exs",
                                  "tool-results/toolu_019CpL49DWBenUxVVCWEXz3L.txt",
                                  "rollout-2026-04-23T01-41-51-019db6d2-08f5-7241-b14a-c07031a9859e.jsonl"])
def test_a_name_an_agent_knows_is_nameable(name):
    assert nameable(name)


@pytest.mark.parametrize("name", ["u1QXlca4XEZKb1o3HL/aUlznI1qstCNAQ6yme/lFbFIs0Iqiq/annZ+Ty8JyUCDc",
                                  "u1QXlca4XEZKb1o3HL", "lFbFIs0Iqiq", "Ty8JyUCDc",
                                  "Yk3r9PqLm2Vn8Bt4Hy6Jw1Zc5Fd7Gs0Ae3Ru9Io2Pl4Kj6Mn8Bv0Cx2Za4Sd6Fg9",
                                  "sk-proj-Q7xAbcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"])
def test_a_key_or_a_piece_of_one_is_no_name(name):
    assert not nameable(name)


# names that hold a secret only sometimes: an ordinary value stays
@pytest.mark.parametrize("text", [
    'cache_key = "user:123"', "sort_key: name", "primary_key=True", 'key = "src/components/ButtonGroup.tsx"',
    "signer: MyApp.Signer", 'cache_key = "3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"',
    'idempotency_key: "123e4567-e89b-12d3-a456-426614174000"', 'partition_key: "monochromatic2025MAY24-pnpmTest"',
    'cache_key: "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"',
    '"fileKey": "rollout-2026-04-23T01-41-51-019db6d2-08f5-7241-b14a-c07031a9859e.jsonl"',
    'secret_key_base = System.get_env("SECRET_KEY_BASE") || raise "SECRET_KEY_BASE is missing"',
    "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']", 'DJANGO_SECRET_KEY="${SECRET_KEY}"',
    "default_signer: Joken.Signer.create(\"HS256\", secret)", "objectKey: uploads/2026/04/report.pdf",
])
def test_ordinary_values_of_key_names_survive(text):
    assert Redactor().text(text) == text


def test_stderr_never_echoes_a_secret_the_user_typed(ctx_home):
    secret = "sk-proj-Q7xAbcdefghijklmnopqrstuvwx"
    data = _session(FORMS["env SECRET_KEY_BASE"])
    scored = run("score", "-", "--embedder", "keyword", "--explain", "-q", f"key {secret}", input=data)
    assert scored.code == 0, scored.stderr
    assert "ctx: query: key [REDACTED:openai-key#" in scored.stderr
    missed = run("recover", "-q", secret)
    assert missed.code != 0
    assert "[REDACTED:openai-key#" in missed.stderr
    bad = run("recover", "--query", "x", "--limit", secret)  # a bad value quoted back in a usage error
    assert bad.code != 0 and "[REDACTED:openai-key#" in bad.stderr
    for out in (scored, missed, bad):
        assert secret not in out.stdout + out.stderr


def test_a_tool_output_that_is_one_generated_key_is_redacted_and_hashes_alone_on_a_line_are_not():
    r = Redactor()
    key = FORMS["phx.gen.secret output"]["secret"]
    out = r.record({"v": 1, "kind": "message", "id": "t", "role": "tool", "content": key})
    assert out["content"].startswith("[REDACTED:generated-key#")
    for plain in ("9fceb02d0ae598e95dc970b74767f19372d61af8",          # a git SHA
                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8",  # 62 hex: a hash, an object name
                  "123e4567-e89b-12d3-a456-426614174000", "src/components/ButtonGroup/index.tsx",
                  "node_modules/.pnpm/react-dom@18.2.0/node_modules", "monochromatic2025MAY24-pnpmTest-build"):
        rec = {"v": 1, "kind": "message", "id": "t", "role": "tool", "content": f"$ cmd\n{plain}\n{plain}\ndone"}
        assert r.record(rec) == rec and r.record(dict(rec, content=plain)) == dict(rec, content=plain)
    # a string that is one token by itself, outside a tool's output: an id, a signature, encrypted reasoning
    signature = "EvQBCkYICxgCKkDZxkqfvtzcvQinLxkOHACqeMxtgQ26htwkt3HA0s5JoeYv3lrmJ5Syfw46x8BfWfnOi1tcCdz5QJ"
    assert r.text(signature) == signature
    assert r.record({"role": "assistant", "content": "", "meta": {"signature": signature}})["meta"]["signature"] == signature
