"""ctx import on every agent's transcript: GitHub Copilot CLI, Gemini CLI (JSONL with $set and
$rewindTo, and the older JSON), opencode (export and opencode.db), OpenHands, Cline, Codex with
its own compaction, Claude Code 2.1.332 with its reminders. What a user would check: the
requests, the tool calls with their results, the summary of the agent's own compaction, a
rewind honoured, the client's own text marked, and clear errors."""
import collections
import json
import sqlite3

import pytest

from conftest import CORPUS_FILES, FIXTURES, corpus, run
from ctxkit import records as R
from ctxkit.core.client_text import own_words
from ctxkit.core.requests import requests

FORMATS_FILES = [n for n in CORPUS_FILES if n.startswith("formats/")]


def imported(path, *args):
    res = run("import", path, *args)
    assert res.code == 0, res.stderr
    return res.records()


def asks(recs):
    return [t for _, _, t in requests(recs)]


def calls(recs):
    return [c for r in recs for c in r.get("tool_calls") or ()]


def paired(recs):
    """Every call has exactly one result in its group and every result a call (no orphan)."""
    ids = [c["id"] for c in calls(recs)]
    results = [r["tool_call_id"] for r in recs if r.get("role") == "tool"]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(results)
    group = {c["id"]: r["group"] for r in recs for c in r.get("tool_calls") or ()}
    assert all(group[r["tool_call_id"]] == r["group"] for r in recs if r.get("role") == "tool")
    for c in calls(recs):
        json_ok = c["function"]["name"] in ("apply_patch",)  # a custom tool's input is its raw text
        if not json_ok:
            json.loads(c["function"]["arguments"])  # OpenAI style: a JSON string, as the agent wrote it
    return True


@pytest.mark.parametrize("name", FORMATS_FILES)
def test_every_formats_file_imports_valid_and_paired(name):
    recs = imported(corpus(name))
    assert recs and all(R.validate(r) is None for r in recs)
    assert not [r for r in recs if "orphan_result" in (r.get("flags") or [])]
    assert paired(recs)
    fmt = name.split("/", 1)[1].split("_", 1)[0]
    assert {r["source"]["format"] for r in recs} == {fmt}
    assert all(r.get("ts") for r in recs) and asks(recs)


def test_copilot_cli_corpus_session():
    recs = imported(corpus("formats/copilot-cli_agentv_10fb4666.jsonl"))
    assert {r["session"] for r in recs} == {"10fb4666-56f0-4352-90fc-715caf95b418"}
    assert asks(recs)[0].startswith("investigate why i get")
    assert len(asks(recs)) == 1  # the datetime and <system_reminder> Copilot wraps it in are not the user's
    first = next(r for r in recs if r["role"] == "user")
    assert "client_text" in first["flags"] and "<current_datetime>" in first["content"]  # the model saw them
    assert first["meta"] == {"cwd": "/home/entity/projects/EntityProcess/agentv", "branch": "main"}
    assert len(calls(recs)) == 68 and collections.Counter(c["function"]["name"] for c in calls(recs))["bash"] >= 40
    assert len([r for r in recs if r["role"] == "tool" and "error" in r.get("flags", [])]) == 1
    assert any(r.get("meta", {}).get("model") == "claude-sonnet-4.6" for r in recs)
    assert any("thinking" in r.get("flags", []) for r in recs)
    assert recs[0]["role"] == "system"  # Copilot's system prompt, as it recorded it


