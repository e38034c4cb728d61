"""Seed behaviours of the working state, each test named for one: Now (Focus/Task/Blocked), Recent and
External as seed 000 has them, reaching a real Claude Code SessionStart; one session never rewriting
another's; `session restore` telling the Next step; MEMORY.md holding long-term facts only, each
injected once; hand-added facts kept."""
import json
import os
import subprocess

import pytest

from conftest import corpus, put_memory, run

COMMITS = "claude-code_entire-cli_c4a6d0ff.jsonl"   # tests fail, are fixed, pass; one commit
BEADS = "claude-code_spotter_8463c716_session.jsonl"  # commits, items closed, checks passed, a push


def _rec(i, role, content="", sess="syn-1", **kw):
    return {"v": 1, "kind": "message", "id": f"{role[0]}{i}", "session": sess,
            "ts": f"2026-03-01T10:{i:02d}:00Z", "role": role, "content": content, **kw}


def _bash(i, command, output, sess="syn-1"):
    call = {"id": f"t{i}", "type": "function", "function": {"name": "Bash", "arguments": json.dumps({"command": command})}}
    return [_rec(i, "assistant", sess=sess, tool_calls=[call], group=f"g{i}"),
            _rec(i, "tool", output, sess=sess, tool_call_id=f"t{i}", name="Bash", group=f"g{i}")]


def synthetic(sess="syn-1") -> str:
    """A session that commits, pushes, then runs a test that fails (and is not fixed)."""
    recs = [_rec(0, "user", "Fix the refresh token bug in auth/jwt.py and push the branch", sess=sess)]
    recs += _bash(1, "git commit -am 'Refresh tokens: rotate the key'",
                  "[fix-refresh 1a2b3c4] Refresh tokens: rotate the key\n 1 file changed, 3 insertions(+)", sess)
    recs += _bash(2, "git push -u origin fix-refresh",
                  "To github.com:me/app.git\n * [new branch]      fix-refresh -> fix-refresh", sess)
    recs += _bash(3, "pytest -q tests/test_jwt.py",
                  "F.\nFAILED tests/test_jwt.py::test_refresh_rotates - AssertionError: assert 'old' == 'new'\n"
                  "1 failed, 1 passed in 0.12s", sess)
    return "".join(json.dumps(r) + "\n" for r in recs)


def _section(text: str, name: str) -> list[str]:
    lines = text.split("\n")
    if f"## {name}" not in lines:
        return []
    out = []
    for ln in lines[lines.index(f"## {name}") + 1:]:
        if not ln.startswith("- "):
            break
        out.append(ln[2:])
    return out


def _context(env=None, session=None) -> str:
    path = run("context", "path", env=env).stdout.strip()
    return open(path).read()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A repository the hooks' payloads name as their cwd; the per-project workspace (no CTX_WORKSPACE)."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.delenv("CTX_WORKSPACE", raising=False)
    monkeypatch.chdir(root)
    return root


def _hook(payload: dict) -> str:
    out = run("hook", "claude-code", input=json.dumps(payload))
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"] if out.stdout.strip() else ""


def test_now_and_recent_reach_a_real_claude_code_session_start(project):
    """Claude Code's SessionStart always carries a session id: a new session is told where the previous
    one stood (Now: Focus, Blocked; Recent: its decisions and outcomes), and a resumed one its own."""
    t = corpus(COMMITS)
    _hook({"hook_event_name": "Stop", "session_id": "sess-a", "cwd": str(project), "transcript_path": t,
           "stop_hook_active": False})
    new = _hook({"hook_event_name": "SessionStart", "source": "startup", "session_id": "sess-b",
                 "cwd": str(project), "transcript_path": str(project / "b.jsonl")})
    prev = new.split("# Previous session in this project")[1]
    now = _section(prev, "Now")
    assert now[0] == "Focus: commit this" and "Blocked: none" in now
    recent = _section(prev, "Recent")
    assert "Committed 683d531: Replace containsLine assertions with literal expected strings in stanza tests" \
        in recent and "go test passed (ok 1 package)" in recent
    assert not any("commit this" in r for r in recent)  # decisions and outcomes, not the latest request
    back = _hook({"hook_event_name": "SessionStart", "source": "resume", "session_id": "sess-a",
                  "cwd": str(project), "transcript_path": t})
    own = back.split("# Context (this session's state)")[1]
    assert _section(own, "Now")[0] == "Focus: commit this" and _section(own, "Recent") == recent


def _state_of(session: str) -> str:
    """A session's own CONTEXT.md as `session restore` gives it (either store): its summary record."""
    out = run("session", "restore", session, "-n", "0")
    assert out.code == 0, out.stderr
    return json.loads(out.stdout.split("\n")[0])["content"]


def test_observe_fills_blocked_from_an_open_failing_check_and_external_from_a_push(tmp_path):
    s = tmp_path / "syn.jsonl"
    s.write_text(synthetic())
    assert run("observe", s).code == 0
    ctx = _context()
    now = _section(ctx, "Now")
    assert now[0] == "Focus: Fix the refresh token bug in auth/jwt.py and push the branch"
    assert "Blocked: pytest failing: tests/test_jwt.py::test_refresh_rotates" in now
    assert _section(ctx, "Recent") == ["Committed 1a2b3c4: Refresh tokens: rotate the key"]
    assert _section(ctx, "External") == ["Pushed to the remote"]
    # a Claude Code session names its branch: the push says which
    assert run("status", corpus(BEADS), "--log").code == 0 and run("observe", corpus(BEADS)).code == 0
    assert "Pushed branch `spotter-fum`" in _state_of("8463c716")


