"""State the engine reads from what tools showed of the repository and the shell, on any agent: `git status`
as the tree's word on what is uncommitted, results that were never recorded, reads of files that are not
there, the clients' shell forms (Gemini CLI, GitHub Copilot CLI), and a silent checker's silence."""
import json

from ctxkit.compaction import compact_span, state_of
from ctxkit.compaction.analyze.environment import plain
from ctxkit.compaction.extract import events
from ctxkit.compaction.extract.shell import segments
from ctxkit.compaction.model import CheckRun, Command, Commit, Read, TreeStatus

from engine_records import N, bash, call, edit, rec


def count(text):
    return len(text.split())


LONG = """On branch feat
Changes not staged for commit:
  (use "git add <file>..." to update what will be committed)
\tmodified:   b.go

Untracked files:
  (use "git add <file>..." to include in what will be committed)
\tdocs/

no changes added to commit (use "git add" and/or "git commit -a")
"""


def test_git_status_is_read_in_its_long_and_short_forms():
    ts = [e for e in events(bash("git status", LONG)) if isinstance(e, TreeStatus)]
    assert ts[0].changed == ("b.go", "docs/")
    ts = [e for e in events(bash("git status -sb", "## main...origin/main\n M a.go\nR  old.go -> new.go\n?? x.md"))
          if isinstance(e, TreeStatus)]
    assert ts[0].changed == ("a.go", "new.go", "x.md")
    # cut by a filter, hiding new files, or not a status at all: no reading
    for cmd, out in (("git status | head -3", LONG), ("git status -uno", LONG), ("git status", "fatal: not a git repository")):
        assert not [e for e in events(bash(cmd, out)) if isinstance(e, TreeStatus)]


def test_a_file_git_status_no_longer_lists_holds_no_uncommitted_change():
    # the user committed a.go where the session does not show it; b.go is still changed
    recs = [rec("user", "tidy both", meta={"cwd": "/w"})] + edit("/w/a.go") + edit("/w/b.go") + bash("git status", LONG)
    st = state_of(recs)
    assert [f.path for f in st.current.uncommitted] == ["b.go"]
    # everything listed clean: nothing is uncommitted, and nothing asks to commit it
    recs = [rec("user", "tidy", meta={"cwd": "/w"})] + edit("/w/a.go") + \
        bash("git status", "On branch feat\nnothing to commit, working tree clean\n")
    st = state_of(recs)
    assert st.current.uncommitted == () and st.next.kind != "finish"
    # a status limited to a path says nothing of files outside it
    recs = [rec("user", "tidy", meta={"cwd": "/w"})] + edit("/w/a.go") + \
        bash("git status -- docs", "On branch feat\nnothing to commit, working tree clean\n")
    assert [f.path for f in state_of(recs).current.uncommitted] == ["a.go"]


def test_a_command_with_no_recorded_result_is_not_called_a_success():
    recs = [rec("user", "export it")] + call("Bash", command="curl -s https://example.com/export", missing=True)
    cmd = [e for e in events(recs) if isinstance(e, Command)][0]
    assert cmd.no_result and not cmd.failed
    text = compact_span(recs, 2000, count).rendered
    last = [ln.text for ln in dict(text.sections)["Current work"] if ln.text.startswith("Last action")]
    assert last and "not known" in last[0] and "succeeded" not in last[0]


def test_reading_a_file_that_is_not_there_is_not_a_read():
    evs = events(bash("cat a.md missing.md", "# A\ncat: missing.md: No such file or directory", 1)
                 + bash("cat ~/.config/app.json 2>/dev/null || echo 'not found'", "not found")
                 + bash("Get-Content C:\\u\\history.jsonl", "Get-Content : Cannot find path 'C:\\u\\history.jsonl' "
                        "because it does not exist.", 1))
    assert [e.path for e in evs if isinstance(e, Read)] == ["a.md"]


def test_a_greater_than_sign_inside_quotes_is_not_a_redirection():
    seg = segments('git commit -m "fix: guard hooks\n\nCo-authored-by: Bot <bot@example.com>"')[0]
    assert seg.argv[:3] == ("git", "commit", "-m") and seg.argv[3].endswith("<bot@example.com>") and not seg.redirect
    seg = segments('echo hi >> "my notes.md"')[0]
    assert seg.redirect == "my notes.md" and seg.append and seg.argv == ("echo", "hi")


