"""ctx export and the Anthropic / ctx-array importers: structural rules of both APIs on every
corpus file, and import -> export -> import round trips that keep roles, text and pairing."""
import json
import os

import pytest

from conftest import CORPUS_FILES, CORPUS, FIXTURES, corpus, run

FILES = CORPUS_FILES


def check_openai(body):
    msgs = body["messages"]
    assert all(m["role"] in ("system", "user", "assistant", "tool") for m in msgs)
    assert all(m["role"] != "system" for m in msgs[1:]), "a system message only comes first"
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m["role"] != "tool", f"message {i}: a tool result without the call right before it"
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            assert all(c["type"] == "function" and isinstance(c["function"]["arguments"], str) for c in m["tool_calls"])
            got = []
            while i + 1 < len(msgs) and msgs[i + 1]["role"] == "tool":
                i += 1
                got.append(msgs[i]["tool_call_id"])
            assert sorted(got) == sorted(ids), f"message {i}: every call answered right after it"
        else:
            assert isinstance(m["content"], str) and m["content"] != ""
        i += 1


def check_anthropic(body):
    assert isinstance(body.get("system", ""), str)
    msgs = body["messages"]
    assert msgs and msgs[0]["role"] == "user"
    for a, b in zip(msgs, msgs[1:]):
        assert a["role"] != b["role"], "user and assistant alternate"
    for k, m in enumerate(msgs):
        assert m["content"], "no empty turn"
        for blk in m["content"]:
            assert blk["type"] in ("text", "tool_use", "tool_result")
            if blk["type"] == "text":
                assert blk["text"].strip()
            if blk["type"] == "tool_use":
                assert m["role"] == "assistant" and isinstance(blk["input"], dict)
            if blk["type"] == "tool_result":
                assert m["role"] == "user"
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        if uses:
            nxt = msgs[k + 1]["content"]
            lead = [b["tool_use_id"] for b in nxt[:len(uses)] if b["type"] == "tool_result"]
            assert sorted(lead) == sorted(uses), "results lead the next user turn"
        if m["role"] == "user" and k > 0:
            results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
            prev = [b["id"] for b in msgs[k - 1]["content"] if b["type"] == "tool_use"]
            assert set(results) <= set(prev)


@pytest.mark.parametrize("name", FILES)
def test_export_passes_both_apis_structural_rules(name):
    src = corpus(name)
    check_openai(json.loads(run("export", src, "--to", "openai").stdout))
    check_anthropic(json.loads(run("export", src, "--to", "anthropic").stdout))


@pytest.mark.parametrize("name", ["claude-code_spotter_491e126e_session.jsonl", "tau-bench_gpt-4o-airline_idx173_task23.json"])
def test_export_after_drop_and_compact(name, tmp_path):
    src = corpus(name)
    scored = run("score", src, "--embedder", "keyword", "--query", "unrelated").stdout
    kept = run("drop", "--cutoff", "0.5", input=scored).stdout
    compacted = run("compact", "-", "--budget", "3000", "--force", "--workspace", tmp_path, input=kept).stdout
    for target, check in (("openai", check_openai), ("anthropic", check_anthropic)):
        body = json.loads(run("export", "-", "--to", target, input=compacted).stdout)
        check(body)
        text = json.dumps(body)
        assert "[CONTEXT SUMMARY]" in text
    oa = json.loads(run("export", "-", "--to", "openai", input=compacted).stdout)["messages"]
    assert all("[CONTEXT SUMMARY]" not in (m.get("content") or "") for m in oa if m["role"] == "system")


def _essence(recs):
    """What a round trip must keep: roles, text, pairing (ids and order)."""
    out = []
    for r in recs:
        if r["kind"] == "event" or "thinking" in (r.get("flags") or []):
            continue
        out.append((r["role"], (r.get("content") or "").strip(), tuple(c["id"] for c in r.get("tool_calls") or []),
                    r.get("tool_call_id")))
    return out


@pytest.mark.parametrize("target", ["openai", "anthropic"])
def test_round_trip_keeps_roles_text_and_pairing(target, tmp_path):
    for src in (corpus("tau-bench_gpt-4o-airline_idx173_task23.json"), str(FIXTURES / "anthropic_messages.json"),
                corpus("swe-agent_function_calling_simple.traj")):
        first = run("import", src).records()
        body = run("export", src, "--to", target).stdout
        p = tmp_path / f"body-{target}.json"
        p.write_text(body)
        again = run("import", p, "--from", target).records()
        a, b = _essence(first), _essence(again)
        assert [x for x in a if x[0] != "system"] == [x for x in b if x[0] != "system"]
        assert "\n\n".join(x[1] for x in a if x[0] == "system") == "\n\n".join(x[1] for x in b if x[0] == "system")


def test_anthropic_import_keeps_system_blocks_and_pairing():
    recs = run("import", FIXTURES / "anthropic_messages.json").records()
    assert recs[0]["role"] == "system" and recs[0]["content"].startswith("You are a coding agent")
    calls = [c for r in recs for c in r.get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls] == ["read_file", "read_file", "run", "edit_file"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "tests/test_login.py"}
    tools = [r for r in recs if r["role"] == "tool"]
    assert [t["tool_call_id"] for t in tools] == ["toolu_01", "toolu_02", "toolu_03", "toolu_04"]
    assert "error" in tools[2]["flags"] and "missing_result" in tools[3]["flags"]
    assert any("thinking" in (r.get("flags") or []) for r in recs)
    user = [r for r in recs if r["role"] == "user"]
    assert user[-1]["content"] == "Also keep the old field name working.\n[image]"
    # the tool_result of toolu_03 and the user's text share one message; the result comes first
    assert recs.index(tools[2]) < recs.index(user[-1])
    assert all(r["group"] == recs[recs.index(tools[0]) - 1]["group"] for r in tools[:2])


def test_json_array_of_ctx_records_keeps_ts_and_sessions(tmp_path):
    recs = run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).records()[:10]
    p = tmp_path / "records.json"
    p.write_text(json.dumps(recs))
    back = run("import", p).records()
    assert [r["ts"] for r in back] == [r["ts"] for r in recs]
    assert {r["session"] for r in back} == {r["session"] for r in recs}


def test_prompt_build_messages_uses_the_same_renderer(tmp_path, ctx_home):
    src = corpus("tau-bench_gpt-4o-airline_idx173_task23.json")
    kept = tmp_path / "kept.jsonl"
    kept.write_text(run("import", src).stdout)
    body = json.loads(run("prompt", "build", "--format", "messages", "--records", kept).stdout)
    check_openai(body)
    assert body["messages"][0]["role"] == "system"


def test_an_ambiguous_document_names_its_candidates(tmp_path):
    p = tmp_path / "amb.json"
    p.write_text(json.dumps({"history": [{"role": "user", "content": "a"}], "traj": [{"role": "user", "content": "b"}]}))
    res = run("import", p)
    assert res.code == 1 and f"{p}: ambiguous document: it could be swe-agent or tau-bench" in res.stderr
    assert run("import", p, "--from", "tau-bench").code == 0
