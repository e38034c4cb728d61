"""Import fidelity on every corpus file: counts from an independent reader written here (not
ctx's importer), pairing that never lies, no orphans after import / truncate / drop, the
artifact trail of aider and SWE-agent, and Tasks that are requests."""
import ast
import collections
import json
import os
import re

import pytest

from conftest import CORPUS_FILES, CORPUS as _CORPUS, corpus, run

CORPUS = str(_CORPUS)
FILES = CORPUS_FILES
WRAPPERS = ("<task-notification>", "<local-command", "<command-name>", "<command-message>", "[Request interrupted",
            "Caveat: The messages below", "<system-reminder>", "Your task is to create a detailed summary")


def count_claude_code(path):
    mids, think, calls, results, users, meta = set(), set(), 0, 0, 0, 0
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        m = d.get("message") or {}
        if d.get("type") == "assistant":
            mids.add(m.get("id"))
            for b in m.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    calls += 1
                if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"):
                    think.add(m.get("id"))
        elif d.get("type") == "user":
            c = m.get("content")
            texts = [c] if isinstance(c, str) else [b.get("text", "") for b in c or [] if b.get("type") == "text"]
            results += sum(1 for b in (c if isinstance(c, list) else []) if b.get("type") == "tool_result")
            text = "\n".join(texts)
            if text.strip() and not d.get("isCompactSummary"):
                users += 1
                has_args = re.search(r"<command-args>\s*[^<\s]", text)  # `<command-args></command-args>` is none
                if d.get("isMeta") or (text.lstrip().startswith(WRAPPERS) and not has_args):
                    meta += 1
        elif d.get("type") == "queue-operation" and d.get("operation") == "enqueue" and \
                isinstance(d.get("content"), str) and d["content"].strip():
            users += 1  # a message typed while the agent worked is a user record (a notification, or the
            c = d["content"].strip()    # client's entry for a background task, a JSON object: meta)
            meta += c.startswith(WRAPPERS) or c.startswith("{") and '"tool_use_id"' in c
    return {"assistant": len(mids) + len(think), "tool": max(calls, results), "user": users, "calls": calls,
            "meta": meta}


def count_codex(path):
    calls = outs = users = meta = assistant = reasoning = system = 0
    for line in open(path, encoding="utf-8"):
        p = json.loads(line)["payload"]
        t = p.get("type")
        if t in ("function_call", "custom_tool_call", "local_shell_call"):
            calls += 1
        elif t in ("function_call_output", "custom_tool_call_output"):
            outs += 1
        elif t == "message":
            if p["role"] == "user":
                users += 1
                text = "".join(c.get("text", "") for c in p["content"])
                meta += text.lstrip().startswith(("<environment_context>", "<user_instructions>"))
            elif p["role"] == "assistant":
                assistant += 1
            else:
                system += 1
        elif t == "reasoning" and any(s.get("text") for s in p.get("summary") or []):
            reasoning += 1
    return {"calls": calls, "tool": max(calls, outs), "user": users, "meta": meta, "system": system,
            "assistant_min": assistant + reasoning}


def count_swe(path):
    d = json.load(open(path, encoding="utf-8"))
    roles = collections.Counter(h["role"] for h in d["history"])
    calls = 0
    for h in d["history"]:
        tc = h.get("tool_calls")
        if isinstance(tc, str):
            tc = ast.literal_eval(tc)
        calls += len(tc or []) if h["role"] == "assistant" else 0
        if h["role"] == "assistant" and not tc and h.get("action"):
            calls += 1
    demo = sum(1 for h in d["history"] if str(h.get("is_demo")) == "True")
    if roles["tool"]:
        return {"assistant": roles["assistant"], "tool": roles["tool"], "user": roles["user"], "calls": calls}
    # thought/action: every user turn after the task is the observation of the action before it
    observations = roles["user"] - demo - 1
    return {"assistant": roles["assistant"], "tool": calls, "user": demo + 1, "calls": calls,
            "observations": observations}


def count_aider(path):
    text = open(path, encoding="utf-8").read()
    return {"commits": len(re.findall(r"^> Commit [0-9a-f]{7,}", text, re.M)),
            "applied": len(re.findall(r"^> Applied edit to", text, re.M)),
            "blocks": len(re.findall(r"^<{7} SEARCH", text, re.M))}


def imported(name):
    res = run("import", corpus(name))
    assert res.code == 0, res.stderr
    return res.records()


