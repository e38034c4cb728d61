"""The shared hook framework: `ctx hook AGENT EVENT` for every agent in the registry, one resolver
and one set of handlers; each agent's sessions keyed apart; output in the agent's own shape;
hooks fail open; Codex's SessionEnd in a detached worker; PreCompact's steering text (hand-made
payloads over real transcripts; tests/e2e runs the real clients)."""
import json
import os
import subprocess
import time

import pytest

from conftest import corpus, log_events, run, session_index
from ctxkit.core.context_md import parse
from ctxkit.services import agents
from ctxkit.services.steering import STEER_CAP, steering_text

CLAUDE_T = "claude-code_spotter_8463c716_session.jsonl"
CODEX_T = "codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl"


def hook(agent, event, payload, *args, env=None):
    return run("hook", agent, *([event] if event else []), *args,
               input=json.dumps({"hook_event_name": event, **payload}), env=env)


def state(key: str) -> str:
    """A session's own CONTEXT.md, whichever store keeps it."""
    res = run("context", "show", "--session", key)
    assert res.code == 0, res.stderr
    return res.stdout


def _project(tmp_path, name="p"):
    p = tmp_path / name
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


def test_the_registry_lists_each_agent_once_and_ctx_hook_offers_them():
    names = agents.available()
    assert names[:2] == ["claude-code", "codex"] and len(set(names)) == len(names)
    res = run("hook", "--help")
    for n in names:
        assert f"  {n} " in res.stdout
    for n in names:
        a = agents.get(n)
        assert set(a.events.values()) <= set(agents.LIFECYCLE)
        assert run("hook", n, "--help").code == 0


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
@pytest.mark.parametrize("event", ["SessionStart", "session_start", "UserPromptSubmit", "PreCompact", "PostCompact",
                                   "Stop", "SubagentStop", "PreToolUse", "PermissionRequest", "NoSuchEvent", "",
                                   "../../etc", "Stop; rm -rf /"])
def test_every_event_name_fails_open(agent, event, tmp_path):
    res = hook(agent, event, {"session_id": "s", "cwd": str(tmp_path), "source": "startup",
                              "prompt": "hello world"}, "--workspace", tmp_path)
    assert res.code == 0, (agent, event, res.stderr)
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_bad_input_exits_1_never_2(agent):
    for raw in ("{not json", "[1, 2]", '{"cwd": 5, "session_id": ["x"]}'):
        res = run("hook", agent, "UserPromptSubmit", input=raw)
        assert res.code in (0, 1) and "Traceback" not in res.stderr, (raw, res.stderr)
    assert run("hook", agent, "--no-such-flag", input="{}").code == 0


def test_session_start_answers_in_each_agents_shape(tmp_path):
    for agent in ("claude-code", "codex"):
        res = hook(agent, "SessionStart", {"source": "startup", "session_id": "x1", "cwd": str(tmp_path)},
                   "--workspace", tmp_path)
        out = json.loads(res.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart" and "## Time" in out["additionalContext"]


def test_each_agents_sessions_keep_their_own_state(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    sid = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000"   # the same id from two agents
    cc = {"session_id": sid, "transcript_path": corpus(CLAUDE_T), "cwd": str(proj)}
    cx = {"session_id": sid, "transcript_path": corpus(CODEX_T), "cwd": str(proj)}
    assert hook("claude-code", "Stop", cc).code == 0
    assert hook("codex", "Stop", cx).code == 0
    idx = session_index()
    assert idx[sid].get("agent") == "claude-code" and idx["codex-" + sid]["agent"] == "codex"
    assert idx[sid]["project"] == idx["codex-" + sid]["project"] == str(proj)
    assert "spotter" in state(sid).lower() and "spotter" not in state("codex-" + sid).lower()
    assert "grant" in state("codex-" + sid).lower() and "grant" not in state(sid).lower()
    # resume in Codex hands back Codex's state, not Claude Code's
    res = hook("codex", "SessionStart", {**cx, "source": "resume"})
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "# Context (this session's state)" in ctx and "grant" in ctx.lower() and "spotter" not in ctx.lower()


def test_a_new_codex_session_is_told_of_the_projects_previous_session_with_its_agent(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    assert hook("claude-code", "Stop", {"session_id": "cc-1", "transcript_path": corpus(CLAUDE_T),
                                        "cwd": str(proj)}).code == 0
    res = hook("codex", "SessionStart", {"session_id": "new", "source": "startup", "cwd": str(proj)})
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "# Previous session in this project (Claude Code session cc-1" in ctx


def test_ctxs_own_injected_context_is_not_folded_back_into_the_state(tmp_path, monkeypatch):
    """Codex keeps hook context in its rollout as developer messages: ctx must not read its own
    words back as the session's work."""
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    lines = open(corpus(CODEX_T)).read().splitlines()
    injected = {"timestamp": "2026-04-22T20:13:00.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "developer", "content": [{"type": "input_text", "text":
            "# Context (this session's state)\n## Task\nPAINT-THE-LIGHTHOUSE-ORANGE\n## Next step\n- sail away"}]}}
    at = next(i for i, x in enumerate(lines) if json.loads(x).get("payload", {}).get("role") == "user"
              and "environment_context" not in x)
    t = tmp_path / "rollout.jsonl"
    t.write_text("\n".join(lines[:at + 1] + [json.dumps(injected)] + lines[at + 1:]) + "\n")
    assert hook("codex", "Stop", {"session_id": "r1", "transcript_path": str(t), "cwd": str(proj)}).code == 0
    from ctxkit.services.hooks import injected_by_ctx

    assert injected_by_ctx({"role": "system", "content": injected["payload"]["content"][0]["text"]})
    text = state("codex-r1")
    assert "LIGHTHOUSE" not in text and "grant" in text.lower()


