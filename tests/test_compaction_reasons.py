"""A summary that gives reasons, not debris (issue 18, the judge's Coverage and Usability faults):
an error's fix is said in the agent's own announcement of it instead of the fragments its edits
took out and put in, a check complaint the agent read from a hook ("The nesting comes from …") is
an error of its step, a choice the agent made and kept is quoted with its reason, a work item's own
"why" section says why a finished step was done, the items the steps are named for are one line,
and a few calls of one function added in a file are said once. Asserted on the corpus sessions
Claude Code compacted, at its budget, and on small inputs."""
import re

from ctxkit.core.episodes import Episode, FileChange, _lines_said, _whole, remedy
from ctxkit.core.writeup import choices
from conftest import corpus
from test_compaction_story import compact, section, span_of
from test_summary_story import A0Y, FUM, summaries  # noqa: F401 (the shared module fixture)


def steps(text: str) -> list[str]:
    return re.findall(r"^## (Step \d+:.*)$", text, re.M)


def test_an_errors_fix_is_the_agents_announcement_not_the_edits_fragments(summaries):
    s2 = section(summaries[A0Y], steps(summaries[A0Y])[1])
    err = next(ln for ln in s2.splitlines() if "Assertion with == failed" in ln)
    assert "The fix, as the agent announced it: \"Let me fix the test helper to include UUIDs.\"" in err
    assert "`messages =`" not in err and "the last edits" not in err  # no lines cut from a larger expression
    assert "the same command then passed" in err  # the failing run, run again: said once
    # the fix it announced for the credo complaint is in its reason already; the whole lines it changed stay
    s1 = section(summaries[A0Y], steps(summaries[A0Y])[0])
    err = next(ln for ln in s1.splitlines() if "Nested modules could be aliased" in ln)
    assert "The fix, as the agent announced it" not in err and "`# credo:disable-for-next-line" in err


def test_remedy_is_the_last_change_announced_unhedged():
    said = ["The alias is unused. Let me check the file.",
            "This might be a false positive. Let me use the full module path instead.",
            "Known conflict. I'll use the full path and suppress the credo warning inline.",
            "Both edits need to apply together. Let me fix the function to use the full path too."]
    assert remedy(said) == "I'll use the full path and suppress the credo warning inline."
    # a sentence that only points back comes with the one before it; alone it says nothing
    assert remedy(["`xterm.css` was force-added. I should do the same for `spotter.css`."]) == \
        "`xterm.css` was force-added. I should do the same for `spotter.css`."
    assert remedy(["Let me extract it."]) == ""
    assert remedy(["Let me fix the assertion."]) == ""  # the edit says as much
    assert remedy(["Let me run the tests again.", "Maybe I should try `apply/3`?"]) == ""


def test_a_line_cut_from_an_expression_is_not_a_whole_statement():
    assert _whole("alias Spotter.Services.Tmux") and _whole("# credo:disable-for-next-line Credo.Check.X")
    for frag in ("messages =", "|> Ash.Query.filter(session_id: session_id)", '"uuid" => "#{id}-system",',
                 "case x do", "end", "foo(bar,"):
        assert not _whole(frag), frag


def test_a_check_complaint_the_agent_explains_is_an_error_of_its_step(summaries):
    # fa812bfe step 2: the credo output came from a hook the transcript does not record; the agent's
    # words are its only trace, and the helper it then extracted is the fix
    s2 = section(summaries[A0Y], steps(summaries[A0Y])[1])
    assert re.search(r"Error from a check \(as the agent reported it\): The nesting comes from the `if` inside "
                     r"`Enum\.find_value` inside `case`\. → fixed by editing `sync_transcripts\.ex` "
                     r"\(added `list_subdirectories/1`\)", s2)


def test_a_choice_kept_is_quoted_with_its_reason(summaries):
    text = summaries[A0Y]
    s3 = section(text, steps(text)[2])
    assert "Decided, in the agent's words: \"Let me put it in `priv/scripts/` instead since that's what Elixir apps " \
           "package.\"" in s3
    s4 = section(text, steps(text)[3])
    assert ("Decided, in the agent's words: \"I'm not actually calling `ActiveSessionRegistry` directly — the status "
            "comes via PubSub. Let me remove the unused alias.\"") in s4
    # an approach tried and dropped is never a decision
    assert "apply/3" not in text


