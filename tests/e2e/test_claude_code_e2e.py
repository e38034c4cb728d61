"""ctx's hooks, as `ctx hook install claude-code` writes them, inside the REAL Claude Code client
(npm @anthropic-ai/claude-code, pinned in tests/e2e/clients/claude-code/package-lock.json),
offline: a fake Anthropic API on 127.0.0.1 in a network namespace with only loopback. One run
of harness.py (headless and interactive sessions in two projects, a plugin install, about two
minutes) feeds every test here."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from clients import report, run_confined, why_not  # noqa: E402

# the harness runs ctx on its own embedded home whatever the suite's store: run it once
pytestmark = pytest.mark.embedded_only


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    why = why_not("claude-code", need_tmux=True)
    if why:
        pytest.skip(why)
    out = str(tmp_path_factory.mktemp("claude-e2e"))
    res = run_confined("harness.py", out)
    res["requests"] = [json.loads(x) for x in open(os.path.join(out, "requests.jsonl"))]
    res["runs_by"] = {r["name"]: r for r in res["runs"]}
    calls = [h for r in res["runs"] for h in r["hook_runs"]]
    compactions = [r for r in res["requests"] if r.get("answer", {}).get("kind") == "compaction"]
    report(f"e2e {res.get('version')}: {len(res['runs'])} runs, {len(calls)} ctx hook calls "
           f"({sum(h['status'] == 0 for h in calls)} exit 0), {len(compactions)} compactions "
           f"({sum(STEER in json.dumps(r['body']) for r in compactions)} steered by ctx), {res['seconds']} s")
    return res


STEER = "ctx has the verified state of this session"


def _index(res) -> dict:
    return json.load(open(os.path.join(res["ctx_home"], "sessions.json")))


def _state(res, session: str) -> str:
    p = os.path.join(res["ctx_home"], "sessions", session, "CONTEXT.md")
    return open(p).read() if os.path.exists(p) else ""


def _bodies_after(res, marker: str) -> list[str]:
    """Request bodies (as text) whose newest user turn is a prompt starting with MARKER."""
    out = []
    for r in res["requests"]:
        msgs = r["body"].get("messages") or []
        users = [m for m in msgs if m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        blocks = [content] if isinstance(content, str) else [b.get("text", "") for b in content or ()
                                                              if isinstance(b, dict)]
        # the prompt the user typed (injected context may quote it, inside a system reminder)
        if any(isinstance(t, str) and t.lstrip().startswith(marker) for t in blocks):
            out.append(json.dumps(r["body"]))
    return out


def test_every_hook_exits_0_and_claude_reports_no_hook_error(e2e):
    headless = [r for r in e2e["runs"] if r["name"] != "interactive"]
    for r in headless:
        assert r["rc"] == 0 and r["is_error"] is False, (r["name"], r["stderr"])
        responses = [h for h in r["hooks"] if h.get("subtype") == "hook_response"]
        assert responses, r["name"]
        for h in responses:
            assert h.get("exit_code") == 0 and h.get("outcome") == "success", (r["name"], h)
    seen = {h.get("hook_event") for r in headless for h in r["hooks"] if h.get("subtype") == "hook_response"}
    assert {"SessionStart", "UserPromptSubmit", "Stop", "SubagentStop"} <= seen
    # what the stream does not show (PreCompact, PostCompact, SessionEnd), Claude Code's debug log does
    runs = [h for r in e2e["runs"] for h in r["hook_runs"]]
    assert runs and all(h["status"] == 0 for h in runs), [h for h in runs if h["status"] != 0]
    # the commands are the installer's: this ctx by absolute path
    from ctxkit.services.hook_install import ctx_command

    assert all(h["command"].startswith(f"{ctx_command('', sys.executable)} hook claude-code ") for h in runs)
    assert {"SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop",
            "SessionEnd"} <= {h["event"] for h in runs} | seen
    ui = e2e["runs_by"]["interactive"]
    assert all(ui["ok"].values()), ui
    assert any(h["event"] == "SessionEnd" for h in ui["hook_runs"])
    assert "hook error" not in ui["screen"].lower() and "hook failed" not in ui["screen"].lower()


def test_headless_sessions_leave_state_and_end(e2e):
    idx = _index(e2e)
    for name in ("a1-first", "a2-first", "b1-first"):
        sid = e2e["runs_by"][name]["session_id"]
        e = idx[sid]
        assert e["status"] == "ended" and os.path.exists(e["archive"])  # SessionEnd ran to the end
        assert "## Task" in _state(e2e, sid)
    a1 = e2e["runs_by"]["a1-first"]["session_id"]
    # --continue, /compact and the auto-compaction all folded into the same session's state
    assert "alpha exporter" in _state(e2e, a1) and idx[a1]["project"] == e2e["projects"]["proj-a"]
    log = [json.loads(x) for x in open(os.path.join(e2e["ctx_home"], "logs", "compaction.jsonl"))]
    assert any(e.get("event") == "session_to_cold_storage" and e.get("session") == a1 for e in log)


def test_auto_compaction_after_prompt_is_too_long_keeps_the_session(e2e):
    assert any(r.get("answer", {}).get("status") == 400 for r in e2e["requests"])
    r = e2e["runs_by"]["a1-toolong"]
    events = [h.get("hook_event") for h in r["hooks"] if h.get("subtype") == "hook_response"]
    assert "SubagentStop" in events and events.count("SessionStart") >= 2  # compacted, then restarted
    after = _bodies_after(e2e, "TOOLONG keep going")
    assert after and any("# Context (this session's state, restored after compaction)" in b and
                         "alpha exporter" in b for b in after)


def test_injected_state_reaches_the_next_request_and_is_the_sessions_own(e2e):
    # a new session in project A is told about A's previous session, labelled as such
    a2 = _bodies_after(e2e, "Fix the beta parser crash")
    assert a2 and all("Previous session in this project" in b and "alpha exporter" in b for b in a2)
    # after ITS OWN /compact, session A2 gets its own task back, not A1's
    after = _bodies_after(e2e, "What is my task now?")
    assert after
    for b in after:
        i = b.index("# Context (this session")
        restored = b[i:i + 1500]
        assert "beta parser" in restored and "alpha exporter" not in restored
    # resuming A1 brings A1's state back
    back = _bodies_after(e2e, "Back to the first session")
    assert back and any("# Context (this session's state)" in b and "alpha exporter" in b.split(
        "# Context (this session's state)")[1][:1500] for b in back)


def test_two_projects_never_see_each_others_state(e2e):
    for marker in ("Start the gamma dashboard", "Interactive delta request"):
        bodies = _bodies_after(e2e, marker)
        assert bodies
        for b in bodies:
            assert "alpha" not in b and "beta parser" not in b
    idx = _index(e2e)
    b1 = e2e["runs_by"]["b1-first"]["session_id"]
    assert idx[b1]["project"] == e2e["projects"]["proj-b"]
    assert "alpha" not in _state(e2e, b1)
    ws = sorted(os.listdir(os.path.join(e2e["ctx_home"], "projects")))
    assert [w.split("-")[1] for w in ws] == ["a", "b", "c"] and all(w.startswith("proj-") for w in ws)


def test_interactive_session_is_read_and_leaves_state(e2e):
    idx = _index(e2e)
    mine = [e for e in idx.values() if e.get("title", "").startswith("Interactive delta")]
    assert len(mine) == 1 and mine[0]["status"] == "ended"
    sid = mine[0]["session"]
    # UserPromptSubmit read the interactive transcript on the second prompt (and counted what it skipped)
    health = [json.loads(x) for x in open(os.path.join(e2e["ctx_home"], "logs", "context-health.jsonl"))]
    ups = [e for e in health if e.get("session") == sid and e.get("hook") == "UserPromptSubmit"]
    assert len(ups) == 2 and ups[-1]["method"] == "provider-reported"
    assert (ups[-1].get("skipped_lines") or {}).get("permission-mode")
    # the interactive transcript opens with bookkeeping lines ctx used to reject
    tdir = os.path.join(e2e["claude_home"], ".claude", "projects")
    path = next(os.path.join(d, f) for d, _, fs in os.walk(tdir) for f in fs if f == sid + ".jsonl")
    first = json.loads(open(path).readline())
    assert first.get("type") not in ("user", "assistant")
    assert "interactive-epsilon" in _state(e2e, sid) or "Interactive delta" in _state(e2e, sid)


def test_status_on_a_compacted_session_counts_what_the_model_sees(e2e):
    a1 = e2e["runs_by"]["a1-first"]["session_id"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": e2e["ctx_home"], "PYTHONPATH": os.path.dirname(os.path.dirname(HERE))})
    p = subprocess.run([sys.executable, "-m", "ctxkit", "status", "--session", a1[:8], "--json"],
                       cwd=e2e["projects"]["proj-a"], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["window_method"] == "provider-reported" and d["window"] == 200_000
    src = _index(e2e)[a1]["source"]
    lines = [json.loads(x) for x in open(src)]
    assert any(x.get("subtype") == "compact_boundary" for x in lines)
    convo = sum(1 for x in lines if x.get("type") in ("user", "assistant"))
    assert 0 < d["records"] < convo  # only what follows the last compact boundary


def _user_texts(body: dict) -> list[str]:
    out = []
    for m in body.get("messages") or ():
        if m.get("role") != "user":
            continue
        c = m.get("content")
        out += [c] if isinstance(c, str) else [b.get("text", "") for b in c or () if isinstance(b, dict)]
    return out


def test_a_real_subagent_is_recorded_under_its_parent_and_the_parent_keeps_its_state(e2e):
    run = e2e["runs_by"]["c1-subagent"]
    assert run["rc"] == 0 and run["is_error"] is False, run["stderr"]
    sub = [h for h in run["hooks"] if h.get("subtype") == "hook_response" and h.get("hook_event") == "SubagentStop"]
    assert sub and all(h.get("exit_code") == 0 for h in sub)
    # the subagent really ran: it asked the API itself, with its own prompt and none of the parent's
    own_requests = [r for r in e2e["requests"] if any(t.startswith("Survey the zeta fixtures")
                                                      for t in _user_texts(r["body"]))
                    and not any("Plan the omega importer" in t for t in _user_texts(r["body"]))]
    assert own_requests and "subagent-zeta" in (run["result"] or "")  # its command's output came back
    parent = run["session_id"]
    entry = _index(e2e)[parent]
    assert entry.get("subagents"), entry
    (agent, info), = entry["subagents"].items()
    # SubagentStop read the subagent's own transcript (agent_transcript_path), not the main one
    assert "/subagents/" in info["transcript"] and info["transcript"] != entry["source"] and info["records"] > 0
    own = _state(e2e, f"{parent}.agent-{agent}")
    assert own.split("## Task\n", 1)[1].startswith("Survey the zeta fixtures")
    assert info["state"] and info["state"].endswith(f"{parent}.agent-{agent}/CONTEXT.md")
    # the parent's state stays the parent's own
    assert _state(e2e, parent).split("## Task\n", 1)[1].startswith("Plan the omega importer")
    # and the parent's next prompt (resumed with --continue) is handed the parent's state
    after = _bodies_after(e2e, "What did the helper find?")
    assert after
    head = "# Context (this session's state)"
    for b in after:
        block = [t for t in _user_texts(json.loads(b)) if head in t][-1]
        task = block.split(head, 1)[1].split("## Task\n", 1)[1]
        assert task.startswith("Plan the omega importer"), block[:600]


def test_precompact_gives_claudes_summary_the_verified_state(e2e):
    """Claude Code hands a PreCompact hook's stdout to its summarizer: the compaction requests the
    fake API receives carry ctx's verified state of that session, manual /compact and the
    automatic compaction after "prompt is too long" alike."""
    comp = [r for r in e2e["requests"] if r.get("answer", {}).get("kind") == "compaction"]
    assert len(comp) >= 3
    steered = [json.dumps(r["body"]) for r in comp if STEER in json.dumps(r["body"])]
    assert len(steered) == len(comp)

    def block(raw: str) -> str:   # the steering text (JSON-escaped, as the request carried it)
        return raw.split(STEER, 1)[1][:3000]

    a1 = [b for b in steered if "Build the alpha exporter" in block(b)]
    a2 = [b for b in steered if "Fix the beta parser crash" in block(b)]
    assert len(a1) >= 2 and a2  # /compact and the automatic one of session A1, /compact of A2
    assert all("## Task" in block(b) and "## Current work" in block(b) for b in steered)
    assert all("alpha exporter" not in block(b) for b in a2)
    # the instructions reached the compaction as Claude Code's own: its /compact reports the hook
    after = _bodies_after(e2e, "What is my task now?")
    assert any("PreCompact" in b and STEER in b for b in after)


def test_the_sessions_state_does_not_carry_the_clients_own_reminders(e2e):
    """2.1.332 appends its own <system-reminder> blocks (tokens left, agent types) to prompts and
    tool results: they are the client's, not the agent's work, and no session's CONTEXT.md
    carries them."""
    assert any("tokens left</total_tokens>" in json.dumps(r["body"]) for r in e2e["requests"])
    sdir = os.path.join(e2e["ctx_home"], "sessions")
    states = {s: _state(e2e, s) for s in os.listdir(sdir)}
    assert len([s for s in states.values() if s]) >= 5
    for sid, text in states.items():
        for mark in ("<system-reminder>", "system-reminder&gt;", "tokens left", "Available agent types"):
            assert mark not in text, (sid, mark)


def test_ctx_as_a_plugin_is_accepted_and_its_hooks_run(e2e):
    steps = e2e["plugin"]
    assert all(s["rc"] == 0 for s in steps.values()), steps
    assert "Validation passed" in steps["validate"]["out"] and "Validation passed" in steps["validate-example"]["out"]
    run = e2e["runs_by"]["p1-plugin"]
    assert run["rc"] == 0 and run["is_error"] is False, run["stderr"]
    proj = e2e["projects"]["proj-c"]
    own = os.path.join(proj, ".claude", "settings.json")
    assert not os.path.exists(own) or "hooks" not in json.load(open(own))   # the plugin's hooks only
    events = {h["event"] for h in run["hook_runs"] if h["plugin"] == "ctx@ctxkit"}
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= events, run["hook_runs"]
    assert all(h["status"] == 0 for h in run["hook_runs"])
    sid = run["session_id"]
    assert _index(e2e)[sid]["project"] == proj and "plugin task" in _state(e2e, sid)
