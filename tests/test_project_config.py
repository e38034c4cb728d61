"""A per-project config layer: the project's .ctx/config.yaml over $CTX_HOME/config.yaml, validated the
same way, and `ctx config show` says which file each value came from."""
import json
import os
import subprocess

import pytest

from conftest import corpus, run


@pytest.fixture
def project(tmp_path, monkeypatch, ctx_home):
    """A repository with a .ctx/config.yaml at its root; the shell in a subfolder of it."""
    root = tmp_path / "proj"
    (root / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".ctx").mkdir()
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("max_tokens: 150000\ncompaction_trigger_pct: 0.7\n"
                                          "redact_patterns: ['home_[0-9]+']\n")
    monkeypatch.chdir(root / "src" / "deep")
    return root


def _rows(**kw):
    return {r["key"]: r for r in run("config", "show", "--json", **kw).records()}


def test_a_projects_config_yaml_overrides_the_homes_and_config_show_says_which_file(project, ctx_home):
    (project / ".ctx" / "config.yaml").write_text("compaction_trigger_pct: 0.6\nredact_patterns: ['proj_[a-z]+']\n")
    rows = _rows()
    assert rows["compaction_trigger_pct"]["value"] == 0.6 and rows["compaction_trigger_pct"]["source"] == "project"
    assert rows["compaction_trigger_pct"]["from"] == str(project / ".ctx" / "config.yaml")
    assert rows["max_tokens"]["value"] == 150000 and rows["max_tokens"]["from"] == str(ctx_home / "config.yaml")
    assert rows["reserve_tokens"]["source"] == "default" and rows["reserve_tokens"]["from"] is None
    # a list adds to the home's: a project never drops a redaction pattern
    assert rows["redact_patterns"]["value"] == ["home_[0-9]+", "proj_[a-z]+"]
    got = run("config", "get", "compaction_trigger_pct", "--source").stdout.split("\t")
    assert got == ["0.6", "project", str(project / ".ctx" / "config.yaml") + "\n"]
    assert "proj/.ctx/config.yaml" in run("config", "show", "-t", env={"COLUMNS": "400"}).stdout
    # flags and the environment still win
    env = _rows(env={"CTX_COMPACTION_TRIGGER_PCT": "0.55"})
    assert env["compaction_trigger_pct"]["value"] == 0.55 and env["compaction_trigger_pct"]["from"] == \
        "$CTX_COMPACTION_TRIGGER_PCT"
    # the commands read it: compaction is not due at 0.6 of a budget, due at 0.5 with the home's 0.7 gone
    s = corpus("claude-code_spotter_491e126e_session.jsonl")
    st = run("status", s, "--budget", "24000", "--json").json()
    assert st["compaction_trigger_pct"] == 0.6 and st["compaction_due"] == (st["pct_used"] >= 0.6)
    # another project (no .ctx/) sees only the home's
    os.chdir(project.parent)
    assert _rows()["compaction_trigger_pct"]["value"] == 0.7


def test_a_projects_config_is_validated_the_same_way(project):
    p = project / ".ctx" / "config.yaml"
    p.write_text("compaction_trigger_pct: 0.6\ncompaction_trigers: 0.5\n")
    bad = run("config", "show")
    assert bad.code == 1 and bad.stdout == ""
    assert f"{p}:2: unknown key 'compaction_trigers' (did you mean compaction_trigger_pct?)" in bad.stderr
    p.write_text("max_tokens: lots\n")
    res = run("status", corpus("claude-code_spotter_491e126e_session.jsonl"))
    assert res.code == 1 and res.stderr == f"Error: {p}:1: max_tokens must be an integer, got 'lots'\n"
    p.write_text("max_context_pct: 0.65\n")  # against the home's 0.7 trigger: the rules between knobs hold
    assert "compaction_trigger_pct (0.7) is above max_context_pct" in run("config", "show").stderr
    p.write_text("reserve_tokens: 1000\n")
    ok = run("config", "validate")
    assert ok.code == 0 and f"{p}: ok (1 knob set)" in ok.stdout


def test_a_project_cannot_say_where_data_goes_or_turn_off_redaction(project):
    p = project / ".ctx" / "config.yaml"
    for line in ("redact: false", "store: postgresql://evil@db.example/x", "log_path: /tmp/elsewhere",
                 "openai_base_url: https://collector.example/v1", "openai_api_key_env: AWS_SECRET_ACCESS_KEY"):
        p.write_text(line + "\n")
        res = run("config", "show")
        key = line.split(":")[0]
        assert res.code == 1 and f"{p}:1: {key} is set only in $CTX_HOME/config.yaml" in res.stderr, res.stderr
    p.write_text("")
    refused = run("config", "set", "--project", "redact", "false")
    assert refused.code == 1 and p.read_text() == ""
    assert run("config", "set", "--project", "context_view_tokens", "300").code == 0
    assert _rows()["context_view_tokens"]["source"] == "project"


def test_a_project_config_anyone_could_write_is_not_read(project):
    p = project / ".ctx" / "config.yaml"
    p.write_text("compaction_trigger_pct: 0.6\n")
    p.chmod(0o666)
    res = run("config", "show", "--json")
    assert res.code == 0 and "not read" in res.stderr and "writable by others" in res.stderr
    assert {r["key"]: r for r in res.records()}["compaction_trigger_pct"]["value"] == 0.7


def test_a_hook_reads_the_config_of_the_payloads_project(project, tmp_path, monkeypatch):
    (project / ".ctx" / "config.yaml").write_text("context_window: 50000\ncompaction_trigger_pct: 0.01\n")
    monkeypatch.chdir(tmp_path)  # the hook runs elsewhere; the payload's cwd names the project
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "pc-1", "prompt": "go on",
               "cwd": str(project / "src"), "transcript_path": corpus("claude-code_spotter_491e126e_session.jsonl")}
    out = run("hook", "claude-code", input=json.dumps(payload))
    assert out.code == 0, out.stderr
    assert "of a 50,000-token window" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
