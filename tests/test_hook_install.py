"""`ctx hook install AGENT` / `ctx hook uninstall AGENT`: ctx's hooks merged into an agent's own
settings without touching a byte the user wrote, idempotent, undone exactly; the examples are
what the installer writes."""
import json
import os
import subprocess
import tomllib

import pytest

from conftest import ROOT, run
from ctxkit.core import textedit
from ctxkit.services import agents
from ctxkit.services import hook_install as hi


SETTINGS = """{
    "permissions": {"allow": ["Bash(ls:*)", "Bash(git status)"]},
    "env": {"ANTHROPIC_API_KEY": "sk-ant-api03-not-a-real-key-but-looks-like-one-0123456789abcdef"},
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
    }
}
"""


def project(tmp_path, files: dict) -> str:
    p = tmp_path / "proj"
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    for rel, text in files.items():
        f = p / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return str(p)


def ctx(cwd, *args):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return run("hook", *args)
    finally:
        os.chdir(old)


def test_other_hooks_survive_install_and_uninstall_restores_the_file_byte_for_byte(tmp_path):
    p = project(tmp_path, {".claude/settings.json": SETTINGS})
    path = os.path.join(p, ".claude", "settings.json")
    res = ctx(p, "install", "claude-code", "--project")
    assert res.code == 0, res.stderr
    text = open(path).read()
    doc = json.loads(text)
    # the user's own hooks and everything else are still there, as written
    for line in SETTINGS.splitlines()[:-1]:
        if line.strip() not in ("}", "},", "]"):
            assert line.rstrip(",") in text, line
    assert doc["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}
    assert doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "./guard.sh"
    assert doc["env"]["ANTHROPIC_API_KEY"].startswith("sk-ant-api03-not")   # never redacted in the user's file
    # ctx's hooks, by the absolute path of this ctx
    cmd = hi.ctx_command()
    assert os.path.isabs(cmd.split()[0])
    for spec in agents.get("claude-code").install.hooks:
        groups = doc["hooks"][spec.event]
        assert sum(g["hooks"][0]["command"] == f"{cmd} hook claude-code {spec.event}" for g in groups) == 1
    # again: nothing changes
    assert ctx(p, "install", "claude-code").code == 0
    assert open(path).read() == text
    res = ctx(p, "uninstall", "claude-code", "--project")
    assert res.code == 0, res.stderr
    assert open(path).read() == SETTINGS


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path):
    p = project(tmp_path, {".claude/settings.json": SETTINGS})
    res = ctx(p, "install", "claude-code", "--dry-run")
    assert res.code == 0
    assert res.stdout.startswith("--- ") and "+            \"command\": " in res.stdout or "+" in res.stdout
    assert "hook claude-code SessionStart" in res.stdout
    assert open(os.path.join(p, ".claude", "settings.json")).read() == SETTINGS
    assert not os.path.exists(os.path.join(os.environ["CTX_HOME"], hi.LEDGER))


def test_install_creates_the_file_and_uninstall_removes_it_and_its_folder(tmp_path):
    p = project(tmp_path, {"README.md": "x\n"})
    assert ctx(p, "install", "codex").code == 0
    assert os.path.isfile(os.path.join(p, ".codex", "hooks.json"))
    assert os.path.isfile(os.path.join(p, ".codex", "config.toml"))
    assert ctx(p, "uninstall", "codex").code == 0
    assert not os.path.exists(os.path.join(p, ".codex"))


def test_install_from_a_subfolder_writes_at_the_repository_root(tmp_path):
    p = project(tmp_path, {"src/a.py": "x = 1\n"})
    assert ctx(os.path.join(p, "src"), "install", "claude-code").code == 0
    assert os.path.isfile(os.path.join(p, ".claude", "settings.json"))
    assert not os.path.exists(os.path.join(p, "src", ".claude"))


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_examples_are_what_the_installer_writes(agent, tmp_path):
    p = project(tmp_path, {"README.md": "x\n"})
    assert ctx(p, "install", agent).code == 0
    cmd = hi.ctx_command()
    spec = agents.get(agent).install
    written = [spec.paths("project", p)] + [x[0] for x in (spec.extra("project", p) if spec.extra else [])]
    assert written
    for path in written:
        got = open(path).read().replace(f"{cmd} hook ", "ctx hook ")
        want = open(os.path.join(ROOT, "examples", agent, os.path.basename(path))).read()
        assert got == want, path


