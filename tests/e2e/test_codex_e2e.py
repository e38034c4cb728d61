"""ctx's hooks and compact prompt, as `ctx hook install codex` writes them, inside the REAL OpenAI
Codex CLI (npm @openai/codex, a native binary, pinned in tests/e2e/clients/codex/package-lock.json),
offline: a fake OpenAI Responses API on 127.0.0.1 in a network namespace with only loopback.
One run of harness_codex.py (seven `codex exec` runs in two projects, about a minute and a half)
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

# the harness runs ctx on its own embedded home whatever the suite's store: run it once
pytestmark = pytest.mark.embedded_only

STATE = "# Context (this session's state)"
RESTORED = "# Context (this session's state, restored after compaction)"


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    why = why_not("codex")
    if why:
        pytest.skip(why)
    out = str(tmp_path_factory.mktemp("codex-e2e"))
    res = run_confined("harness_codex.py", out)
    res["out"] = out
    res["requests"] = [json.loads(x) for x in open(os.path.join(out, "requests.jsonl"))]
    res["runs_by"] = {r["name"]: r for r in res["runs"]}
    hooks = [h for r in res["runs"] for h in r["hooks"]]
    comp = [r for r in res["requests"] if r["answer"].get("kind") == "compaction"]
    report(f"e2e {res['version']}: {len(res['runs'])} codex exec runs, {len(hooks)} ctx hook calls reported "
           f"({sum(h['status'] == 'Completed' for h in hooks)} completed), {len(comp)} compactions "
           f"({sum(_with_state(r) for r in comp)} with ctx's state and compact prompt), "
           f"{len(_index(res))} sessions kept apart, {res['seconds']} s")
    return res


def _index(res) -> dict:
    return json.load(open(os.path.join(res["ctx_home"], "sessions.json")))


def _state(res, key: str) -> str:
    p = os.path.join(res["ctx_home"], "sessions", key, "CONTEXT.md")
    return open(p).read() if os.path.exists(p) else ""


def _texts(item: dict) -> list[str]:
    return [c.get("text", "") for c in item.get("content") or () if isinstance(c, dict)]


def _user_prompt(body: dict) -> str:
    users = [t for x in body.get("input") or () if x.get("role") == "user" for t in _texts(x)
             if not t.startswith("<environment_context>")]
    return users[-1] if users else ""


def _developer(body: dict) -> list[str]:
    """What hooks injected: Codex adds a hook's additionalContext as a developer message."""
    return [t for x in body.get("input") or () if x.get("role") == "developer" for t in _texts(x)]


def _bodies_after(res, prompt: str) -> list[dict]:
    return [r["body"] for r in res["requests"] if r["answer"].get("kind") != "compaction"
            and _user_prompt(r["body"]).startswith(prompt)]


def _with_state(req: dict) -> bool:
    from ctxkit.services.agents.codex import COMPACT_PROMPT

    return _user_prompt(req["body"]).strip() == COMPACT_PROMPT.strip() and any(
        t.startswith(STATE) for t in _developer(req["body"]))


def test_every_hook_call_completes_and_codex_reports_no_hook_error(e2e):
    for r in e2e["runs"]:
        assert r["rc"] == 0, (r["name"], r["stderr"][-1500:])
        assert r["hooks"] and all(h["status"] == "Completed" for h in r["hooks"]), (r["name"], r["hooks"])
        for line in r["stderr"].replace(e2e["out"], "OUT").lower().splitlines():
            if re.search(r"\bhooks?\b", line) and "dangerously-bypass-hook-trust" not in line:
                assert line.startswith("hook: ") and "failed" not in line, (r["name"], line)
    seen = {h["event"] for r in e2e["runs"] for h in r["hooks"]}
    assert {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "PostCompact"} <= seen
    # SessionEnd is not reported by `codex exec`: ctx's own log and index show it ran (in its worker)
    log = [json.loads(x) for x in open(os.path.join(e2e["ctx_home"], "logs", "curation.jsonl"))]
    deferred = [e for e in log if e.get("event") == "hook_deferred" and e.get("hook") == "SessionEnd"]
    assert len(deferred) >= len(e2e["runs"])   # each exec run (and the UI session, when it ran)
    for key, e in _index(e2e).items():
        assert e["status"] == "ended" and e["agent"] == "codex" and key.startswith("codex-"), e


def test_codex_runs_what_the_installer_wrote(e2e):
    from ctxkit.services.agents.codex import COMPACT_PROMPT
    from ctxkit.services.hook_install import ctx_command

    for p in e2e["projects"].values():
        hooks = json.load(open(os.path.join(p, ".codex", "hooks.json")))["hooks"]
        cmds = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]
        assert cmds and all(c.startswith(f"{ctx_command('', sys.executable)} hook codex ") for c in cmds)
        assert "compact_prompt = '''" in open(os.path.join(p, ".codex", "config.toml")).read()
    comp = [r for r in e2e["requests"] if r["answer"].get("kind") == "compaction"]
    assert comp and all(_user_prompt(r["body"]).strip() == COMPACT_PROMPT.strip() for r in comp)