def messages(recs, role, flag=None):
    return [r for r in recs if r["kind"] == "message" and r.get("role") == role
            and (flag is None or flag in (r.get("flags") or []))]


def assert_paired(recs):
    calls = [c["id"] for r in recs for c in r.get("tool_calls") or []]
    results = [r["tool_call_id"] for r in recs if r.get("role") == "tool"]
    assert len(calls) == len(set(calls)), "call ids are unique after import"
    assert sorted(calls) == sorted(results), "every call has exactly one result and every result a call"
    by_group = collections.defaultdict(set)
    for r in recs:
        for c in r.get("tool_calls") or []:
            by_group[r["group"]].add(c["id"])
    for r in recs:
        if r.get("role") == "tool":
            assert r["tool_call_id"] in by_group[r["group"]], "a result sits in its call's group"


@pytest.mark.parametrize("name", [f for f in FILES if f.startswith("claude-code")])
def test_claude_code_counts_from_an_independent_reader(name):
    want = count_claude_code(corpus(name))
    recs = imported(name)
    assert len(messages(recs, "assistant")) == want["assistant"]
    assert len(messages(recs, "tool")) == want["tool"]
    assert len(messages(recs, "user")) == want["user"]
    assert len(messages(recs, "user", "meta")) == want["meta"]
    assert sum(len(r.get("tool_calls") or []) for r in recs) == want["calls"]
    assert_paired(recs)


def test_codex_desktop_counts_and_the_unanswered_last_call():
    name = "codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl"
    want = count_codex(corpus(name))
    recs = imported(name)
    assert want == {"calls": 20, "tool": 20, "user": 2, "meta": 1, "system": 1, "assistant_min": 4}
    assert sum(len(r.get("tool_calls") or []) for r in recs) == want["calls"]
    assert len(messages(recs, "tool")) == want["tool"]
    assert len(messages(recs, "tool", "missing_result")) == 1  # the session stops before its last output
    assert len(messages(recs, "user")) == want["user"] and len(messages(recs, "user", "meta")) == want["meta"]
    assert len(messages(recs, "system")) == want["system"]
    assert len(messages(recs, "tool", "error")) == 4  # "Exit code: 1" / 124 outputs
    names = collections.Counter(c["function"]["name"] for r in recs for c in r.get("tool_calls") or [])
    assert names == {"shell_command": 19, "update_plan": 1}
    assert_paired(recs)


@pytest.mark.parametrize("name", [f for f in FILES if f.startswith("swe-agent")])
def test_swe_agent_both_styles_pair_every_action(name):
    want = count_swe(corpus(name))
    recs = imported(name)
    assert len(messages(recs, "assistant")) == want["assistant"]
    assert len(messages(recs, "tool")) == want["tool"]
    assert len(messages(recs, "user")) == want["user"]
    assert sum(len(r.get("tool_calls") or []) for r in recs) == want["calls"]
    assert not messages(recs, "user", "orphan_result")
    assert_paired(recs)


def test_swe_agent_thought_action_observations_become_results():
    recs = imported("swe-agent_pydicom__pydicom-1458.traj")
    want = count_swe(corpus("swe-agent_pydicom__pydicom-1458.traj"))
    real = [r for r in messages(recs, "tool") if "missing_result" not in (r.get("flags") or [])]
    assert len(real) == want["observations"] == 11
    assert len(messages(recs, "tool", "missing_result")) == 1  # the final `submit` has no observation
    first = recs[[r["role"] for r in recs].index("assistant")]
    assert first["tool_calls"][0]["function"]["name"] == "create"


def test_aider_actions_become_paired_calls():
    name = "aider_Aquaticat_Monochromatic.aider.chat.history.md"
    want = count_aider(corpus(name))
    recs = imported(name)
    calls = [c for r in recs for c in r.get("tool_calls") or []]
    names = collections.Counter(c["function"]["name"] for c in calls)
    assert names["aider_commit"] == want["commits"] == 43
    applied = [r for r in messages(recs, "tool") if r["content"].startswith("Applied edit to")]
    assert len(applied) == want["applied"] == 20
    assert names["edit"] >= want["blocks"] - 7  # blocks echoed inside aider's own error output are not edits
    assert_paired(recs)
    for r in messages(recs, "user"):
        if r["content"].strip().startswith(("/add", "/exit", "/drop")) or "(Y)es/(N)o" in r["content"]:
            assert "meta" in r.get("flags", []) or "(Y)es" not in r["content"]


