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