def _ep(said: list, files=(), errors=()) -> Episode:
    ep = Episode()
    ep.talk = [(k, t, False, False) for k, t in enumerate(said)]
    for p, added in files:
        ep.files[p] = FileChange(p, "modified", added=list(added))
    ep.errors = list(errors)
    return ep


def test_choices_keep_the_later_of_two_and_only_what_stayed():
    ep = _ep(["I'll keep `render/1` instead of removing it, since callers use it.",
              "Actually I'll keep `render/1` instead of removing it, because tests and callers use it.",
              "Let me put the script in `scripts/` instead since that is simpler."],
             files=[("lib/r.ex", ["render/1"])])
    got = choices(ep)
    assert got == ["Actually I'll keep `render/1` instead of removing it, because tests and callers use it."]
    # a choice with no reason is an action (its change says it); a hedged one is not made yet
    ep = _ep(["Let me keep `render/1`.", "Maybe I should drop `render/1` instead, since it is old."],
             files=[("lib/r.ex", ["render/1"])])
    assert choices(ep) == []


def test_a_finished_step_says_why_in_its_items_own_words(summaries):
    text = summaries[A0Y]
    s3 = section(text, steps(text)[2])
    assert ("Why, in `spotter-a0y.3`'s description: \"Bootstrap sync fixes initial missing data, but does not keep "
            "active transcripts fresh.") in s3
    assert "Why, in `spotter-a0y.4`" not in text  # in progress: Current work says what it asks
    assert "Why, in `spotter-fum" not in summaries[FUM]  # those items have no "why" section


def test_the_items_the_steps_are_named_for_are_one_line(summaries):
    items = section(summaries[A0Y], "Work items")
    assert ("`spotter-a0y.1`, `spotter-a0y.2`, `spotter-a0y.3`: closed and committed (steps 1–3); "
            "`spotter-a0y.4`: in progress (step 4)") in items
    items = section(summaries[FUM], "Work items")
    assert "`spotter-fum.4` — Add regression coverage" in items  # not a step: its title stays


def test_calls_of_one_function_are_said_once():
    lines = ["alias App.Registry", "Registry.touch(id, :commit_event)", "Registry.touch(id, :tool_call)"]
    assert _lines_said(lines) == "`Registry.touch(id, …)` calls with `:commit_event`, `:tool_call`"
    assert _lines_said(["x = 1", "y = 2"]) == "`x = 1`, `y = 2`"


def test_a_new_file_says_what_it_is_for(summaries):
    from ctxkit.core.episodes import header_doc

    assert header_doc("#!/bin/bash\n# Notifies Spotter that a session has ended.\n# Reads stdin.\nset -e\n", "a.sh") == \
        "Notifies Spotter that a session has ended."
    assert header_doc('defmodule X do\n  @moduledoc """\n  Renders transcript messages as lines.\n\n  More.\n  """\n',
                      "x.ex") == "Renders transcript messages as lines."
    assert header_doc("defmodule X do\n  @moduledoc false\n", "x.ex") == ""
    assert header_doc("/* Transcript panel tokens */\n:root {}\n", "a.css") == ""  # a heading, not a sentence
    s1 = section(summaries[A0Y], steps(summaries[A0Y])[0])
    assert "`spotter-plugin/scripts/notify-session-end.sh` created (\"Notifies Spotter that a Claude Code session has " \
           "ended.\")" in s1
    # no header doc: the agent's own report of the file, written after the step's commit, without its tally
    assert "(in the agent's words, \"GenServer with ETS table tracking session lifecycle (active/ended/inactive)\")" in s1
    assert "14 tests covering" not in summaries[A0Y]


def test_a_generator_run_says_the_files_it_created_and_a_choice_carried_out_at_once_stands(summaries, tmp_path):
    s2 = section(summaries[A0Y], steps(summaries[A0Y])[1])
    # the run is one of step 2's last details: at Claude's budget every step's files and reasons come
    # first; with a little more room it is said, with the files it created
    roomier = compact(span_of(corpus(A0Y)), 4500, tmp_path, "--summary-tokens", "4500")[0]
    assert "Ran `mix ash.codegen --name add_message_upsert_identity` (it created " \
           "`_build/dev/lib/spotter/priv/repo/migrations/20260212155510_add_message_upsert_identity.exs`" in \
        section(roomier, steps(roomier)[1])
    assert "--check" not in s2  # a generator run that wrote nothing is a probe
    # said as the last words of a message whose own calls then did it (the `rm` of the manual migration)
    assert "Decided, in the agent's words: \"Ash generated its own migration. I should remove my manual one and use " \
           "the Ash-generated one instead.\"" in s2