def test_copilot_cli_subagent_compaction_and_a_call_left_unanswered():
    recs = imported(FIXTURES / "copilot-cli" / "events.jsonl")
    assert paired(recs)
    main = "5b7e2c1a-9d40-4c3e-8f21-6a0d3b9e7c55"
    sub = [r for r in recs if r["session"] == f"{main}.agent-sub-1"]
    assert [r["role"] for r in sub] == ["assistant", "tool", "assistant"]  # the explore subagent's own turns
    task = next(r for r in recs if any(c["function"]["name"] == "task" for c in r.get("tool_calls") or ()))
    group = [r for r in recs if r["group"] == task["group"]]
    assert [r["role"] for r in group] == ["assistant", "assistant", "tool", "tool"]  # thinking, calls, both results
    assert all(r["session"] == main for r in group)
    failed = next(r for r in group if r.get("tool_call_id") == "toolu_01A")
    assert "error" in failed["flags"] and "expected 30, received 27" in failed["content"]
    summary = next(r for r in recs if r["kind"] == "summary")
    assert "compact_summary" in summary["flags"] and "double discount" in summary["content"]
    assert asks(recs) == ["fix the cart total test", "now commit"]
    notice = next(r for r in recs if "<system_notification>" in r.get("content", ""))
    assert "meta" in notice["flags"]
    last = [r for r in recs if r["role"] == "tool"][-1]
    assert last["tool_call_id"] == "toolu_01D" and "missing_result" in last["flags"]


def test_gemini_cli_json_session():
    recs = imported(corpus("formats/gemini-cli_entire-cli_f7633853.json"))
    assert {r["session"] for r in recs} == {"f7633853-6663-4dbb-bbf4-6159afa29df8"}
    assert asks(recs) == ["run an agent that creates a color file inside docs, choose your color"]
    names = collections.Counter(c["function"]["name"] for c in calls(recs))
    assert names == {"run_shell_command": 6, "read_file": 2, "write_file": 1}
    assert not any("update available" in (r.get("content") or "") for r in recs)  # the CLI's notice, never sent
    keep = imported(corpus("formats/gemini-cli_entire-cli_f7633853.json"), "--keep-meta")
    assert any(r["kind"] == "event" and "update available" in r["content"] for r in keep)
    usage = [r["usage"] for r in recs if r.get("usage")]
    assert usage[0] == {"input_tokens": 12207 - 2558, "cache_read_input_tokens": 2558, "output_tokens": 105}
    doc = json.load(open(corpus("formats/gemini-cli_entire-cli_f7633853.json")))
    assert sum("thinking" in r.get("flags", []) for r in recs) == sum(bool(m.get("thoughts")) for m in doc["messages"])


def test_gemini_cli_jsonl_rewind_checkpoint_and_a_live_last_line():
    res = run("import", FIXTURES / "gemini-cli" / "rewind-compress.jsonl")
    assert res.code == 0, res.stderr
    assert "rewind-compress.jsonl:17: skipped a half-written last line" in res.stderr
    recs = res.records()
    assert asks(recs) == ["Add a --verbose flag to cli.py", "now run the tests", "commit it"]
    assert not any("--quiet" in (r.get("content") or "") for r in recs)  # $rewindTo removed it and its answer
    assert paired(recs)
    summary = next(r for r in recs if r["kind"] == "summary")
    assert "compact_summary" in summary["flags"] and summary["content"].startswith("<state_snapshot>")
    kinds = [(r["kind"], r["role"]) for r in recs if "thinking" not in r.get("flags", [])]
    at = kinds.index(("summary", "user"))
    before = [r for r in recs[:at] if r["role"] == "user" and "meta" not in r.get("flags", [])]
    assert [r["content"] for r in before] == ["Add a --verbose flag to cli.py"]  # compressed away, still history
    edit = next(c for c in calls(recs) if c["function"]["name"] == "replace")
    assert json.loads(edit["function"]["arguments"])["file_path"] == "cli.py"
    test = next(r for r in recs if r.get("tool_call_id") == "run_shell_command-1785578525000-d4")
    assert "3 passed" in test["content"] and test["ts"] == "2026-08-01T10:02:07.000Z"
    env = recs[0]
    assert env["content"].startswith("<session_context>") and "meta" in env["flags"]


