"""The state at the cut, as a successor needs it first: the open blocker diagnosed when the records
show its cause, nothing stale read as current, the rules that govern the next action kept, the
agent's unproven beliefs attributed, where the work happens, and the task as the user meant it.

Each corpus test cuts a session where a reader found the fault (the same cut points and the same
4,000-token budget as the review that found them) and asserts what the records at the cut prove,
read by hand; the unit tests pin each rule on records made up for it."""
import functools
import json
import re

import pytest

from conftest import corpus, run

CUTS = {"claude-code_spotter_491e126e_session.jsonl": 0.7, "claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl": 0.6,
        "codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl": 0.7, "swe-agent_pydicom__pydicom-1458.traj": 0.6,
        "tau-bench_gpt-4o-airline_idx173_task23.json": 0.6, "aider_Aquaticat_Monochromatic.aider.chat.history.md": 0.6,
        "claude-code_spotter_8463c716_session.jsonl": 0.3, "claude-code_spotter_fa812bfe_session.jsonl": 0.25}


def cut_records(name: str) -> list[dict]:
    res = run("import", corpus(name))
    assert res.code == 0, res.stderr
    recs = res.records()
    cut = int(len(recs) * CUTS[name])
    while 0 < cut < len(recs) and recs[cut].get("group") and recs[cut].get("group") == recs[cut - 1].get("group"):
        cut += 1
    return recs[:cut]


@functools.lru_cache(maxsize=None)  # one compaction per session: the text depends on the records alone
def summary_at_cut(name: str) -> str:
    span = "".join(json.dumps(r) + "\n" for r in cut_records(name))
    res = run("compact", "--force", "--budget", "4000", input=span, env={"CTX_SUMMARY_TARGET_TOKENS": "4000"})
    assert res.code == 0, res.stderr
    return next(r for r in res.records() if r["kind"] == "summary")["content"]


