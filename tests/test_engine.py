"""The compaction engine, piece by piece: what extract makes of a tool call and a shell line (dialects, tools,
trackers), what a language entry finds in code, and the state analyze derives from the events (check state
after the last edit, commit state, errors and their fixes, work items, the one next step)."""
import json
import re

import pytest

from ctxkit.compaction import compact_span, state_of
from ctxkit.compaction.analyze.code import constants, doc_of, edit_facts
from ctxkit.compaction.extract import events
from ctxkit.compaction.extract.shell import segments
from ctxkit.compaction.model import (Change, CheckRun, Commit, Item, Plan, Push, Read, Request, Said, Search, Stage)
from ctxkit.compaction.registry import code_parser, language_for

from engine_records import N, bash, call, edit, kinds, rec  # noqa: F401


# -- the shell ---------------------------------------------------------------------------------------------

def test_a_shell_line_splits_into_simple_commands_with_pipes_heredocs_and_directories():
    segs = segments("cd web && FOO=1 npx vitest run | tail -5; git commit -m \"$(cat <<'EOF'\nfix: a && b\nEOF\n)\"")
    assert [s.argv[0] for s in segs] == ["cd", "vitest", "tail", "git"]
    assert segs[1].piped_to == ("tail",) and segs[1].cwd == "web"
    assert segs[3].heredoc == "fix: a && b"


def test_windows_paths_keep_their_backslashes():
    seg = segments(r"Get-Content C:\Users\k\app\main.ts")[0]
    assert seg.argv[1] == r"C:\Users\k\app\main.ts"


# -- checks: each runner's own output, the exit status where it speaks ----------------------------------

@pytest.mark.parametrize("cmd,output,code,passed,summary", [
    ("pytest -q", "....F\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed, 4 passed in 0.2s", 1, False, "1 failed, 4 passed"),
    ("python -m pytest", "5 passed in 0.1s", 0, True, "5 passed"),
    ("go test ./...", "--- FAIL: TestInstall (0.01s)\nFAIL\nFAIL\tgithub.com/x/y\t0.598s", 1, False, "FAIL github.com/x/y 0.598s"),
    ("cargo test", "test result: ok. 12 passed; 0 failed; 0 ignored", 0, True, "12 passed; 0 failed"),
    ("npx vitest run", " Test Files  1 failed | 3 passed (4)\n      Tests  2 failed | 10 passed (12)", 1, False, "2 failed | 10 passed"),
    ("bun test", " 1309 pass\n 0 fail\nRan 1309 tests across 58 files. [783.00ms]", 0, True, "1309 pass, 0 fail"),
    ("mix test", "14 doctests, 386 tests, 0 failures", 0, True, "386 tests, 0 failures"),
    ("bundle exec rspec", "10 examples, 2 failures", 1, False, "10 examples, 2 failures"),
    ("dotnet test", "Failed!  - Failed:     1, Passed:    10, Skipped:     0, Total:    11", 1, False, "Failed: 1"),
    ("flutter test", "00:03 +12 -2: Some tests failed.", 1, False, "Some tests failed"),
])
def test_test_runners_are_judged_by_their_own_result_lines(cmd, output, code, passed, summary):
    runs = kinds(events(bash(cmd, output, code)), CheckRun)
    assert len(runs) == 1 and runs[0].kind == "test" and runs[0].passed is passed
    assert summary in runs[0].summary


def test_a_run_cut_by_tail_is_failed_by_its_own_fail_line_whatever_tails_status():
    """`go test … | tail -50` exits 0 (tail's status) and the failing tests are cut off: the FAIL line decides."""
    out = "--- PASS: TestA (0.00s)\nFAIL\tgithub.com/x/openclaw\t0.598s"
    run = kinds(events(bash("go test ./... -v | tail -50", out)), CheckRun)[0]
    assert run.passed is False and run.truncated and run.failures == ()
    assert run.command == "go test ./... -v | tail -50"


def test_a_piped_run_with_no_result_line_is_unknown_not_passed():
    run = kinds(events(bash("pytest -q 2>&1 | head -3", "....")), CheckRun)[0]
    assert run.passed is None


def test_wrapped_checks_are_named_by_their_target_and_judged_by_the_wrapped_tools_output():
    evs = events(bash("mise run lint && mise run test", "[lint] $ golangci-lint run\n0 issues.\nok  \tgithub.com/x\t0.2s"))
    runs = kinds(evs, CheckRun)
    assert [(r.kind, r.runner, r.passed) for r in runs] == [("lint", "mise run lint", True), ("test", "mise run test", True)]


def test_in_an_and_chain_a_failure_stops_what_comes_after():
    evs = events(bash("npm run lint && npm test", "✖ 3 problems (3 errors, 0 warnings)", code=1))
    runs = kinds(evs, CheckRun)
    assert [(r.runner, r.passed) for r in runs] == [("npm run lint", False)]


def test_linters_type_checkers_and_builds():
    assert kinds(events(bash("ruff check .", "All checks passed!")), CheckRun)[0].passed is True
    assert kinds(events(bash("mypy src", "Found 2 errors in 1 file (checked 3 source files)", 1)), CheckRun)[0].passed is False
    tsc = kinds(events(bash("npx tsc --noEmit", "src/a.ts(3,5): error TS2322: Type 'x' is not assignable", 2)), CheckRun)[0]
    assert tsc.kind == "typecheck" and tsc.passed is False and "TS2322" in tsc.errors[0]
    assert kinds(events(bash("go build ./...", "")), CheckRun)[0].passed is True
    credo = kinds(events(bash("mix credo --strict", "┃ [R] ↘ Prefer an implicit try.\n┃       lib/a.ex:12:5 #(A.f)\n"
                                                     "10 mods/funs, found 1 code readability issue.", 6)), CheckRun)[0]
    assert credo.passed is False and credo.errors == ("lib/a.ex:12:5: Prefer an implicit try.",)


# -- git, packages, trackers ------------------------------------------------------------------------------

def test_git_commits_stages_pushes_and_branches():
    evs = events(bash("git add -A && git commit -m 'feat: x' && git push -u origin feat",
                      "[feat 1a2b3c4] feat: x\n 2 files changed, 3 insertions(+)\n create mode 100644 src/x.py\n"
                      " * [new branch]      feat -> feat"))
    c = kinds(evs, Commit)[0]
    assert (c.hash, c.message, c.count, c.files) == ("1a2b3c4", "feat: x", 2, ("src/x.py",))
    assert kinds(evs, Stage)[0].all and kinds(evs, Push)[0].ok
    assert not kinds(events(bash("git commit -m x", "nothing to commit, working tree clean", 1)), Commit)[0].ok


def test_adding_a_package_changes_its_manifest_and_lock_file():
    evs = events(bash("cd assets && npm install highlight.js", "added 1 package"))
    assert {c.path for c in kinds(evs, Change)} == {"assets/package.json", "assets/package-lock.json"}


def test_beads_and_github_items_move_through_their_trackers():
    evs = events(bash("bd update app-7 --status in_progress", "ok") + bash("bd close app-7 --reason done", "✓ Closed app-7")
                 + bash("gh issue close 12", "✓ Closed issue #12"))
    assert [(i.tracker, i.item, i.action) for i in kinds(evs, Item)] == [
        ("beads", "app-7", "claim"), ("beads", "app-7", "close"), ("github", "#12", "close")]
    listed = events(bash("bd ready", "📋 Ready work (2 issues with no blockers):\n\n1. [● P2] [task] app-7.2: Add the retry"))
    assert [(i.item, i.title, i.action) for i in kinds(listed, Item)] == [("app-7.2", "Add the retry", "list")]


def test_claude_code_task_lists_and_todo_lists():
    evs = events(call("TaskCreate", result="Task #3 created successfully: Write tests", subject="Write tests")
                 + call("TaskUpdate", result="Updated task #3 status", taskId="3", status="in_progress")
                 + call("TodoWrite", result="ok", todos=[{"content": "a", "status": "completed"},
                                                        {"content": "b", "status": "in_progress"}]))
    assert [(i.item, i.action) for i in kinds(evs, Item)] == [("3", "create"), ("3", "claim")]
    assert kinds(evs, Plan)[0].steps == (("a", "completed"), ("b", "in_progress"))


# -- dialects ----------------------------------------------------------------------------------------------