def test_a_checks_command_keeps_a_pipe_inside_quotes():
    assert plain("go test ./... -run 'TestA|TestB' -v 2>&1 | tail -30") == "go test ./... -run 'TestA|TestB' -v 2>&1"
    assert plain("pytest || true") == "pytest"


def test_gemini_clis_shell_form_is_read_field_by_field():
    form = "Command: git status\nDirectory: (root)\nOutput: On branch main\nnothing to commit, working tree clean\n" \
           "Error: (none)\nExit Code: 0\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 1"
    evs = events(call("run_shell_command", fmt="gemini-cli", command="git status", result=form))
    cmd = [e for e in evs if isinstance(e, Command)][0]
    assert cmd.exit == 0 and not cmd.failed and "Error" not in cmd.output and "PGID" not in cmd.output
    failing = form.replace("Exit Code: 0", "Exit Code: 1").replace("Command: git status", "Command: pytest")
    evs = events(call("run_shell_command", fmt="gemini-cli", command="pytest", result=failing))
    assert [e for e in evs if isinstance(e, Command)][0].failed


def test_copilot_clis_shell_trailer_gives_the_exit_status_and_a_command_read_to_its_end_is_not_running():
    recs = call("bash", fmt="copilot-cli", command="npm test",
                result="<command with shellId: 7 is still running after 30 seconds. The command is still running.>")
    recs += call("read_bash", fmt="copilot-cli", shellId="7",
                 result="Tests: 3 passed, 3 total\n<shellId: 7 completed with exit code 0>")
    recs += call("bash", fmt="copilot-cli", command="false", result="<shellId: 8 completed with exit code 1>")
    evs = events(recs)
    cmds = [e for e in evs if isinstance(e, Command)]
    assert [c.running for c in cmds] == [True, False, False] and cmds[1].command == "npm test"
    assert cmds[2].failed and cmds[2].exit == 1 and "shellId" not in cmds[1].output
    st = state_of([rec("user", "run the tests")] + recs)
    assert st.current.running == ()


def test_a_silent_checkers_silence_under_its_runners_echo_is_a_pass():
    run = [e for e in events(bash("bun run typecheck 2>&1 | tail -5", "$ tsc --noEmit")) if isinstance(e, CheckRun)]
    assert run[0].passed is True and run[0].kind == "typecheck"
    # a checker that prints its result is not judged by silence
    run = [e for e in events(bash("bun run test 2>&1 | tail -5", "$ vitest run")) if isinstance(e, CheckRun)]
    assert run[0].passed is None


def test_the_clients_queue_entry_for_a_background_task_is_not_a_user_request(tmp_path):
    from ctxkit.io.adapters.claude_code import _task_entry
    assert _task_entry('{"task_id":"b1","tool_use_id":"toolu_1","description":"Commit","task_type":"local_bash"}')
    assert not _task_entry("please also commit") and not _task_entry('{"name": "x"}')


def test_a_commit_message_with_an_address_in_angle_brackets_names_no_files():
    cmd = 'git add a.json && git commit -m "fix: guard\n\nCo-authored-by: Bot <1+bot@users.noreply.github.com>"'
    c = [e for e in events(bash(cmd, "[main a87a777] fix: guard\n 1 file changed")) if isinstance(e, Commit)][0]
    assert c.message.startswith("fix: guard") and c.files == ()


def test_changes_in_the_tree_the_session_did_not_make_are_told_apart_from_its_own():
    dirty = "On branch main\nChanges not staged for commit:\n\tmodified:   old/work.go\n"
    recs = [rec("user", "fix a", meta={"cwd": "/w"})] + bash("git status", dirty) + edit("/w/a.go") + \
        bash("git add a.go && git commit -m 'fix: a'", "[main 1234567] fix: a\n 1 file changed") + \
        bash("git status", dirty + "\tmodified:   src/fmt.ts\n")
    st = state_of(recs)
    # only what was there before the session began is another's (a formatter's changes may be the session's)
    assert st.current.uncommitted == () and st.current.others == ("old/work.go",)
    lines = [ln.text for ln in dict(compact_span(recs, 2000, count).rendered.sections)["Current work"]]
    assert any("old/work.go" in ln and "not made by this session" in ln for ln in lines)
    # a commit after the status may hold them: no claim then
    st = state_of(recs + bash("git commit -am 'all'", "[main 89abcde] all\n 1 file changed"))
    assert st.current.others == ()


