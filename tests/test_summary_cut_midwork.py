"""Sessions cut in the middle of their work, as /compact usually cuts them: the corpus
transcripts other than the two judged ones, imported, cut at 70 % of their records (never
between a call and its result) and compacted at 30 % of the prefix's tokens. Each test asserts
what a successor must read under Current work / Next step for that kind of session, against
what the transcript shows at the cut (read by hand)."""
import json
import re

import pytest

from conftest import corpus, run


def cut_and_compact(name: str, share: float = 0.7) -> str:
    res = run("import", corpus(name))
    assert res.code == 0, res.stderr
    recs = res.records()
    cut = int(len(recs) * share)
    while cut < len(recs) and (recs[cut].get("role") == "tool" or recs[cut].get("tool_call_id")):
        cut += 1
    import json

    span = "".join(json.dumps(r) + "\n" for r in recs[:cut])
    tokens = int(run("count", "-", input=span).stdout.split()[-1])
    budget = max(2500, min(6000, int(tokens * 0.3)))
    res = run("compact", "--force", "--budget", str(budget), input=span,
              env={"CTX_SUMMARY_TARGET_TOKENS": str(budget)})
    assert res.code == 0, res.stderr
    summ = next(r for r in res.records() if r["kind"] == "summary")
    return summ["content"]


