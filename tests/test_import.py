"""ctx import: every corpus file imports, with exact counts against the source."""
import collections
import json

import pytest

from conftest import FIXTURES, corpus, run

CC_FILES = {
    # file glob: (tool calls, tool results, API responses (unique message.id))
    "claude-code_spotter_491e126e_session.jsonl": (16, 16, 12),
    "claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl": (33, 33, 12),
    "claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl": (48, 48, 18),
    "claude-code_spotter_fa812bfe_subagents_agent-acompact-70d8e7.jsonl": (0, 0, 1),
}


def source_counts(path):
    """Count the raw Claude Code file independently of the importer."""
    calls = results = user_text = 0
    ids = set()
    think_ids = set()
    for line in open(path):
        r = json.loads(line)
        m = r.get("message") or {}
        c = m.get("content")
        if r.get("type") == "assistant":
            ids.add(m["id"])
            for b in c:
                if b["type"] == "tool_use":
                    calls += 1
                if b["type"] == "thinking":
                    think_ids.add(m["id"])
        elif r.get("type") == "user":
            if isinstance(c, str):
                user_text += 1
            else:
                results += sum(1 for b in c if b["type"] == "tool_result")
                user_text += any(b["type"] == "text" for b in c)
    return calls, results, len(ids), user_text, len(think_ids)


def check_groups(recs):
    """Every tool result sits in the group of the call it answers; no orphans."""
    call_group = {}
    for r in recs:
        for c in r.get("tool_calls") or ():
            call_group[c["id"]] = r["group"]
    for r in recs:
        assert r["group"]
        if r["role"] == "tool":
            assert call_group[r["tool_call_id"]] == r["group"], r["id"]
    # groups are contiguous
    seen, last = set(), None
    for r in recs:
        if r["group"] != last:
            assert r["group"] not in seen, f"group {r['group']} is split"
            seen.add(r["group"])
            last = r["group"]


@pytest.mark.parametrize("name", sorted(CC_FILES))
def test_claude_code_exact_counts(name):
    path = corpus(name)
    res = run("import", path)
    assert res.code == 0, res.stderr
    recs = res.records()
    calls, results, responses, user_text, thinking = source_counts(path)
    assert (calls, results, responses) == CC_FILES[name]
    assert sum(len(r.get("tool_calls") or []) for r in recs) == calls
    assert sum(1 for r in recs if r["role"] == "tool") == results
    assistant = [r for r in recs if r["role"] == "assistant" and "thinking" not in r.get("flags", [])]
    assert len(assistant) == responses
    assert sum(1 for r in recs if "thinking" in r.get("flags", [])) == thinking
    assert sum(1 for r in recs if r["role"] == "user") == user_text
    assert all(r["v"] == 1 and r["kind"] in ("message", "summary") for r in recs)
    assert all(r["source"]["format"] == "claude-code" and r["source"]["line"] >= 1 for r in recs)
    assert all(r.get("ts", "").startswith("2026-") for r in recs)
    check_groups(recs)


def test_claude_code_joins_split_response_and_keeps_ids():
    path = corpus("claude-code_spotter_491e126e_session.jsonl")
    recs = run("import", path).records()
    turn = next(r for r in recs if r["id"] == "msg_01FqB3YigWWkQYHv4wfbcsgM")
    # lines 17-19 and 22 of the source are one API response; a tool result sits between them
    assert [c["function"]["name"] for c in turn["tool_calls"]] == ["Glob", "WebSearch"]
    group = [r for r in recs if r["group"] == turn["group"]]
    assert [r["role"] for r in group] == ["assistant", "assistant", "tool", "tool"]
    assert "thinking" in group[0]["flags"]
    assert turn["usage"]["output_tokens"] >= 1
    assert all(r["session"] == "491e126e-1e71-469c-ade2-fcc8af567c74" for r in recs)


def test_claude_code_meta_lines_skipped_unless_keep_meta():
    path = corpus("claude-code_spotter_491e126e_session.jsonl")
    plain = run("import", path).records()
    meta = run("import", path, "--keep-meta").records()
    kinds = collections.Counter(r["kind"] for r in meta)
    # 44 progress + 3 file-history-snapshot + 1 system line
    assert kinds["event"] == 48
    assert len(meta) - len(plain) == 48


def test_claude_code_compact_boundary_and_summary(tmp_path):
    lines = [
        {"type": "summary", "summary": "Fixed the JWT refresh bug", "leafUuid": "leaf-1"},
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
         "uuid": "u-1", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z"},
        {"type": "user", "uuid": "u-2", "sessionId": "s1", "isCompactSummary": True,
         "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "This session is being continued. Summary: ..."}},
        {"type": "user", "uuid": "u-3", "sessionId": "s1", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "user", "content": "go on"}},
    ]
    p = tmp_path / "cc.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    recs = run("import", p).records()
    assert [r["kind"] for r in recs] == ["summary", "summary", "summary", "message"]
    assert recs[0]["content"] == "Fixed the JWT refresh bug"
    assert "compact_boundary" in recs[1]["flags"]