def test_gemini_cli_0_61_real_session():
    """Written by the real Gemini CLI 0.61.0: every prompt, each call once with its result, the
    model and tokens of the first recording kept through the history checkpoints of --resume."""
    recs = imported(FIXTURES / "gemini-cli" / "session-0.61.0-7f916d75.jsonl")
    assert asks(recs) == ["RUN: echo hello-gemini", "RUN: echo second", "just say hi"]
    assert paired(recs) and len(calls(recs)) == 2
    assert [r["content"] for r in recs if r["role"] == "tool"] == [
        "<untrusted_context>\nOutput: hello-gemini\nProcess Group PGID: 4530\n</untrusted_context>",
        "<untrusted_context>\nOutput: second\nProcess Group PGID: 4887\n</untrusted_context>"]
    first = next(r for r in recs if r.get("tool_calls"))
    assert first["ts"] == "2026-11-28T17:15:11.556Z" and first["meta"]["model"] == "gemini-3.1-pro-preview"
    assert first["usage"] == {"input_tokens": 1000, "cache_read_input_tokens": 200, "output_tokens": 20}


def test_opencode_export():
    recs = imported(corpus("formats/opencode_devtoolbox_ses_fe0515d2.json"))
    assert {r["session"] for r in recs} == {"ses_fe0515d27ffe9rCVKAHcb6Q4WN"}
    assert asks(recs) == ["tell me what it is"]
    (c,) = calls(recs)
    assert c["function"]["name"] == "bash" and json.loads(c["function"]["arguments"])["command"].startswith("ls -la")
    assert recs[0]["meta"]["cwd"] == "/Users/vmini/workspace/devtoolbox"
    assert recs[-1]["content"].startswith("**DevToolbox**")
    assert [r["usage"]["input_tokens"] for r in recs if r.get("usage")] == [16730, 1594]  # one per model call


@pytest.fixture
def opencode_db(tmp_path):
    path = tmp_path / "opencode.db"
    con = sqlite3.connect(path)
    con.executescript((FIXTURES / "opencode" / "opencode_db.sql").read_text())
    con.commit()
    con.close()
    return path


def test_opencode_db_every_session_steps_and_compaction(opencode_db):
    recs = imported(opencode_db)
    assert [r["source"]["format"] for r in recs] == ["opencode"] * len(recs)
    sessions = list(dict.fromkeys(r["session"] for r in recs))
    assert sessions == ["ses_0a1b2c3d4e5fAbCdEfGhIjKl", "ses_0a1b2c3d4e60ZyXwVuTsRqPo"]
    assert paired(recs)
    main = [r for r in recs if r["session"] == sessions[0]]
    assert asks(main) == ["slugify('Hello World') returns 'hello-world-' with a trailing dash; fix it",
                          "make test_unicode pass too"]
    steps = [r for r in main if r["kind"] == "message" and r["role"] == "assistant" and "thinking" not in r.get("flags", [])]
    assert [len(r.get("tool_calls") or ()) for r in steps] == [1, 2, 2]  # one record per model call
    assert steps[0]["usage"] == {"input_tokens": 500, "cache_read_input_tokens": 4000,
                                 "cache_creation_input_tokens": 0, "output_tokens": 60}
    failed = next(r for r in main if r.get("tool_call_id") == "toolu_b1")
    assert "error" in failed["flags"] and "test_unicode FAILED" in failed["content"]
    running = next(r for r in main if r.get("tool_call_id") == "toolu_b2")
    assert "missing_result" in running["flags"]
    summary = next(r for r in main if r["kind"] == "summary")
    assert "compact_summary" in summary["flags"] and "strips dashes" in summary["content"]
    synthetic = next(r for r in main if r["content"].startswith("Called the Read tool"))
    assert "meta" in synthetic["flags"]
    assert imported(opencode_db, "--from", "opencode") == recs


