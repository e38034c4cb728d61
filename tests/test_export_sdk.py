"""Exports the APIs accept: every corpus file, as is and truncated, checked against the official
SDKs' request types (anthropic, openai) and the pairing rules; markers are never the system prompt,
tool ids are valid for the API, and nothing to send is an error, never an empty request."""
import json
import os
import re

import pytest

from conftest import CORPUS_FILES, CORPUS, corpus, run
from sdk_types import anthropic_problems, openai_problems
from test_export import check_anthropic, check_openai

pytest.importorskip("anthropic", reason="the anthropic SDK is a test extra (pip install -e '.[test]')")
pytest.importorskip("openai", reason="the openai SDK is a test extra (pip install -e '.[test]')")

FILES = CORPUS_FILES
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _ids(body, target):
    if target == "anthropic":
        return [(b.get("id") or b.get("tool_use_id")) for m in body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b["type"] in ("tool_use", "tool_result")]
    return [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []] + \
        [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]


def check(body, target):
    problems = anthropic_problems(body) if target == "anthropic" else openai_problems(body)
    assert problems == [], problems[:5]
    (check_anthropic if target == "anthropic" else check_openai)(body)
    assert body["messages"], "a request always has messages"
    bad = [i for i in _ids(body, target) if not ANTHROPIC_ID.match(i or "")]
    assert bad == [], bad[:5]
    system = body.get("system") if target == "anthropic" else \
        next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    assert "Conversation compacted" not in (system or "")


@pytest.mark.parametrize("target", ["anthropic", "openai"])
@pytest.mark.parametrize("name", FILES)
def test_every_export_passes_the_sdks_request_types_as_is_and_truncated(name, target):
    src = corpus(name)
    res = run("export", src, "--to", target)
    assert res.code == 0, res.stderr
    check(json.loads(res.stdout), target)
    short = run("truncate", src, "--budget", "3000", "--strategy", "middle_out")
    assert short.code == 0, short.stderr
    res = run("export", "-", "--to", target, "--system", "You are terse.", input=short.stdout)
    assert res.code == 0, res.stderr
    body = json.loads(res.stdout)
    check(body, target)
    system = body["system"] if target == "anthropic" else body["messages"][0]["content"]
    assert system.startswith("You are terse.")


def test_a_compaction_marker_never_becomes_the_system_prompt():
    src = corpus("claude-code_spotter_8463c716_session.jsonl")
    assert any("compact_boundary" in (r.get("flags") or []) for r in run("import", src).records())
    a = json.loads(run("export", src, "--to", "anthropic").stdout)
    assert "system" not in a or "Conversation compacted" not in a["system"]
    a = json.loads(run("export", src, "--to", "anthropic", "--system", "Be brief.").stdout)
    assert a["system"] == "Be brief."
    o = json.loads(run("export", src, "--to", "openai", "--system", "Be brief.").stdout)
    assert o["messages"][0] == {"role": "system", "content": "Be brief."}
    assert all("Conversation compacted" != m.get("content") for m in o["messages"])


def test_repeated_tool_ids_are_rewritten_the_same_on_call_and_result(tmp_path):
    # the same id used twice (agents reuse them): the importer tells the two apart as `call_1~2`
    turns = []
    for i in range(2):
        turns += [{"role": "user", "content": f"read file {i}"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": f"contents {i}"}]
    turns.append({"role": "assistant", "content": "done", "tool_calls": [
        {"id": "fc.1/a", "type": "function", "function": {"name": "x", "arguments": "{}"}}]})
    turns.append({"role": "tool", "tool_call_id": "fc.1/a", "content": "ok"})
    p = tmp_path / "convo.json"
    p.write_text(json.dumps({"messages": turns}))
    recs = run("import", p).records()
    assert [c["id"] for r in recs for c in r.get("tool_calls") or []][:2] == ["call_1", "call_1~2"]
    for target in ("anthropic", "openai"):
        body = json.loads(run("export", p, "--to", target).stdout)
        check(body, target)
        ids = _ids(body, target)
        assert len(set(ids)) == 3 and all(ids.count(i) == 2 for i in ids)  # each call and its result agree
    a = json.loads(run("export", p, "--to", "anthropic").stdout)["messages"]
    assert [b["tool_use_id"] for b in a[4]["content"] if b["type"] == "tool_result"] == \
        [b["id"] for b in a[3]["content"] if b["type"] == "tool_use"]


def test_nothing_to_send_is_an_error_not_an_empty_request(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"v": 1, "kind": "event", "id": "e1", "session": "s", "role": "system",
                                  "content": "", "tokens": 0}) + "\n")
    for target in ("anthropic", "openai"):
        res = run("export", events, "--to", target)
        assert res.code == 1 and res.stdout == ""
        assert "nothing to send" in res.stderr and str(events) in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    # only a system prompt: OpenAI takes it, Anthropic needs a turn
    system = tmp_path / "system.jsonl"
    system.write_text(json.dumps({"v": 1, "kind": "message", "id": "s1", "session": "s", "role": "system",
                                  "content": "You are terse."}) + "\n")
    assert run("export", system, "--to", "openai").code == 0
    assert run("export", system, "--to", "anthropic").code == 1
    # no input at all is not an error (an empty pipeline stage)
    assert run("export", "-", "--to", "openai", input="").code == 0


def test_truncate_keeps_the_last_turn_not_an_event_in_its_place():
    src = corpus("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")
    full = run("import", src).records()
    last_turn = [r for r in full if r["kind"] == "message" and r["role"] != "system"][-1]
    res = run("truncate", src, "--budget", "3000", "--strategy", "middle_out")
    kept = res.records()
    assert last_turn["id"] in {r["id"] for r in kept}
    assert any(r["kind"] == "message" and r["role"] != "system" for r in kept)
    body = json.loads(run("export", "-", "--to", "anthropic", input=res.stdout).stdout)
    assert body["messages"] and body["messages"][-1]["content"]