def test_recent_holds_decisions_and_outcomes_not_the_latest_request(ctx_home):
    assert run("observe", corpus(BEADS)).code == 0
    sid = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
    text = _context()
    recent = _section(text, "Recent")
    assert 1 <= len(recent) <= 5
    assert all(r.startswith(("Committed ", "Closed ", "Fixed: ", "Decided: ")) or " passed" in r for r in recent)
    assert not any(sid in r or r.startswith("Work on bead") for r in recent)
    assert "Closed spotter-fum: Improve Session Transcript Readability and Structure in SessionLive" in recent


def test_observe_and_maintain_of_one_session_never_rewrite_another_sessions_context_md(ctx_home, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(synthetic("sess-a"))
    b.write_text(open(corpus(COMMITS)).read().replace("c4a6d0ff-2c86-4f56-8509-c4737bcb5768", "sess-b"))
    assert run("observe", a).code == 0
    before = _context()
    assert "session=sess-a" in before.split("\n")[0]
    assert run("observe", b).code == 0
    assert run("maintain", b, "--session-end").code == 0
    after = _context()
    assert _section(after, "Now") == _section(before, "Now") and _section(after, "Recent") == _section(before, "Recent")
    assert "session=sess-a" in after.split("\n")[0]
    b_state = _state_of("sess-b")
    assert "Focus: commit this" in b_state and "Committed 683d531" in b_state


def test_session_restore_prints_the_next_step_from_context_md(ctx_home, tmp_path):
    src = corpus(COMMITS)
    assert run("status", src, "--log").code == 0  # the session is known, with its transcript
    assert run("compact", src, "--force", "--budget", "4000").code == 0
    ctx = _context()
    step = _section(ctx, "Next step")
    assert step, ctx
    out = run("session", "restore", "c4a6d0ff", "-n", "0")
    assert out.code == 0, out.stderr
    assert f"Next step: {step[0]}" in out.stderr and "none recorded" not in out.stderr


def _memory_setup(ctx_home, workspace):
    """An observation with a decision, and MEMORY.md after `ctx reflect` took it in."""
    workspace.mkdir(parents=True, exist_ok=True)
    put_memory(workspace, observations={"20260301T100000Z_s1.md":
        "# Observation: s1\n<!-- ctx:observation session=s1 at=2026-03-01T10:00:00Z -->\n\n## Decisions\n"
        "- Sign refresh tokens with RS256 keys from the vault — rotation without redeploys\n\n## Outcomes\n"
        "- Committed 1a2b3c4: Refresh tokens: rotate the key\n"})
    res = run("reflect", "--json")
    assert res.code == 0 and res.json()["added"] == 1, res.stdout


def test_a_reflected_fact_is_injected_once(ctx_home):
    ws = ctx_home / "workspace"
    _memory_setup(ctx_home, ws)
    hits = run("memory", "search", "refresh tokens RS256 vault keys", "--embedder", "keyword", "--json").records()
    rs256 = [h for h in hits if "RS256" in h["snippet"]]
    assert len(rs256) == 1 and rs256[0]["source"].startswith("MEMORY.md:")
    prompt = run("prompt", "build", "--query", "refresh tokens RS256 vault keys", "--embedder", "keyword",
                 "--no-environment").stdout
    assert prompt.count("Sign refresh tokens with RS256") == 1
    # the observation's other lines are still found (they are not in MEMORY.md)
    assert any(h["source"].startswith("observations/") for h in
               run("memory", "search", "rotate the key", "--embedder", "keyword", "--json").records())


def test_memory_md_never_receives_git_state_or_the_change_log(ctx_home):
    assert run("observe", corpus(BEADS)).code == 0
    assert run("observe", corpus(COMMITS)).code == 0
    res = run("reflect", "--json").json()
    memory = (ctx_home / "workspace" / "MEMORY.md").read_text() if os.path.exists(res["memory"]) else ""
    for line in memory.splitlines():
        body = line.split(" (from ")[0]
        assert not body.startswith(("- Committed", "- Closed", "- Fixed")), line
        assert " passed" not in body and "`—" not in body and " — modified" not in body, line
    assert "683d531" not in memory and "spotter-fum.1" not in memory


def test_hand_added_facts_beyond_ten_are_kept(ctx_home, tmp_path):
    facts = [f"Fact number {i} about the deploy pipeline" for i in range(1, 16)]
    for f in facts:
        assert run("context", "update", "--add-fact", f).code == 0
    src = tmp_path / "s.jsonl"
    src.write_text(open(corpus(COMMITS)).read())
    assert run("compact", src, "--force", "--budget", "4000").code == 0
    assert run("observe", src).code == 0
    assert run("maintain", src, "--session-end").code == 0
    kept = _section(_context(), "Facts")
    assert [f for f in facts if f in kept] == facts
    for i in range(6):
        res = run("context", "update", "--add-recent", f"recent {i}")
    assert "Recent keeps five items: 'recent 0' left it" in res.stderr or "left it" in res.stderr
