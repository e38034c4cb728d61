"""Hooks keyed by session and by project, transcripts of any shape Claude Code writes, one
measure of "due" (hand-made payloads over real transcripts; tests/e2e runs the real client)."""
import json
import os
import subprocess

from conftest import corpus, log_events, run, session_index, stored_text

MAIN = "8463c716-a2ea-4c14-9efa-87158ebd9f20"


def hook(event, payload, *args, env=None):
    return run("hook", "claude-code", event, *args, input=json.dumps({"hook_event_name": event, **payload}), env=env)


def _project(tmp_path, name):
    p = tmp_path / name
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


def _interactive_copy(tmp_path, src):
    """A transcript as the interactive UI writes it: bookkeeping lines first."""
    sid = json.loads(open(src).readline()).get("sessionId") or "s"
    head = [{"type": "last-prompt", "lastPrompt": "hi", "sessionId": sid},
            {"type": "mode", "mode": "normal", "sessionId": sid},
            {"type": "permission-mode", "permissionMode": "default", "sessionId": sid},
            {"type": "some-future-type", "sessionId": sid}]
    t = tmp_path / "interactive.jsonl"
    t.write_text("".join(json.dumps(x) + "\n" for x in head) + open(src).read())
    return t


def test_transcripts_opening_with_bookkeeping_lines_are_read(tmp_path):
    t = _interactive_copy(tmp_path, corpus("claude-code_spotter_491e126e_session.jsonl"))
    plain = run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).records()
    res = run("import", t)
    assert res.code == 0, res.stderr
    assert [r["id"] for r in res.records()] == [r["id"] for r in plain]
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source

    ignored = {}
    list(open_records(Source(str(t)), ignored=ignored))
    assert ignored.get("last-prompt") == 1 and ignored.get("some-future-type") == 1


