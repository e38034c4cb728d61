"""How the summary tells what it read, so it reads as an account and not as fragments: a closing report's
points whole (a list item with what it goes on to say, under its heading), a new function with its
parameters, one message a check gave for several files said once with the files."""
from ctxkit.compaction import compact_span
from ctxkit.compaction.analyze.code import definitions
from ctxkit.compaction.analyze.params import params_of
from ctxkit.compaction.analyze.prose import report

from engine_records import bash, call, rec


def count(text):
    return len(text.split())


REVIEW = """All clean. Here's the complete review:

### Bug fixed: Duplicate context in prompts
Both `buildA` and `buildB` rendered the notice twice. Fixed by simplifying the Role section since `buildMinimal` already includes it.

### Non-issues verified:
1. **`captureDiff` double-call** — Phase 2 stages the error changes, Phase 5 re-stages everything. Working as designed.
2. **`BATCH_SIZE` unused** — Now dead code but harmless. Kept per plan.
"""


def test_a_report_point_is_a_list_item_whole_under_its_heading():
    points = report(REVIEW, 10)
    assert points[0] == ("Bug fixed: Duplicate context in prompts — Both `buildA` and `buildB` rendered the notice "
                         "twice. Fixed by simplifying the Role section since `buildMinimal` already includes it.")
    assert points[1] == ("Non-issues verified: `captureDiff` double-call — Phase 2 stages the error changes, "
                         "Phase 5 re-stages everything. Working as designed.")   # its short last sentence with it
    assert points[2].endswith("`BATCH_SIZE` unused — Now dead code but harmless. Kept per plan.")
    assert not any(p.startswith(("All clean", "Here's")) for p in points)      # narration is no point
    assert report("Here's what changed in `stanza_test.go`:\n\n- Removed the `containsLine` helper, no longer needed.\n",
                  5) == ["Removed the `containsLine` helper, no longer needed."]    # a list's lead-in is not a point


def test_list_items_alike_but_for_a_name_are_one_point():
    text = ("## Providers (5 files)\n- Codex: `lightweightModel = \"gpt-5.1-codex-mini\"`, passes `--model` arg when set\n"
            "- GitHub Copilot: `lightweightModel = \"gpt-5.1-codex-mini\"`, passes `--model` arg when set\n")
    assert len(report(text, 10)) == 1


def test_the_summary_tells_each_point_of_the_last_report_on_its_own_line():
    recs = [rec("user", "Review your changes"), *bash("bun test", "3 pass\n0 fail"),
            rec("assistant", REVIEW)]
    lines = [ln.text for ln in dict(compact_span(recs, 2000, count).rendered.sections)["Current work"]]
    k = next(k for k, x in enumerate(lines) if x.startswith("The agent's last words"))    # who said it: once
    said = lines[k:k + 3]
    assert said[1].startswith("“Non-issues verified: `captureDiff` double-call")
    assert said[2].startswith("“`BATCH_SIZE` unused")     # the heading the point before carried: not again


def _params(path, text):
    return {d.name: params_of(path, text, d) for d in definitions(path, text)}


def test_a_function_is_told_with_its_parameters_as_each_language_names_them():
    ts = ("export function generate(\n  input: RemediationInput,\n  plans?: { errorPlan?: string },\n"
          "  summary?: string,\n): Prompts {\n}\nexport function Section({\n  title,\n  content,\n}: Props) {\n}\n"
          "class Box {}\n")
    assert _params("a.ts", ts) == {"generate": "(input, plans?, summary?)", "Section": "({ title, content }: Props)", "Box": ""}
    go = ("func (a *Agent) Install(localDev bool, force bool) (int, error) {\n}\n"
          "func handle(ctx context.Context, cfg *Config, name string, w io.Writer) error {\n}\nfunc Name() string {\n}\n")
    assert _params("a.go", go) == {"Install": "(localDev bool, force bool)", "handle": "(ctx, cfg, name, w)", "Name": ""}
    java = "class A {\n  public void run(final String name, Map<String, Integer> counts, int retries) {\n  }\n}\n"
    assert _params("A.java", java)["run"] == "(name, counts, retries)"
    kt = "class A {\n  fun loadAll(name: String, count: Int, retries: Int, verbose: Boolean): Unit {\n  }\n}\n"
    assert _params("a.kt", kt)["loadAll"] == "(name, count, retries, verbose)"      # Kotlin: `name: Type`
    tricky = ('def multi(first: int, second: str = "a, b", *rest: tuple[int, int], more: dict[str, int] = {}):\n'
              '    pass\n')      # commas and brackets inside strings and types are no separators
    assert _params("b.py", tricky)["multi"] == "(first, second, *rest, more)"
    assert _params("b.ts", 'export function f(opts: Options = { a: "x)y", b: [1, 2] }, n = 1) {\n}\n')["f"] == "(opts, n)"
    assert _params("b.rs", "pub fn register(f: Box<dyn Fn(u8) -> u8>, m: HashMap<String, u8>) {\n}\n")["register"] == "(f, m)"
    assert _params("b.go", "func Map[T any, U any](xs []T, f func(T) U) []U {\n}\n")["Map"] == "(xs []T, f func(T) U)"
    py = "def load(self, path: str, limit: int = 10) -> list:\n    pass\n"
    assert _params("a.py", py) == {"load": "(path: str, limit: int = 10)"}      # short: with its types


