"""ctx's hooks, as `ctx hook install gemini` writes them, inside the REAL Gemini CLI (npm
@google/gemini-cli, pinned in tests/e2e/clients/gemini/package-lock.json), offline: a fake Gemini
API on 127.0.0.1 in a network namespace with only loopback. One run of harness_gemini.py (six
headless runs in two projects and one interactive session under tmux, three to four minutes)
feeds every test here."""
from __future__ import annotations

import json
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from clients import report, run_confined, why_not  # noqa: E402
from fake_gemini import _user_words  # noqa: E402

# the harness runs ctx on its own embedded home whatever the suite's store: run it once
pytestmark = pytest.mark.embedded_only

STATE = "# Context (this session's state)"
RESTORED = "# Context (this session's state, restored after compaction)"
CTX_EVENTS = {"SessionStart", "BeforeAgent", "PreCompress", "AfterAgent", "SessionEnd"}


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    why = why_not("gemini", need_tmux=True)
    if why:
        pytest.skip(why)
    out = str(tmp_path_factory.mktemp("gemini-e2e"))
    res = run_confined("harness_gemini.py", out)
    res["out"] = out
    res["requests"] = [json.loads(x) for x in open(os.path.join(out, "requests.jsonl"))]
    res["runs_by"] = {r["name"]: r for r in res["runs"]}
    calls = [h for h in res["hook_calls"] if h["hook"] == "ctx"]
    comp = [r for r in res["requests"] if (r.get("answer") or {}).get("kind") == "compression"]
    injected = [r for r in res["requests"] if "<hook_context>" in json.dumps(r.get("body"))]
    report(f"e2e gemini-cli {res['version']}: {len(res['runs']) - 1} headless runs and 1 interactive session, "
           f"{len(calls)} ctx hook calls ({sum(h['exit_code'] == 0 and h['success'] for h in calls)} exit 0), "
           f"ctx's context in {len(injected)} of {len(res['requests'])} requests, {len(comp) // 2} compressions "
           f"(auto and /compress), state back after /compress {len(_bodies(res, 'Where does the delta'))} time(s), "
           f"{len(_index(res))} sessions kept apart, {res['seconds']} s")
    return res


def _index(res) -> dict:
    return json.load(open(os.path.join(res["ctx_home"], "sessions.json")))


def _state(res, key: str) -> str:
    p = os.path.join(res["ctx_home"], "sessions", key, "CONTEXT.md")
    return open(p).read() if os.path.exists(p) else ""


def _prompt(body: dict) -> str:
    """What the user typed last (the fake API's reading: injected context left out)."""
    for c in reversed([c for c in body.get("contents") or () if isinstance(c, dict) and c.get("role") == "user"]):
        words = _user_words(c)
        if words:
            return words
    return ""


def _newest_user_text(body: dict) -> str:
    users = [c for c in body.get("contents") or () if isinstance(c, dict) and c.get("role") == "user"]
    return "\n".join(p.get("text", "") for p in (users[-1].get("parts") or ()) if isinstance(p, dict)) if users else ""


def _bodies(res, marker: str) -> list[dict]:
    """The conversation requests (not the client's own side requests) whose prompt starts with MARKER."""
    return [r["body"] for r in res["requests"] if r["path"].endswith(":streamGenerateContent")
            and _prompt(r["body"]).startswith(marker)]


def _block(text: str, head: str, size: int = 1500) -> str:
    i = text.find(head)
    return text[i:i + size] if i >= 0 else ""