def test_hooks_on_an_interactive_transcript_exit_0(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    t = _interactive_copy(tmp_path, corpus("claude-code_spotter_491e126e_session.jsonl"))
    proj = _project(tmp_path, "p")
    base = {"session_id": "491e126e-1e71-469c-ade2-fcc8af567c74", "transcript_path": str(t), "cwd": str(proj)}
    for ev in ("UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"):
        res = hook(ev, {**base, "prompt": "go on"})
        assert res.code == 0, (ev, res.stderr)
    ev = log_events("context-health")
    assert any((e.get("skipped_lines") or {}).get("mode") == 1 for e in ev)


def test_first_prompt_before_the_transcript_exists(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path, "p")
    res = hook("UserPromptSubmit", {"session_id": "new", "transcript_path": str(tmp_path / "not-yet.jsonl"),
                                    "cwd": str(proj), "prompt": "start the work"})
    assert res.code == 0 and res.stderr == ""


def test_each_project_and_session_keeps_its_own_state(tmp_path, monkeypatch, ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    a, b = _project(tmp_path, "a"), _project(tmp_path, "b")
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    sid = "491e126e-1e71-469c-ade2-fcc8af567c74"
    assert hook("Stop", {"session_id": sid, "transcript_path": t, "cwd": str(a)}).code == 0
    task = json.loads(run("context", "show", "--session", "491e", "--json").stdout)["task"]
    assert task
    # project B, a new session: nothing of A
    out = hook("SessionStart", {"session_id": "b-1", "source": "startup", "cwd": str(b)})
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert task[:40] not in text and "Previous session" not in text and "No saved working state" in text
    # project A, a new session: A's previous session, labelled, never as its own task
    out = hook("SessionStart", {"session_id": "a-2", "source": "startup", "cwd": str(a)})
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "# Previous session in this project (session 491e126e" in text and task[:40] in text
    # its own resume: a-2 has no state of its own yet, so it is not handed A's
    out = hook("SessionStart", {"session_id": "a-2", "source": "compact", "cwd": str(a)})
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert task[:40] not in text
    out = hook("SessionStart", {"session_id": sid, "source": "resume", "cwd": str(a)})
    assert task[:40] in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    idx = session_index(ctx_home)
    assert idx[sid]["project"] == str(a) and idx["b-1"]["project"] == str(b)
    assert [d.split("-")[0] for d in os.listdir(ctx_home / "projects")] == ["a"]  # B wrote nothing


def test_subagent_stop_records_the_subagent_under_its_parent(tmp_path, ctx_home):
    main = corpus("claude-code_spotter_8463c716_session.jsonl")
    ws = tmp_path / "ws"
    hook("Stop", {"session_id": MAIN, "transcript_path": main, "cwd": str(tmp_path)}, "--workspace", ws)
    before = (ws / "CONTEXT.md").read_text()
    sub = corpus("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    res = hook("SubagentStop", {"session_id": MAIN, "transcript_path": main, "agent_id": "a2898e3",
                                "agent_type": "Explore", "agent_transcript_path": sub, "cwd": str(tmp_path)},
               "--workspace", ws)
    assert res.code == 0 and "subagent a2898e3 recorded" in res.stderr
    assert (ws / "CONTEXT.md").read_text() == before  # the parent's state is untouched
    e = session_index(ctx_home)[MAIN]["subagents"]["a2898e3"]
    assert e["type"] == "Explore" and e["records"] > 0 and stored_text(e["state"]) is not None
    # Claude Code's own compaction agent costs nothing
    comp = corpus("claude-code_spotter_8463c716_subagents_agent-acompact-f46190.jsonl")
    res = hook("SubagentStop", {"session_id": MAIN, "transcript_path": main, "agent_id": "acompact-f46190",
                                "agent_transcript_path": comp}, "--workspace", ws)
    assert res.code == 0 and res.stderr == ""
    assert "acompact-f46190" not in session_index(ctx_home)[MAIN]["subagents"]


def test_working_state_is_injected_once_per_change(tmp_path):
    t = corpus("claude-code_spotter_8463c716_session.jsonl")
    base = {"session_id": MAIN, "transcript_path": t, "cwd": str(tmp_path)}
    env = {"CTX_COMPACTION_TRIGGER_PCT": "0.1"}
    first = hook("UserPromptSubmit", {**base, "prompt": "continue please"}, "--workspace", tmp_path, env=env)
    assert "# Working state" in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    again = hook("UserPromptSubmit", {**base, "prompt": "and then?"}, "--workspace", tmp_path, env=env)
    assert "# Working state" not in again.stdout


def test_status_counts_what_the_model_sees_after_a_compaction(tmp_path):
    t = corpus("claude-code_spotter_8463c716_session.jsonl")
    whole = run("status", t, "--json").json()
    from ctxkit.core.usage import live
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source

    recs = list(open_records(Source(t)))
    assert len(live(recs)) < len(recs)  # the transcript has a compact boundary
    assert whole["records"] == len(live(recs))  # the boundary itself, and what follows it


def test_status_finds_the_projects_latest_session(tmp_path, ctx_home):
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    hook("Stop", {"session_id": "491e126e-1e71-469c-ade2-fcc8af567c74", "transcript_path": t, "cwd": str(tmp_path)})
    by_id = run("status", "--session", "491e1", "--json")
    assert by_id.code == 0, by_id.stderr
    assert by_id.json()["records"] == run("status", t, "--json").json()["records"]
    assert run("status", "--session", "nope", "--json").code == 2


def test_session_end_goes_to_cold_storage_and_only_its_project_recalls_it(tmp_path, monkeypatch, ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    a, b = _project(tmp_path, "a"), _project(tmp_path, "b")
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    sid = "491e126e-1e71-469c-ade2-fcc8af567c74"
    assert hook("Stop", {"session_id": sid, "transcript_path": t, "cwd": str(a)}).code == 0
    # what SessionEnd's detached worker does, run here in the foreground
    assert run("hook", "curate", "--transcript", t, "--session", sid, "--ended").code == 0
    ev = log_events("compaction")
    assert any(e.get("event") == "session_to_cold_storage" and e["chunks"] > 0 for e in ev)
    prompt = "how do I set up credo and dialyzer with mix_audit"
    env = None  # the default hook_recall_min_score: the match scores well above it
    mine = hook("UserPromptSubmit", {"session_id": "a-2", "cwd": str(a), "prompt": prompt}, env=env)
    assert "Earlier context that matches this prompt" in mine.stdout and f"cold:{sid}" in mine.stdout
    other = hook("UserPromptSubmit", {"session_id": "b-2", "cwd": str(b), "prompt": prompt}, env=env)
    assert other.code == 0 and "cold:" not in other.stdout
