"""Claude Code hooks against the current reference: every event name (and garbage) exits 0 or
1, never 2; usage comes from the provider's own numbers; SessionStart follows `source`; Stop
is cheap when nothing changed; SessionEnd archives."""
import json
import os

import pytest

from conftest import corpus, log_events, run, session_index, stored_text
from ctxkit.cli.hook import CONTEXT_CAP, KNOWN

T = "claude-code_spotter_8463c716_session.jsonl"


def hook(event, payload, *extra, env=None):
    return run("hook", "claude-code", *([event] if event else []), *extra, input=json.dumps(payload), env=env)


@pytest.mark.parametrize("event", list(KNOWN) + ["stop", "STOP", "session_end", "SubAgentStop", "NoSuchEvent", "",
                                                 "../../etc", "Stop; rm -rf /"])
def test_every_event_name_fails_open(event, tmp_path):
    res = hook(event, {"hook_event_name": event, "session_id": "s", "cwd": str(tmp_path), "source": "startup",
                       "prompt": "hello world"}, "--workspace", tmp_path)
    assert res.code in (0, 1), (event, res.code, res.stderr)
    assert res.code == 0, res.stderr


def test_usage_errors_never_exit_2(tmp_path):
    for args in (["--no-such-flag"], ["Stop", "extra", "args"]):
        res = run("hook", "claude-code", *args, input="{}")
        assert res.code == 0 and "fail open" in res.stderr
    assert run("hook", "generic", "--bogus").code == 0


