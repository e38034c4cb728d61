"""What compaction writes reads as a summary a successor can act on, on every corpus transcript:
the records kept after it end in conversation (never an edit receipt, a search listing or a
stub), every Fact and Decision stands alone, the agent's own tooling failures are not project
errors, a definition an edit only carried as context is not said to have changed, and a new
file says the values it sets."""
import json
import os
import re

import pytest

from conftest import CORPUS_FILES, CORPUS, corpus, run
from ctxkit.core.episodes import FileChange, build, key_values, tooling_failure
from ctxkit.core.writeup import stands_alone

FILES = CORPUS_FILES
RECEIPT = re.compile(r"has been (?:updated|created) successfully|^Found \d+ files?\b|^No (?:files|matches) found")


def _compact(name, tmp_path, *extra):
    src = corpus(name)
    total = int(run("count", src).stdout)
    res = run("compact", src, "--budget", str(max(400, total // 10)), "--force", "--workspace", tmp_path, *extra)
    assert res.code == 0, res.stderr
    recs = res.records()
    summ = next(r for r in recs if r["kind"] == "summary" and "compaction" in r.get("flags", []))
    return recs, summ


def _section(text: str, name: str) -> list[str]:
    m = re.search(rf"(?ms)^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text)
    return [ln[2:] for ln in (m.group(1) if m else "").splitlines() if ln.startswith("- ")]


@pytest.mark.parametrize("name", FILES)
def test_the_records_kept_after_the_summary_end_in_conversation(name, tmp_path):
    recs, summ = _compact(name, tmp_path)
    after = [r for r in recs[recs.index(summ) + 1:] if r["kind"] in ("message", "stub")]
    if after:
        last = after[-1]
        assert last["kind"] == "message" and last["role"] != "tool", last
        assert not RECEIPT.search(last.get("content") or "")
    # a tool call kept raw has its result beside it
    calls = {c["id"] for r in after for c in (r.get("tool_calls") or [])}
    results = {r.get("tool_call_id") for r in after if r.get("role") == "tool"}
    assert results <= calls and calls <= results | {None}


@pytest.mark.parametrize("name", FILES)
def test_facts_and_decisions_stand_alone(name, tmp_path):
    _, summ = _compact(name, tmp_path)
    for sec in ("Facts", "Decisions"):
        for b in _section(summ["content"], sec):
            text = re.sub(r"^In step \d+[^:]*:\s*", "", b)
            assert not re.match(r"(?:It|This|That|These|They|Both|Those)\b", text), b
            assert stands_alone(text), b


@pytest.mark.parametrize("name", FILES)
def test_tooling_failures_are_not_project_errors(name, tmp_path):
    _, summ = _compact(name, tmp_path)
    text = summ["content"]
    for said in ("exceeds maximum allowed tokens", "File has not been read yet", "String to replace not found",
                 "Bash command failed for pattern", "doesn't want to proceed"):
        assert said not in text


def _claude_span_summary(tmp_path) -> dict:
    """ctx's summary record for the span Claude Code compacted in fa812bfe (up to its own summary),
    at the budget Claude's summary took."""
    recs = run("import", corpus("claude-code_spotter_fa812bfe_session.jsonl")).records()
    cut = next(i for i, r in enumerate(recs) if r["kind"] == "summary")
    src = tmp_path / "span.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs[:cut]))
    res = run("compact", src, "--budget", "3599", "--force", "--workspace", tmp_path)
    assert res.code == 0, res.stderr
    return next(r for r in res.records() if r["kind"] == "summary")


def test_the_last_searches_are_said_as_conclusions(tmp_path):
    summ = _claude_span_summary(tmp_path)
    work = _section(summ["content"], "Current work")
    assert any(b.startswith("Last check: searched `terminal_scrolled`") and "`lib/spotter_web/live/pane_view_live.ex`"
               in b for b in work), work
    assert "Found 1 file" not in summ["content"]


def _edit(n, path, old, new):
    return [{"v": 1, "kind": "message", "id": f"a{n}", "role": "assistant", "content": "",
             "tool_calls": [{"id": f"t{n}", "type": "function", "function": {
                 "name": "Edit", "arguments": json.dumps(
                     {"file_path": path, "old_string": old, "new_string": new})}}]},
            {"v": 1, "kind": "message", "id": f"r{n}", "role": "tool", "tool_call_id": f"t{n}", "name": "Edit",
             "content": f"The file {path} has been updated successfully."}]


def _changes(recs) -> dict:
    story = build(recs)
    return {fc.path: fc for ep in story.episodes for fc in ep.files.values()}


def test_a_definition_carried_as_context_is_not_changed():
    css_old = ".a {\n  color: red;\n}\n\n.thread {\n  margin: 0;\n}"
    css_new = ".a {\n  color: blue;\n}\n\n.hljs {\n  color: #333;\n}\n\n.thread {\n  margin: 0;\n}"
    ex_old = "  def handle_info(:tick, socket) do\n    {:noreply, socket}\n  end"
    ex_new = ("  def handle_info({:ping, %{id: id}}, socket) do\n    {:noreply, assign(socket, :id, id)}\n  end\n\n"
              "  def handle_info(:tick, socket) do\n    {:noreply, socket}\n  end")
    recs = [{"v": 1, "kind": "message", "id": "u", "role": "user", "content": "restyle"}]
    recs += _edit(1, "/w/a.css", css_old, css_new) + _edit(2, "/w/live.ex", ex_old, ex_new)
    fc = _changes(recs)
    assert fc["/w/a.css"].changed == [".a"] and ".hljs" in fc["/w/a.css"].added
    assert fc["/w/live.ex"].changed == []
    assert "handle_info({:ping, %{id}})" in fc["/w/live.ex"].describe()


def test_a_new_file_says_the_values_it_sets():
    text = ('defmodule Reg do\n  @sweep_interval 15_000\n  @doc "x"\n  def init(_) do\n'
            '    Phoenix.PubSub.subscribe(P, "activity")\n'
            '    Phoenix.PubSub.broadcast(P, "activity", {:activity, %{id: id, status: s}})\n  end\nend\n')
    vals = key_values(text, "lib/reg.ex")
    assert "@sweep_interval 15_000" in vals and not any(v.startswith("@doc") for v in vals)
    assert 'topic "activity" ← {:activity, %{id, status: s}}' in vals
    assert key_values('FOO="$(cat)"\n', "scripts/x.sh") == []
    fc = FileChange("lib/reg.ex", "created", values=vals)
    assert "sets `@sweep_interval 15_000`" in fc.describe()


def test_tooling_failures_are_told_apart():
    assert tooling_failure("Read", "File content (85812 tokens) exceeds maximum allowed tokens (25000).")
    assert tooling_failure("Edit", "<tool_use_error>String to replace not found in file.</tool_use_error>")
    assert tooling_failure("Skill", "Bash command failed for pattern")
    assert not tooling_failure("Bash", "** (CompileError) lib/a.ex:3: undefined function foo/0")


def test_the_plan_mode_file_is_not_project_work_and_plan_text_is_not_an_error(tmp_path):
    _, summ = _compact("claude-code_spotter_491e126e_session.jsonl", tmp_path)
    work = "\n".join(_section(summ["content"], "Current work"))
    assert "plan.md" not in work and "Uncommitted" not in work
    assert "Error from Credo" not in summ["content"]


def test_the_next_step_names_what_the_item_still_lacks_before_the_finish(tmp_path):
    # the item's tests and one Definition-of-Done point are untouched at the cut
    steps = _section(_claude_span_summary(tmp_path)["content"], "Next step")
    lacks = next(i for i, b in enumerate(steps) if b.startswith("Do what `spotter-a0y.4` still lacks"))
    finish = next(i for i, b in enumerate(steps) if b.startswith("Finish `spotter-a0y.4`"))
    assert lacks < finish
    assert "`test/spotter_web/live/session_live_test.exs`" in steps[lacks] and "`terminal_scrolled`" in steps[lacks]