def test_an_added_function_is_named_with_its_parameters():
    new = "export function buildPlan(input: Input, plan: string): string {\n  return plan;\n}\n"
    recs = [rec("user", "add buildPlan"), *call("Write", file_path="/r/src/plan.ts", content=new,
                                                 result="File created successfully")]
    text = compact_span(recs, 2000, count).rendered
    text = "\n".join(ln.text for _, lines in text.sections for ln in lines)
    assert "`buildPlan(input: Input, plan: string)`" in text


LINT = """$ biome check
 at src/db.ts format ━━━━━━━━━━━━
  × Formatter would have printed the following content:
 at src/engine.ts format ━━━━━━━━━━━━
  × Formatter would have printed the following content:
Checked 3 files in 9ms. Found 2 errors.
"""


def test_one_message_a_check_gave_for_several_files_is_said_once_with_the_files():
    recs = [rec("user", "fix lint"), *call("Write", file_path="/r/src/db.ts", content="export const a = 1\n",
                                           result="File created successfully"),
            *bash("bun run lint", LINT, code=1), *bash("bun run lint:fix", "Fixed 2 files"),
            *bash("bun run lint", "Checked 3 files in 9ms. No fixes applied.")]
    text = compact_span(recs, 2000, count).rendered
    text = "\n".join(ln.text for _, lines in text.sections for ln in lines)
    assert "`format: Formatter would have printed the following content` in `src/db.ts`, `src/engine.ts`" in text


CREDO = """Checking 1 source file ...

  Software Design
┃
┃ [D] ↘ Nested modules could be aliased at the top of the invoking module.
┃       lib/app/registry.ex:135:5 #(App.Registry.check)

Please report incorrect results: https://github.com/rrrene/credo/issues

Analysis took 0.06 seconds (0.01s to load, 0.05s running 69 checks on 1 file)
14 mods/funs, found 1 software design suggestion.
"""


def test_why_a_check_was_silenced_is_what_the_agent_said_last_before_it_held():
    from ctxkit.compaction import state_of

    recs = [rec("user", "make credo pass"), *bash("mix credo --strict", CREDO, code=6)]
    for k in range(4):      # attempts that did not hold, each narrated
        recs += [rec("assistant", f"Let me try approach {k} on the module."),
                 *call("Edit", file_path="/r/lib/app/registry.ex", old_string=f"a{k}", new_string=f"b{k}",
                       result="The file has been updated.")]
    recs += [rec("assistant", "This is a known Elixir compiler bug — aliases used only inside `rescue` blocks are "
                              "reported as unused. I'll suppress the check inline."),
             *call("Edit", file_path="/r/lib/app/registry.ex", old_string="Tmux.ok?(id)",
                   new_string="# credo:disable-for-next-line Credo.Check.Design.AliasUsage\nApp.Tmux.ok?(id)",
                   result="The file has been updated."),
             *bash("mix credo --strict", "found no issues.")]
    err = [e for s in state_of(recs).steps for e in s.errors][0]
    assert err.silenced and "known Elixir compiler bug" in err.cause


