"""State an older ctx kept in the one shared workspace ($CTX_HOME/workspace) moves, once, to
the folder of the project it belongs to; nothing is overwritten or lost, and the personal
layer (SOUL.md, USER.md, AGENTS.md) stays. Runs on both stores: the older ctx's session index
(the home's sessions.json) names the owner whatever the store is now."""
import json
import os
import subprocess

from conftest import run

from ctxkit.sources.workspace import project_dir

OLD = """<!-- ctx:context v1 version=3 updated=2026-10-01T10:00:00Z session={sid} -->
# Context

## Task
{task}
"""


def _project(tmp_path, name):
    p = tmp_path / name
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


def _old_home(home, sid, task, project=None):
    ws = home / "workspace"
    (ws / "observations").mkdir(parents=True)
    (ws / "CONTEXT.md").write_text(OLD.format(sid=sid, task=task))
    (ws / "MEMORY.md").write_text("# Memory\n\n- the deploy key lives in the vault\n")
    (ws / "observations" / "20261001T100000Z_note.md").write_text("an observation\n")
    (ws / "SOUL.md").write_text("Be brief.\n")
    entry = {"session": sid, "last_activity": "2026-10-01T10:00:00Z"}
    if project:
        entry["project"] = str(project)
    (home / "sessions.json").write_text(json.dumps({sid: entry}))
    return ws


def test_the_shared_workspace_moves_once_to_the_project_whose_session_wrote_it(tmp_path, monkeypatch, ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    a, b = _project(tmp_path, "a"), _project(tmp_path, "b")
    ws = _old_home(ctx_home, "old-1", "Port the alpha exporter", project=a)
    monkeypatch.chdir(b)  # another project asks first: it does not get A's state
    res = run("context", "show")
    assert res.code == 0, res.stderr
    assert "alpha exporter" not in res.stdout
    assert "moved CONTEXT.md, MEMORY.md, observations" in res.stderr and "shared workspace" in res.stderr
    dest = project_dir(str(ctx_home), str(a))
    assert "Port the alpha exporter" in open(os.path.join(dest, "CONTEXT.md")).read()
    assert os.path.exists(os.path.join(dest, "MEMORY.md"))
    assert os.listdir(os.path.join(dest, "observations")) == ["20261001T100000Z_note.md"]
    assert not (ws / "CONTEXT.md").exists() and (ws / "SOUL.md").read_text() == "Be brief.\n"
    again = run("context", "show")
    assert again.code == 0 and "shared workspace" not in again.stderr  # once
    monkeypatch.chdir(a)
    mine = run("context", "show")
    assert "Port the alpha exporter" in mine.stdout and "shared workspace" not in mine.stderr


def test_an_unknown_owner_goes_to_the_asking_project_and_nothing_is_overwritten(tmp_path, monkeypatch, ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    a = _project(tmp_path, "a")
    _old_home(ctx_home, "old-2", "Write the gamma report")
    dest = project_dir(str(ctx_home), str(a))
    os.makedirs(dest)
    with open(os.path.join(dest, "MEMORY.md"), "w") as f:
        f.write("# Memory\n\n- the project's own memory\n")
    monkeypatch.chdir(a)
    res = run("context", "show")
    assert res.code == 0, res.stderr
    assert "Write the gamma report" in res.stdout
    assert "the project already has its own" in res.stderr
    assert "the project's own memory" in open(os.path.join(dest, "MEMORY.md")).read()
    kept = [os.path.join(d, f) for d, _, fs in os.walk(ctx_home / "archive") for f in fs if f == "MEMORY.md"]
    assert len(kept) == 1 and "the deploy key lives in the vault" in open(kept[0]).read()


def test_a_workspace_the_user_linked_is_left_alone(tmp_path, monkeypatch, ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    a = _project(tmp_path, "a")
    agent = tmp_path / "agent-folder"
    agent.mkdir()
    (agent / "CONTEXT.md").write_text(OLD.format(sid="x", task="The agent's own task"))
    ctx_home.mkdir(exist_ok=True)
    os.symlink(agent, ctx_home / "workspace")
    monkeypatch.chdir(a)
    res = run("context", "show")
    assert res.code == 0, res.stderr
    assert (agent / "CONTEXT.md").exists() and "shared workspace" not in res.stderr
