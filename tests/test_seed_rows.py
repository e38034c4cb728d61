"""The design's partial rows made whole: each test reads as the design's own sentence."""
import json
import os

import pytest

from conftest import ROOT, corpus, log_events, put_memory, run, stored_text

MEMORY = """# Memory
- LoRA training needs rank 16 and alpha 32 on the 7B model.
- The user prefers tabs over spaces in Go code.
- Redis runs on port 6380 in staging.
- LoRA training diverged with learning rate 1e-3; use 2e-4.
"""


def test_prompt_build_injects_only_memory_that_matches_the_query_each_sentence_once(tmp_path):
    pytest.importorskip("onnxruntime")
    ws = tmp_path / "ws"
    # reflect and observe may repeat a sentence in another memory file: it is said once
    put_memory(ws, MEMORY, {"2026-01-01.md": "- LoRA training needs rank 16 and alpha 32 on the 7B model.\n"})
    res = run("prompt", "build", "--query", "LoRA training", "--workspace", ws, "--embedder", "minilm", "--no-environment")
    assert res.code == 0, res.stderr
    section = res.stdout.split("Relevant Memory", 1)[1]
    assert "rank 16" in section and "2e-4" in section
    assert section.count("rank 16 and alpha 32") == 1
    assert "Redis" not in section and "tabs over spaces" not in section  # below memory_min_score
    assert run("config", "get", "memory_min_score").stdout.strip() == "0.25"


def test_time_says_session_just_started_and_the_last_sessions_length_and_topic(ctx_home):
    """Time: "Session: Just started"; "Last session: 2 hours ago (45 min, testing TUI)"."""
    run("status", corpus("claude-code_spotter_491e126e_session.jsonl"), "--log")  # 21:54-22:03 on 2026-02-10
    later = run("time", "--json", "--now", "2026-02-11T01:00:00Z").json()
    assert "Session: Just started" in later["block"]
    line = next(x for x in later["block"] if x.startswith("Last session:"))
    assert line.startswith("Last session: 2 hours ago (8 min, websearch to learn how to fastest setup credo")
    assert later["last_session"]["minutes"] == 8
    during = run("time", "--json", "--now", "2026-02-10T22:10:00Z").json()
    assert "Session: Just started" not in during["block"]
    assert "Session started: 2026-02-10 21:54 UTC" in during["block"]


def test_the_compaction_log_records_compaction_triggered_and_stats_still_count_it(ctx_home, tmp_path):
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    assert run("compact", src, "--force", "--budget", "3000", "--workspace", tmp_path).code == 0
    events = log_events("compaction")
    assert [e["event"] for e in events if "tokens_before" in e] == ["compaction_triggered"]
    stats = run("stats", "compaction", "--json").json()
    assert stats["acted"] == 1
    if os.environ.get("CTX_STORE_URL"):
        return  # what follows edits the embedded store's log file
    # logs written before the rename still count
    with open(ctx_home / "logs" / "compaction.jsonl", "a") as f:
        f.write(json.dumps(dict(events[-1], event="compaction")) + "\n")
    assert run("stats", "compaction", "--json").json()["acted"] == 2


