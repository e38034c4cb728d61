"""ctx's hooks, as `ctx hook install copilot` writes them, inside the REAL GitHub Copilot CLI (npm
@github/copilot, a native binary, pinned in tests/e2e/clients/copilot/package-lock.json), offline:
its own-key mode against the fake Anthropic API on 127.0.0.1, in a network namespace with only
loopback. One run of harness_copilot.py (seven `-p` runs in two projects, a real subagent, and
one interactive session under tmux, two to three minutes) feeds every test here."""
from __future__ import annotations

import json
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from clients import report, run_confined, why_not  # noqa: E402
from fake_copilot import user_words  # noqa: E402

# the harness runs ctx on its own embedded home whatever the suite's store: run it once
pytestmark = pytest.mark.embedded_only

STATE = "# Context (this session's state)"
RESTORED = "# Context (this session's state, restored after compaction)"
CTX_EVENTS = {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SubagentStop", "SessionEnd"}
# Copilot reports a PascalCase hook under its own name
REPORTED = {"sessionStart", "userPromptSubmitted", "preCompact", "agentStop", "subagentStop", "sessionEnd"}


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    why = why_not("copilot", need_tmux=True)
    if why:
        pytest.skip(why)
    out = str(tmp_path_factory.mktemp("copilot-e2e"))
    res = run_confined("harness_copilot.py", out)
    res["out"] = out
    res["requests"] = [json.loads(x) for x in open(os.path.join(out, "requests.jsonl"))]
    res["runs_by"] = {r["name"]: r for r in res["runs"]}
    runs = [h for r in res["runs"] for h in r["hook_runs"] if h["event"] in REPORTED]
    comp = [r for r in res["requests"] if (r.get("answer") or {}).get("kind") == "compaction"]
    injected = [r for r in res["requests"] if STATE in json.dumps(r["body"]) or "## Time" in json.dumps(r["body"])]
    report(f"e2e copilot {res['version']}: {len(res['runs']) - 1} -p runs and 1 interactive session, "
           f"{len(runs)} ctx hook calls reported ({sum(bool(h['success']) for h in runs)} succeeded), "
           f"ctx's context in {len(injected)} of {len(res['requests'])} requests, {len(comp)} compactions "
           f"(/compact), state back after /compact in the session {len(_bodies(res, 'Where does the delta'))} "
           f"time(s), {len(_index(res))} sessions kept apart, {res['seconds']} s")
    return res


def _index(res) -> dict:
    return json.load(open(os.path.join(res["ctx_home"], "sessions.json")))


def _state(res, key: str) -> str:
    p = os.path.join(res["ctx_home"], "sessions", key, "CONTEXT.md")
    return open(p).read() if os.path.exists(p) else ""


def _bodies(res, marker: str) -> list[dict]:
    """Conversation requests whose prompt (the user's own words) starts with MARKER."""
    return [r["body"] for r in res["requests"] if (r.get("answer") or {}).get("kind") != "compaction"
            and user_words(r["body"])[0].startswith(marker)]


def _newest_user_text(body: dict) -> str:
    users = [m for m in body.get("messages") or () if m.get("role") == "user"]
    if not users:
        return ""
    c = users[-1].get("content")
    return c if isinstance(c, str) else "\n".join(b.get("text", "") for b in c or () if isinstance(b, dict))


def _block(text: str, head: str, size: int = 1500) -> str:
    i = text.find(head)
    return text[i:i + size] if i >= 0 else ""


def test_the_installer_wrote_ctxs_hooks_beside_the_teams_own(e2e):
    for inst in e2e["install"]:
        hooks = json.loads(inst["files"]["ctx.json"])["hooks"]
        assert set(hooks) == CTX_EVENTS
        for event, entries in hooks.items():
            (h,) = entries
            cmd = h["bash"]
            if event == "SessionEnd":   # detached: Copilot kills hooks 1.5 s into /exit
                assert cmd.startswith("set -m; ") and cmd.endswith(" <&0 &")
                cmd = cmd[len("set -m; "):-len(" <&0 &")]
            assert re.fullmatch(rf"/\S+/ctx hook copilot {event}", cmd), cmd
    a = next(i for i in e2e["install"] if i["project"] == e2e["projects"]["proj-a"])
    assert a["files"]["team.json"].startswith('{\n  "version": 1,\n  "hooks": {\n    "postToolUse"')
    ran = [h for r in e2e["runs"] for h in r["hook_runs"] if h["event"] == "postToolUse"]
    assert ran and all(h["success"] for h in ran)   # the team's hook still runs


def test_every_ctx_hook_succeeds_and_copilot_reports_no_hook_error(e2e):
    for r in e2e["runs"]:
        if r["name"] == "interactive":
            assert all(r["ok"].values()), r
            assert "Hook command failed" not in r["screen"] and "hook failed" not in r["screen"].lower()
        else:
            assert r["rc"] == 0 and r["exit_code"] == 0 and not r["errors"], (r["name"], r["stderr"])
            assert r["answer"] or r["prompt"] == "/compact", r["name"]
        bad = [h for h in r["hook_runs"] if not h["success"]]
        assert not bad, (r["name"], bad)
    seen = {h["event"] for r in e2e["runs"] for h in r["hook_runs"]}
    assert REPORTED <= seen, seen
    # SessionEnd runs detached from the client: ctx marked every session ended, the interactive one too
    idx = _index(e2e)
    assert idx and all(e.get("status") == "ended" and e.get("agent") == "copilot" for e in idx.values())


def test_what_ctx_injects_reaches_the_next_request(e2e):
    a2 = _bodies(e2e, "Fix the beta parser crash")
    assert a2
    for b in a2:
        assert "Previous session in this project" in json.dumps(b) and "alpha exporter" in json.dumps(b)
    after = _bodies(e2e, "Which alpha exporter step is next")
    assert after and all("alpha exporter" in _block(json.dumps(b), STATE) for b in after)


def test_two_sessions_keep_their_own_state(e2e):
    s1 = e2e["runs_by"]["a1-first"]["session_id"]
    s2 = e2e["runs_by"]["a2-first"]["session_id"]
    assert s1 and s2 and s1 != s2
    assert _state(e2e, f"copilot-{s1}").split("## Task\n", 1)[1].startswith("Build the alpha exporter")
    assert _state(e2e, f"copilot-{s2}").split("## Task\n", 1)[1].startswith("Fix the beta parser crash")
    back = _bodies(e2e, "Back to the first session")
    assert back
    for b in back:
        block = _block(json.dumps(b), STATE)
        assert "alpha exporter" in block and "beta parser" not in block


def test_two_projects_never_see_each_others_state(e2e):
    bodies = _bodies(e2e, "Start the gamma dashboard")
    assert bodies
    for b in bodies:
        assert "alpha" not in json.dumps(b) and "beta parser" not in json.dumps(b)
    b1 = e2e["runs_by"]["b1-first"]["session_id"]
    assert _index(e2e)[f"copilot-{b1}"]["project"] == e2e["projects"]["proj-b"]


def test_after_compact_in_a_later_run_the_resumed_session_gets_its_state_once(e2e):
    run = e2e["runs_by"]["a1-compact"]
    assert [h["event"] for h in run["hook_runs"]] == ["preCompact"]   # -p /compact: PreCompact alone
    assert run["hook_runs"][0]["input"]["trigger"] == "manual"
    after = _bodies(e2e, "Which alpha exporter step is next")
    assert after
    for b in after:
        text = json.dumps(b)
        assert "summarized to free up context" in text   # Copilot's compacted history
        # SessionStart(resume) and UserPromptSubmit run at once: exactly one of them hands it back
        assert text.count(STATE) == 1, text[:3000]


def test_after_compact_inside_a_session_the_state_comes_back_at_the_next_prompt_once(e2e):
    ui = e2e["runs_by"]["interactive"]
    assert all(ui["ok"].values()), ui
    events = [h["event"] for h in ui["hook_runs"]]
    assert "preCompact" in events and events.count("sessionStart") == 1   # no SessionStart after /compact
    first = _bodies(e2e, "Where does the delta renderer stand")
    assert first
    for b in first:
        newest = _newest_user_text(b)
        assert RESTORED in newest and "delta renderer" in _block(newest, RESTORED)
        assert json.dumps(b).count(RESTORED) == 1
    for b in _bodies(e2e, "Then add the delta tooltips"):   # once: it is in the history now
        assert RESTORED not in _newest_user_text(b) and json.dumps(b).count(RESTORED) == 1


def test_a_real_subagent_is_recorded_under_its_parent_and_leaves_the_parents_state_alone(e2e):
    run = e2e["runs_by"]["c1-subagent"]
    assert "subagent-zeta" in run["answer"]
    # its own prompt and stop fire hooks with the subagent's id as session_id: ctx leaves them alone
    own = [h for h in run["hook_runs"] if h["agent"]]
    assert own and all(h["success"] for h in own)
    parent = f"copilot-{run['session_id']}"
    idx = _index(e2e)
    assert not [k for k in idx if k.endswith(tuple(h["agent"] for h in own))]
    (agent, info), = idx[parent]["subagents"].items()
    assert info["records"] > 0
    sub = open(info["state"]).read()
    assert sub.split("## Task\n", 1)[1].startswith("Survey the zeta fixtures")
    mine = _state(e2e, parent)
    assert mine.split("## Task\n", 1)[1].startswith("Plan the omega importer")
    assert "## Latest request\nSurvey the zeta" not in mine   # the subagent's prompt is not the parent's