def test_how_the_code_a_request_names_is_reached_names_what_calls_it():
    src = ("export function buildContext(input) {\n  const a = agentNotice(input);\n  const b = claudeFilter(input);\n"
           "  return a + b;\n}\n\nexport function agentNotice(input) {\n  return 'x';\n}\n\n"
           "export function claudeFilter(input) {\n  return 'y';\n}\n")
    new = "export function planPrompt(input) {\n  return `# Plan\\n${buildContext(input)}`;\n}\n"
    recs = [rec("user", "build it"), *call("Read", file_path="/w/src/gen.ts", result=src),
            *call("Edit", file_path="/w/src/gen.ts", old_string="export function agentNotice", new_string=new +
                  "\nexport function agentNotice", result="The file has been updated."),
            *call("Edit", file_path="/w/src/gen.ts", old_string="return 'y';", new_string="return 'z';",
                  result="The file has been updated."),
            rec("assistant", "Done."), rec("user", "make sure the agent notice and the claude filter apply everywhere")]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "`buildContext` calls `agentNotice`, `claudeFilter` and is called by `planPrompt`" in text
    nxt = dict(compact_span(recs, 2000, count).rendered.sections)["Next step"][0].text     # the gist, in the step
    assert "The code already does part of it: `agentNotice`, `claudeFilter` reach `planPrompt` through `buildContext`" in nxt


def test_the_decisions_a_plan_sets_are_told_whole_beside_its_steps():
    decisions = "".join(f"- **Choice {k}**: option {k} of the {k * 3} the user weighed, kept for good\n" for k in range(1, 10))
    plan = ("Implement the following plan:\n\n# Plan: Queue rewrite\n\nReplace the batch loop with a queue.\n\n"
            "## Design Decisions (from user)\n" + decisions +
            "\n## Step 1: Types\nAdd `Job`.\n\n## Step 2: Worker\nRewrite `run`.\n\n## Verification\n- `bun test`\n")
    recs = [rec("user", plan), *call("Edit", file_path="/w/src/q.ts", old_string="a", new_string="b",
                                     result="The file has been updated.")]
    from ctxkit.compaction import state_of
    from ctxkit.compaction.render.sections import Writer

    w = Writer(state_of(recs), full=False)
    w.task()
    parts = {p.text.split(" (")[0]: p.level for p in w.pieces if p.section == "Plan"}     # the fullest form's level
    told = max((p for p in w.pieces if p.text.startswith("Design Decisions")), key=lambda p: len(p.text))
    assert parts["Design Decisions"] <= parts["Step 1: Types"] + 1 and told.level <= 3
    assert "Choice 9: option 9 of the 27" in told.text     # the last decision, with what it says


def test_a_file_looked_for_and_not_there_names_the_like_named_one_found_instead():
    recs = [rec("user", "check the lint config"), *bash("golangci-lint run", "0 issues."),
            *call("Grep", pattern="maintidx", path="/r/.golangci.yml", error=True,
                  result="<tool_use_error>Path does not exist: /r/.golangci.yml</tool_use_error>"),
            *call("Glob", pattern=".golangci*", result="/r/.golangci.yaml"),
            *call("Edit", file_path="/r/hooks.go", old_string="a", new_string="b", result="The file has been updated.")]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "Looked for, not there: `/r/.golangci.yml`" in text and "found `/r/.golangci.yaml` instead" in text


def test_a_changed_function_is_told_by_the_short_lines_its_edit_brought_and_names_a_long_one_holds():
    from ctxkit.compaction import state_of

    long = "  <pre class=\"row-text\" style=\"margin:0;display:inline;\"><code class={lang_class(line)}>" + "x" * 80 + "</code></pre>\n"
    old = "def render(assigns) do\n  ~H\"\"\"\n  <div id=\"msgs\">\n  \"\"\"\nend\n"
    new = ("def render(assigns) do\n  ~H\"\"\"\n  <div id=\"msgs\" phx-hook=\"TranscriptHighlighter\">\n" + long +
           "  \"\"\"\nend\n")
    recs = [rec("user", "highlight code")] + call("Read", file_path="/w/live.ex", result=old) + \
        call("Edit", file_path="/w/live.ex", old_string=old, new_string=new, result="The file has been updated.")
    got = dict(state_of(recs).files[0].brought)["render/1"]
    assert got[0] == '<div id="msgs" phx-hook="TranscriptHighlighter">' and "lang_class" in got