def test_opencode_db_errors(tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (id text)")
    con.commit()
    con.close()
    res = run("import", other)
    assert res.code == 1 and f"{other}: an SQLite database, but not opencode's" in res.stderr
    res = run("import", "-", input=other.read_bytes())
    assert res.code == 1 and "is read from its path, not from a pipe" in res.stderr


def test_openhands_trajectory():
    recs = imported(corpus("formats/openhands_basic_gui_mode.json"))
    assert asks(recs)[0].startswith("I want to create a VueJS app")
    names = [c["function"]["name"] for c in calls(recs)]
    assert names == ["execute_bash", "str_replace_editor", "str_replace_editor", "execute_bash"]
    create = json.loads(calls(recs)[1]["function"]["arguments"])  # as the model wrote it, not OpenHands' args
    assert create["command"] == "create" and create["path"] == "/workspace/todo-app/index.html"
    server = next(r for r in recs if r["role"] == "tool" and "port 8000" in r["content"])
    assert server["flags"] == ["running"]  # exit code -1: no exit yet (its wait for output ended), not a failure
    first = next(r for r in recs if r.get("tool_calls"))
    assert first["content"].startswith("I'll help you create a Vue.js application")
    assert first["meta"]["model"] == "claude-3-5-sonnet-20241022"
    assert first["usage"] == {"input_tokens": 4, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 3435,
                              "output_tokens": 104}
    assert recs[-1]["role"] == "assistant" and recs[-1]["content"].startswith("I've created a complete Vue.js")


def test_cline_tools_in_text_and_in_blocks():
    path = FIXTURES / "cline" / "tasks" / "1756800000000" / "api_conversation_history.json"
    recs = imported(path)
    assert {r["session"] for r in recs} == {"1756800000000"}  # the task's folder
    assert paired(recs)
    assert asks(recs) == ["Add a health check endpoint to server.js", "also add a /ready endpoint",
                          "please also document it in README.md"]
    by = {c["function"]["name"]: c for c in calls(recs)}
    assert json.loads(by["read_file"]["function"]["arguments"]) == {"path": "server.js"}
    assert "------- SEARCH" in json.loads(by["replace_in_file"]["function"]["arguments"])["diff"]
    results = {r["tool_call_id"]: r for r in recs if r["role"] == "tool"}
    assert results[by["read_file"]["id"]]["content"].startswith("const express")  # the block after "Result:"
    assert results[by["replace_in_file"]["id"]]["content"] == "The content was successfully saved to server.js."
    not_run = [r for r in results.values() if r["content"].startswith("Tool [execute_command] was not executed")]
    assert len(not_run) == 1 and "error" in not_run[0]["flags"]
    assert results["toolu_01XYZ"]["content"].endswith("2 passing (12ms)")  # a native tool_result block
    assert "missing_result" in results[by["attempt_completion"]["id"]]["flags"]
    env_only = [r for r in recs if r["role"] == "user" and r["content"].startswith("<environment_details>")]
    assert env_only and all("meta" in r["flags"] for r in env_only)
    assert next(r for r in recs if r.get("tool_calls"))["meta"]["model"] == "claude-sonnet-4-5"


def test_codex_compaction_tools_and_its_own_instructions():
    recs = imported(corpus("codex_agentv_rollout-019efc87.jsonl"))
    assert paired(recs)
    (summary,) = [r for r in recs if r["kind"] == "summary"]
    assert "compact_summary" in summary["flags"] and summary["source"]["line"] == 913
    assert summary["content"].startswith("[user]\nCreate a worktree off latest origin/main")  # what Codex kept
    names = collections.Counter(c["function"]["name"] for c in calls(recs))
    assert names["apply_patch"] == 28 and names["tool_search"] == 1
    assert names["mcp__codex_apps__github_create_pull_request"] == 1
    agents = next(r for r in recs if r.get("content", "").startswith("# AGENTS.md instructions"))
    assert "meta" in agents["flags"]  # the repository's AGENTS.md is the client's, not a request
    assert asks(recs)[0].startswith("Create a worktree off latest origin/main")
    assert not any(t.startswith(("# AGENTS.md", "<environment_context>", "<turn_aborted>")) for t in asks(recs))
    first = next(r for r in recs if r.get("usage"))
    assert first["usage"]["input_tokens"] + first["usage"]["cache_read_input_tokens"] == 17978  # cached counted once
    assert any(r.get("meta", {}).get("model") == "gpt-5.5" for r in recs if r["kind"] == "message")


def test_codex_exec_command_end_flags_a_failed_result(tmp_path):
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                                  "content": [{"type": "input_text", "text": "run it"}]}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                                                                  "arguments": "{\"command\":[\"make\"]}", "call_id": "c1"}},
        {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                                                                  "output": "make: *** No rule to make target"}},
        {"timestamp": "2026-01-01T00:00:04Z", "type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c1", "exit_code": 2}},
        {"timestamp": "2026-01-01T00:00:05Z", "type": "response_item", "payload": {"type": "web_search_call", "id": "ws_1",
                                                                                  "status": "completed", "action": {"type": "search", "query": "make targets"}}},
    ]
    p = tmp_path / "rollout.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    recs = imported(p)
    result = next(r for r in recs if r.get("tool_call_id") == "c1")
    assert "error" in result["flags"]
    search = next(c for c in calls(recs) if c["function"]["name"] == "web_search")
    assert json.loads(search["function"]["arguments"])["query"] == "make targets"
    assert paired(recs)  # the provider ran the search: no result in the rollout, marked as such