def test_uninstall_after_the_user_edited_the_file_removes_only_ctxs_hooks(tmp_path):
    p = project(tmp_path, {".claude/settings.json": SETTINGS})
    path = os.path.join(p, ".claude", "settings.json")
    assert ctx(p, "install", "claude-code").code == 0
    doc = json.loads(open(path).read())
    doc["model"] = "opus"                       # the user (or Claude Code) changed it since
    doc["hooks"]["Notification"] = [{"hooks": [{"type": "command", "command": "beep"}]}]
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    assert ctx(p, "uninstall", "claude-code").code == 0
    after = json.loads(open(path).read())
    assert after["model"] == "opus" and after["hooks"]["Notification"][0]["hooks"][0]["command"] == "beep"
    assert after["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}]
    assert "ctx hook" not in json.dumps(after)
    assert set(after["hooks"]) == {"Stop", "PreToolUse", "Notification"}


def test_a_users_own_ctx_hook_is_kept_and_not_doubled(tmp_path):
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ctx hook claude-code Stop"}]}]}}
    text = json.dumps(mine, indent=2) + "\n"
    p = project(tmp_path, {".claude/settings.json": text})
    res = ctx(p, "install", "claude-code")
    assert res.code == 0 and "Stop: kept the ctx hook already there" in res.stderr
    doc = json.loads(open(os.path.join(p, ".claude", "settings.json")).read())
    assert len(doc["hooks"]["Stop"]) == 1 and "SessionStart" in doc["hooks"]
    assert ctx(p, "uninstall", "claude-code").code == 0
    assert open(os.path.join(p, ".claude", "settings.json")).read() == text


def test_codex_config_keeps_the_users_keys_and_a_compact_prompt_of_theirs(tmp_path):
    cfg = 'model = "o4"\n\n[model_providers.x]\nname = "x"\nbase_url = "http://127.0.0.1:9/v1"\n'
    p = project(tmp_path, {".codex/config.toml": cfg})
    path = os.path.join(p, ".codex", "config.toml")
    assert ctx(p, "install", "codex").code == 0
    doc = tomllib.loads(open(path).read())
    assert doc["model"] == "o4" and doc["model_providers"]["x"]["name"] == "x"
    assert "verified state" in doc["compact_prompt"] and "failing checks" in doc["compact_prompt"]
    assert ctx(p, "uninstall", "codex").code == 0
    assert open(path).read() == cfg
    own = 'compact_prompt = "mine"\n'
    with open(path, "w") as f:
        f.write(own)
    res = ctx(p, "install", "codex")
    assert res.code == 0 and "kept yours" in res.stderr
    assert open(path).read() == own


def test_a_settings_file_that_is_not_json_is_named_and_left_alone(tmp_path):
    p = project(tmp_path, {".claude/settings.json": '{"hooks": {,}}\n'})
    res = ctx(p, "install", "claude-code")
    assert res.code == 1 and "settings.json" in res.stderr and "not valid JSON" in res.stderr
    assert "Traceback" not in res.stderr
    assert open(os.path.join(p, ".claude", "settings.json")).read() == '{"hooks": {,}}\n'


def test_a_linked_settings_file_stays_a_link(tmp_path):
    p = project(tmp_path, {"dotfiles/claude.json": SETTINGS})
    os.makedirs(os.path.join(p, ".claude"))
    link = os.path.join(p, ".claude", "settings.json")
    os.symlink(os.path.join(p, "dotfiles", "claude.json"), link)
    assert ctx(p, "install", "claude-code").code == 0
    assert os.path.islink(link) and "hook claude-code Stop" in open(link).read()
    assert ctx(p, "uninstall", "claude-code").code == 0
    assert os.path.islink(link) and open(link).read() == SETTINGS


def test_user_scope_writes_the_users_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    p = project(tmp_path, {})
    assert ctx(p, "install", "claude-code", "--user").code == 0
    assert os.path.isfile(tmp_path / "home" / ".claude" / "settings.json")
    assert ctx(p, "install", "codex", "--user").code == 0
    assert os.path.isfile(tmp_path / "codex-home" / "hooks.json")
    assert not os.path.exists(os.path.join(p, ".claude")) and not os.path.exists(os.path.join(p, ".codex"))
    assert ctx(p, "install", "codex", "--user", "--project").code == 2


def test_unknown_agent_is_a_usage_error(tmp_path):
    res = ctx(str(tmp_path), "install", "vim")
    assert res.code == 2 and "unknown agent" in res.stderr


def test_the_command_is_the_absolute_ctx_being_run(tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "ctx").write_text("#!/bin/sh\n")
    (venv / "ctx").chmod(0o755)
    (venv / "python").write_text("")
    link = tmp_path / "ctx"
    link.symlink_to(venv / "ctx")
    assert hi.ctx_command(str(link), "/usr/bin/python3") == str(venv / "ctx")     # links resolved
    assert hi.ctx_command("/x/ctxkit/__main__.py", str(venv / "python")) == str(venv / "ctx")   # python -m ctxkit
    assert hi.ctx_command("/x/__main__.py", "/opt/py dir/python") == "'/opt/py dir/python' -m ctxkit"
    assert hi.installed_by_ctx("'/opt/py dir/python' -m ctxkit hook codex Stop", "codex")
    assert not hi.installed_by_ctx("ctx hook codex Stop", "codex")


def test_plugin_marketplace_is_written_with_absolute_commands(tmp_path):
    out = tmp_path / "plugin"
    res = run("hook", "install", "claude-code", "--plugin", str(out))
    assert res.code == 0, res.stderr
    market = json.loads((out / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["name"] == "ctx" and market["plugins"][0]["source"] == "./plugins/ctx"
    manifest = json.loads((out / "plugins" / "ctx" / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "ctx" and manifest["version"]
    hooks = json.loads((out / "plugins" / "ctx" / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks["PreCompact"][0]["hooks"][0]["command"] == f"{hi.ctx_command()} hook claude-code PreCompact"
    assert run("hook", "install", "codex", "--plugin", str(out)).code == 2


# ---- the text edits themselves ----

DOCS = ['{}', '{}\n', '{\n}\n', '{\n  "model": "x"\n}\n', '{"hooks": {"Stop": []}}', '{ "hooks" : { } , "x":1 }',
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}',
        '{\n\t"hooks": {\n\t\t"Stop": [\n\t\t]\n\t}\n}', SETTINGS, '{"a": "é ü \\u00e9", "hooks": {"S": [1, 2]}}']


@pytest.mark.parametrize("doc", DOCS)
def test_insertions_delete_back_to_the_original(doc):
    adds = [(("hooks",), "Stop", {"hooks": [{"type": "command", "command": "/v/ctx hook claude-code Stop"}]}),
            (("hooks",), "SessionStart", {"matcher": "startup", "hooks": []}),
            (("hooks",), "Stop", {"matcher": "x", "hooks": []})]
    new, spans = textedit.append_all(doc, adds)
    parsed = json.loads(new)
    assert parsed["hooks"]["SessionStart"] == [{"matcher": "startup", "hooks": []}]
    assert parsed["hooks"]["Stop"][-1] == {"matcher": "x", "hooks": []}
    assert textedit.delete_spans(new, spans) == doc
    back, n = textedit.remove_elements(new, ("hooks",), lambda g: isinstance(g, dict) and (
        g.get("matcher") in ("startup", "x") or "/v/ctx" in json.dumps(g)))
    assert n == 3
    orig = json.loads(doc)
    got = json.loads(back)
    assert {k: v for k, v in got.get("hooks", {}).items() if v} == \
        {k: v for k, v in orig.get("hooks", {}).items() if v}
    assert {k: v for k, v in got.items() if k != "hooks"} == {k: v for k, v in orig.items() if k != "hooks"}