def test_what_ctx_injects_reaches_the_next_request(e2e):
    first = _bodies_after(e2e, "Build the alpha exporter")
    assert first and all(any(t.startswith("## Time") for t in _developer(b)) for b in first)
    resumed = _bodies_after(e2e, "Also document the alpha exporter options")
    assert resumed
    for b in resumed:
        block = next(t for t in _developer(b) if t.startswith(STATE))
        assert "## Task\nBuild the alpha exporter" in block
        assert "# Earlier" not in block and "Context:" not in block.split("\n")[0]


def test_two_sessions_keep_their_own_state(e2e):
    s1 = "codex-" + e2e["runs_by"]["a1-first"]["session_id"]
    s2 = "codex-" + e2e["runs_by"]["a2-first"]["session_id"]
    b1 = "codex-" + e2e["runs_by"]["b1-first"]["session_id"]
    assert len({s1, s2, b1}) == 3
    assert "alpha exporter" in _state(e2e, s1) and "beta parser" not in _state(e2e, s1)
    assert "beta parser" in _state(e2e, s2) and "alpha exporter" not in _state(e2e, s2)
    # a new session in project A is told of A's previous session, labelled as such
    for b in _bodies_after(e2e, "Fix the beta parser crash"):
        prev = [t for t in _developer(b) if t.startswith("# Previous session in this project (session codex-")]
        assert prev and "alpha exporter" in prev[0]
    # resuming the second session hands back its own state, not the first's
    for b in _bodies_after(e2e, "Back to the beta parser"):
        block = [t for t in _developer(b) if t.startswith(STATE)][-1]
        assert "beta parser" in block and "alpha exporter" not in block
    # project B sees nothing of project A
    for b in _bodies_after(e2e, "Start the gamma dashboard"):
        assert "alpha" not in json.dumps(b) and "beta parser" not in json.dumps(b)
    idx = _index(e2e)
    assert idx[s1]["project"] == idx[s2]["project"] == e2e["projects"]["proj-a"]
    assert idx[b1]["project"] == e2e["projects"]["proj-b"]


def test_after_codex_compacts_the_sessions_state_comes_back(e2e):
    comp = [r for r in e2e["requests"] if r["answer"].get("kind") == "compaction"]
    assert len(comp) == 1 and _with_state(comp[0])   # Codex's summary request: ctx's prompt, ctx's state
    run = e2e["runs_by"]["a1-after"]
    assert [h["event"] for h in run["hooks"]][:2] == ["PreCompact", "PostCompact"]
    after = _bodies_after(e2e, "What is my task now?")
    assert after
    for b in after:
        restored = [t for t in _developer(b) if t.startswith(RESTORED)]
        assert restored and "## Task\nBuild the alpha exporter" in restored[0]
        # the fake's summary is what Codex kept of the history: the state came back through ctx
        assert any("SUMMARY-FROM-FAKE" in t for x in b["input"] for t in _texts(x))
    # Codex wrote its own compaction into the rollout, and ctx's index points at that rollout
    rollout = _index(e2e)["codex-" + run["session_id"]]["source"]
    assert any(json.loads(x).get("type") == "compacted" for x in open(rollout))


def test_ctx_does_not_fold_its_own_injections_back(e2e):
    """Codex keeps what hooks inject in the rollout (developer messages): ctx's state of the
    session is the session's work, not ctx's own earlier words about it."""
    s1 = "codex-" + e2e["runs_by"]["a1-first"]["session_id"]
    state = _state(e2e, s1)
    assert "## Task" in state
    for mark in ("# Context (this session", "## Time", "Last interaction:", "# Previous session"):
        assert mark not in state, mark


def test_hooks_a_user_trusts_in_the_ui_run_without_the_bypass(e2e):
    """The user's way: Codex's terminal UI says the installed hooks need review, the user trusts
    them all, and `codex exec` without --dangerously-bypass-hook-trust runs them."""
    trust = e2e["trust"]
    if "skipped" in trust:
        pytest.skip(trust["skipped"])
    assert "Hooks need review" in trust["review"] and "Trust all and continue" in trust["review"]
    hooks = os.path.join(e2e["projects"]["proj-b"], ".codex", "hooks.json")
    assert {k.split(":")[1] for k in trust["trusted"] if k.startswith(hooks + ":")} >= \
        {"session_start", "user_prompt_submit", "pre_compact", "post_compact", "stop", "session_end"}
    run = e2e["runs_by"]["b2-trusted"]
    assert run["rc"] == 0 and "--dangerously-bypass-hook-trust" not in run["stderr"]
    assert {h["event"] for h in run["hooks"]} >= {"SessionStart", "UserPromptSubmit", "Stop"}
    assert all(h["status"] == "Completed" for h in run["hooks"])
