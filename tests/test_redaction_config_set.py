"""`ctx config set` writes what the user gives into their own config.yaml, secrets included (a
pattern for redact_patterns, a password in an endpoint's URL), and the file stays valid and private;
only what ctx prints about it is redacted, and every command (hooks included) still runs."""
import json
import os
import stat

import yaml

from conftest import run

TOKEN = "ghp_" + "Rk2Vw9Lp4Tx7Nc1Bd6FhJ3sA5eQ0yU8iO2pZm"
URL = "https://bob:Pw9-endpoint-S3cret@llm.internal:8443/v1"


def _file(ctx_home) -> str:
    return (ctx_home / "config.yaml").read_text()


def test_a_secret_in_redact_patterns_is_written_as_given_and_printed_redacted(ctx_home):
    res = run("config", "set", "redact_patterns", f'["{TOKEN}", "tok_[0-9]+"]')
    assert res.code == 0, res.stderr
    assert TOKEN not in res.stdout + res.stderr and "[REDACTED:github-token#" in res.stdout
    text = _file(ctx_home)
    assert yaml.safe_load(text)["redact_patterns"] == [TOKEN, "tok_[0-9]+"] and "REDACTED" not in text
    assert stat.S_IMODE(os.stat(ctx_home / "config.yaml").st_mode) == 0o600
    got = run("config", "get", "redact_patterns")
    assert got.code == 0 and TOKEN not in got.stdout and "tok_[0-9]+" in got.stdout
    shown = run("config", "show", "--json")
    assert shown.code == 0 and TOKEN not in shown.stdout
    assert run("config", "validate").code == 0
    # the pattern is in force: a text with the token (or a tok_ number) is redacted on the way out
    out = run("count", "-", "--json", input=json.dumps({"v": 1, "kind": "message", "id": "a", "role": "user",
                                                         "content": "see tok_123"}) + "\n")
    assert out.code == 0, out.stderr
    hook = run("hook", "claude-code", "UserPromptSubmit",
               input=json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "hi",
                                 "cwd": str(ctx_home)}))
    assert hook.code == 0, hook.stderr


def test_a_password_in_an_endpoint_url_is_kept_in_the_file_and_never_printed(ctx_home):
    res = run("config", "set", "openai_base_url", URL)
    assert res.code == 0, res.stderr
    assert "Pw9-endpoint-S3cret" not in res.stdout + res.stderr and "bob:[REDACTED:url-password#" in res.stdout
    assert yaml.safe_load(_file(ctx_home))["openai_base_url"] == URL  # the endpoint's login still works
    for args in (("config", "get", "openai_base_url"), ("config", "show", "--json"), ("config", "show", "-t")):
        out = run(*args)
        assert out.code == 0 and "Pw9-endpoint-S3cret" not in out.stdout + out.stderr, args
    # another knob set later leaves the line as it was
    assert run("config", "set", "max_tokens", "100000").code == 0
    assert yaml.safe_load(_file(ctx_home))["openai_base_url"] == URL


def test_an_existing_config_becomes_private_when_set_writes_it(ctx_home):
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("# mine\nmax_tokens: 90000\n")
    os.chmod(ctx_home / "config.yaml", 0o644)
    assert run("config", "set", "openai_base_url", URL).code == 0
    text = _file(ctx_home)
    assert text.startswith("# mine\nmax_tokens: 90000\n") and URL in text
    assert stat.S_IMODE(os.stat(ctx_home / "config.yaml").st_mode) == 0o600