def test_reset_force_clears_maintain_and_hook_state_so_maintain_acts_again(ctx_home, tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_text(open(corpus("claude-code_spotter_491e126e_session.jsonl")).read())
    first = run("maintain", src).records()
    assert first and first[0]["event"] != "nothing_to_do"
    assert run("maintain", src).records()[0]["event"] == "nothing_to_do"
    (ctx_home / "hooks-state.json").write_text("{}")  # what the hooks remember
    assert run("reset", "--force").code == 0
    assert not (ctx_home / "maintain-state.json").exists() and not (ctx_home / "hooks-state.json").exists()
    again = run("maintain", src).records()
    assert again[0]["event"] != "nothing_to_do"


HAND_WRITTEN = """# Context

## Now
- Focus: Testing NanBeige 3B local model performance
- Task: Optimize context usage for SLMs
- Blocked: waiting on the user's GPU quota

## Time
- Last session: 2 hours ago (45 min, testing TUI)

## Recent
- TUI updated with You/Nano labels and separators
- Flash attention confirmed enabled in local_llm.rs
- 15k token prompt identified as slowness cause

## External
- No git changes since last session
"""


def test_now_and_recent_of_a_hand_written_context_md_reach_the_prompt_and_session_start(tmp_path):
    """Now (Focus, Task, Blocked) and Recent, as a user or agent writes them, are what the prompt and
    the SessionStart view show first."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "CONTEXT.md").write_text(HAND_WRITTEN)
    prompt = run("prompt", "build", "--workspace", ws, "--no-environment")
    assert prompt.code == 0, prompt.stderr
    start = run("hook", "claude-code", "SessionStart", "--workspace", ws,
                input=json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path)}))
    view = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    for text in (prompt.stdout, view):
        assert "## Now" in text and "Focus: Testing NanBeige 3B" in text and "Blocked: waiting on the user's GPU" in text
        assert "## Recent" in text and "Flash attention confirmed enabled" in text
        assert text.index("## Now") < text.index("## Recent")


def test_reflect_writes_long_term_facts_only_never_session_state(tmp_path):
    """MEMORY.md: permanent facts, no narrative, no session state."""
    ws = tmp_path / "ws"
    put_memory(ws, observations={"2026-02-10_s1.md":
        "# Observation\n\n## Decisions\n- Use RS256 for JWT signing in the auth service\n"
        "- The idempotency test is failing on the second run\n\n"
        "## Findings\n- The staging database listens on port 5433\n"
        "- Currently waiting for the user to approve the migration\n- The refresh flow still needs to be finished\n"})
    res = run("reflect", "--workspace", ws, "--json")
    assert res.code == 0, res.stderr
    memory = stored_text(res.json()["memory"])
    assert "RS256" in memory and "port 5433" in memory
    for state in ("is failing", "waiting for the user", "still needs to be finished"):
        assert state not in memory
    assert res.json()["skipped"]["session_state"] == 3


def test_the_prompt_keeps_model_identity_workspace_path_and_a_cost_delegation_hint(tmp_path, ctx_home):
    """_get_identity() keeps: model identity (1 line), workspace path, cost delegation hint (expensive models)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    run("config", "set", "model", "claude-opus-4")
    text = run("prompt", "build", "--workspace", ws, "--no-environment").stdout
    assert "Model: you are running as claude-opus-4." in text
    assert f"Workspace: {ws}" in text
    assert "Cost: this model is expensive; delegate" in text
    run("config", "set", "model", "qwen3-1.7b")
    cheap = run("prompt", "build", "--workspace", ws, "--no-environment").stdout
    assert "Model: you are running as qwen3-1.7b." in cheap and "Cost:" not in cheap


def test_personal_layer_first_match_wins_and_nexus_md_is_read(tmp_path, ctx_home, monkeypatch):
    """Personal layer (first match wins): the user's file, else the package default; NEXUS.md is read."""
    from ctxkit.services.prompt import DEFAULTS_DIR

    package = (open(os.path.join(DEFAULTS_DIR, "AGENTS.md")).read().strip().splitlines() or [""])
    package_line = next(x for x in package if len(x.split()) >= 4 and not x.startswith(("#", "<!--")))
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    ws = tmp_path / "ws"
    ws.mkdir()
    before = run("prompt", "build", "--workspace", ws, "--no-environment", "--budget", "8000").stdout
    assert package_line.strip("-* ")[:30] in before  # no personal file: the package default
    home_ws = ctx_home / "workspace"
    home_ws.mkdir(parents=True)
    (home_ws / "AGENTS.md").write_text("# Agents\n- Always answer in British English, please.\n")
    (proj / "NEXUS.md").write_text("# Project\n- This project deploys with blue-green slots on Fly.\n")
    after = run("prompt", "build", "--workspace", ws, "--no-environment", "--budget", "8000").stdout
    assert "British English" in after and package_line.strip("-* ")[:30] not in after
    assert "blue-green slots on Fly" in after


def test_context_archive_title_keeps_the_session_as_a_long_term_memory_entry(tmp_path, ctx_home):
    """/context archive [--title="Session Title"]: archive the current context as a fragment."""
    ws = tmp_path / "ws"
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    assert run("compact", src, "--force", "--budget", "3000", "--workspace", ws).code == 0
    res = run("context", "archive", "--title", "Elixir quality tooling setup", "--workspace", ws)
    assert res.code == 0, res.stderr
    copy, fragment = res.stdout.split()
    assert stored_text(copy) is not None
    assert fragment.startswith((str(ws / "observations"), "postgresql:"))
    text = stored_text(fragment)
    assert text.startswith("# Elixir quality tooling setup\n") and "## Task" in text
    assert run("context", "clear", "--no-archive", "--workspace", ws).code == 0
    hits = run("memory", "search", "credo dialyzer setup", "--workspace", ws, "--embedder", "keyword",
               "--json").records()
    assert any(h["source"].startswith("observations/") and "_archive_elixir-quality-tooling-setup" in h["source"]
               for h in hits)


def test_maintain_on_one_session_never_archives_another_sessions_context_md(tmp_path, ctx_home, monkeypatch):
    ws = tmp_path / "ws"
    ws.mkdir()
    other = ("<!-- ctx:context v1 version=3 session=other-session -->\n# Context\n\n## Task\n"
             "The other session's task.\n")
    (ws / "CONTEXT.md").write_text(other)
    monkeypatch.setenv("CTX_ARCHIVE_EVERY_MESSAGES", "1")
    monkeypatch.setenv("CTX_WORKSPACE", str(ws))
    src = tmp_path / "s.jsonl"
    src.write_text(open(corpus("claude-code_spotter_491e126e_session.jsonl")).read())
    events = run("maintain", src).records()
    assert not any(e["event"] == "archive" for e in events)
    assert any(e["event"] == "archive_skipped" and "other-session" in e["reason"] for e in events)
    assert not list((ctx_home / "archive").glob("CONTEXT-other-session-*")) if (ctx_home / "archive").exists() else True
    assert "session=other-session" in (ws / "CONTEXT.md").read_text()


def test_entities_track_files_functions_technologies_and_concepts(ctx_home):
    """entities = {files: [auth/jwt.py, config/settings.py], functions: [validate_jwt_token, generate_token,
    refresh_token], technologies: [PyJWT, Redis, RS256], concepts: [refresh tokens, public key infrastructure]}"""
    recs = [{"role": "user", "content": "Let's implement JWT auth with PyJWT. Use RS256 and keep refresh tokens in "
                                        "Redis; the cryptography package signs the keys."},
            {"role": "assistant", "content": "I'll add validate_jwt_token() and generate_token() in auth/jwt.py, a "
                                             "`refresh_token` helper, and read the keys from settings.py and .env. "
                                             "This is public key infrastructure, so RS256 keys rotate."}]
    res = run("entities", "-", "--print", input="\n".join(json.dumps(r) for r in recs) + "\n")
    found = res.json()
    assert {"auth/jwt.py", "settings.py", ".env"} <= set(found["files"])
    assert found["functions"] == ["validate_jwt_token", "generate_token", "refresh_token"]
    assert {"PyJWT", "Redis", "cryptography"} <= set(found["packages"])
    assert {"PyJWT", "Redis", "RS256"} <= set(found["technologies"])
    assert found["concepts"] == ["refresh tokens", "public key infrastructure"]
    run("entities", "-", input="\n".join(json.dumps(r) for r in recs) + "\n")
    text = (ctx_home / "workspace" / "CONTEXT.md").read_text()
    assert "technologies: " in text and "concepts: refresh tokens, public key infrastructure" in text


def test_context_records_last_edited_file_and_current_function(tmp_path):
    """current_file_context: {last_edited: auth/jwt.py, current_function: validate_jwt_token}"""
    edit = {"file_path": "auth/jwt.py", "old_string": "def validate_jwt_token(token):\n    pass",
            "new_string": "def validate_jwt_token(token):\n    return jwt.decode(token, KEY, algorithms=['RS256'])"}
    recs = [{"role": "user", "content": "Implement JWT validation with RS256"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "Read", "arguments": json.dumps(
                    {"file_path": "auth/validators.py"})}},
                {"id": "t2", "type": "function", "function": {"name": "Edit", "arguments": json.dumps(edit)}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "..."},
            {"role": "tool", "tool_call_id": "t2", "content": "ok"}]
    ws = tmp_path / "ws"
    ws.mkdir()
    res = run("observe", "-", "--workspace", ws, input="\n".join(json.dumps(r) for r in recs) + "\n")
    assert res.code == 0, res.stderr
    text = (ws / "CONTEXT.md").read_text()
    now = text.split("## Now", 1)[1].split("\n## ", 1)[0]
    assert "Last edited: `auth/jwt.py`" in now and "Current function: `validate_jwt_token`" in now


def test_recent_history_can_be_filtered_by_importance(tmp_path):
    """get_recent_history(max_tokens=3000, importance_threshold=0.5): low-importance messages go first."""
    recs = [{"role": "user", "content": "Set up JWT auth."}]
    for i in range(6):
        recs.append({"role": "assistant", "content": f"Looking around {i}."})  # importance 0.5
        recs.append({"role": "assistant", "content": f"Decision: use RS256 for service {i}."})  # 0.7
    recs.append({"role": "user", "content": "thanks"})
    src = tmp_path / "s.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    every = run("truncate", src, "--budget", "3000").records()
    assert len(every) == len(recs)
    important = run("truncate", src, "--budget", "3000", "--min-importance", "0.6").records()
    texts = [r["content"] for r in important]
    assert not any(t.startswith("Looking around") for t in texts)  # low importance left out
    assert sum("RS256" in t for t in texts) == 6 and texts[-1] == "thanks"  # the latest turn stays