def section(text: str, name: str) -> str:
    m = re.search(rf"(?ms)^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text)
    return m.group(1) if m else ""


def test_an_exploration_cut_before_its_report_says_what_each_file_read_showed():
    text = cut_and_compact("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    found = section(text, "Findings so far (no report yet)")
    # no report yet: nothing may claim a report left a question unanswered
    assert "not answered under its own heading" not in text

    def q(n):
        return next(line for line in found.splitlines() if line.startswith(f"- Q{n} "))
    # the findings, with file and line, not lists of the names each file defines
    q1 = q(1)
    assert "`lib/spotter_web/live/session_live.ex`:" in q1 and "`lib/spotter_web/live/subagent_live.ex`:" in q1
    assert "`rendered_lines = TranscriptRenderer.render(messages)` (line 123)" in q1
    assert 'both define `handle_event("transcript_text_selected")`' in q1  # what the two share
    assert "only `lib/spotter_web/live/subagent_live.ex` defines" in q1 and "`transcript_row_classes/1`" in q1
    q3 = q(3)  # the renderer's API with its docs, and how each LiveView calls it
    assert '`@spec render([map()], keyword()) :: [map()]` (line 24: "Renders a list of parsed messages' in q3
    assert "`opts = if session.cwd, do: [session_cwd: session.cwd], else: []` (line 404) then " \
           "`{session, messages, TranscriptRenderer.render(messages, opts)}` (line 405)" in q3
    q4 = q(4)  # the templates are inline in the LiveViews read, not "nothing read for it"
    assert "`lib/spotter_web/live/session_live.ex` holds its markup inline, in `def render(assigns) do` (line 477)" in q4
    assert "`lib/spotter_web/live/subagent_live.ex` holds its markup inline, in `def render(assigns) do` (line 185)" in q4
    assert 'def handle_event("transcript_text_selected", params, socket) do` (line 160; also ' \
           '`lib/spotter_web/live/subagent_live.ex` line 47' in q(5)  # the same line in both files, said once
    assert "`Hooks.TranscriptHighlighter = {` (line 71)" in q(6)
    assert 'phx-hook="TranscriptHighlighter"' in q(6)
    assert " and 47 more" not in found and "(775 lines" not in q1
    # the template that does not exist is not there, and no file list says it was read
    assert "Not there: `lib/spotter_web/live/session_live.html.heex`" in found
    assert "session_live.html.heex" not in section(text, "Files")
    nxt = section(text, "Next step")
    assert "write the report" in nxt.lower() and "full content" in nxt
    assert "nothing in the span is left half-done" not in nxt


def test_an_exploration_cut_midway_answers_by_question_from_the_files_read():
    text = cut_and_compact("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")
    found = section(text, "Findings so far (no report yet)")

    def q(n):
        return next(line for line in found.splitlines() if line.startswith(f"- Q{n} "))
    assert "`mix.exs`" in q(1) and "ash ~> 3.0" in q(1)  # the dependencies, with their versions
    assert "`config/config.exs`" in q(3) and "config :ash_oban" in q(3)  # the config files, by the folder's name
    # "any existing Ash domains": the lines that say there are none
    assert "ash_domains: []` (line 12)" in q(4) and "`domains: [],` (line 3)" in q(4)
    assert "`find spotter -type f | sort` shows in `spotter/`: `.formatter.exs`, `.gitignore`" in q(5)
    assert "`find priv -type f | sort` shows in `priv/`:" in q(6)
    # `ls -la spotter/ && ls -la priv/`: each folder's entries under its own question, not both under one
    assert "`ls -la spotter/` shows `.formatter.exs`, `.gitignore`;" in q(5) and "`repo`" not in q(5)
    assert "`ls -la priv/` shows `repo`, `static`" in q(6)
    assert "nothing in the files read so far bears on it" not in found


def test_a_plan_approved_at_the_cut_is_the_current_work_and_the_commands_next_phase_the_next_step():
    text = cut_and_compact("claude-code_spotter_491e126e_session.jsonl")
    cur = section(text, "Current work")
    assert "`plan.md` was approved by the user" in cur
    assert "the command's next phase (Phase 5: Create Beads (only after plan approval)) has not started" in cur
    assert "Task 1: Install quality tools and configure Credo" in cur
    assert "Task 2: Add `mix quality` alias (depends on Task 1)" in cur
    assert "> -" not in cur  # the drafted bead's last line is not the agent's state
    nxt = section(text, "Next step")
    # the command only files work items: its own next phase comes now, not carrying the plan out
    assert "Carry out the approved plan" not in nxt
    assert "`/handgemacht:create-beads`'s own instructions the next phase is Phase 5: Create Beads" in nxt and "bd dep add" in nxt
    assert "It does NOT write code" in cur
    src = section(text, "Sources")
    assert "<https://github.com/bradleygolden/claude-marketplace-elixir>" in src
    assert "Draft beads for linting setup" in src


def test_a_look_around_that_failed_is_no_error_and_what_the_look_arounds_showed_is_kept():
    text = cut_and_compact("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")
    assert "history.jsonl" not in section(text, "Errors")
    # what the look-arounds found, as conclusions, not the probes with their raw output
    found = section(text, "Found since the last change")
    assert "- `bash` is not available in this shell" in found
    assert "- `C:\\Users\\kunal\\.codex\\history.jsonl` does not exist" in found
    assert "- `C:\\Users\\kunal\\.codex\\skills\\apply-grant` and `C:\\Users\\kunal\\.agents\\skills\\apply-grant` " \
           "each hold `export-session.sh`, `openai.yaml`, `SKILL.md`" in found
    assert "the newest file under `C:\\Users\\kunal\\.codex\\sessions`: `C:\\Users\\kunal\\.codex\\sessions\\2026\\04\\23\\" \
           "rollout-2026-04-23T01-41-51-019db6d2-08f5-7241-b14a-c07031a9859e.jsonl`" in found
    assert "nothing under `C:\\Users\\kunal\\.claude\\projects` matches `*.jsonl`" in found
    # a script read says what running it does
    assert "`cp \"$session_file\" \"$output_dir/codex-session.jsonl\"` (line 60)" in found
    assert "Get-ChildItem" not in found and "entries:" not in found
    assert "Plan step in progress: Export AI session transcript(s)" in section(text, "Current work")


def test_edits_the_linter_rejected_are_redone_first():
    text = cut_and_compact("swe-agent_pydicom__pydicom-1458.traj")
    cur = section(text, "Current work")
    assert re.search(r"The last 3 edit attempts \(`edit 287:295` on `pydicom/pixel_data_handlers/numpy_handler.py`\) "
                     r"were rejected: SyntaxError", cur)
    nxt = section(text, "Next step").splitlines()
    assert nxt[0].startswith("- Redo the rejected edit of `pydicom/pixel_data_handlers/numpy_handler.py`")
    assert "commit" not in section(text, "Next step")  # SWE-agent submits
    assert "none applied after them yet" in section(text, "Fix")


def test_a_swe_agent_fix_not_run_yet_is_run_then_submitted():
    text = cut_and_compact("swe-agent_function_calling_simple.traj")
    assert "`tests/missing_colon.py` was edited" in section(text, "Current work")
    nxt = section(text, "Next step")
    assert "Run the reproduction" in nxt and "`submit`" in nxt
    assert "nothing in the span is left half-done" not in nxt


def test_a_failed_action_at_the_cut_is_told_and_not_retried():
    text = cut_and_compact("tau-bench_gpt-4o-airline_idx173_task23.json")
    cur = section(text, "Current work")
    assert "The session's last action failed" in cur and "gift card balance is not enough" in cur
    assert "payment_id=gift_card_6941833" in cur
    assert "Tell the user the action failed" in section(text, "Next step")


def test_a_span_ending_in_a_commit_waits_for_the_next_request():
    text = cut_and_compact("aider_Aquaticat_Monochromatic.aider.chat.history.md")
    nxt = section(text, "Next step")
    assert "ends in a commit (b487e0b)" in nxt and "`AI!` comment" in nxt
    assert "Continue with the latest request" not in nxt


@pytest.mark.parametrize("share", [0.4, 0.6, 0.9])
def test_other_cut_points_keep_the_sections_a_successor_reads_first(share):
    for name in ("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl",
                 "claude-code_spotter_491e126e_session.jsonl", "swe-agent_pydicom__pydicom-1458.traj"):
        text = cut_and_compact(name, share)
        assert section(text, "Current work").strip() or section(text, "Next step").strip(), (name, share)
        assert "not answered under its own heading" not in text or "report" in section(text, "Current work")


def test_a_check_still_running_in_the_background_at_the_cut_is_said_with_its_output_file():
    res = run("import", corpus("claude-code_spotter_8463c716_session.jsonl"))
    recs = res.records()
    k = next(i for i, r in enumerate(recs) if r.get("role") == "tool" and
             str(r.get("content") or "").startswith("Command running in background with ID: be613ab"))
    import json

    span = "".join(json.dumps(r) + "\n" for r in recs[:k + 1])
    out = run("compact", "--force", "--budget", "3000", input=span)
    assert out.code == 0, out.stderr
    text = next(r for r in out.records() if r["kind"] == "summary")["content"]
    cur = section(text, "Current work")
    assert "Still running in the background at the cut: `mix test test/spotter/services/transcript_renderer_test.exs" in cur
    assert "tasks/be613ab.output" in cur and "not read yet" in cur
    assert "tasks/be613ab.output" in section(text, "Next step")


def test_a_quoted_background_message_in_a_file_read_is_not_a_running_command():
    from ctxkit.core.focus import background_runs

    res = run("import", corpus("claude-code_spotter_8463c716_session.jsonl"))
    recs = res.records()
    assert background_runs(recs[:30]) == []  # record 17 is a transcript file read that quotes one


def _call(i, cmd):
    return {"v": 1, "kind": "message", "id": f"a{i}", "role": "assistant", "content": "",
            "tool_calls": [{"id": f"c{i}", "type": "function",
                            "function": {"name": "Bash", "arguments": json.dumps({"command": cmd})}}]}


def _result(i, text):
    return {"v": 1, "kind": "message", "id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": text}


def test_the_last_git_status_after_the_last_commit_wins_over_everything_committed():
    from ctxkit.core.focus import current_work_lines, for_span

    recs = [{"v": 1, "kind": "message", "id": "u", "role": "user", "content": "fix the parser and commit"},
            {"v": 1, "kind": "message", "id": "e", "role": "assistant", "content": "",
             "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "Edit", "arguments": json.dumps(
                 {"file_path": "/p/lib/parser.ex", "old_string": "def a, do: 1", "new_string": "def a, do: 2"})}}]},
            _result(0, "The file /p/lib/parser.ex has been updated successfully."),
            _call(1, "git commit -am 'fix parser'"), _result(1, "[main 1a2b3c4] fix parser\n 1 file changed"),
            _call(2, "git status"),
            _result(2, "On branch main\nChanges not staged for commit:\n\tmodified:   lib/lexer.ex\n")]
    story, f = for_span(recs)
    lines = current_work_lines(story, f)
    assert any("The last `git status` (after the last commit) still showed changed, not committed: `lib/lexer.ex`"
               in x for x in lines), lines
    assert not any("Everything changed in the span is committed" in x for x in lines)
    # a status before the commit is stale
    story, f = for_span(recs[:1] + recs[5:7] + recs[1:5])
    assert f.dirty == []


def test_words_said_before_the_latest_request_are_not_the_next_step():
    # cut at 60 %: the user asked to recalculate, the agent called `calculate` and has not answered yet
    text = cut_and_compact("tau-bench_gpt-4o-airline_idx173_task23.json", 0.6)
    assert "said before the latest request" in section(text, "Current work")
    nxt = section(text, "Next step")
    # the calculation came back: the agent is not "working on it", it has to answer
    assert "has acted on the latest request (`calculate`) and has not answered the user yet" in nxt
    assert "was working on it" not in nxt and "last words" not in nxt