def test_aiders_report_of_a_block_that_did_not_match_is_aiders_output_not_the_models_words():
    recs = imported("aider_Aquaticat_Monochromatic.aider.chat.history.md")
    said = [r["content"] for r in messages(recs, "assistant")]
    assert not any("SearchReplaceNoExactMatch" in c or "The SEARCH section must exactly match" in c for c in said)
    out = [r["content"] for r in recs if "tool_output" in (r.get("flags") or [])]
    assert sum("SearchReplaceNoExactMatch" in c for c in out) >= 3        # each of them, as aider's output
    assert any(c.startswith("You are correct.") for c in said)             # the model's answer after it is its own


def test_artifact_trail_of_aider_and_swe_agent_lists_edited_files(tmp_path):
    def files(name):
        res = run("compact", corpus(name), "--budget", "300", "--force", "--workspace", tmp_path / name)
        assert res.code == 0, res.stderr
        from ctxkit.core import context_md as C

        return C.files_of(C.parse((tmp_path / name / "CONTEXT.md").read_text()).sections.get("Files", []))

    aider = files("aider_Aquaticat_Monochromatic.aider.chat.history.md")
    assert "CONVENTIONS.md" in aider and "packages/module/es/src/iterables.union.ts" in aider
    swe = files("swe-agent_pydicom__pydicom-1458.traj")
    assert swe.get("pydicom/pixel_data_handlers/numpy_handler.py") == "modified" and "reproduce_bug.py" in swe
    fc = files("swe-agent_function_calling_simple.traj")
    assert any(p.endswith("missing_colon.py") for p in fc)


@pytest.mark.parametrize("name", FILES)
def test_no_orphans_after_import_truncate_and_drop(name, tmp_path):
    src = corpus(name)
    recs = imported(name)
    assert_no_orphans(recs)
    total = int(run("count", src).stdout)
    for share in (0.05, 0.1, 0.25, 0.5, 0.9):
        out = run("truncate", src, "--budget", str(max(50, int(total * share))))
        assert out.code == 0, out.stderr
        assert_no_orphans(out.records())
    scored = run("score", src, "--embedder", "keyword", "--query", "error test file").stdout
    for cutoff in ("0.2", "0.4", "0.6"):
        out = run("drop", "--cutoff", cutoff, "--home", tmp_path / cutoff, input=scored)
        assert out.code == 0, out.stderr
        assert_no_orphans(out.records())


def assert_no_orphans(recs):
    calls = {c["id"] for r in recs for c in r.get("tool_calls") or []}
    results = {r["tool_call_id"] for r in recs if r.get("role") == "tool"}
    assert calls == results


TASKS = {  # read by hand in each file: the user's first request
    "claude-code_spotter_491e126e_session.jsonl": "websearch to learn how to fastest setup credo",
    "claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl": "Very thorough exploration.",
    "claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl": "Explore the Elixir/Phoenix project structure.",
    "claude-code_spotter_8463c716_session.jsonl": "Work on bead spotter-fum.",
    "claude-code_spotter_fa812bfe_session.jsonl": "Work on bead spotter-a0y.",
    "codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl": "help me apply for the agentic engineering grant",
    "swe-agent_pydicom__pydicom-1458.traj": "Pixel Representation attribute should be optional",
    "swe-agent_function_calling_simple.traj": "SyntaxError: invalid syntax",
    "tau-bench_gpt-4o-airline_idx173_task23.json": "Hi! I need some help with adjusting my flight reservation.",
    "aider_Aquaticat_Monochromatic.aider.chat.history.md": "What can you say about this package?",
}
LATEST = {
    "claude-code_spotter_491e126e_session.jsonl": "create the beads",
    "claude-code_spotter_fa812bfe_session.jsonl": "continue until all are done",
    "aider_Aquaticat_Monochromatic.aider.chat.history.md": "In CONVENTIONS.md reorder all the lists.",
}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_task_is_the_request_read_by_hand(name, tmp_path):
    from ctxkit.core import context_md as C

    res = run("compact", corpus(name), "--budget", "300", "--force", "--workspace", tmp_path)
    assert res.code == 0, res.stderr
    ctx = C.parse((tmp_path / "CONTEXT.md").read_text())
    assert ctx.task.startswith(TASKS[name]), ctx.task
    if name in LATEST:
        assert ctx.latest.startswith(LATEST[name]), ctx.latest
    for t in (ctx.task, ctx.latest):
        assert not t.startswith(("/", "<", "[Request interrupted")) and "###STOP###" not in t
