"""The summary on every kind of session (coding, SWE-agent, customer service, exploration
subagents, codex, aider), compacted at a 4,000-token budget as a user would: the summary keeps
its share of the budget, a finished session says it is finished, the task stays whole, each
kind keeps what a successor of that kind needs, and text is never mangled."""
import re

import pytest

from conftest import corpus, run

BUDGET = 4000


def compact(name: str, tmp_path, budget: int = BUDGET):
    res = run("compact", corpus(name), "--budget", str(budget), "--force", "--workspace", tmp_path)
    assert res.code == 0, res.stderr
    recs = res.records()
    summ = next(r for r in recs if r["kind"] == "summary" and "compaction" in r.get("flags", []))
    return recs, summ, res.stderr


def section(text: str, name: str) -> str:
    m = re.search(rf"(?ms)^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text)
    return m.group(1) if m else ""


# --- the summary's floor ----------------------------------------------------------------------

def test_a_long_final_report_is_condensed_so_the_summary_keeps_its_share(tmp_path):
    recs, summ, err = compact("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl", tmp_path)
    total = sum(r.get("tokens") or 0 for r in recs)
    assert total <= BUDGET, err
    last = [r for r in recs if r["kind"] == "message"][-1]
    assert last["role"] == "assistant" and "ctx recover --chunk-id" in last["content"]
    assert "condensed" in err and "over budget" not in err
    # the report's section starts stay in the kept message, its code blocks go first
    assert "SessionLive" in last["content"] and "SubagentLive" in last["content"]
    # and the whole message is back with ctx recover
    chunk = last["meta"]["condensed"]["chunk_id"]
    back = run("recover", "--chunk-id", chunk, "--session", last["session"])
    assert back.code == 0, back.stderr
    assert "Comprehensive Exploration Report" in back.stdout


def test_a_pinned_prompt_over_the_budget_is_said_and_does_not_starve_the_summary(tmp_path):
    recs, summ, err = compact("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl", tmp_path)
    total = sum(r.get("tokens") or 0 for r in recs)
    assert total > BUDGET  # the system prompt alone is over it, and is never cut
    assert re.search(rf"over budget: {total} tokens written against {BUDGET}: the pinned records", err), err
    text = summ["content"]
    # the summary is more than the task: where the work stands is there
    assert "## Current work" in text or "## Next step" in text
    assert summ["tokens"] > 300


# --- text is never mangled ----------------------------------------------------------------------

def test_double_underscores_in_paths_and_names_survive(tmp_path):
    _, summ, _ = compact("swe-agent_pydicom__pydicom-1458.traj", tmp_path)
    assert "pydicompydicom" not in summ["content"]


def test_unemphasize_keeps_identifiers_globs_and_code():
    from ctxkit.core.shorten import unemphasize

    assert unemphasize("see /pydicom__pydicom/x.py and __init__") == "see /pydicom__pydicom/x.py and __init__"
    assert unemphasize("**Template (lines 1-2):** inline") == "Template (lines 1-2): inline"
    assert unemphasize("glob **/*.ex then **NO** code") == "glob **/*.ex then NO code"
    assert unemphasize("`**kept**` and **gone**") == "`**kept**` and gone"


# --- the task kept verbatim -----------------------------------------------------------------------

@pytest.mark.parametrize("name,said", [
    ("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl",
     ("6. Any JS hooks related to transcript rendering", "Please provide the FULL content of each file")),
    ("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl",
     ("X profile: KunalSharm89327", "Target shipping deadline: 10th May 2026")),
    ("swe-agent_pydicom__pydicom-1458.traj", ("**Expected behavior**", "ds.PhotometricInterpretation")),
])
def test_the_task_is_kept_whole(name, said, tmp_path):
    _, summ, _ = compact(name, tmp_path)
    task = section(summ["content"], "Task")
    for s in said:
        assert s in task
    assert "…" not in task


def test_a_task_too_long_keeps_its_data_questions_and_constraints_first():
    from ctxkit.core.requests import task_brief

    prose = "This is background prose that explains a lot of history about the project and why. " * 6
    text = "\n".join(["Help me fill the grant form.", prose, "Telegram username: @someone", prose,
                      "1. What is the deadline?", prose, "Do not change the README.", prose,
                      "Wallet address: 74EJ"])
    out = task_brief(text, 300)
    assert len(out) <= 300
    assert out.startswith("Help me fill the grant form.")
    for s in ("Telegram username: @someone", "1. What is the deadline?", "Do not change the README.",
              "Wallet address: 74EJ"):
        assert s in out
    assert "background prose" not in out and "…" in out
    assert task_brief("short one\nline two", 300) == "short one line two"


# --- a finished session says so -------------------------------------------------------------------

@pytest.mark.parametrize("name,now,nxt", [
    ("swe-agent_function_calling_simple.traj",
     ("the patch was submitted", "`tests/missing_colon.py`", "`python tests/missing_colon.py` ran, printing `8.2`"),
     ("fix is submitted", "does not commit")),
    ("swe-agent_pydicom__pydicom-1458.traj",
     ("the patch was submitted", "Result: True", "not in the patch: `reproduce_bug.py`"), ("fix is submitted",)),
    ("tau-bench_gpt-4o-airline_idx173_task23.json",
     ("handed over to a human agent", "Transfer successful", "HXDUBJ"), ("transferred to a human agent",)),
    ("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl", ("delivered its report",), ("the report answers",)),
    ("claude-code_spotter_8463c716_session.jsonl",
     ("epic `spotter-fum`", "complete", "pushed", "`spotter-fum.5`", "filed for follow-up, not started"),
     ("Nothing of `spotter-fum` is left", "wait for the user")),
    ("claude-code_spotter_fa812bfe_session.jsonl",
     ("epic `spotter-a0y`", "pushed", "The last `git status` still showed changed, not committed: `.mcp.json`."),
     ("wait for the user",)),
])
def test_a_finished_session_says_it_is_finished(name, now, nxt, tmp_path):
    _, summ, _ = compact(name, tmp_path)
    text = summ["content"]
    cur, step = section(text, "Current work"), section(text, "Next step")
    for s in now:
        assert s in cur, (s, cur)
    for s in nxt:
        assert s in step, (s, step)
    assert "Continue with the latest request" not in step
    assert "next open item" not in step and "commit them" not in step
    assert "Would you like me to transfer" not in cur  # a stale question is not the state


def test_an_unfinished_session_is_not_called_finished(tmp_path):
    _, summ, _ = compact("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl", tmp_path)
    assert "Finished" not in section(summ["content"], "Current work")
    assert "Export AI session transcript" in section(summ["content"], "Next step")


def _call(i, name, args, result, flags=None):
    import json as _j

    call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": _j.dumps(args)}}
    res = {"v": 1, "kind": "message", "role": "tool", "tool_call_id": f"c{i}", "name": name, "content": result}
    if flags:
        res["flags"] = flags
    return [{"v": 1, "kind": "message", "role": "assistant", "content": "", "tool_calls": [call]}, res]


def test_outcome_needs_the_end_state_to_be_last():
    from ctxkit.core.outcome import detect

    task = [{"v": 1, "kind": "message", "role": "user", "content": "fix the bug in a.py"}]
    submitted = task + _call(1, "edit", {"command": "edit 1:1\nx = 1\nend_of_edit"}, "[File: a.py]") + \
        _call(2, "submit", {}, "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n-x = 0\n+x = 1\n")
    o = detect(submitted)
    assert o.kind == "submitted" and "`a.py` (+1 −1 lines)" in o.current[0]
    # an edit after the submission: the work went on
    assert detect(submitted + _call(3, "edit", {"command": "edit 2:2\ny\nend_of_edit"}, "ok")) is None
    # a transfer that failed is not an end
    failed = task + _call(1, "transfer_to_human_agents", {"summary": "s"}, "Error: not allowed")
    assert detect(failed) is None
    done = task + _call(1, "transfer_to_human_agents", {"summary": "s"}, "Transfer successful")
    assert detect(done).kind == "transferred"
    # a short closing remark after reads is not a report; an edit makes it not read-only
    reads = task + _call(1, "Read", {"file_path": "/w/a.py"}, "x = 0")
    assert detect(reads + [{"v": 1, "kind": "message", "role": "assistant", "content": "Done."}]) is None
    report = {"v": 1, "kind": "message", "role": "assistant", "content": "## Findings\n" + "a.py sets x = 0. " * 60}
    assert detect(reads + [report]).kind == "reported"
    assert detect(reads + _call(2, "Edit", {"file_path": "/w/a.py"}, "ok") + [report]) is None


# --- what each kind of session keeps ----------------------------------------------------------------

@pytest.mark.parametrize("name,kind", [
    ("swe-agent_pydicom__pydicom-1458.traj", "swe"), ("swe-agent_function_calling_simple.traj", "swe"),
    ("tau-bench_gpt-4o-airline_idx173_task23.json", "service"),
    ("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl", "explore"),
    ("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl", "explore"),
    ("aider_Aquaticat_Monochromatic.aider.chat.history.md", "aider"),
    ("claude-code_spotter_8463c716_session.jsonl", "coding"),
    ("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl", "coding"),
])
def test_the_kind_is_read_from_the_shape(name, kind):
    from ctxkit.core.kinds import shape

    assert shape(run("import", corpus(name)).records()) == kind


def test_a_swe_agent_fix_says_the_cause_and_the_change(tmp_path):
    _, summ, _ = compact("swe-agent_pydicom__pydicom-1458.traj", tmp_path)
    fix = section(summ["content"], "Fix")
    assert "Root cause" in fix and "'PixelRepresentation' as a required attribute" in fix
    assert "`pydicom/pixel_data_handlers/numpy_handler.py` lines 287–296" in fix
    assert "removed `'PixelRepresentation',`" in fix and "`if 'PixelData' in ds: required_elements.append('PixelRepresentation')`" in fix
    assert "3 edits rejected by the linter" in fix
    assert "commit" not in section(summ["content"], "Next step").replace("does not commit", "")
    _, summ, _ = compact("swe-agent_function_calling_simple.traj", tmp_path / "s")
    assert "`tests/missing_colon.py`: `-> float` → `-> float:`" in section(summ["content"], "Fix")


def test_a_customer_service_dialogue_keeps_the_customers_state(tmp_path):
    _, summ, _ = compact("tau-bench_gpt-4o-airline_idx173_task23.json", tmp_path)
    text = summ["content"]
    recs = section(text, "Customer records")
    for s in ("yara_garcia_1905", "certificate_2345996 (certificate, 150)", "gift_card_6941833 (gift_card, 152)",
              "gift_card_1646646 (gift_card, 200)", "HAT085", "HAT278/2024-05-22", "insurance yes"):
        assert s in recs, s
    assert "HAT072" in section(text, "Agreed with the customer") and "$159" in section(text, "Agreed with the customer")
    acts = section(text, "Actions and results")
    assert acts.count("update_reservation_flights(") == 4
    assert acts.count("FAILED: Error: gift card balance is not enough") == 3
    assert "payment_id=certificate_2345996)` → FAILED: Error: certificate cannot be used" in acts
    assert "cabin=business" in acts  # what the calls sent, to compare with what was agreed


@pytest.mark.parametrize("name,said", [
    ("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl",
     ("Work root: `/home/USER/projects/spotter-worktrees/spotter-dov`", "`lib/spotter_web/live/session_live.html.heex`",
      "no file matches `**/*subagent_live.html.heex`", "Q1 (", "Q6 (", "TranscriptHighlighter", "lines 400-458")),
    ("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl",
     ("spotter-worktrees/spotter-0rt", "Q4 (Any existing Ash domains or resources): Status: NONE", "v3.16.0", "~454 lines")),
])
def test_an_exploration_keeps_its_findings(name, said, tmp_path):
    _, summ, _ = compact(name, tmp_path)
    found = section(summ["content"], "Findings")
    for s in said:
        assert s in found, s
    assert "not answered" not in found


def test_aider_requests_by_comment_and_undo(tmp_path):
    _, summ, _ = compact("aider_Aquaticat_Monochromatic.aider.chat.history.md", tmp_path)
    said = section(summ["content"], "Aider requests and undo")
    assert "`AI!` comments" in said and "Add all missing TSDoc" in said and "after the latest typed request" in said
    assert "`/undo` removed commit 2bae9da" in said and "back at dd581c5" in said


def test_a_last_call_without_a_result_is_named(tmp_path):
    _, summ, _ = compact("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl", tmp_path)
    cur = section(summ["content"], "Current work")
    assert "The last call has no recorded result" in cur and "Get-ChildItem -Recurse -File" in cur
    from ctxkit.core.outcome import unfinished_call

    task = [{"v": 1, "kind": "message", "role": "user", "content": "list files"}]
    assert unfinished_call(task + _call(1, "Bash", {"command": "ls"}, "[no result was recorded for this call]",
                                        ["missing_result"])) == "ls"
    assert unfinished_call(task + _call(1, "Bash", {"command": "ls"}, "a.py")) is None