def test_claude_code_2_1_332_reminders_are_the_clients():
    recs = imported(FIXTURES / "claude-code-2.1.332" / "session.jsonl")
    assert asks(recs) == ["RUN: cat README.md", "RUN: echo second", "just say hi"]  # each prompt once
    k = next(i for i, r in enumerate(recs) if r["role"] == "tool")
    assert recs[k]["content"] == "# proj\nhello"
    # the reminder Claude Code sent with the result: kept where it stands (the model saw it), the client's
    reminder = recs[k + 1]
    assert reminder["role"] == "user" and "meta" in reminder["flags"]
    assert "<total_tokens>14977717 tokens left</total_tokens>" in reminder["content"]
    assert reminder["group"] != recs[k]["group"] and own_words(reminder) == ""
    assert sum("tokens left" in r["content"] for r in recs if r["role"] == "user") == 5
    echoed = next(r for r in recs if r["role"] == "assistant" and "tokens left" in r.get("content", ""))
    assert "client_text" in echoed["flags"] and "tokens left" not in own_words(echoed)
    assert not any("tokens left" in t for t in asks(recs))


def test_detection_names_the_ambiguity_and_the_unknown(tmp_path):
    both = {"sessionId": "s", "projectHash": "h", "info": {"id": "ses_1"},
            "messages": [{"info": {"id": "msg_1", "role": "user", "time": {"created": 1788343200000}},
                          "parts": [{"type": "text", "text": "hi"}]}]}
    p = tmp_path / "both.json"
    p.write_text(json.dumps(both))
    res = run("import", p)
    assert res.code == 1 and "ambiguous document: it could be gemini-cli or opencode" in res.stderr
    assert "--from gemini-cli" in res.stderr
    assert run("import", p, "--from", "opencode").code == 0
    q = tmp_path / "other.json"
    q.write_text(json.dumps({"conversation": [1, 2]}, indent=2))
    res = run("import", q)
    assert res.code == 1 and f"{q}: unrecognised JSON document" in res.stderr
    for fmt in ("copilot-cli", "gemini-cli", "opencode", "openhands", "cline"):
        assert fmt in res.stderr
    q.write_text(json.dumps({"conversation": [1, 2]}) + "\n")
    res = run("import", q)
    assert res.code == 1 and f"{q}:1: unrecognised input format" in res.stderr and "cline" in res.stderr


@pytest.mark.parametrize("lines, where, what", [
    ([{"sessionId": "s", "projectHash": "h"}, {"$rewindTo": 5}], 2, "$rewindTo must name a message id"),
    ([{"sessionId": "s", "projectHash": "h"}, {"id": "m1", "content": "x"}], 2, "has no type"),
    ([{"sessionId": "s", "projectHash": "h"}, {"something": "else"}], 2, "not a Gemini CLI session record"),
    ([{"type": "session.start", "data": {"sessionId": "s"}, "id": "e1"}, {"type": "user.message", "data": "hi"}], 2,
     "expected a Copilot CLI event"),
])
def test_a_file_of_a_known_format_that_breaks_its_rules_says_file_line(tmp_path, lines, where, what):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = run("import", p)
    assert res.code == 1 and f"{p}:{where}: " in res.stderr and what in res.stderr, res.stderr
    assert res.stdout == ""
    res = run("import", p, "--skip-invalid")  # read past, and counted
    assert res.code == 0 and f"skipped 1 invalid line in {p} (first at line {where})" in res.stderr