def test_event_name_may_come_from_stdin(tmp_path):
    res = hook(None, {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path)},
               "--workspace", tmp_path)
    assert res.code == 0 and json.loads(res.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_user_prompt_submit_reports_the_providers_numbers(tmp_path, ctx_home):
    t = corpus(T)
    base = {"session_id": "8463c716-a2ea-4c14-9efa-87158ebd9f20", "transcript_path": t, "cwd": str(tmp_path)}
    res = hook("UserPromptSubmit", {**base, "prompt": "continue with the transcript renderer"}, "--workspace",
               tmp_path, env={"CTX_COMPACTION_TRIGGER_PCT": "0.1"})
    assert res.code == 0, res.stderr
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    # the transcript's last message.usage after the compact boundary, over Claude's 200k window
    recs = [json.loads(x) for x in open(t)]
    last = [r["message"]["usage"] for r in recs if r.get("type") == "assistant" and r["message"].get("usage")][-1]
    want = sum(last.get(k, 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                                        "output_tokens"))
    assert f"{want:,} tokens, provider-reported" in ctx and "200,000-token window" in ctx
    assert f"{want / 200000:.0%}" in ctx
    assert "# Working state" in ctx and "## Task" in ctx and len(ctx) <= CONTEXT_CAP
    ev = log_events("context-health")[-1]
    assert ev["method"] == "provider-reported" and ev["tokens"] == want


def test_user_prompt_submit_says_nothing_when_nothing_is_due(tmp_path):
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    res = hook("UserPromptSubmit", {"transcript_path": t, "prompt": "thanks", "cwd": str(tmp_path)},
               "--workspace", tmp_path)
    assert res.code == 0 and res.stdout == ""


def test_session_start_follows_source(tmp_path):
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    fresh = hook("SessionStart", {"source": "startup", "cwd": str(tmp_path)}, "--workspace", tmp_path / "empty")
    text = json.loads(fresh.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "CONTEXT.md" not in text and "No saved working state" in text
    assert run("compact", t, "--force", "--budget", "3000", "--workspace", tmp_path / "ws").code == 0
    for source in ("startup", "resume", "compact"):
        out = hook("SessionStart", {"source": source, "cwd": str(tmp_path), "transcript_path": t}, "--workspace",
                   tmp_path / "ws")
        ctx = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "## Task" in ctx and "websearch to learn" in ctx and len(ctx) <= CONTEXT_CAP
    run("constraint", "add", "never force-push", "--workspace", tmp_path / "ws")
    clear = hook("SessionStart", {"source": "clear", "cwd": str(tmp_path)}, "--workspace", tmp_path / "ws")
    ctx = json.loads(clear.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "websearch to learn" not in ctx and "never force-push" in ctx


def test_stop_is_a_no_op_when_the_transcript_did_not_grow_and_session_end_archives(tmp_path, ctx_home):
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    t = tmp_path / "t.jsonl"
    t.write_text(open(src).read())
    base = {"session_id": "491e126e-1e71-469c-ade2-fcc8af567c74", "transcript_path": str(t), "cwd": str(tmp_path)}
    first = hook("Stop", base, "--workspace", tmp_path / "ws")
    assert first.code == 0 and "CONTEXT.md updated" in first.stderr
    again = hook("Stop", base, "--workspace", tmp_path / "ws")
    assert again.code == 0 and again.stderr == ""  # nothing new: nothing read, nothing written
    end = hook("SessionEnd", base, "--workspace", tmp_path / "ws")
    assert end.code == 0
    idx = session_index(ctx_home)
    e = idx["491e126e-1e71-469c-ade2-fcc8af567c74"]
    assert e["status"] == "ended" and stored_text(e["archive"]) is not None


def test_subagent_stop_never_replaces_the_main_state(tmp_path):
    main = corpus("claude-code_spotter_8463c716_session.jsonl")
    sub = corpus("claude-code_spotter_8463c716_subagents_agent-acompact-f46190.jsonl")
    ws = tmp_path / "ws"
    hook("Stop", {"session_id": "8463c716-a2ea-4c14-9efa-87158ebd9f20", "transcript_path": main}, "--workspace", ws)
    before = (ws / "CONTEXT.md").read_text()
    res = hook("SubagentStop", {"session_id": "8463c716-a2ea-4c14-9efa-87158ebd9f20", "transcript_path": sub},
               "--workspace", ws)
    assert res.code == 0
    from ctxkit.core import context_md as C

    assert C.parse((ws / "CONTEXT.md").read_text()).task == C.parse(before).task


def test_hook_transcript_reads_are_bounded(tmp_path):
    res = hook("Stop", {"transcript_path": "/dev/zero"}, "--workspace", tmp_path)
    assert res.code == 1 and "not a regular file" in res.stderr


def test_stop_runs_seed_003s_post_response_curation(tmp_path, ctx_home):
    """Over curation_trigger_pct of the window, Stop moves the chunks least relevant to the
    latest request to cold storage and logs it; a second turn does not re-log them."""
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("context_window: 100000\nembedder: keyword\n")
    t = tmp_path / "t.jsonl"
    t.write_text(open(corpus("claude-code_spotter_fa812bfe_session.jsonl")).read())
    base = {"session_id": "fa812bfe-b295-4cca-9c2f-fdf01028cb46", "transcript_path": str(t), "cwd": str(tmp_path)}
    first = hook("Stop", base, "--workspace", tmp_path / "ws")
    # curation runs in a detached worker that outlives the hook (Stop itself stays fast)
    assert first.code == 0 and "curation started in the background" in first.stderr, first.stderr
    ev = _curation_events(1)
    assert len(ev) == 1 and ev[0]["event"] == "memfas_curation" and ev[0]["drops_triggered"] > 0
    n = len(run("drops", "--reason", "curation", "--json").records())
    assert n == ev[0]["drops_triggered"]
    with open(t, "a") as f:  # the session grows by one turn: curation runs again, re-logs nothing
        f.write(open(corpus("claude-code_spotter_fa812bfe_session.jsonl")).readlines()[-1])
    hook("Stop", base, "--workspace", tmp_path / "ws")
    _curation_events(2)
    assert len(run("drops", "--reason", "curation", "--json").records()) == n


def _curation_events(n: int, patience: float = 120.0) -> list[dict]:
    """The curation log once the background worker has written its n-th event."""
    import time

    end = time.monotonic() + patience
    while True:
        ev = [e for e in run("logs", "curation", "--json").records() if e["event"] != "curation_started"]
        if len(ev) >= n or time.monotonic() > end:
            return ev
        time.sleep(0.5)
