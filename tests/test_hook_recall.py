"""UserPromptSubmit recall from cold storage through the hook, at the default
hook_recall_min_score: a dropped chunk that matches the new prompt comes back, one that does
not (or shares a word or two with it) stays out. Runs on both stores (the suite's second pass
recalls from PostgreSQL)."""
import json
import subprocess

from conftest import log_events, run

SID = "5e55c0de-0000-4000-8000-00000000aaaa"


def hook(event, payload, env=None):
    return run("hook", "claude-code", event, input=json.dumps({"hook_event_name": event, **payload}), env=env)


def _rec(i, role, content, **kw):
    return {"v": 1, "kind": "message", "id": f"m{i}", "session": SID, "ts": f"2026-11-20T10:00:{i:02d}Z",
            "role": role, "content": content, **kw}


def _transcript(tmp_path):
    """A session with three exchanges: a JWT refresh bug, a CSS palette, a README typo."""
    recs = [
        _rec(1, "user", "The JWT refresh token rotation fails after an hour; fix it in auth/refresh.py"),
        _rec(2, "assistant", "The refresh token rotation reuses the expired JWT signing key: "
                             "rotate_refresh_token() reads KEY_TTL=3600 from settings and never reloads the "
                             "key ring, so every JWT refresh after an hour is rejected with 401."),
        _rec(3, "user", "Now change the dashboard colour palette to teal and amber"),
        _rec(4, "assistant", "Updated static/palette.css: --primary is teal (#008080), --accent amber "
                             "(#ffbf00); the sidebar gradient uses both colours."),
        _rec(5, "user", "Thanks. Last thing: correct the spelling in the README heading"),
        _rec(6, "assistant", "Done: the README heading now reads 'Installation'."),
    ]
    t = tmp_path / "session.jsonl"
    t.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return t


def _project(tmp_path):
    p = tmp_path / "proj"
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


def _cold_session(tmp_path, ctx_home):
    """The session registered in its project and its exchanges in cold storage (what SessionEnd's
    detached worker does, run in the foreground)."""
    proj, t = _project(tmp_path), _transcript(tmp_path)
    assert hook("Stop", {"session_id": SID, "transcript_path": str(t), "cwd": str(proj)}).code == 0
    res = run("hook", "curate", "--transcript", t, "--session", SID, "--ended")
    assert res.code == 0, res.stderr
    ev = log_events("compaction")
    assert any(e.get("event") == "session_to_cold_storage" and e["chunks"] >= 2 for e in ev)
    return proj


def _recalled(out: str) -> list[str]:
    if not out.strip():
        return []
    ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    if "# Earlier context that matches this prompt" not in ctx:
        return []
    block = ctx.split("# Earlier context that matches this prompt", 1)[1]
    return [line for line in block.splitlines() if line.startswith("- ")]


def test_a_dropped_chunk_relevant_to_the_prompt_is_recalled_and_an_irrelevant_one_is_not(tmp_path, monkeypatch,
                                                                                          ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _cold_session(tmp_path, ctx_home)
    res = hook("UserPromptSubmit", {"session_id": "next-1", "cwd": str(proj),
                                    "prompt": "why does the JWT refresh token rotation fail again?"})
    assert res.code == 0, res.stderr
    got = _recalled(res.stdout)
    assert got and "JWT refresh token rotation" in got[0] and f"cold:{SID}/" in got[0]
    assert "ctx recover --chunk-id" in got[0]
    assert not any("palette" in g or "README" in g for g in got)  # the other exchanges do not match
    # the hook's score is the one `ctx cold-storage search` ranks by (keyword), not 0
    rows = run("cold-storage", "search", "JWT refresh token rotation", "--embedder", "keyword", "--json")
    assert rows.code == 0, rows.stderr
    assert max(json.loads(x)["score"] for x in rows.stdout.splitlines()) == 1.0


def test_a_prompt_that_shares_a_word_or_two_recalls_nothing(tmp_path, monkeypatch, ctx_home):
    monkeypatch.delenv("CTX_WORKSPACE")
    proj = _cold_session(tmp_path, ctx_home)
    # "token" and "fix" occur in the JWT exchange; the prompt is about something else
    res = hook("UserPromptSubmit", {"session_id": "next-2", "cwd": str(proj),
                                    "prompt": "fix the flaky upload test in the storage layer, token bucket limits"})
    assert res.code == 0, res.stderr
    assert _recalled(res.stdout) == []
    # with the threshold at 0 the same weak match is there: the score is what keeps it out
    weak = hook("UserPromptSubmit", {"session_id": "next-2", "cwd": str(proj),
                                     "prompt": "fix the flaky upload test in the storage layer, token bucket limits"},
                env={"CTX_HOOK_RECALL_MIN_SCORE": "0"})
    assert any("JWT" in g for g in _recalled(weak.stdout))