def test_codex_commands_patches_and_running_sessions():
    recs = call("exec_command", fmt="codex", cmd="bun test a.test.ts", workdir="/w",
                result="Chunk ID: 1\nWall time: 30 seconds\nProcess running with session ID 42\nOutput:\n(pass) a")
    recs += call("write_stdin", fmt="codex", session_id=42, chars="",
                 result="Chunk ID: 2\nProcess exited with code 0\nOutput:\n 3 pass\n 0 fail\n")
    patch = "*** Begin Patch\n*** Update File: /w/src/a.ts\n@@\n-const a = 1\n+const a = 2\n*** End Patch"
    N[0] += 1
    recs += [rec("assistant", fmt="codex", tool_calls=[{"id": "p1", "type": "function",
                                                        "function": {"name": "apply_patch", "arguments": patch}}]),
             rec("tool", "Exit code: 0\nOutput:\nSuccess.", fmt="codex", tool_call_id="p1")]
    evs = events(recs)
    runs = kinds(evs, CheckRun)
    assert [r.passed for r in runs] == [None, True] and runs[1].command == "bun test a.test.ts"
    ch = kinds(evs, Change)[0]
    assert (ch.path, ch.old, ch.new) == ("/w/src/a.ts", "const a = 1", "const a = 2")


def test_generic_and_other_agents_tools_are_read_by_what_they_do():
    evs = events(call("run_shell_command", fmt="gemini-cli", command="pytest", result="3 passed in 0.1s")
                 + call("replace", fmt="gemini-cli", file_path="a.py", old_string="x = 1", new_string="x = 2", result="ok")
                 + call("str_replace_editor", fmt="openhands", command="view", path="b.py", result="1\tprint(1)")
                 + call("update_plan", fmt="codex", plan=[{"step": "write it", "status": "in_progress"}], result="ok"))
    assert kinds(evs, CheckRun)[0].passed is True
    assert kinds(evs, Change)[0].path == "a.py" and kinds(evs, Read)[0].path == "b.py"
    assert kinds(evs, Plan)[0].steps == (("write it", "in_progress"),)


def test_a_rejected_call_and_a_refused_edit_change_nothing():
    evs = events(call("Edit", result="The user doesn't want to proceed with this tool use.", file_path="a.py",
                      old_string="a", new_string="b")
                 + call("Edit", result="<tool_use_error>String to replace not found in file.</tool_use_error>",
                        error=True, file_path="a.py", old_string="a", new_string="b"))
    assert not [c for c in kinds(evs, Change) if c.ok]


def test_the_clients_reminders_are_not_the_agents_words_or_the_tools_output():
    evs = events([rec("assistant", "Done with the edit.<system-reminder>You have 10 tokens left</system-reminder>")]
                 + call("Read", file_path="a.py", result="1→x = 1\n\n<system-reminder>malware check</system-reminder>"))
    assert kinds(evs, Said)[0].text == "Done with the edit."
    assert "system-reminder" not in kinds(evs, Read)[0].text


# -- languages ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,text,names", [
    ("a.py", "class A:\n    def m(self):\n        pass\n\ndef f():\n    pass\n", {"A", "f"}),
    ("a.ts", "export function f() {}\nexport const g = (x: number) => x\ninterface I {}\ntype T = 1\n", {"f", "g", "I", "T"}),
    ("a.go", "package a\nfunc (a *A) Name() string { return \"\" }\nfunc F() {}\ntype A struct{}\n", {"Name", "F", "A"}),
    ("a.rs", "pub fn f() {}\nstruct S;\ntrait T {}\n", {"f", "S", "T"}),
    ("A.java", "public class A {\n  public int m() { return 1; }\n}\n", {"A", "m"}),
    ("a.rb", "class A\n  def m\n  end\nend\n", {"A", "m"}),
    ("A.cs", "public class A {\n  public void M() {}\n}\n", {"A", "M"}),
    ("a.ex", "defmodule A.B do\n  def f(a, b), do: a\n  defp g(x), do: x\nend\n", {"A.B", "f/2", "g/1"}),
    ("a.dart", "class A {\n  void m() {}\n}\nint f() { return 1; }\n", {"A", "f"}),
])
def test_every_language_entry_finds_definitions(path, text, names):
    lang = language_for(path)
    assert names <= {d.name for d in lang.definitions(text)}
    parser = code_parser()
    if parser is not None and path.endswith(".ex") is False:
        got = parser.definitions(lang, text)
        assert got is None or names - {"T", "g"} <= {d.name for d in got} | {"T", "g"}


def test_an_edit_located_in_the_file_names_what_it_changed_not_what_frames_it():
    before = "def a():\n    return 1\n\ndef b():\n    return 2\n"
    added, changed, removed, after = edit_facts("m.py", "    return 2\n", "    return 3\n\ndef c():\n    return 4\n", before)
    assert (added, changed, removed) == (["c"], ["b"], []) and "def c" in after
    added, changed, removed, _ = edit_facts("m.py", "def a():\n    return 1\n", "def a():\n    return 1\n\n\ndef z():\n    pass\n", before)
    assert added == ["z"] and changed == []     # `a` only anchored the insertion


def test_doc_comments_and_constants_of_new_code():
    go = "// isInstalled checks the marker and the mode.\nfunc isInstalled() bool { return true }\n"
    assert doc_of(go, 2) == "isInstalled checks the marker and the mode."
    py = 'def f():\n    """Return one."""\n    return 1\n'
    assert doc_of(py, 1) == "Return one."
    assert constants("@ttl_seconds 90\nconst MAX_TRIES = 5;\nDEFAULT = 'x'\n") == [("ttl_seconds", "90"),
                                                                                   ("MAX_TRIES", "5"), ("DEFAULT", "'x'")]


def test_test_cases_a_file_gains_are_named():
    assert language_for("a_test.go").tests("func TestA(t *testing.T) {}") == ["TestA"]
    assert language_for("a.test.ts").tests("it('adds', () => {}); test(\"subtracts\", () => {})") == ["adds", "subtracts"]
    assert language_for("a_test.exs").tests('test "renders" do') == ["renders"]


# -- state -------------------------------------------------------------------------------------------------

def test_a_check_before_the_last_edit_is_not_run_since():
    st = state_of([rec("user", "fix it")] + bash("pytest", "3 passed in 0.1s") + edit("/w/a.py"))
    c = next(c for c in st.checks if c.kind == "test")
    assert c.passed and c.edited_after == ("/w/a.py",) and st.next.kind == "run"


def test_a_failing_check_is_the_next_step_until_a_later_run_passes():
    fail = "FAILED tests/t.py::test_x - assert 1 == 2\n1 failed in 0.1s"
    recs = [rec("user", "fix the bug")] + edit("/w/a.py") + bash("pytest", fail, 1)
    st = state_of(recs)
    assert st.next.kind == "fix" and "tests/t.py::test_x" in st.next.detail
    assert [e.fixed_at for e in st.errors] == [-1]
    st = state_of(recs + edit("/w/a.py", "b", "c") + bash("pytest", "2 passed in 0.1s"))
    assert st.next.kind != "fix" and all(e.fixed_at >= 0 for e in st.errors)


def test_a_commit_holds_the_changes_staged_before_it_and_outside_files_are_not_the_projects():
    recs = [rec("user", "add it", meta={"cwd": "/w"})] + edit("/w/a.py") + edit("/w/b.py") + \
        call("Write", file_path="/home/u/.claude/plans/p.md", content="# plan", result="File created successfully") + \
        bash("git add a.py && git commit -m 'feat: a'", "[main 9f8e7d6] feat: a\n 1 file changed")
    st = state_of(recs)
    assert {f.path: f.commit for f in st.files}["a.py"] == "9f8e7d6"
    assert [f.path for f in st.current.uncommitted] == ["b.py"]


def test_commit_all_holds_every_change_so_far():
    recs = [rec("user", "x", meta={"cwd": "/w"})] + edit("/w/a.py") + edit("/w/b.py") + \
        bash("git commit -am 'wip'", "[main abc1234] wip\n 2 files changed")
    st = state_of(recs)
    assert st.current.uncommitted == () and all(f.commit == "abc1234" for f in st.files)