def test_a_half_written_last_line_is_skipped_but_a_bad_middle_line_is_not(tmp_path):
    src = (FIXTURES / "copilot-cli" / "events.jsonl").read_text().splitlines()
    live = tmp_path / "live.jsonl"
    live.write_text("\n".join(src) + "\n" + src[5][: len(src[5]) // 2])
    res = run("import", live)
    assert res.code == 0 and f"{live}:{len(src) + 1}: skipped a half-written last line" in res.stderr
    assert len(res.records()) == len(imported(FIXTURES / "copilot-cli" / "events.jsonl"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(src[:5] + [src[5][:40]] + src[6:]) + "\n")
    res = run("import", broken)
    assert res.code == 1 and f"{broken}:6: invalid JSON" in res.stderr
    cc = (FIXTURES / "claude-code-2.1.332" / "session.jsonl").read_text()
    cut = tmp_path / "cc.jsonl"
    cut.write_text(cc + '{"type":"assistant","message":{"id":"msg_x","con')
    res = run("import", cut)
    assert res.code == 0 and "skipped a half-written last line" in res.stderr


def test_from_names_every_format_on_every_command():
    from ctxkit.io.adapters import FORMATS

    for fmt in ("copilot-cli", "gemini-cli", "opencode", "openhands", "cline", "codex", "claude-code"):
        assert fmt in FORMATS
    for cmd in (["import"], ["count"], ["score"], ["status"], ["eval"]):
        res = run(*cmd, "--help")
        assert res.code == 0
        text = " ".join(res.stdout.split())
        assert "copilot-cli|gemini-cli|opencode|openhands|cline" in text.replace(" ", ""), cmd
    path = corpus("formats/gemini-cli_entire-cli_f7633853.json")
    res = run("count", path, "--from", "gemini-cli")
    assert res.code == 0 and int(res.stdout) > 1000
    res = run("import", corpus("formats/opencode_devtoolbox_ses_fe0515d2.json"), "--from", "gemini-cli")
    assert res.code == 1 and "not a Gemini CLI session" in res.stderr
    res = run("import", corpus("codex_agentv_rollout-019efc87.jsonl"), "--from", "copilot-cli")
    assert res.code == 1 and ":1: expected a Copilot CLI event" in res.stderr


def test_claude_code_2_1_332_read_on_from_any_cut_is_a_full_read(tmp_path):
    """The hooks read a growing transcript from where they stopped: wherever Claude Code 2.1.332's
    file is cut (between an enqueue and its dequeue, before a reminder), the records are those of
    a full read."""
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source
    from ctxkit.services import transcripts
    from ctxkit.store.home import Home

    lines = (FIXTURES / "claude-code-2.1.332" / "session.jsonl").read_bytes().splitlines(keepends=True)
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines))
    want = json.dumps(list(open_records(Source(str(path)))))
    for cut in range(1, len(lines)):
        path.write_bytes(b"".join(lines[:cut]))
        transcripts.read(home, str(path), f"s{cut}")
        with open(path, "ab") as f:
            f.writelines(lines[cut:])
        got, how = transcripts.read(home, str(path), f"s{cut}")
        assert json.dumps(got) == want, (cut, how)


def test_copilot_cli_session_is_its_folder_before_session_start_says(tmp_path):
    """A transcript whose `session.start` is not (yet) in it: the session is the folder Copilot
    keeps it in (`~/.copilot/session-state/<id>/events.jsonl`)."""
    lines = [x for x in (FIXTURES / "copilot-cli" / "events.jsonl").read_text().splitlines()
             if '"session.start"' not in x]
    folder = tmp_path / "session-state" / "0f3c8e21-7a55-4d0e-9b1e-2c4d6e8f0a13"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")
    recs = imported(folder / "events.jsonl")
    assert {r["session"] for r in recs} >= {"0f3c8e21-7a55-4d0e-9b1e-2c4d6e8f0a13"}
    assert paired(recs)
