"""What stays raw after a summary: conversation, not tool exchanges nor a closing report the summary already tells."""
from ctxkit.core.compact import Selection, fold_tool_head
from ctxkit.compaction.extract import events
from ctxkit.compaction.model import CheckRun


def msg(role, text="", **kw):
    return {"kind": "message", "role": role, "content": text, **kw}


def test_leading_tool_exchanges_of_the_kept_tail_join_the_summarized_span():
    groups = [[msg("user", "build it")], [msg("assistant", "", tool_calls=[{"id": "a"}]), msg("tool", "1309 pass")],
              [msg("assistant", "", tool_calls=[{"id": "b"}]), msg("tool", "Checked 286 files")],
              [msg("assistant", "All clean. Here is the review.")], [msg("user", "now merge the docs")]]
    sel = fold_tool_head(groups, Selection(summarize=[0], keep=[1, 2, 3, 4]))
    assert sel.summarize == [0, 1, 2, 3] and sel.keep == [4]      # the closing report too: the summary tells it
    said = groups[:3] + [[msg("assistant", "Which file should hold the docs?")], [msg("assistant", "", tool_calls=[{"id": "c"}]),
                                                                                 msg("tool", "ok")]]
    sel = fold_tool_head(said, Selection(summarize=[0], keep=[1, 2, 3, 4]))
    assert sel.keep == [3, 4]       # words not followed by the user's request stay raw


def test_a_tail_of_only_tool_exchanges_keeps_its_newest_group_and_a_protected_group_stops_the_fold():
    groups = [[msg("user", "go")], [msg("assistant", "", tool_calls=[{"id": "a"}]), msg("tool", "ok")],
              [msg("assistant", "", tool_calls=[{"id": "b"}]), msg("tool", "ok")]]
    assert fold_tool_head(groups, Selection(summarize=[0], keep=[1, 2])).keep == [2]
    sel = fold_tool_head(groups, Selection(summarize=[0], keep=[1, 2], protected=[1]))
    assert sel.keep == [1, 2]


def test_a_task_runner_check_keeps_the_command_the_runner_said_it_ran():
    rec_a = {"v": 1, "kind": "message", "session": "s", "id": "a1", "role": "assistant", "content": "",
             "source": {"format": "claude-code"},
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Bash",
                                                                         "arguments": '{"command": "bun run lint"}'}}]}
    rec_r = {"v": 1, "kind": "message", "session": "s", "id": "r1", "role": "tool", "tool_call_id": "c1", "name": "Bash",
             "content": "$ biome check --error-on-warnings\nChecked 286 files in 88ms. No fixes applied.",
             "source": {"format": "claude-code"}}
    run = next(e for e in events([rec_a, rec_r]) if isinstance(e, CheckRun))
    assert run.script == "biome check --error-on-warnings" and run.kind == "lint"


def test_a_fence_inside_a_sentence_opens_no_code_block_when_a_long_message_is_condensed():
    from ctxkit.services.compaction import BLOCK
    text = "Code rows (```language fences) render as code.\n\n## 5. Selection\n```elixir\ndef x, do: 1\n```\n## 6. Hooks\n"
    out = BLOCK.sub("[code block cut]", text)
    assert "## 5. Selection" in out and "## 6. Hooks" in out and "def x" not in out