def test_the_installer_merged_ctxs_hooks_and_the_users_own_hook_still_runs(e2e):
    for inst in e2e["install"]:
        settings = json.loads(inst["settings"])
        cmds = {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
        ours = {c for c in cmds if re.fullmatch(r"/\S+/ctx hook gemini (\w+)", c)}
        assert {c.rsplit(" ", 1)[1] for c in ours} == CTX_EVENTS, cmds
    a = next(i for i in e2e["install"] if i["project"] == e2e["projects"]["proj-a"])
    assert '"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "true", "timeout": 5000}]' \
        in a["settings"]   # the user's BeforeTool hook, byte for byte
    user = [h for h in e2e["hook_calls"] if h["event"] == "BeforeTool"]
    assert user and all(h["hook"] == "true" and h["exit_code"] == 0 for h in user)


def test_every_ctx_hook_exits_0_and_gemini_reports_no_hook_error(e2e):
    for r in e2e["runs"]:
        if r["name"] == "interactive":
            assert all(r["ok"].values()), r
            screen = r["screen"]
            assert "failed for event" not in screen and "Hook(s) [" not in screen
            continue
        assert r["rc"] == 0 and not r["error"] and r["response"], (r["name"], r["stderr"])
        assert "failed for event" not in r["stderr"] and "Hook(s) [" not in r["stderr"], r["stderr"]
        assert "ctx:" not in r["stderr"]   # ctx's notes never reach the user through the client
    calls = [h for h in e2e["hook_calls"] if h["hook"] == "ctx"]
    assert calls and all(h["exit_code"] == 0 and h["success"] for h in calls), [h for h in calls if h["exit_code"]]
    assert {h["event"] for h in calls} == CTX_EVENTS
    # one SessionStart per run (the interactive session's included), and AfterAgent after each prompt
    # (the interactive session's four; /compress is not one)
    assert sum(h["event"] == "SessionStart" for h in calls) == len(e2e["runs"])
    assert sum(h["event"] == "AfterAgent" for h in calls) >= len(e2e["runs"]) - 1 + 4


def test_what_ctx_injects_reaches_the_next_request(e2e):
    # a new session of project A is told of A's previous session, labelled as such, as hook context
    a2 = _bodies(e2e, "Fix the beta parser crash")
    assert a2
    for b in a2:
        text = json.dumps(b)
        assert "<hook_context>" in text and "Previous session in this project" in text and "alpha exporter" in text
    # resuming: the session's own state
    after = _bodies(e2e, "Which alpha exporter step is next")
    assert after and all("alpha exporter" in _block(json.dumps(b), STATE) for b in after)


def test_two_sessions_keep_their_own_state(e2e):
    s1 = e2e["runs_by"]["a1-first"]["session_id"]
    s2 = e2e["runs_by"]["a2-first"]["session_id"]
    assert s1 and s2 and s1 != s2
    assert _state(e2e, f"gemini-{s1}").split("## Task\n", 1)[1].startswith("Build the alpha exporter")
    assert _state(e2e, f"gemini-{s2}").split("## Task\n", 1)[1].startswith("Fix the beta parser crash")
    back = _bodies(e2e, "Back to the first session")
    assert back
    for b in back:
        block = _block(json.dumps(b), STATE)
        assert "alpha exporter" in block and "beta parser" not in block
    idx = _index(e2e)
    for s in (s1, s2):
        assert idx[f"gemini-{s}"]["agent"] == "gemini" and idx[f"gemini-{s}"]["status"] == "ended"


def test_two_projects_never_see_each_others_state(e2e):
    bodies = _bodies(e2e, "Start the gamma dashboard")
    assert bodies
    for b in bodies:
        text = json.dumps(b)
        assert "alpha" not in text and "beta parser" not in text
    b1 = e2e["runs_by"]["b1-first"]["session_id"]
    assert _index(e2e)[f"gemini-{b1}"]["project"] == e2e["projects"]["proj-b"]


def test_after_its_own_automatic_compression_the_session_comes_back_once(e2e):
    # the command's result reported a window 70 % full: the client compressed before sending it back
    full = [r for r in e2e["requests"] if (r.get("answer") or {}).get("kind") == "compression"]
    assert full
    s1 = e2e["runs_by"]["a1-first"]["session_id"]
    assert "alpha exporter" in _state(e2e, f"gemini-{s1}")
    after = _bodies(e2e, "Which alpha exporter step is next")
    assert after
    for b in after:
        text = json.dumps(b)
        assert "<state_snapshot>" in text            # the client's compressed history
        # handed back by SessionStart(resume) alone: BeforeAgent saw the compression covered
        assert text.count(STATE) == 1 and RESTORED not in text


def test_after_compress_the_state_comes_back_at_before_agent_once(e2e):
    ui = e2e["runs_by"]["interactive"]
    assert all(ui["ok"].values()), ui
    pre = [h for h in e2e["hook_calls"] if h["hook"] == "ctx" and h["event"] == "PreCompress"]
    assert len(pre) == 1 and pre[0]["exit_code"] == 0   # /compress (the automatic one is not wired)
    sid = pre[0]["session"]
    starts = [h for h in e2e["hook_calls"] if h["event"] == "SessionStart" and h["session"] == sid]
    assert len(starts) == 1   # no SessionStart after /compress
    first = _bodies(e2e, "Where does the delta renderer stand")
    assert first
    for b in first:
        newest = _newest_user_text(b)
        assert "<hook_context>" in newest and RESTORED in newest
        assert "delta renderer" in _block(newest, RESTORED) and json.dumps(b).count(RESTORED) == 1
    # the next prompt: not again (it is in the history already)
    for b in _bodies(e2e, "Then add the delta tooltips"):
        assert RESTORED not in _newest_user_text(b) and json.dumps(b).count(RESTORED) == 1
    log = [json.loads(x) for x in open(os.path.join(e2e["ctx_home"], "logs", "compaction.jsonl"))]
    assert [e for e in log if e.get("event") == "state_restored_after_compaction"
            and e.get("session") == f"gemini-{sid}"]
    assert _index(e2e)[f"gemini-{sid}"]["status"] == "ended"   # /quit ran SessionEnd to the end