def test_a_test_count_the_agent_gives_that_its_edits_do_not_show_is_told_beside_the_count():
    old = "describe('plan', () => {\n  test('a', () => {});\n});\n"
    new = "describe('plan', () => {\n" + "".join(f"  test('case {k}', () => {{}});\n" for k in range(5)) + "});\n"
    recs = [rec("user", "add tests"), *call("Read", file_path="/w/src/plan.test.ts", result=old),
            *call("Edit", file_path="/w/src/plan.test.ts", old_string=old, new_string=new,
                  result="The file has been updated."),
            *bash("bun test", "5 pass\n0 fail"),
            rec("assistant", "## Summary\n\n| File | Change |\n|---|---|\n| `src/plan.test.ts` | Added 7 new tests |\n")]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "5 tests added" in text and "as its edits show (the agent said 7)" in text
    recs[-1] = rec("assistant", "Added 5 new tests to `plan.test.ts`.")       # the same count: nothing to tell
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "5 tests added" in text and "the agent said" not in text


def test_a_like_named_file_in_another_folder_is_not_the_one_found_instead():
    recs = [rec("user", "read the config"), *bash("ls", "src"),
            *call("Read", file_path="/r/config.json", error=True, result="<tool_use_error>File does not exist.</tool_use_error>"),
            *call("Glob", pattern="**/config.*", result="/r/src/other/config.ts"),
            *call("Edit", file_path="/r/app.ts", old_string="a", new_string="b", result="The file has been updated.")]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "config.json" in text and "instead" not in text


def test_a_report_keeps_checklist_state_short_warnings_and_what_is_not_done_past_its_limit():
    text = ("### Changes made\n" + "".join(f"- Updated `module{k}.ts` so that the loader reads option {k}.\n" for k in range(14))
            + "\n### Checklist\n- [x] Trim the user name in `login()`.\n- [ ] Add rate limiting to `/reset`.\n"
            "\n### Test results\n- `billing.test.ts` fails.\n- Do not deploy.\n"
            "\n### Not done\n- The migration `0042_drop_email` was NOT run.\n")
    points = report(text, 12)
    assert "Checklist, not done: Add rate limiting to `/reset`." in points
    assert "Test results: `billing.test.ts` fails." in points and "Test results: Do not deploy." in points
    assert "Not done: The migration `0042_drop_email` was NOT run." in points and len(points) == 12
    alike = report("## Settings\n- Production sets `DEBUG=false` in the service file.\n"
                   "- Production sets `DEBUG=true` in the worker file.\n", 5)
    assert len(alike) == 2      # alike but for a value: both told
    assert report("The tokenizer: run it with\n\n```\ntok --file x\n```\n", 5) == []    # a lead-in to code alone


def test_a_report_a_follow_up_request_came_after_stays_in_the_step():
    recs = [rec("user", "Review the code and fix what you find."),
            *call("Edit", file_path="/r/src/app.ts", old_string="a", new_string="b", result="The file has been updated."),
            rec("assistant", "### Not done\n- The cache is still unbounded; it grows with every request.\n"),
            rec("user", "Now add a CHANGELOG entry for the 2.0 release."),
            *call("Edit", file_path="/r/CHANGELOG.md", old_string="# Log", new_string="# Log\n## 2.0",
                  result="The file has been updated."),
            rec("assistant", "Added the 2.0 entry to the changelog file.")]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "Not done: The cache is still unbounded" in text


def test_code_alone_is_no_point_and_a_different_message_of_the_run_is_told_beside_the_shared_one():
    assert report("### Checks\n- `const x = await limiter.check(req.ip, { window: 60 });`\n"
                  "- `billing.test.ts` fails.\n", 5) == ["Checks: `billing.test.ts` fails."]
    out = ("$ biome check\n at src/a.ts format ━━━━\n  × Formatter would have printed the following content:\n"
           " at src/b.ts format ━━━━\n  × Formatter would have printed the following content:\n"
           " at src/c.ts format ━━━━\n  × Code formatting aborted due to parsing errors.\nChecked 3 files. Found 3 errors.\n")
    recs = [rec("user", "lint it"), *call("Edit", file_path="/r/src/a.ts", old_string="a", new_string="b",
                                          result="The file has been updated."), *bash("bun run lint", out, code=1)]
    text = "\n".join(ln.text for _, lines in compact_span(recs, 2000, count).rendered.sections for ln in lines)
    assert "in `src/a.ts`, `src/b.ts`; also `src/c.ts format: Code formatting aborted" in text