def test_an_approved_plan_says_its_strategys_reason(summaries):
    from ctxkit.core.episodes import plan_gist

    plan = ("# Plan: Enrich the renderer\n\n## Approach\n\n### Strategy: Parallel path\n\nKeep `a/1` unchanged.\n\n"
            "- `b/2` calls `c/2`\n\n~50 lines of parallel code, but clean separation ensures zero risk to callers.\n\n"
            "### Line map shape\n\nThe keys, because reasons.\n")
    assert plan_gist(plan) == ('"Enrich the renderer" — Strategy: Parallel path: Keep `a/1` unchanged. (~50 lines of '
                               'parallel code, but clean separation ensures zero risk to callers)')
    s1 = section(summaries[FUM], steps(summaries[FUM])[0])
    assert "clean separation ensures zero risk to backward compat" in s1


def test_a_spec_is_read_line_by_line_with_its_parents_words():
    from ctxkit.core.episodes import spec_lines

    body = ("## Why\nBecause.\n\n## Technical Specs\n- `Worker`:\n  - Subscribe to `activity`.\n  - Buffer lines.\n"
            "- Do not use Oban.\n\n## Output Files\n- `lib/a.ex`\n\nEdge cases:\n- Empty input does not crash.\n")
    assert spec_lines(body) == [("`Worker`: Subscribe to `activity`.", "Subscribe to `activity`."),
                                ("`Worker`: Buffer lines.", "Buffer lines."), ("Do not use Oban.", "Do not use Oban."),
                                ("Empty input does not crash.", "Empty input does not crash.")]


def test_the_items_spec_is_checked_against_the_changes_since_the_last_commit(summaries):
    # fum.3 at the cut: every line that names something is in the uncommitted changes; the rest can
    # only be checked by hand, and the section says which
    spec = section(summaries[FUM], "The item's spec, against the changes since the last commit")
    assert "Named in the spec, not in the changes yet" not in spec
    assert "To check by hand" in spec and "CSS: enforce readable line-height and wrapping for narrow viewports" in spec
    text = summaries[FUM]
    assert text.index("## Next step") < text.index("## The item's spec") < text.index("## Step 1")
    # a0y.2 cut while only the migration and message.ex were written: the sync functions are not there yet;
    # a prohibition ("no call to `sync_all()`") is never "missing"
    import json
    from conftest import corpus, run

    recs = run("import", corpus(A0Y)).records()
    cut = int(len(recs) * 0.4)
    while recs[cut].get("role") == "tool":
        cut += 1
    res = run("compact", "--force", "--budget", "6000", input="".join(json.dumps(r) + "\n" for r in recs[:cut]),
              env={"CTX_SUMMARY_TARGET_TOKENS": "6000"})
    out = next(r for r in res.records() if r["kind"] == "summary")["content"]
    spec = section(out, "The item's spec, against the changes since the last commit")
    missing = next(ln for ln in spec.splitlines() if ln.startswith("- Named in the spec, not in the changes yet"))
    assert "`sync_session_by_id(session_id, opts \\\\ [])`" in missing and "sync_all" not in missing
    assert "no call to `sync_all()`" in spec  # to check by hand


def test_an_exploration_cut_midway_fills_its_budget_with_the_rest_of_each_files_names():
    # 4d5611e5 cut at 70 %: the outline of a file read names its first ten definitions; with budget left,
    # the rest follow (the report asks for the full content), so Q6's hooks are named, not just `Hooks`
    from test_summary_cut_midwork import cut_and_compact

    text = cut_and_compact("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    found = section(text, "Findings so far (no report yet)")
    rest = next(ln for ln in found.splitlines() if ln.startswith("- The rest of what `assets/js/app.js` defines"))
    assert "`Hooks.TranscriptHighlighter`" in rest and "`Hooks.TranscriptSelection`" in rest
    # the names the findings above already give are not repeated: the count is of the rest
    assert re.search(r"The rest of what `lib/spotter_web/live/session_live\.ex` defines \(\d+ more\)", found)