def test_an_error_a_passing_test_provokes_on_purpose_is_not_the_failure():
    from ctxkit.compaction.extract.failures import key_lines
    out = ("[Limiter] Task 2 failed: 84 |\n89 |     throw new Error(\"Item 3 failed\");\nerror: Item 3 failed\n"
           "# Unhandled error between tests\nerror: Cannot find module 'x' from 'a.test.ts'\n 3 fail\n")
    assert key_lines(out)[0] == "error: Cannot find module 'x' from 'a.test.ts'"


def test_items_filed_in_a_projects_tracker_are_not_the_next_step_when_filing_was_the_work():
    recs = [rec("user", "create the beads for the quality tools")] + \
        bash("bd create 'Setup quality tools' --type epic --id app-1", "✓ Created issue: app-1") + \
        bash("bd create 'Install credo' --id app-1.1", "✓ Created issue: app-1.1") + \
        [rec("assistant", "Created the epic and its task.")]
    st = state_of(recs)
    assert st.items and all(i.filed for i in st.items) and st.next.kind == "done"
    # an item the session claims is work in hand: its siblings wait their turn as before
    st = state_of(recs + bash("bd update app-1.1 --status in_progress", "✓ Updated issue: app-1.1"))
    assert st.next.kind != "done"


def test_a_file_made_and_removed_again_is_no_uncommitted_change_and_a_finished_session_has_no_step_in_progress():
    recs = [rec("user", "fix the handler", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/repro.py", content="import x\n", result="File created successfully") + \
        edit("/w/h.py") + bash("rm repro.py") + [rec("assistant", "Fixed the handler; the repro script is removed.")]
    st = state_of(recs)
    assert [f.path for f in st.current.uncommitted] == ["h.py"] and st.next.kind == "done"
    text = compact_span(recs, 2000, count).rendered
    secs = dict(text.sections)
    assert not any(ln.text.startswith("Working on") for ln in secs["Current work"])
    assert all("in progress" not in name for name, _ in text.sections if name.startswith("Step "))


def test_a_skills_arguments_as_the_task_name_the_skill():
    recs = [rec("user", "<command-name>/plan-beads</command-name><command-args>set up credo</command-args>")] + \
        [rec("assistant", "Planned.")]
    text = compact_span(recs, 2000, count).rendered
    assert text.task.startswith("set up credo") and "`/plan-beads`" in text.task


def test_aider_edits_it_never_applied_and_its_commit_of_the_users_own_changes_are_not_the_agents_work():
    from ctxkit.compaction.model import Change, Said
    recs = call("edit", fmt="aider", path="CONVENTIONS.md", missing=True) + \
        call("edit", fmt="aider", path="a.ts", result="Applied edit to a.ts") + \
        call("aider_commit", fmt="aider", hash="54d022e", message="docs: user's notes", before_edits=True,
             result="Commit 54d022e docs: user's notes") + \
        call("aider_commit", fmt="aider", hash="a99e014", message="feat: a", result="Commit a99e014 feat: a")
    evs = events(recs)
    assert [(c.path, c.ok) for c in evs if isinstance(c, Change)] == [("CONVENTIONS.md", False), ("a.ts", True)]
    assert [c.hash for c in evs if isinstance(c, Commit)] == ["a99e014"]
    said = [e for e in events([rec("assistant", "I will add the docs.\n\na.ts\n```ts\n<<<<<<< SEARCH\n"
                                                "// keep the element\n=======\n/** whether to keep it */\n"
                                                ">>>>>>> REPLACE\n```\nDone.", fmt="aider")]) if isinstance(e, Said)]
    assert "keep" not in said[0].text and "I will add the docs." in said[0].text


def test_a_command_the_client_left_running_is_running_not_failed():
    from ctxkit.compaction.model import Command
    N[0] += 1
    recs = [rec("assistant", "", fmt="openhands", tool_calls=[{"id": "s1", "type": "function", "function": {
        "name": "execute_bash", "arguments": json.dumps({"command": "python3 -m http.server 8000"})}}]),
        rec("tool", "Serving HTTP on 0.0.0.0 port 8000 ...", fmt="openhands", tool_call_id="s1", flags=["running"])]
    cmd = [e for e in events(recs) if isinstance(e, Command)][0]
    assert cmd.running and not cmd.failed
    assert state_of([rec("user", "serve it")] + recs).current.running == ("python3 -m http.server 8000",)


def test_a_look_that_finds_nothing_is_an_answer_not_an_open_error():
    recs = [rec("user", "find the history")] + \
        bash("ls ~/.codex/history.jsonl", "ls: cannot access '~/.codex/history.jsonl': No such file or directory", 2) + \
        bash("cp a.txt b/", "cp: cannot stat 'a.txt': No such file or directory", 1)
    st = state_of(recs)
    assert [e.probe for e in st.errors] == [True, False]
    lines = [ln.text for name, ls in compact_span(recs, 2000, count).rendered.sections for ln in ls]
    assert any(ln.startswith("Looked for with `ls") and "still open" not in ln for ln in lines)
    assert any(ln.startswith("Error from `cp") and ln.endswith("still open.") for ln in lines)


def test_where_the_last_commands_ran_is_told_when_it_is_not_the_project():
    recs = [rec("user", "merge it and clean up", fmt="codex", meta={"cwd": "/w/wt"})] + \
        call("exec_command", fmt="codex", cmd="git status", workdir="/w/main", result="Exit code: 0\nOutput:\nOn branch main\n")
    lines = [ln.text for ln in dict(compact_span(recs, 2000, count).rendered.sections)["Current work"]]
    assert any(ln.startswith("Where:") and "last commands ran in `/w/main`" in ln for ln in lines)


def test_a_read_of_a_path_that_is_not_there_is_no_failed_tool_call():
    recs = [rec("user", "check the lint config")] + call("Read", file_path="/w/Makefile", result="lint:\n") + \
        call("Read", file_path="/w/.golangci.yml", result="<tool_use_error>File does not exist.</tool_use_error>", error=True) + \
        call("Edit", file_path="/w/a.go", old_string="x", new_string="y", result="String to replace not found in file.",
             error=True) + [rec("assistant", "There is no lint config.")]
    st = state_of(recs)
    s = st.steps[-1]
    assert [p for p, _, _ in s.missing] in (["/w/.golangci.yml"], [".golangci.yml"])
    assert not any(".golangci.yml" in t for _, t, _ in s.tool_errors)


def test_a_read_refused_for_its_size_and_then_read_in_parts_left_no_failure():
    big = "<tool_use_error>File content (85812 tokens) exceeds maximum allowed tokens (25000).</tool_use_error>"
    recs = [rec("user", "look at the fixture")] + call("Read", file_path="/w/t.jsonl", result=big, error=True) + \
        call("Read", file_path="/w/t.jsonl", offset=1, limit=50, result="{...}\n") + [rec("assistant", "Seen.")]
    assert all(not s.tool_errors for s in state_of(recs).steps)


def test_a_git_status_of_another_place_or_after_changes_were_thrown_away_clears_nothing():
    clean = "On branch main\nnothing to commit, working tree clean\n"
    base = [rec("user", "fix", meta={"cwd": "/w", "branch": "main"})] + edit("/w/a.go")
    for other in (bash("git -C ../other status", clean), bash("cd ../lib && git status", clean),
                  bash("git status", clean.replace("main", "feature")),
                  bash("git stash") + bash("git status", clean),
                  bash("git status", "On branch main\n\tmodified:   x\n... [40 lines truncated] ...\n")):
        assert [f.path for f in state_of(base + other).current.uncommitted] == ["a.go"]
    assert state_of(base + bash("git status", clean)).current.uncommitted == ()
    # a path git quotes for its odd bytes is still that path
    st = state_of([rec("user", "x", meta={"cwd": "/w"})] + edit("/w/docs/café.md") +
                  bash("git status -s", ' M "docs/caf\\303\\251.md"\n'))
    assert [f.path for f in st.current.uncommitted] == ["docs/café.md"]


def test_a_check_a_commit_or_a_push_with_no_recorded_result_is_neither_passed_nor_made():
    base = [rec("user", "fix a", meta={"cwd": "/w"})] + edit("/w/a.go")
    for cmd in ("pytest -q", "git add a.go && git commit -m 'fix a'", "git push origin main"):
        st = state_of(base + call("Bash", command=cmd, missing=True))
        assert st.next.kind == "running" and st.next.title == "unseen" and st.current.unseen, cmd
        assert not st.commits and [f.path for f in st.current.uncommitted] == ["a.go"] and not st.env.pushes


def test_items_filed_on_a_request_to_do_the_work_too_leave_the_first_as_the_next_step():
    recs = [rec("user", "create beads for the two lint fixes, then start working on the first one")] + \
        bash("bd create 'Fix credo warnings' --id app-1", "✓ Created issue: app-1") + \
        bash("bd create 'Fix dialyzer warnings' --id app-2", "✓ Created issue: app-2")
    assert state_of(recs).next.kind == "next_item"


def test_gemini_output_lines_that_look_like_its_fields_stay_output_and_a_signal_is_no_success():
    form = ("Command: npm test\nDirectory: (root)\nOutput: > app@1.0.0 test\nError: Cannot find module './sum'\n"
            "Tests: 1 failed\nError: (none)\nExit Code: 1\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 12")
    cmd = [e for e in events(call("run_shell_command", fmt="gemini-cli", command="npm test", result=form))
           if isinstance(e, Command)][0]
    assert "Cannot find module './sum'" in cmd.output and cmd.failed and cmd.exit == 1
    killed = form.replace("Exit Code: 1", "Exit Code: (none)").replace("Signal: 0", "Signal: 9")
    cmd = [e for e in events(call("run_shell_command", fmt="gemini-cli", command="npm test", result=killed))
           if isinstance(e, Command)][0]
    assert cmd.failed


def test_a_silent_checkers_silence_through_a_filter_that_could_hide_lines_is_no_pass():
    for cmd in ("bun run typecheck 2>&1 | head -1", "bun run typecheck 2>&1 | grep -v error"):
        run = [e for e in events(bash(cmd, "$ tsc --noEmit")) if isinstance(e, CheckRun)]
        assert run[0].passed is None, cmd


def test_a_missing_namesake_does_not_unread_a_file_and_a_denied_look_is_no_probe():
    evs = events(bash("cat src/config.py tests/config.py",
                      "x = 1\ncat: tests/config.py: No such file or directory", 1))
    assert [e.path for e in evs if isinstance(e, Read)] == ["src/config.py"]
    st = state_of([rec("user", "look")] + bash("ls -la /srv/app/secrets",
                                              "ls: cannot access '/srv/app/secrets': Permission denied", 2))
    assert [e.probe for e in st.errors] == [False]


def test_openhands_keys_sent_to_a_running_command_are_no_command_and_a_refused_command_is_not_run():
    def oh(cid, command, result, flags=(), **extra):
        N[0] += 1
        return [rec("assistant", "", fmt="openhands", tool_calls=[{"id": cid, "type": "function", "function": {
            "name": "execute_bash", "arguments": json.dumps({"command": command, **extra})}}]),
            rec("tool", result, fmt="openhands", tool_call_id=cid, flags=list(flags))]
    recs = [rec("user", "fix the tests")] + oh("o1", "pytest tests/", "collected 40 items", ["running"]) + \
        oh("o2", "git commit -am 'fix a'", '[Your command "git commit -am \'fix a\'" is NOT executed. The previous '
           'command is still running]', ["error"]) + oh("o3", "C-c", "^C", [], is_input=True)
    evs = events(recs)
    assert not any(isinstance(e, Command) and e.command == "C-c" for e in evs)
    assert not [e for e in evs if isinstance(e, Commit) and e.ok]



def test_what_the_code_already_says_spreads_over_definitions_and_puts_code_before_its_tests():
    src = ("export function notice() {\n  // AGENTS.md is the source, CLAUDE.md refers to it\n"
           "  // CLAUDE.md files refer to AGENTS.md only\n  // never edit CLAUDE.md that refers to AGENTS.md\n}\n"
           "export function pick() {\n  // CLAUDE.md pairs refer to AGENTS.md here\n  return 'AGENTS.md'\n}\n")
    spec = "import { pick } from './a'\ntest('pick refers to AGENTS.md, not CLAUDE.md', () => {\n" \
           "  // the CLAUDE.md that refers to AGENTS.md stays\n  expect(pick()).toBe('AGENTS.md')\n})\n"
    recs = [rec("user", "look at the consolidation")] + call("Read", file_path="/w/a.ts", result=src) + \
        call("Read", file_path="/w/a.test.ts", result=spec) + [rec("assistant", "Read both.")] + \
        [rec("user", "make sure CLAUDE.md refers to AGENTS.md")]
    notes = state_of(recs).related_notes
    defs = [w for _, w, _, _ in notes]
    assert defs.count("notice") == 2 and "pick" in defs
    assert [p.endswith(".test.ts") for p, _, _, _ in notes] == sorted(p.endswith(".test.ts") for p, _, _, _ in notes)


def test_second_review_cases():
    clean = "On branch main\nnothing to commit, working tree clean\n"
    # a clean status of the checkout the session started in says nothing of a worktree's edits
    recs = [rec("user", "fix x", fmt="codex", meta={"cwd": "/w/main"})] + \
        call("apply_patch", fmt="codex", input="*** Begin Patch\n*** Update File: /w/wt/a.go\n@@\n-a\n+b\n*** End Patch",
             result="Exit code: 0\nOutput:\nSuccess.") + \
        call("exec_command", fmt="codex", cmd="git status", workdir="/w/main", result="Exit code: 0\nOutput:\n" + clean)
    assert not state_of(recs).current.tree_clean
    # "don't start yet" is filing only
    recs = [rec("user", "Break the auth refactor into beads. Don't start on them yet, I'll review first.")] + \
        bash("bd create 'Auth epic' --id app-1", "✓ Created issue: app-1") + [rec("assistant", "Filed app-1.")]
    assert state_of(recs).next.kind == "done"
    # no status ran: no word of one
    recs = [rec("user", "tidy", meta={"cwd": "/w"})] + edit("/home/u/.zshrc") + [rec("assistant", "Done.")]
    lines = [ln.text for ln in dict(compact_span(recs, 2000, count).rendered.sections)["Current work"]]
    assert not any("git status" in ln for ln in lines)
    # a call answered beside one that was not is not among the unseen
    N[0] += 1
    two = [rec("assistant", "", tool_calls=[
        {"id": "p1", "type": "function", "function": {"name": "Bash", "arguments": json.dumps({"command": "pytest -q"})}},
        {"id": "p2", "type": "function", "function": {"name": "Bash", "arguments": json.dumps({"command": "git diff --stat"})}}]),
        rec("tool", "1 failed in 0.1s", tool_call_id="p1", flags=["error"]),
        rec("tool", "", tool_call_id="p2", flags=["missing_result"])]
    assert state_of([rec("user", "test it")] + two).current.unseen == ("git diff --stat",)
    # a dotted branch in a short status; missing dotfiles are not reads; `head -n 1` can hide lines
    ts = [e for e in events(bash("git status -sb", "## release/1.2...origin/release/1.2\n M a.go")) if isinstance(e, TreeStatus)]
    assert ts[0].branch == "release/1.2"
    evs = events(bash("cat .eslintrc.json .prettierrc.json",
                      "cat: .eslintrc.json: No such file or directory\ncat: .prettierrc.json: No such file or directory", 1))
    assert not [e for e in evs if isinstance(e, Read)]
    run = [e for e in events(bash("bun run typecheck 2>&1 | head -n 1", "$ tsc --noEmit")) if isinstance(e, CheckRun)]
    assert run[0].passed is None
    # a Gemini command holding a line like its form's keeps its own directory
    cmd = "cat <<EOF > x.txt\nDirectory: /srv\nEOF"
    form = f"Command: {cmd}\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: 0\n" \
           "Background PIDs: (none)\nProcess Group PGID: 1"
    c = [e for e in events(call("run_shell_command", fmt="gemini-cli", command=cmd, result=form)) if isinstance(e, Command)][0]
    assert c.cwd == "" and c.exit == 0