def call(i, name, args):
    return {"v": 1, "kind": "message", "id": f"a{i}", "role": "assistant", "content": "",
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def result(i, text, failed=False):
    return {"v": 1, "kind": "message", "id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": text,
            **({"flags": ["error"]} if failed else {})}


def section(text: str, name: str) -> str:
    m = re.search(rf"(?ms)^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text)
    return m.group(1) if m else ""


# --- the open blocker, diagnosed ----------------------------------------------------------------------

def test_a_refused_line_range_edit_says_the_range_that_takes_the_old_line_in():
    text = summary_at_cut("swe-agent_pydicom__pydicom-1458.traj")
    cur, nxt = section(text, "Current work"), section(text, "Next step")
    # two refusals with two different reasons: each said, in order, not merged into one
    assert "SyntaxError: unmatched ']', then SyntaxError: unmatched ')'" in cur
    # the preview shows the original line 296 `)` kept after the replaced range 287:295
    assert "the range 287:295 stops before line 296 `)`" in cur
    assert "Redo the rejected edit of `pydicom/pixel_data_handlers/numpy_handler.py` as `edit 287:296`" in nxt
    # the replacement text is not in the summary: what it does to the original lines is
    assert "against the original lines 287–296 it removes `'PixelRepresentation',` after `'Columns',`; adds" in nxt
    # the words about `]` came before the last refusal: they are marked so
    assert "said before its last action (`edit 287:295`)" in cur
    assert "replaced lines 1:1" not in text  # a file the span created has no lines to replace


def test_a_half_applied_change_that_no_longer_builds_is_named_with_its_line():
    text = summary_at_cut("claude-code_spotter_fa812bfe_session.jsonl")
    cur, nxt = section(text, "Current work"), section(text, "Next step")
    assert ("an edit removed `alias Spotter.Services.Tmux`, but `Tmux.pane_exists?(pane_id)` (line 135, as the span "
            "last saw the file) still uses it") in cur
    assert nxt.splitlines()[0].startswith("- Make `lib/spotter/services/active_session_registry.ex` build again before anything else")


def test_refused_and_half_applied_edits_are_read_from_the_records_only():
    from ctxkit.core.blockers import half_applied, range_fix

    read = "     1\u2192import os\n     2\u2192from pathlib import Path\n     3\u2192\n     4\u2192def f():\n     5\u2192    return Path('x')\n"
    recs = [call(0, "Read", {"file_path": "/p/a.py"}), result(0, read),
            call(1, "Edit", {"file_path": "/p/a.py", "old_string": "from pathlib import Path\n", "new_string": ""}),
            result(1, "The file /p/a.py has been updated successfully.")]
    assert half_applied(recs) == [("/p/a.py", "from pathlib import Path", "return Path('x')", 4)]  # line 5 before the edit
    # the use changed as well: nothing is half-applied
    recs += [call(2, "Edit", {"file_path": "/p/a.py", "old_string": "    return Path('x')", "new_string": "    return 'x'"}),
             result(2, "The file /p/a.py has been updated successfully.")]
    assert half_applied(recs) == []
    # a refused range edit whose replacement does not repeat a neighbouring line: no diagnosis
    out = ("This is the original code before your edit\n---\n[File: x.py]\n9:a = 1\n10:b = 2\n11:c = 3\n---\n")
    assert range_fix("edit 10:10\nb = 5\nend_of_edit", out) == ("", "")
    assert range_fix("edit 10:10\nb = 5\nc = 3\nend_of_edit", out)[0] == \
        "`edit 10:11` with the same replacement text (against the original lines 10–11 it `= 2` → `= 5`)"


# --- nothing stale as current ---------------------------------------------------------------------------

def test_checks_before_the_last_edits_are_not_read_as_passing_now():
    text = summary_at_cut("claude-code_spotter_fa812bfe_session.jsonl")
    step = section(text, "Step 1: spotter-a0y.1 — Add lifecycle hooks and active session registry (in progress, not committed)")
    assert "Checks, all run before the step's last edits and not since: `mix compile --warnings-as-errors`: passed" in step
    assert "Checks: `mix compile" not in text
    cur = section(text, "Current work")
    assert "Open error (from `mix credo --strict" in cur and "before the last edits; not run since)" in cur
    assert "Re-run `mix credo --strict" in section(text, "Next step")


def test_a_result_that_came_back_is_answered_not_worked_on():
    text = summary_at_cut("tau-bench_gpt-4o-airline_idx173_task23.json")
    nxt = section(text, "Next step")
    assert "has acted on the latest request (`calculate`) and has not answered the user yet" in nxt
    assert "was working on it" not in text


def test_the_last_words_say_when_they_were_said():
    text = summary_at_cut("claude-code_spotter_491e126e_session.jsonl")
    assert ("The agent's last words, said before its last 2 actions (Write `plan.md`, `ExitPlanMode`) and what they "
            "returned: \"Let me write the plan for your approval.\"") in section(text, "Current work")
    text = summary_at_cut("aider_Aquaticat_Monochromatic.aider.chat.history.md")
    cur = section(text, "Current work")
    # a sentence is not cut inside inline code, and "Here is the block:" is no state
    assert "The `// AI! We don't wanna have await in loop.` comment will be removed.\"" in cur
    assert "SEARCH/REPLACE" not in cur


def test_edits_with_no_recorded_result_are_no_change_and_later_commits_count():
    text = summary_at_cut("aider_Aquaticat_Monochromatic.aider.chat.history.md")
    heads = re.findall(r"^## (Step \d+: .*)$", text, re.M)
    assert heads and not [h for h in heads if "in progress, not committed" in h], heads


# --- the rules that govern the next action ------------------------------------------------------------

def test_a_command_that_only_files_work_items_is_followed_not_implemented():
    text = summary_at_cut("claude-code_spotter_491e126e_session.jsonl")
    assert section(text, "Task").startswith("Through the command `/handgemacht:create-beads` (Create beads (epic + tasks + "
                                            "dependencies) with a structured preview before execution); the request: websearch")
    cur, nxt = section(text, "Current work"), section(text, "Next step")
    assert "\"It does NOT write code, modify project files, or perform implementation.\"" in cur
    assert "Carry out the approved plan" not in nxt
    assert "By `/handgemacht:create-beads`'s own instructions the next phase is Phase 5: Create Beads (only after plan " \
           "approval): 1. Create the epic" in nxt
    assert "--parent=…" in nxt and "`bd dep add" in nxt
    # the bead id in the subagent's draft was never created
    assert "spotter-2qx, a draft id: no item was created with it" in section(text, "Sources")


def test_a_skill_read_from_its_file_keeps_its_rules_and_the_phase_the_work_is_in():
    text = summary_at_cut("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")
    cur, nxt = section(text, "Current work"), section(text, "Next step")
    assert "The work runs under the `apply-grant` skill" in cur and "never fabricate" in cur
    assert "https://superteam.fun/earn/grants/agentic-engineering" in cur
    assert "the work is in Phase 0 — Export session transcript" in cur  # the file's mangled dash put right
    assert "if its way fails" in nxt and "~/.codex/sessions/" in nxt


def test_the_policy_rules_the_request_touches_are_quoted():
    text = summary_at_cut("tau-bench_gpt-4o-airline_idx173_task23.json")
    nxt = section(text, "Next step")
    assert "Cabin class must be the same across all the flights in the same reservation" in nxt
    assert "Payment: If the flights are changed, the user needs to provide one gift card or credit card" in nxt
    assert "Refund" not in nxt and "Cancel flight" not in nxt


def test_a_work_items_constraints_and_the_agents_own_plan_for_it_are_kept():
    text = summary_at_cut("claude-code_spotter_8463c716_session.jsonl")
    cur, nxt = section(text, "Current work"), section(text, "Next step")
    keep = next(ln for ln in nxt.splitlines() if ln.startswith("- Keep to what `spotter-fum.2` says must hold"))
    assert "\"SessionLive scope only; do not edit `pane_view_live.ex`.\"" in keep
    assert "\"Keep existing transcript scroll sync IDs/attributes intact.\"" in keep
    assert "the text `Subagent transcript view coming soon.`" in keep
    plan = next(ln for ln in cur.splitlines() if ln.startswith("- The agent's own plan for this work"))
    assert "(1) Create `priv/static/assets/spotter.css`" in plan and "— done" in plan
    assert "(3) Update `session_live.ex` — not done yet" in plan and "`subagent_reference_clicked`" in plan
    assert "the `handgemacht:commit` skill failed" in nxt and "unknown revision" in nxt


def test_policy_lines_need_the_requests_words_not_one_shared_word():
    from ctxkit.core.guidance import policy_lines

    policy = ("# Policy\n\n- Be polite.\n\n## Orders\n\n- Change address: the address can be changed before shipping only.\n"
              "- Cancel order: an order can be cancelled within 24 hours.\n\n## Returns\n\n"
              "- Return window: items can be returned within 30 days of delivery.\n"
              "- Refund: refunds go to the original payment method.\n")
    recs = [{"v": 1, "kind": "message", "id": "s", "role": "system", "content": policy * 1 + "\n" + "x" * 400},
            {"v": 1, "kind": "message", "id": "u", "role": "user", "content": "Please change the address on my order."}]
    got = policy_lines(recs)
    assert got and got[0].startswith("Orders: \"Change address:") and not any("Return" in x for x in got)
    recs[1]["content"] = "Hello there."
    assert policy_lines(recs) == []


# --- where the work happens ----------------------------------------------------------------------------

def test_the_working_directory_and_branch_are_said():
    text = summary_at_cut("claude-code_spotter_fa812bfe_session.jsonl")
    assert ("Where the work happens: working directory `/home/USER/projects/spotter-worktrees/spotter-a0y`, "
            "git branch `spotter-a0y`.") in section(text, "Current work")
    text = summary_at_cut("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")
    cur = section(text, "Current work")
    assert "shell powershell" in cur and "Not available in this shell (the span tried them): `bash`" in cur
    # a path is whole or absent
    assert "rollout-2026-04-23T01-41-51-019db6d2-08f5-7241-b14a-c07031a9859e.jsonl" in text
    assert not re.search(r"019db6d2-08f5-7241-b …", text)


def test_claude_code_import_keeps_the_git_branch_when_it_changes():
    recs = run("import", corpus("claude-code_spotter_fa812bfe_session.jsonl")).records()
    branches = [r["meta"]["branch"] for r in recs if isinstance(r.get("meta"), dict) and r["meta"].get("branch")]
    assert branches == ["spotter-a0y"]


def test_upstream_and_changes_made_before_the_session_come_from_git_output():
    from ctxkit.core.environment import lines, read

    def bash(i, cmd):
        return call(i, "Bash", {"command": cmd})

    recs = [bash(0, "git status"), result(0, "On branch feat-x\nChanges not staged for commit:\n\tmodified:   .mcp.json\n"),
            {"v": 1, "kind": "message", "id": "e", "role": "assistant", "content": "", "tool_calls": [
                {"id": "c9", "type": "function", "function": {"name": "Edit", "arguments": json.dumps(
                    {"file_path": "/w/lib/a.ex", "old_string": "a", "new_string": "b"})}}]},
            result(9, "The file /w/lib/a.ex has been updated successfully."),
            bash(1, "git push"),
            result(1, "fatal: The current branch feat-x has no upstream branch.\nTo push the current branch and set the "
                      "remote as upstream, use\n\n    git push --set-upstream origin feat-x\n", failed=True)]
    p = read(recs)
    assert (p.branch, p.upstream, p.before) == ("feat-x", "", [".mcp.json"])
    said = " ".join(lines(p, pending_commit=True))
    assert "push with `git push --set-upstream origin feat-x`" in said and "leave them out of the commit" in said
    recs += [bash(2, "git push -u origin feat-x"), result(2, "branch 'feat-x' set up to track 'origin/feat-x'.")]
    assert read(recs).upstream
    # a later status: what the agent staged after seeing it, and what it left out
    recs += [bash(3, "git status"), result(3, "On branch feat-x\n\tmodified:   .mcp.json\n\tmodified:   .beads/issues.jsonl\n"
                                                "\tmodified:   lib/a.ex\n"),
             bash(4, "git add lib/a.ex .beads/issues.jsonl"), result(4, "")]
    p = read(recs)
    assert (p.left_out, p.staged_too) == ([".mcp.json"], [".beads/issues.jsonl"])


# --- the agent's beliefs and numbers, attributed ------------------------------------------------------

def test_an_unproven_cause_is_the_agents_belief_and_arithmetic_shows_its_numbers():
    text = summary_at_cut("claude-code_spotter_fa812bfe_session.jsonl")
    assert "The agent's belief (not verified in the span): Credo wants the alias but the compiler warns" in text
    assert "Noted: Credo wants the alias" not in text
    text = summary_at_cut("tau-bench_gpt-4o-airline_idx173_task23.json")
    acts = section(text, "Actions and results")
    assert ("Calculated by the agent: `282 - 130 + 187 - 180` = 159.0 (its numbers, as the records hold them: "
            "282: HAT072 prices business; 130: HAT072 prices economy") in acts
    assert "180: HXDUBJ flights HAT278 price" in acts
    # the options the searches found are kept, not only the one the agent quoted
    recs = section(text, "Customer records")
    assert "HAT278: departure 16:00:00" in recs and "economy 187, business 443" in recs


# --- the task --------------------------------------------------------------------------------------------

def test_the_task_is_the_goal_not_the_greeting_nor_the_first_of_repeated_questions():
    text = summary_at_cut("tau-bench_gpt-4o-airline_idx173_task23.json")
    task = section(text, "Task")
    assert task.startswith("Hi! I need some help with adjusting my flight reservation. I'd like to change my outgoing flight")
    assert "upgrade to business class and include 2 checked bags" in task
    text = summary_at_cut("aider_Aquaticat_Monochromatic.aider.chat.history.md")
    assert re.match(r"What can you say about this package\? \(asked \d+ times in different words\); then: Comment on my "
                    r"CONVENTIONS\.md", section(text, "Task"))
    # in watch mode the newest request came through an `AI!` comment in the code
    assert section(text, "Latest request").strip() == "(through an `AI!` comment in the code) We don't wanna have await in loop."


@pytest.mark.parametrize("first, later, want", [
    ("Hello!", ["I want to return the blue shoes I ordered last week."], "Hello! I want to return the blue shoes"),
    ("Fix the flaky login test in tests/test_auth.py", ["What's this?"], "Fix the flaky login test in tests/test_auth.py"),
    ("What's this repo?", ["What is this?", "Add a README section on installing"], "What's this repo? (asked 2 times"),
])
def test_task_statement(first, later, want):
    from ctxkit.core.requests import task_statement

    recs = [{"v": 1, "kind": "message", "id": f"u{k}", "role": "user", "content": t} for k, t in enumerate([first] + later)]
    assert task_statement(recs).startswith(want)


# --- an exploration cut before its report ------------------------------------------------------------

def test_an_exploration_cut_early_says_the_file_contents_are_not_kept():
    text = summary_at_cut("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    assert "re-read every file the report must quote in full before writing it" in section(text, "Next step")
    q4 = next(ln for ln in section(text, "Findings so far (no report yet)").splitlines() if ln.startswith("- Q4 "))
    assert "nothing read for it yet" not in q4 and "`lib/spotter_web/live/session_live.html.heex`" in q4