def test_the_latest_request_not_acted_on_is_the_next_step():
    st = state_of([rec("user", "write the parser")] + edit("/w/p.py") + [rec("user", "also handle empty input please")])
    assert st.next.kind == "request" and st.next.target == "also handle empty input please"


def test_the_item_in_progress_and_then_the_next_one():
    recs = [rec("user", "work on app-1")] + bash("bd update app-1.1 --status in_progress", "ok") + edit("/w/a.py") + \
        bash("bd close app-1.1", "closed") + bash("git commit -am 'one'", "[main 1111111] one") + \
        bash("bd create --title 'Second part' --json", '{"id": "app-1.2", "title": "Second part"}')
    st = state_of(recs)
    assert [(i.item, i.status) for i in st.items] == [("app-1.1", "closed"), ("app-1.2", "open")]
    assert st.next.kind == "next_item" and st.next.target == "app-1.2"
    assert st.steps[-1].done and st.steps[-1].commits[0].hash == "1111111"


def test_errors_are_fixed_by_the_change_that_touches_what_they_name():
    lint = "internal/a.go:10:2: G306: Expect WriteFile permissions to be 0600 or less (gosec)\n1 issues:"
    recs = [rec("user", "lint it", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/internal/a.go", content="package a\nfunc W() { os.WriteFile(p, b, 0o644) }\n",
             result="File created successfully") + bash("golangci-lint run ./...", lint, 1) + \
        edit("/w/internal/a.go", "os.WriteFile(p, b, 0o644)", "os.WriteFile(p, b, 0o600)") + \
        bash("golangci-lint run ./...", "0 issues.")
    err = state_of(recs).errors[0]
    assert err.fixed_at >= 0 and err.fix_change == "internal/a.go"
    assert err.fix_how == (("os.WriteFile(p, b, 0o644)", "os.WriteFile(p, b, 0o600)"),)


def test_an_error_silenced_by_a_directive_naming_its_rule_is_not_called_fixed():
    lint = "internal/t.go:28:51: Extract - result 1 (error) is always nil (unparam)\n1 issues:"
    recs = [rec("user", "lint it", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/internal/t.go", content="package a\nfunc Extract() (int, error) { return 1, nil }\n",
             result="File created successfully") + bash("golangci-lint run ./...", lint, 1) + \
        edit("/w/internal/t.go", "func Extract() (int, error) {",
             "//nolint:unparam // kept for the interface\nfunc Extract() (int, error) {") + \
        bash("golangci-lint run ./...", "0 issues.")
    st = state_of(recs)
    assert st.errors[0].silenced.startswith("//nolint:unparam")
    text = "\n".join(ln.text for _, lines in compact_span(recs, 800, count).rendered.sections for ln in lines)
    assert "silenced, not fixed" in text
    other = recs[:3] + bash("golangci-lint run ./...", "internal/t.go:3:1: exported func (revive)\n1 issues:", 1) + recs[5:]
    assert state_of(other).errors[0].silenced == ""     # a directive for another rule silences nothing here


def test_a_credo_message_naming_no_rule_is_silenced_by_the_directive_whose_check_it_describes():
    src = "defmodule A do\n  def f do\n    B.C.g()\n  end\nend\n"
    credo = "  lib/a.ex:3:5 Nested modules could be aliased at the top of the invoking module.\n" \
        "  lib/a.ex:3:5 Prefer using an implicit `try` rather than explicit `try`.\n2 issues"
    recs = [rec("user", "clean it", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/lib/a.ex", content=src, result="File created successfully") + \
        bash("mix credo --strict lib/a.ex", credo, 1) + \
        edit("/w/lib/a.ex", "    B.C.g()", "    # credo:disable-for-next-line Credo.Check.Design.AliasUsage\n    B.C.g()") + \
        bash("mix credo --strict lib/a.ex", "found no issues")
    got = {e.text.split(": ", 1)[-1][:20]: e.silenced for e in state_of(recs).errors}
    assert any(v.startswith("# credo:disable-for-next-line") for k, v in got.items() if "Nested" in k), got
    assert all(v == "" for k, v in got.items() if "Prefer" in k), got     # another check's message: not it


def test_the_project_line_names_each_check_once_without_the_files_it_ran_on():
    recs = [rec("user", "test it", meta={"cwd": "/w"})] + edit("/w/lib/a.ex") + \
        bash("mix test test/a_test.exs", "1 test, 0 failures") + bash("mix test test/b_test.exs test/c_test.exs", "2 tests, 0 failures") + \
        bash("mix credo --strict lib/a.ex lib/b.ex", "found no issues")
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    line = next(x for x in text.splitlines() if "checks run" in x)
    assert "`mix test`, `mix credo --strict`" in line and "test/a_test.exs" not in line, line


def test_an_edit_inside_a_module_alone_tells_its_lines():
    before = "defmodule R do\n  scope \"/hooks\" do\n    post(\"/start\", C, :start)\n  end\nend\n"
    recs = [rec("user", "route it", meta={"cwd": "/w"})] + call("Read", file_path="/w/lib/router.ex", result=before) + \
        edit("/w/lib/router.ex", '    post("/start", C, :start)\n', '    post("/start", C, :start)\n    post("/end", C, :stop)\n')
    f = state_of(recs).files[0]
    assert f.lines_in == ('post("/end", C, :stop)',), f


def test_an_error_a_fixer_cleared_is_fixed_by_running_it_and_the_runners_report_is_not_the_error():
    out = ("$ biome check --error-on-warnings\nsrc/db.ts format\n  × Formatter would have printed the following content:\n"
           "  × Formatter would have printed the following content:\nFound 2 errors.\n"
           "error: script \"lint\" exited with code 1")
    recs = [rec("user", "lint it")] + bash("bun run lint", out, 1) + bash("bun run lint:fix", "Fixed 2 files.") + \
        bash("bun run lint", "Checked 286 files. No fixes applied.")
    st = state_of(recs)
    assert st.errors and all(e.fixed_by == "bun run lint:fix" for e in st.errors)
    assert not any("exited with code" in e.text for e in st.errors)
    text = "\n".join(ln.text for _, lines in compact_span(recs, 800, count).rendered.sections for ln in lines)
    assert text.count("Error from `bun run lint`") == 1 and "fixed by running `bun run lint:fix`" in text
    st = state_of([rec("user", "x")] + bash("make test", "make: *** [test] Error 2", 1) +
                  bash("git commit -m fix", "[main abc1234] fix") + bash("make test", "ok"))
    assert st.errors[0].fixed_by == ""           # a commit message saying "fix" is no fixer


def test_the_last_search_says_what_it_found():
    recs = [rec("user", "fix the crash")] + edit("/w/lib/a.ex") + \
        call("Grep", pattern="terminal_scrolled", path="/w/lib", result="Found 1 file\nlib/b.ex") + \
        call("Grep", pattern="terminal_scrolled", path="/w/lib/b.ex", output_mode="content",
             result="11-  end\n12:  def handle_event(\"terminal_scrolled\", params, socket) do\n13-    x")
    st = state_of(recs)
    assert st.current.found.startswith("only in `lib/b.ex`") and "12: def handle_event" in st.current.found
    recs = [rec("user", "x")] + call("Grep", pattern="nope", path="/w", result="No files found")
    assert state_of(recs).current.found == "nothing"


def test_what_new_code_does_is_its_own_short_text_not_a_list_of_names():
    js = "export function highlight(root) {\n  for (const b of root.querySelectorAll('code')) {\n    hljs.highlightElement(b)\n  }\n}\n"
    recs = [rec("user", "add highlighting")] + call("Write", file_path="/w/app.js", content=js, result="File created")
    f = state_of(recs).files[0]
    assert f.code == (("highlight", "export function highlight(root) { for (const b of root.querySelectorAll('code')) "
                                    "{ hljs.highlightElement(b) } }"),)
    text = "\n".join(ln.text for _, lines in compact_span(recs, 800, count).rendered.sections for ln in lines)
    assert "`highlight` reads: `export function highlight(root)" in text
    ex = "defmodule A do\n  def f(:a) do\n    1\n  end\n  def f(:b) do\n    2\n  end\nend\n"
    py = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    test = "func TestX(t *testing.T) {\n  if f() != 1 {\n    t.Fatal()\n  }\n}\n"
    for path, content in (("/w/a.ex", ex), ("/w/a.py", py), ("/w/a_test.go", "package a\n" + test)):
        recs = [rec("user", "x")] + call("Write", file_path=path, content=content, result="File created")
        assert all(n not in ("f/1", "f", "TestX") for n, _ in state_of(recs).files[0].code), path


def test_the_same_test_name_in_two_blocks_counts_twice():
    text = "describe('a', () => { it('works', () => {}) })\ndescribe('b', () => { it('works', () => {}) })\n"
    st = state_of([rec("user", "test it")] + call("Write", file_path="/w/a.test.ts", content=text,
                                                  result="File created successfully"))
    assert st.files[0].tests == ("works", "works")


def test_words_naming_code_a_later_edit_took_out_are_not_kept():
    recs = [rec("user", "wire it")] + \
        call("Write", file_path="/w/live.ex", content="defmodule Live do\nend\n", result="File created successfully") + \
        edit("/w/live.ex", "defmodule Live do\n", "defmodule Live do\n  alias App.SessionRegistry\n",
             text="Use `SessionRegistry` in the live view for the status.") + \
        edit("/w/live.ex", "  alias App.SessionRegistry\n", "", text="Remove the unused alias again.")
    f = state_of(recs).files[0]
    assert not any("SessionRegistry" in x for x in f.intents)


def test_a_pasted_plan_is_told_part_by_part():
    plan = "Implement the following plan:\n\n# Plan: Faster import\n\n## Context\nImport is slow on big files.\n\n" + \
        "\n".join(f"## Step {k}: Part {k}\n- change `mod{k}.py` so that it streams\n- keep the old API\n" for k in range(1, 6))
    r = compact_span([rec("user", plan)] + edit("/w/mod1.py"), 2000, count).rendered
    sections = dict(r.sections)
    assert "Faster import" in r.task and len(sections["Plan"]) == 5
    assert "mod3.py" in sections["Plan"][2].text


def test_a_plan_part_too_long_to_tell_whole_keeps_whole_statements_and_marks_the_rest():
    steps = "\n".join(f"- `handle{k}()` — calls the start logic, then writes state file number {k} for the session"
                      for k in range(1, 12))
    plan = "Implement the following plan:\n\n# Plan: Hooks\n\n## Context\nHooks are missing.\n\n" + \
        "## Step 1: Handlers\nNew file: `handlers.go`.\nPattern: Follow `other.go`.\n" + steps + "\n\n## Step 2: Tests\n- add tests\n"
    r = compact_span([rec("user", plan)] + edit("/w/main.go"), 2000, count).rendered
    part = dict(r.sections)["Plan"][0].text
    assert "Follow `other.go`;" in part and ".;" not in part and "…" not in part and " more)" not in part
    inner = part[part.index("(") + 1:-1].split("; ")
    assert len(inner) == 13 and all(f"`handle{k}()`" in part for k in range(1, 12))    # the rest by name, not cut
    assert all(x.startswith(("New file", "Pattern", "`handle")) and x.endswith(("`", "session")) for x in inner)
    assert inner[-1] == "`handle11()`" and inner[2].endswith("session")     # the first told whole, the rest named
    plain = plan.replace(" — calls", " calls")      # items with no head: the rest counted
    r = compact_span([rec("user", plain)] + edit("/w/main.go"), 2000, count).rendered
    part = dict(r.sections)["Plan"][0].text
    m = re.search(r"; and (\d+) more\)$", part)
    assert m and len(part[part.index("(") + 1:m.start()].split("; ")) + int(m.group(1)) == 13


@pytest.mark.parametrize("path,old,new,gained,lost", [
    ("/w/types.ts", 'export type Step =\n\t| "clone"\n\t| "reset";\n',
     'export type Step =\n\t| "clone"\n\t| "plan_fix"\n\t| "reset";\n', ("plan_fix",), ()),
    ("/w/types.ts", "export interface Result {\n\tpatch: string;\n\told?: number;\n}\n",
     "export interface Result {\n\tpatch: string;\n\terrorPlan?: string;\n}\n", ("errorPlan",), ("old",)),
    ("/w/a.go", "type Cfg struct {\n\tName string\n}\n", "type Cfg struct {\n\tName string\n\tMode string `json:\"mode\"`\n}\n",
     ("Mode",), ()),
    ("/w/a.rs", "pub enum Color {\n    Red,\n}\n", "pub enum Color {\n    Red,\n    Green(u8),\n}\n", ("Green",), ()),
])
def test_an_edit_of_a_type_tells_the_members_it_gained_and_lost(path, old, new, gained, lost):
    recs = [rec("user", "extend the types")] + call("Read", file_path=path, result=old) + edit(path, old, new)
    f = state_of(recs).files[0]
    assert f.members == ((f.changed[0], gained, lost),)


def test_the_module_around_a_changed_function_is_not_news_and_a_bare_json_key_line_says_nothing():
    mod = "defmodule App.Live do\n  def mount(a) do\n    a\n  end\nend\n"
    new = "defmodule App.Live do\n  alias App.Registry\n\n  def mount(a) do\n    Registry.watch(a)\n  end\nend\n"
    js_old = '{\n  "hooks": {\n  }\n}\n'
    js_new = '{\n  "hooks": {\n    "Stop": [\n      {"command": "notify.sh"}\n    ],\n    "matcher": "",\n  }\n}\n'
    recs = [rec("user", "watch sessions")] + call("Read", file_path="/w/lib/live.ex", result=mod) + \
        edit("/w/lib/live.ex", mod, new) + call("Read", file_path="/w/hooks.json", result=js_old) + \
        edit("/w/hooks.json", js_old, js_new)
    live, hooks = state_of(recs).files
    assert live.changed == ("mount/1",)
    assert hooks.lines_in == ('{"command": "notify.sh"}',)


def test_a_pasted_plan_keeps_its_verification_list_and_its_mapping_table_and_not_what_follows_them():
    plan = "Implement the following plan:\n\n# Plan: Hooks\n\n## Context\nThe CLI has no hooks.\n\n" + \
        "### Event mapping\n\n| Their event | Our hook |\n|---|---|\n| `agent:start` | session-start |\n" + \
        "| `agent:stop` | session-end |\n\n## Steps\n\n### Step 1: Handlers\n- add `handlers.go`\n\n" + \
        "### Step 2: Tests\n- add `handlers_test.go`\n\n---\n\n## Verification\n\n1. `make lint` — no lint errors\n" + \
        "2. Manual test: `cli enable` installs the hooks\n\n\nIf you need details, read the transcript at: /tmp/t.jsonl\n"
    r = compact_span([rec("user", plan)] + edit("/w/handlers.go"), 3000, count).rendered
    lines = [ln.text for ln in dict(r.sections)["Plan"]]
    mapping = next(x for x in lines if x.startswith("Event mapping"))
    assert "`agent:start` → session-start; `agent:stop` → session-end" in mapping and "Their event" not in mapping
    check = next(x for x in lines if x.startswith("Verification"))
    assert "`make lint` — no lint errors; Manual test: `cli enable` installs the hooks" in check
    assert "transcript" not in check
    assert [x.split(" (")[0] for x in lines] == ["Event mapping", "Step 1: Handlers", "Step 2: Tests", "Verification"]


def test_a_plan_the_user_approved_is_told_in_the_step_that_followed_it_with_its_reasons():
    plan = "# Plan: Enrich the renderer\n\n## Context\nThe panel is hard to scan.\n\n## Approach\n\n" + \
        "### Strategy: parallel path\n\nKeep `render/1` unchanged (backward compat for callers). Add a parallel path:\n\n" + \
        "- `render/2` calls `render_enriched/2`\n- old functions stay untouched\n\n## Verification\n- `mix test`\n"
    recs = [rec("user", "Work on the renderer")] + call("ExitPlanMode", plan=plan, result="User has approved your plan.") + \
        edit("/w/renderer.ex") + bash("git commit -m 'feat: enrich'", "[main 1a2b3c4] feat: enrich")
    r = compact_span(recs, 3000, count).rendered
    text = "\n".join(ln.text for _, lines in r.sections for ln in lines)
    line = next(x for x in text.splitlines() if x.startswith("The plan the user approved"))
    assert "“Plan: Enrich the renderer”" in line and "Keep `render/1` unchanged (backward compat for callers)" in line
    assert "`render/2` calls `render_enriched/2`" in line and "Add a parallel path" not in line


def test_a_created_file_edited_later_tells_what_the_later_edits_revised():
    src = "package a\n\nfunc isTool(n string) bool {\n\tfor _, x := range tools {\n\t\tif x == n {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n"
    recs = [rec("user", "add it")] + call("Write", file_path="/w/a.go", content=src, result="File created successfully") + \
        edit("/w/a.go", "\tfor _, x := range tools {\n\t\tif x == n {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false",
             "\treturn slices.Contains(tools, n)")
    f = state_of(recs).files[0]
    assert f.action == "created" and f.revised == ("isTool",)
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "then revised `isTool`" in text


def test_a_changed_function_keeps_the_lines_its_edit_brought_in_for_the_long_form():
    old = "export function initDb(db) {\n  db.run('CREATE TABLE r (id TEXT)');\n}\n"
    new = "export function initDb(db) {\n  db.run('CREATE TABLE r (id TEXT)');\n  addColumn(db, 'plan_data_json');\n}\n"
    recs = [rec("user", "store plans")] + call("Read", file_path="/w/db.ts", result=old) + edit("/w/db.ts", old, new)
    f = state_of(recs).files[0]
    assert f.changed == ("initDb",) and dict(f.brought)["initDb"] == ("addColumn(db, 'plan_data_json');",)   # the line


def test_a_later_request_the_agent_is_on_comes_before_committing_older_changes():
    recs = [rec("user", "add the flag", meta={"cwd": "/w"})] + bash("git commit -m 'start'", "[main 1a2b3c4] start") + \
        edit("/w/notes.md") + [rec("assistant", "Added it.")] + \
        [rec("user", "clean up and delete the untracked files, then remove this session")] + \
        bash("git status --short", "?? notes.md")
    st = state_of(recs)
    assert st.next.kind == "request" and st.next.title == "started"
    text = compact_span(recs, 2000, count).rendered
    nxt = dict(text.sections)["Next step"][0].text
    assert nxt.startswith("Carry on with what the user asked last") and "commit" not in nxt


def test_a_style_sheet_edit_names_its_rules_by_selector_a_few_of_them():
    old = ".row {\n  color: black;\n}\n"
    new = old + "".join(f".status-{k} {{\n  color: red;\n}}\n" for k in ("active", "idle", "ended", "lost", "gone", "new"))
    recs = [rec("user", "badges")] + call("Read", file_path="/w/app.css", result=old) + edit("/w/app.css", old, new)
    f = state_of(recs).files[0]
    assert f.added == (".status-active", ".status-idle", ".status-ended", ".status-lost") and not f.lines_in


def test_a_closed_item_is_told_by_the_reason_it_was_closed_with():
    recs = [rec("user", "work on bead app-1")] + bash("bd update app-1 --status in_progress", "✓ Updated app-1") + \
        edit("/w/a.ex") + bash('bd close app-1 --reason="Added the registry with a 500ms debounce"', "✓ Closed app-1")
    it = next(i for i in state_of(recs).items if i.item == "app-1")
    assert it.status == "closed" and it.closed_how == "Added the registry with a 500ms debounce"


def test_a_command_that_cleared_once_given_a_flag_names_that_run_as_the_fix():
    recs = [rec("user", "commit it")] + \
        bash("git add lib/a.ex priv/app.css", "The following paths are ignored by one of your .gitignore files:\npriv", code=1) + \
        bash("git add -f priv/app.css && git add lib/a.ex", "") + \
        bash("git push 2>&1", "fatal: The current branch b has no upstream branch.", code=1) + \
        bash("git push -u origin b && git status", "branch 'b' set up to track")
    fixes = {e.source.split()[1]: e.fixed_by for e in state_of(recs).errors}
    assert fixes == {"add": "git add -f priv/app.css", "push": "git push -u origin b"}


def test_new_code_tells_the_messages_it_sends_and_takes():
    old = "defmodule W do\n  def init(s), do: {:ok, s}\nend\n"
    new = ("defmodule W do\n  def init(s), do: {:ok, s}\n\n  def flush(s) do\n    Phoenix.PubSub.broadcast(\n"
           "      App.PubSub,\n      \"jobs:#{s.id}\",\n      {:job_done, s.id, s.count}\n    )\n  end\n\n"
           "  def handle_info({:tick, _at}, socket) do\n    {:noreply, socket}\n  end\nend\n")
    recs = [rec("user", "wire it")] + call("Read", file_path="/w/lib/w.ex", result=old) + edit("/w/lib/w.ex", old, new) + \
        call("Write", file_path="/w/assets/hook.js", content="this.handleEvent('highlight', () => run())\n",
             result="File created successfully")
    w, js = state_of(recs).files
    assert w.messages == ('broadcasts `{:job_done, s.id, s.count}` on `"jobs:#{s.id}"`', "handles `{:tick, _at}`")
    assert js.messages == ("listens for `highlight`",)


def test_an_approval_without_a_plan_text_approves_the_plan_file_the_agent_wrote():
    plan = "# Plan: Quality tools\n\n## Problem\nNo checks run.\n\n## Solution\n- Credo for style\n- mix_audit for deps\n"
    recs = [rec("user", "set up quality tools")] + \
        call("Write", file_path="/w/plan.md", content=plan, result="File created successfully") + \
        call("ExitPlanMode", result="User has approved exiting plan mode.")
    st = state_of(recs)
    assert st.plan_text == plan and st.plan_at >= 0


def test_the_problem_an_edit_answers_comes_with_the_agents_words_for_it():
    recs = [rec("user", "style the rows")] + \
        edit("/w/live.ex", text="Too many conditionals in one function. Let me extract the subagent logic into a helper.")
    assert state_of(recs).files[0].intents == (
        "Extract the subagent logic into a helper — why: Too many conditionals in one function",)
    recs = [rec("user", "style the rows")] + \
        edit("/w/live.ex", text="Looks good so far. Let me extract the subagent logic into a helper.")
    assert state_of(recs).files[0].intents == ("Extract the subagent logic into a helper.",)


def test_an_edit_that_brings_in_a_module_says_so_and_a_literal_builder_is_not_quoted():
    fn = "export function run(root) {\n  %s\n}\n"
    js = "import hljs from 'highlight.js/lib/core'\nimport elixir from 'highlight.js/lib/languages/elixir'\n" + \
        fn % "hljs.highlightAll(root)"
    recs = [rec("user", "highlight")] + edit("/w/app.js", fn % "paint(root)", js)
    f = state_of(recs).files[0]
    assert f.imports == ("highlight.js/lib/core", "highlight.js/lib/languages/elixir")
    text = "\n".join(ln.text for _, lines in compact_span(recs, 800, count).rendered.sections for ln in lines)
    assert "now uses `highlight.js/lib/core`, `highlight.js/lib/languages/elixir`" in text
    later = recs + edit("/w/app.js", "import elixir from 'highlight.js/lib/languages/elixir'\n", "")
    assert state_of(later).files[0].imports == ("highlight.js/lib/core",)     # taken out again: not told
    ex = "defmodule A do\n  defp plain(text) do\n    %{line: text, kind: nil}\n  end\nend\n"
    recs = [rec("user", "x")] + call("Write", file_path="/w/a.ex", content=ex, result="File created")
    assert "plain/1" not in dict(state_of(recs).files[0].code)


def test_after_saying_what_it_looks_into_and_looking_the_agent_goes_on_before_the_checks():
    recs = [rec("user", "fix the crash")] + bash("mix test", "3 tests, 0 failures") + edit("/w/lib/a.ex") + \
        call("Grep", pattern="terminal_scrolled", path="/w/lib", result="lib/b.ex:12: def handle_event(\"terminal_scrolled\"",
             text="Now check if there's a `terminal_scrolled` handler that might crash.")
    st = state_of(recs)
    assert st.next.kind == "continue" and "terminal_scrolled" in st.next.target and st.next.detail == ("mix test",)


def test_a_request_not_started_gets_the_comments_the_code_already_has_about_it():
    src = ("export function run() {\n  // Merge the AGENTS.md and CLAUDE.md pairs found\n  log(\"merging\");\n"
           "  const done = await mergeColocatedPairs(dir);\n  // Report\n  mergeReport(done);\n}\n")
    recs = [rec("user", "build it")] + call("Read", file_path="/w/src/run.ts", result=src) + edit("/w/src/x.ts") + \
        [rec("assistant", "Done."), rec("user", "make sure AGENTS.md and CLAUDE.md get merged")]
    st = state_of(recs)
    assert st.next.kind == "request"
    assert st.related_notes and st.related_notes[0][2] == "Merge the AGENTS.md and CLAUDE.md pairs found"
    assert st.related_notes[0][3] == ("mergeColocatedPairs",)    # the call the comment heads, not the next part's


def test_a_request_not_started_gets_how_the_code_it_names_connects_and_not_calls_a_later_edit_took_out():
    src = ("export function buildContext(input) {\n  const a = agentNotice(input);\n  const b = claudeFilter(input);\n"
           "  return a + b;\n}\n\nexport function agentNotice(input) {\n  return 'x';\n}\n\n"
           "export function claudeFilter(input) {\n  return 'y';\n}\n\nexport function buildPrompt(input) {\n"
           "  const role = agentNotice(input);\n  const c = claudeFilter(input);\n  return role + c;\n}\n")
    recs = [rec("user", "build it")] + call("Read", file_path="/w/src/gen.ts", result=src) + \
        edit("/w/src/gen.ts", "  const role = agentNotice(input);\n  const c = claudeFilter(input);",
             "  const role = 'You execute a plan.';\n  const c = '';") + \
        [rec("assistant", "Done."), rec("user", "make sure the agent notice and the claude filter apply everywhere")]
    st = state_of(recs)
    assert st.next.kind == "request"
    assert [(c, callees) for c, _, callees, _ in st.related_calls] == [("buildContext", ("agentNotice", "claudeFilter"))]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "How that code connects: in `/w/src/gen.ts`, `buildContext` calls `agentNotice`, `claudeFilter`." in text


# -- the summary -------------------------------------------------------------------------------------------

def count(text):
    return len(text) // 4 + 1


def test_the_summary_stays_within_its_budget_and_says_where_the_work_stands():
    recs = [rec("user", "add retries to fetch_page")] + edit("/w/fetch.py", "def fetch_page():\n    pass\n",
                                                            "def fetch_page():\n    retry()\n") + \
        bash("pytest", "FAILED tests/t.py::test_retry - AssertionError\n1 failed in 0.1s", 1)
    for budget in (60, 200, 800):
        s = compact_span(recs, budget, count)
        assert s.rendered.tokens <= budget
    r = compact_span(recs, 800, count).rendered
    sections = dict(r.sections)
    assert "add retries" in r.task
    assert any("FAILED" in ln.text for ln in sections["Current work"])
    assert "test_retry" in sections["Next step"][0].text


def test_a_function_is_told_by_its_own_comments_its_numbered_steps_first_and_only_what_the_edit_wrote():
    go = ("package h\n\n// Install writes the handler.\nfunc Install(dev bool) error {\n\t// Check for idempotency BEFORE removing\n"
          "\tif done() {\n\t\treturn nil\n\t}\n\t//nolint:gosec // fixed path\n\t// Write handler.ts with the command substituted\n"
          "\twrite(dev)\n\t// x := old()\n\treturn nil\n}\n\n// Next is the next one.\nfunc Next() {}\n")
    ts_old = "function run() {\n  // 1. Load\n  load();\n  // 2. Save\n  save();\n}\n"
    ts_new = ("function run() {\n  // 1. Load\n  load();\n  // --- Phase 1: Plan ---\n  plan();\n  // tally costs\n  sum();\n"
              "  // --- Phase 2: Execute ---\n  exec();\n  // Do NOT reset — leave the tree dirty\n  keep();\n"
              "  // --- Phase 3: Report ---\n  report();\n  const s = `\n# Role\n## Output\n`;\n  // 2. Save\n  save();\n}\n")
    recs = [rec("user", "add the installer")] + \
        call("Write", file_path="/w/h.go", content=go, result="File created successfully") + \
        call("Read", file_path="/w/run.ts", result=ts_old) + edit("/w/run.ts", ts_old, ts_new)
    h, run = state_of(recs).files
    assert h.outline == (("Install", ("Check for idempotency BEFORE removing",
                                      "Write handler.ts with the command substituted"), ()),)   # not the lint line nor code
    assert run.outline == (("run", ("Phase 1: Plan", "Phase 2: Execute", "Do NOT reset — leave the tree dirty",
                                    "Phase 3: Report"), ()),)   # framed steps, not `# Role` in a string, not the old steps
    text = compact_span(recs, 3000, count).rendered
    lines = [x.text for _, ls in text.sections for x in ls]
    assert "What `run` does, in its own comments: Phase 1: Plan → Phase 2: Execute → Do NOT reset — leave the tree " \
        "dirty → Phase 3: Report." in lines


def test_a_functions_outline_comes_with_the_string_values_it_works_with_not_its_messages():
    go = ("package h\n\nfunc Install(dev bool) error {\n\t// Pick the command\n\tcmd := \"entire\"\n\tif dev {\n"
          "\t\tcmd = \"go run ${DIR}/main.go\"\n\t}\n\t// Fill the template\n"
          "\tout := strings.ReplaceAll(tmpl, \"%%CMD%%\", cmd)\n"
          "\tif err := write(out); err != nil {\n\t\treturn fmt.Errorf(\"failed to write: %w\", err)\n\t}\n"
          "\tlog.Info(\"wrote the handler file\")\n\treturn nil\n}\n")
    recs = [rec("user", "add the installer")] + \
        call("Write", file_path="/w/h.go", content=go, result="File created successfully")
    assert state_of(recs).files[0].outline == (("Install", ("Pick the command", "Fill the template"),
                                                ("go run ${DIR}/main.go", "%%CMD%%")),)


def test_errors_of_one_command_name_it_once_and_a_fix_in_the_file_the_error_names_is_there():
    bad = "package a\n\nfunc A(p string) int { return 1 }\n\nfunc B() {}\n"
    out = "a.go:3:8: unused-parameter: parameter 'p' seems to be unused (revive)\nb.go:5:6: func B is unused (unused)\n"
    recs = [rec("user", "lint it")] + call("Read", file_path="/w/a.go", result=bad) + \
        call("Bash", command="golangci-lint run ./...", result=out, is_error=True) + \
        edit("/w/a.go", "func A(p string) int", "func A(_ string) int") + \
        call("Bash", command="golangci-lint run ./...", result="0 issues.")
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    errs = [x for x in lines if "unused" in x]
    assert errs[0].startswith("Error from `golangci-lint run ./...`: `a.go:3:8:") and "fixed by an edit there" in errs[0]
    assert errs[1].startswith("Same command, another error: `b.go:5:6:")


def test_a_boxed_diagnostic_is_named_by_the_file_and_rule_its_header_gives():
    from ctxkit.compaction.extract.failures import key_lines
    out = ("$ biome check --error-on-warnings\n at src/db.ts format ━━━━━━━━━━━━━━━━\n\n"
           "  × Formatter would have printed the following content:\n\n    257 257 │   // Add\n")
    assert key_lines(out)[0] == "src/db.ts format: Formatter would have printed the following content"


def test_code_added_below_a_module_attribute_does_not_change_it_and_the_plan_file_is_named_with_the_plan():
    old = "defmodule S do\n  @max 20\n\n  def a, do: 1\nend\n"
    new = "defmodule S do\n  @max 20\n\n  @doc \"Syncs one.\"\n  def one(id), do: id\n\n  def a, do: 1\nend\n"
    recs = [rec("user", "sync one")] + call("Read", file_path="/w/lib/s.ex", result=old) + \
        edit("/w/lib/s.ex", "  @max 20\n", "  @max 20\n\n  @doc \"Syncs one.\"\n  def one(id), do: id\n")
    f = state_of(recs).files[0]
    assert "one/1" in f.added and "max" not in f.changed
    plan = "# Plan: Sync\n\n## Steps\n1. add `one/1`\n"
    recs = [rec("user", "plan the sync")] + \
        call("Write", file_path="/home/u/.claude/plans/p.md", content=plan, result="File created successfully") + \
        call("ExitPlanMode", result="User has approved exiting plan mode.") + edit("/w/lib/s.ex", old, new)
    text = "\n".join(x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls)
    assert "The plan the user approved (`/home/u/.claude/plans/p.md`)" in text and "Created `/home" not in text


def test_what_the_agent_said_about_code_a_later_edit_changed_is_not_quoted_for_the_latest_request():
    gen = "export function buildPrompt(input) {\n  return `Role: ${notice(input)} ${notice(input)}`;\n}\n"
    fixed = "export function buildPrompt(input) {\n  return `Role: ${notice(input)}`;\n}\n"
    recs = [rec("user", "review the prompt builder")] + call("Read", file_path="/w/gen.ts", result=gen) + \
        [rec("assistant", "`buildPrompt` renders the consolidation notice twice in the prompt builder.")] + \
        edit("/w/gen.ts", "${notice(input)} ${notice(input)}", "${notice(input)}") + \
        [rec("user", "make sure the prompt builder keeps the consolidation notice")]
    st = state_of(recs)
    assert st.next.kind == "request" and not st.related_said     # the edit after it fixed what it reported


def test_an_insertion_made_in_one_of_two_like_places_tells_the_other_is_not_changed_yet():
    page = ("<table>\n  <tr>\n    <th>Session name</th>\n    <th>Git branch</th>\n  </tr>\n</table>\n"
            "<table class=\"hidden\">\n  <tr>\n    <th>Session name</th>\n    <th>Git branch</th>\n  </tr>\n</table>\n")
    old = "<table>\n  <tr>\n    <th>Session name</th>\n    <th>Git branch</th>"
    new = "<table>\n  <tr>\n    <th>Session name</th>\n    <th>Status</th>\n    <th>Git branch</th>"
    recs = [rec("user", "show the status", meta={"cwd": "/w"})] + \
        call("Read", file_path="/w/lib/page.html.heex", result=page) + \
        edit("/w/lib/page.html.heex", old, new)
    st = state_of(recs)
    assert st.current.left_alike == (("lib/page.html.heex", "<th>Status</th>", "<th>Session name</th>",
                                      '<table class="hidden">', 1),)      # the line that marks the other place
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    assert "Not done everywhere yet: in `lib/page.html.heex` an edit added `<th>Status</th>` after " \
        "`<th>Session name</th>`, but not at the like place under `<table class=\"hidden\">`." in lines
    done = edit("/w/lib/page.html.heex", "<table class=\"hidden\">\n  <tr>\n    <th>Session name</th>\n",
                "<table class=\"hidden\">\n  <tr>\n    <th>Session name</th>\n    <th>Status</th>\n")
    assert state_of(recs + done).current.left_alike == ()     # repeated there too: nothing left


def test_a_file_made_and_removed_is_told_so_and_a_commit_names_the_files_a_command_made():
    out = ("[main 66e1a0a] feat: sync\n 3 files changed, 40 insertions(+)\n"
           " create mode 100644 priv/repo/migrations/20260212_add_identity.exs\n")
    recs = [rec("user", "add the identity", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/priv/repo/migrations/20260212_manual.exs", content="defmodule M do\nend\n",
             result="File created successfully") + bash("rm priv/repo/migrations/20260212_manual.exs", "") + \
        edit("/w/lib/message.ex") + bash("git commit -am 'feat: sync'", out)
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    assert "Created, then deleted `priv/repo/migrations/20260212_manual.exs`." in lines
    assert any(x.startswith("Committed `66e1a0a` “feat: sync”, with `priv/repo/migrations/20260212_add_identity.exs`, "
                            "which no edit in the session wrote") for x in lines)


def test_an_edit_intent_drops_its_step_label():
    from ctxkit.compaction.analyze.prose import edit_intent
    assert edit_intent("Step 1: Add the agent constants to the registry.") == "Add the agent constants to the registry."
    assert edit_intent("Fix: Remove the explicit calls from the Role section.") == \
        "Remove the explicit calls from the Role section."


def test_a_created_file_with_one_type_lists_its_methods_with_their_docs_and_skips_getter_docs():
    go = ("package oc\n\n// Agent implements the agent interface.\ntype Agent struct{}\n\n"
          "// Name returns the registry key.\nfunc (o *Agent) Name() string {\n\treturn \"oc\"\n}\n\n"
          "// DetectPresence checks if the tool is configured in the repository.\n"
          "func (o *Agent) DetectPresence() bool {\n\treturn true\n}\n")
    recs = [rec("user", "add the agent", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/oc/agent.go", content=go, result="File created successfully")
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    made = next(x for x in lines if x.startswith("Created `oc/agent.go`"))
    assert "`Name`, `DetectPresence` (checks if the tool is configured in the repository)" in made
    assert "registry key" not in made       # a getter's doc says no more than its name


def test_a_step_with_no_request_of_its_own_is_named_by_what_it_ran():
    recs = [rec("user", "add the agent", meta={"cwd": "/w"})] + edit("/w/a.py") + \
        bash("git commit -am 'feat: a'", "[main 1234567] feat: a\n 1 file changed\n") + \
        bash("git push 2>&1", "fatal: The current branch x has no upstream branch.", code=128) + \
        bash("git push --set-upstream origin x 2>&1", "branch 'x' set up to track 'origin/x'.")
    r = compact_span(recs, 3000, count).rendered
    assert any(re.search(r"^Step 2: ran `git push` \(", name) for name, _ in r.sections)


def test_a_list_of_files_names_only_those_no_other_line_tells():
    from ctxkit.compaction.render.budget import Piece, fill
    head = Piece("Step 1: x", "Files changed: `a.py`, `b.py`, `c.py`.", 1, (1,), group="head",
                 parts=(("fa", "`a.py`"), ("fb", "`b.py`"), ("fc", "`c.py`")),
                 frame=lambda left: "Other files changed: " + ", ".join(left) + ".")
    facts = [Piece("Step 1: x", "Edited `a.py`: added `f`.", 2, (2, 0), group="fa"),
             Piece("Step 1: x", "Edited `b.py`: " + "added `g` " * 200, 2, (2, 1), group="fb")]
    words = lambda t: len(t.split())
    r = fill([head] + facts, 60, words, [])
    lines = [x.text for _, ls in r.sections for x in ls]
    assert lines == ["Edited `a.py`: added `f`.", "Other files changed: `b.py`, `c.py`."]     # after what it leaves
    r = fill([head, facts[0]], 60, words, [])
    head2 = Piece("Step 1: x", "Files changed: `a.py`.", 1, (1,), group="head", parts=(("fa", "`a.py`"),),
                  frame=lambda left: "Other files changed: " + ", ".join(left) + ".")
    assert [x.text for _, ls in fill([head2, facts[0]], 60, words, []).sections for x in ls] == \
        ["Edited `a.py`: added `f`."]       # every file told: the list is gone


def test_the_request_list_is_left_out_when_it_holds_only_the_task_and_the_latest_request():
    recs = [rec("user", "add the status column")] + edit("/w/a.ex") + [rec("user", "continue until all are done")] + \
        edit("/w/b.ex")
    r = compact_span(recs, 3000, count).rendered
    assert "User requests" not in dict(r.sections) and r.latest.startswith("continue until all are done")


def test_a_plans_design_decisions_are_told_whole_when_the_budget_allows():
    decisions = "\n".join(f"- **Choice {k}**: option number {k} because reason {k} holds" for k in range(1, 12))
    plan = ("Implement the following plan:\n\n# Plan: Pipeline\n\n## Context\nThe pipeline is slow.\n\n"
            "## Design Decisions\n" + decisions + "\n\n## Step 1: Engine\n- rewrite the loop\n\n## Step 2: Tests\n- add tests\n")
    r = compact_span([rec("user", plan)] + edit("/w/engine.ts"), 4000, count).rendered
    part = next(x.text for x in dict(r.sections)["Plan"] if x.text.startswith("Design Decisions"))
    assert all(f"Choice {k}: option number {k} because reason {k} holds" in part for k in range(1, 12))
    assert " more)" not in part


@pytest.mark.parametrize("text,before,told", [
    ("const hookMap: Record<string, string> = {\n  'agent:bootstrap': 'bootstrap',\n  'agent:response': 'response',\n"
     "  'command:new': 'command-new',\n};\n", "",
     "`hookMap` maps `agent:bootstrap` → `bootstrap`, `agent:response` → `response`, `command:new` → `command-new`"),
    ('var verbs = map[string]string{\n\t"a": "b",\n\t"c": "d",\n\t"e": "f",\n}\n', "", "`verbs` maps `a` → `b`, `c` → `d`, `e` → `f`"),
    ('@labels %{\n  "a" => "b",\n  "c" => "d",\n  "e" => "f"\n}\n', "", "`labels` maps `a` → `b`, `c` → `d`, `e` → `f`"),
    ('LABELS = {\n    "a": "b",\n    "c": "d",\n    "x": "y",\n}\n', 'LABELS = {\n    "a": "b",\n    "c": "d",\n}\n',
     "`LABELS` now also maps `x` → `y`"),
])
def test_a_lookup_table_is_told_by_its_entries_and_an_edit_by_the_ones_it_added(text, before, told):
    from ctxkit.compaction.analyze.code import tables
    assert tables(text, before) == [told]
    assert tables("function f() {\n  a: 'b',\n  c: 'd',\n  e: 'f',\n}\n") == []     # a body, not a table


def test_test_cases_of_one_subject_are_named_together():
    go = "package oc\n\n" + "".join(f"func TestInstallHooks_{c}(t *testing.T) {{\n}}\n\n" for c in ("Fresh", "Force")) + \
        "func TestUninstallHooks(t *testing.T) {\n}\n\nfunc TestUninstallHooks_Nothing(t *testing.T) {\n}\n"
    recs = [rec("user", "test the hooks", meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/oc/hooks_test.go", content=go, result="File created successfully")
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    assert any("4 tests added (`TestInstallHooks` (Fresh, Force), `TestUninstallHooks` (Nothing))" in x for x in lines)


def test_an_edit_that_takes_a_call_and_its_import_out_of_use_says_so_and_a_partial_read_keeps_the_whole_text():
    whole = ('import {\n\tbuildPlan,\n\tgeneratePrompts,\n\ttype Input,\n} from "./prompts";\n\n'
             "export function run(input: Input) {\n\tgeneratePrompts(input);\n\treturn buildPlan(input);\n}\n")
    recs = [rec("user", "drop the old prompts", meta={"cwd": "/w"})] + \
        call("Read", file_path="/w/engine.ts", result=whole) + \
        call("Read", file_path="/w/engine.ts", offset=1, limit=3, result='import {\n\tbuildPlan,\n\tgeneratePrompts,\n') + \
        edit("/w/engine.ts", "\tgeneratePrompts(input);\n\treturn", "\treturn") + \
        edit("/w/engine.ts", "\tgeneratePrompts,\n\ttype Input,", "\ttype Input,")
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    assert any(x.startswith("Edited `engine.ts`") and "no longer uses `generatePrompts`" in x for x in lines)
    keep = edit("/w/engine.ts", "\tgeneratePrompts(input);\n\treturn", "\treturn")     # the import still names it
    lines = [x.text for _, ls in compact_span(recs[:5] + keep, 3000, count).rendered.sections for x in ls]
    assert not any("no longer uses" in x for x in lines)


def test_a_rewrite_of_a_test_file_counts_only_the_tests_it_added():
    before = "".join(f'  test "case {k}" do\n    assert true\n  end\n' for k in range(3))
    after = before + "".join(f'  test "new {k}" do\n    assert true\n  end\n' for k in range(2))
    wrap = "defmodule T do\n  use ExUnit.Case\n{}end\n"
    recs = [rec("user", "cover the end hook", meta={"cwd": "/w"})] + \
        call("Read", file_path="/w/test/t_test.exs", result=wrap.format(before)) + \
        call("Write", file_path="/w/test/t_test.exs", content=wrap.format(after), result="File updated")
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    assert any("2 tests added (`new 0`, `new 1`)" in x for x in lines), lines


def test_an_edit_intent_leaves_out_where_in_the_file_it_goes():
    from ctxkit.compaction.analyze.prose import edit_intent
    assert edit_intent("Add the `Plan` component at the bottom of the file (before the last `}`).") == \
        "Add the `Plan` component."


def test_the_plan_part_the_work_in_progress_carries_out_is_told_at_length_first():
    others = "".join(f"## Step {k}: Part {k}\n" + "".join(f"- `f{k}_{j}.go` — does thing {j} of part {k} at some length\n"
                                                          for j in range(8)) + "\n" for k in range(1, 5))
    plan = ("Implement the following plan:\n\n# Plan: Agent\n\n## Context\nAdd the agent.\n\n" + others +
            "## Step 5: Tests\n- `agent_test.go` — interface tests (Parse, Detect, Resume)\n"
            "- `hooks_test.go` — hook tests (Install fresh/force, Uninstall)\n\nAll tests use `t.Parallel()` except those with "
            "`t.Chdir()`.\n")
    recs = [rec("user", plan, meta={"cwd": "/w"})] + \
        call("Write", file_path="/w/agent_test.go", content="package a\n\nfunc TestParse(t *testing.T) {\n}\n",
             result="File created successfully")
    part = next(x.text for x in dict(compact_span(recs, 700, count).rendered.sections)["Plan"] if x.text.startswith("Step 5"))
    assert "Install fresh/force" in part and "`t.Chdir()`" in part      # whole, though the budget is tight


def test_when_the_item_in_progress_is_the_last_open_part_of_its_parent_the_parent_is_closed_after_it():
    recs = [rec("user", "work on app-1 until all are done")] + \
        bash("bd create --title 'Epic' --json", '{"id": "app-1", "title": "Epic"}') + \
        bash("bd update app-1.1 --status in_progress", "ok") + edit("/w/a.py") + \
        bash("bd close app-1.1", "closed") + bash("git commit -am 'one'", "[main 1111111] one") + \
        bash("bd update app-1.2 --status in_progress", "ok") + edit("/w/b.py")
    st = state_of(recs)
    assert [(i.item, i.parent) for i in st.items if i.item == "app-1.2"] == [("app-1.2", "app-1")]
    text = dict(compact_span(recs, 3000, count).rendered.sections)["Next step"][0].text
    assert text.endswith("then close app-1: app-1.2 is the last of its open parts."), text


def test_a_functions_marked_steps_carry_the_on_off_options_their_code_passes():
    from ctxkit.compaction.analyze.outline import outline
    ts = ("export async function run(input: Input) {\n\t// --- Phase 1: Plan the fixes ---\n"
          "\tconst plan = await provider.invoke(p, {\n\t\twriteMode: false,\n\t});\n\t// keep the plan\n\tsave(plan);\n"
          "\t// --- Phase 2: Execute the plan ---\n\tawait provider.invoke(plan, { writeMode: true });\n"
          "\t// --- Phase 3: Capture the diff ---\n\tconst diff = capture();\n\treturn diff;\n}\n")
    [(name, said, _)] = outline("/w/engine.ts", ts, ["run"])
    assert said == ("Phase 1: Plan the fixes (writeMode: false)", "Phase 2: Execute the plan (writeMode: true)",
                    "Phase 3: Capture the diff")


def test_an_edit_inside_types_tells_each_ones_new_members_from_the_file_before_and_after():
    whole = ("export interface Stats {\n\tms: number;\n}\n\nexport interface Result {\n\tpatch: string;\n}\n\n"
             "export interface Item {\n\tid: string;\n\tstats: {\n\t\tfix?: Stats;\n\t} | null;\n\tdone: boolean;\n}\n")
    recs = [rec("user", "store the plans", meta={"cwd": "/w"})] + call("Read", file_path="/w/types.ts", result=whole) + \
        edit("/w/types.ts", "\t\tfix?: Stats;\n\t} | null;\n\tdone: boolean;", "\t\tfix?: Stats;\n\t} | null;\n\tplan: string | null;\n\tdone: boolean;")
    lines = [x.text for _, ls in compact_span(recs, 3000, count).rendered.sections for x in ls]
    assert any("changed `Item` (gained `plan`)" in x for x in lines), lines


def test_a_type_named_in_an_import_list_is_not_a_definition():
    from ctxkit.compaction.analyze.code import definitions
    ts = ('import {\n\tbuild,\n\ttype Input,\n\ttype Step,\n} from "./p";\n\nexport type Mode =\n\t| "a";\n'
          "export type Box<T> = { v: T };\nexport interface Summary {\n\ta: string;\n}\n")
    assert [(d.name, d.kind) for d in definitions("/w/engine.ts", ts)] == \
        [("Mode", "type"), ("Box", "type"), ("Summary", "interface")]