def test_swe_agent_exact_counts():
    res = run("import", corpus("swe-agent_pydicom__pydicom-1458.traj"))
    assert res.code == 0, res.stderr
    recs = res.records()
    assert len(recs) == 27  # 26 history messages + a synthesized result for the final `submit`
    # observations after the task become the results of the actions before them
    assert collections.Counter(r["role"] for r in recs) == {"system": 1, "user": 2, "assistant": 12, "tool": 12}
    assert sum(1 for r in recs if "demo" in r.get("flags", [])) == 1
    assert all(r["meta"]["action"] for r in recs if r["role"] == "assistant")
    assert recs[0]["session"] == "swe-agent_pydicom__pydicom-1458"
    assert sum(len(r.get("tool_calls") or []) for r in recs) == 12


def test_tau_bench_exact_counts():
    res = run("import", corpus("tau-bench_gpt-4o-airline_idx173_task23.json"))
    assert res.code == 0, res.stderr
    recs = res.records()
    assert len(recs) == 56
    assert collections.Counter(r["role"] for r in recs) == {"system": 1, "user": 15, "assistant": 27, "tool": 13}
    assert sum(len(r.get("tool_calls") or []) for r in recs) == 13
    assert all(r["name"] for r in recs if r["role"] == "tool")
    check_groups(recs)
    assert recs[0]["session"] == "tau-bench-23-3"


def test_openai_array_and_jsonl_agree(tmp_path):
    msgs = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "weather in Paris?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "time", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "name": "time", "content": "noon"},
        {"role": "assistant", "content": "Sunny at noon."},
    ]
    arr = tmp_path / "m.json"
    arr.write_text(json.dumps(msgs, indent=2))
    jl = tmp_path / "m.jsonl"
    jl.write_text("\n".join(json.dumps(m) for m in msgs))
    a = run("import", arr).records()
    b = run("import", jl).records()
    assert [(r["role"], r["content"], r["group"]) for r in a] == [(r["role"], r["content"], r["group"]) for r in b]
    assert len({r["group"] for r in a[2:5]}) == 1  # call + both results: one group
    assert a[1]["content"] == "weather in Paris?"
    wrapped = tmp_path / "w.json"
    wrapped.write_text(json.dumps({"messages": msgs}))
    assert len(run("import", wrapped, "--from", "openai").records()) == 6


def test_codex_rollout():
    res = run("import", FIXTURES / "codex_rollout.jsonl")
    assert res.code == 0, res.stderr
    recs = res.records()
    roles = [(r["role"], tuple(r.get("flags", []))) for r in recs if r["kind"] == "message"]
    assert roles == [("system", ()), ("user", ()), ("assistant", ("reasoning",)), ("assistant", ()),
                     ("tool", ()), ("tool", ()), ("assistant", ())]
    calls = [r for r in recs if r.get("tool_calls")]
    assert len(calls) == 1 and len(calls[0]["tool_calls"]) == 2
    check_groups([r for r in recs if r["kind"] == "message"])
    usage = [r for r in recs if r.get("usage")]
    # Codex counts cached tokens inside input_tokens (its total is input + output): 5120 of which 4000 cached
    assert usage and usage[-1]["usage"]["input_tokens"] == 1120 and usage[-1]["usage"]["cache_read_input_tokens"] == 4000
    assert usage[-1]["usage"]["context_window"] == 272000
    assert all(r["session"] == "0199a1b2-rollout" for r in recs)


def test_aider_history():
    res = run("import", FIXTURES / "aider.chat.history.md")
    assert res.code == 0, res.stderr
    recs = res.records()
    msgs = [r for r in recs if r["kind"] == "message"]
    assert [r["role"] for r in msgs if r["role"] != "tool"] == ["user", "assistant", "user", "assistant"]
    assert msgs[0]["content"] == "add a --verbose flag to cli.py"
    assert "<<<<<<< SEARCH" in msgs[1]["content"]  # the raw text stays
    assert msgs[1]["tool_calls"][0]["function"]["name"] == "edit"  # and the edit is a paired call
    assert msgs[2]["role"] == "tool" and msgs[2]["tool_call_id"] == msgs[1]["tool_calls"][0]["id"]
    events = [r for r in recs if r["kind"] == "event"]
    assert any(e.get("usage", {}).get("input_tokens") == 2300 for e in events)
    assert msgs[0]["ts"] == "2024-08-05T14:05:11Z"


def test_ctx_records_pass_through_unchanged():
    path = corpus("tau-bench_gpt-4o-airline_idx173_task23.json")
    once = run("import", path).stdout
    twice = run("import", "-", input=once).stdout
    assert once == twice


def test_unknown_format_lists_supported(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("just some words\n")
    res = run("import", p)
    assert res.code == 1
    assert f"{p}:1: unrecognised input format" in res.stderr
    assert "claude-code" in res.stderr and "aider" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_wrong_explicit_format_is_a_clear_error():
    res = run("import", corpus("tau-bench_gpt-4o-airline_idx173_task23.json"), "--from", "swe-agent")
    assert res.code == 1
    assert "not a SWE-agent trajectory" in res.stderr