def test_codex_session_end_runs_in_a_detached_worker(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _project(tmp_path)
    payload = {"session_id": "end-1", "transcript_path": corpus(CODEX_T), "cwd": str(proj), "reason": "other"}
    t0 = time.monotonic()
    res = hook("codex", "SessionEnd", payload)
    assert res.code == 0 and res.stdout == ""
    assert any(e.get("event") == "hook_deferred" and e.get("hook") == "SessionEnd" for e in log_events("curation"))
    end = time.monotonic() + 60
    while time.monotonic() < end and session_index().get("codex-end-1", {}).get("status") != "ended":
        time.sleep(0.3)
    e = session_index()["codex-end-1"]
    assert e["status"] == "ended" and e["agent"] == "codex" and e["project"] == str(proj), e
    assert time.monotonic() - t0 < 60


def test_claude_precompact_prints_the_verified_state_as_instructions(tmp_path):
    payload = {"session_id": "8463c716-a2ea-4c14-9efa-87158ebd9f20", "transcript_path": corpus(CLAUDE_T),
               "cwd": str(tmp_path), "trigger": "manual"}
    res = hook("claude-code", "PreCompact", payload, "--workspace", tmp_path)
    assert res.code == 0, res.stderr
    out = res.stdout
    assert out.startswith("ctx has the verified state of this session")
    assert "## Commits" in out and "3bb8701" in out and "af81c43" in out
    assert "## Next step" in out and "spotter-fum.5" in out
    assert len(out) <= STEER_CAP + 1
    assert any(e.get("event") == "compaction_steered" for e in log_events("compaction"))
    # Codex's PreCompact output cannot steer (it must be JSON or nothing): it prints nothing
    res = hook("codex", "PreCompact", payload, "--workspace", tmp_path)
    assert res.code == 0 and res.stdout == ""


def test_steering_text_names_failing_checks_and_stays_under_the_cap():
    ctx = parse("""<!-- ctx:context v1 version=1 -->
# Context

## Task
Fix the parser.

## Current work
- Editing `parser.py` (`parse_header`).

## Next step
- Rerun `pytest tests/test_parser.py`.

## Step 1: the header fix (done, committed abc1234)
- Checks: `pytest`: passed (10 tests)
- Committed abc1234: fix the header

## Step 2: the body fix
- Checks: `pytest tests/test_parser.py`: 2 failures (test_body, test_tail)

## Errors
- KeyError in parse_body
""")
    text = steering_text(ctx)
    assert "## Failing checks\n- Checks: `pytest tests/test_parser.py`: 2 failures" in text
    assert "## Commits\n- Committed abc1234: fix the header" in text
    assert "## Open errors\n- KeyError in parse_body" in text and "## Next step" in text
    assert steering_text(None) == "" and steering_text(parse("<!-- ctx:context v1 version=1 -->\n# Context\n")) == ""
    big = ctx.__class__(task="x" * 20000, sections={})
    assert len(steering_text(big, limit=2000)) <= 2000
