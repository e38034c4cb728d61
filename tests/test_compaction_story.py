"""Issue 18: a summary a successor agent can continue from. On the corpus: where the work stood at
the cut (the open item, the uncommitted files) and what comes next, the session as steps in
order, every user request in order, no stale status line, no raw tool line, no error shown open
that a later run resolved. Queued messages are imported; a rejected tool use is not an error; a
big tool output kept after the summary is a stub whose chunk `ctx recover` brings back."""
import json
import os
import re

import pytest

from conftest import CORPUS_FILES, CORPUS, corpus, run
from ctxkit.core.requests import requests

FILES = CORPUS_FILES
CC = [f for f in FILES if f.startswith("claude-code_") and f.endswith("_session.jsonl")]


def span_of(src: str) -> list[dict]:
    """The records before the session's first compaction (the span Claude Code summarized), or all."""
    recs = run("import", src).records()
    cut = next((i for i, r in enumerate(recs) if r.get("kind") == "summary"), len(recs))
    return recs[:cut]


def compact(recs: list[dict], budget: int, tmp_path, *extra) -> tuple[str, list[dict]]:
    stdin = "".join(json.dumps(r) + "\n" for r in recs)
    res = run("compact", "--force", "--budget", str(budget), "--workspace", tmp_path, *extra, input=stdin)
    assert res.code == 0, res.stderr
    out = res.records()
    summ = [r for r in out if r["kind"] == "summary"]
    assert len(summ) == 1
    return summ[0]["content"], out


def section(text: str, name: str) -> str:
    m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1) if m else ""


# what a reader of each transcript finds at the cut (read by hand in the span's last records)
AT_THE_CUT = {
    "claude-code_spotter_8463c716_session.jsonl": {
        "current": ["spotter-fum.3", "highlight.js", "assets/js/app.js", "lib/spotter_web/live/session_live.ex",
                    "npm install highlight.js", "no test, build or lint run"],
        "next": ["spotter-fum.3", "git commit", "spotter-fum.4"],
        "steps": ["spotter-fum.1", "3bb8701", "spotter-fum.2", "b9288c2", "spotter-fum.3"],
    },
    "claude-code_spotter_fa812bfe_session.jsonl": {
        "current": ["spotter-a0y.4", "lib/spotter_web/live/pane_list_live.ex", "lib/spotter_web/live/session_live.ex",
                    "reload_transcript", "no test, build or lint run"],
        "next": ["spotter-a0y.4", "git commit"],
        "steps": ["spotter-a0y.1", "dbe5100", "spotter-a0y.2", "66e1a0a", "spotter-a0y.3", "f0b86dd", "spotter-a0y.4"],
        "not_open": ["has no upstream branch"],   # `git push` failed, `git push --set-upstream` then worked
    },
}


@pytest.mark.parametrize("name", sorted(AT_THE_CUT))
def test_current_work_and_next_step_name_where_the_work_stood(name, tmp_path):
    want = AT_THE_CUT[name]
    text, _ = compact(span_of(corpus(name)), 3500, tmp_path)
    cur, nxt = section(text, "Current work"), section(text, "Next step")
    for s in want["current"]:
        assert s in cur, (s, cur)
    for s in want["next"]:
        assert s in nxt, (s, nxt)
    # the steps, in the order they happened, before the reference sections
    heads = re.findall(r"^## (Step \d+: .*)$", text, re.M)
    pos = [next(i for i, h in enumerate(heads) if s in h or any(s in x for x in [section(text, h)]))
           for s in want["steps"]]
    assert pos == sorted(pos), heads
    assert "(in progress, not committed)" in heads[-1] and "done, committed" in heads[0]
    ref = [text.index(f"## {n}\n") for n in ("Files", "Errors", "Decisions", "Facts", "Key entities")
           if f"## {n}\n" in text]
    assert text.index("## Current work") < text.index("## Step 1:") < min(ref, default=len(text))
    for s in want.get("not_open", ()):
        assert s not in cur and s not in section(text, "Errors")


def _tool_lines(recs: list[dict]) -> set[str]:
    out = set()
    for r in recs:
        if r.get("role") == "tool":
            out |= {ln.strip() for ln in (r.get("content") or "").splitlines() if len(ln.strip()) >= 30}
    return out


@pytest.mark.parametrize("name", FILES)
def test_no_raw_line_no_stale_status_every_request_in_order(name, tmp_path):
    src = corpus(name)
    recs = span_of(src)
    total = int(run("count", src).stdout)
    text, out = compact(recs, max(1500, total // 20), tmp_path)
    body = text.split("---\n", 1)[1]
    raw = _tool_lines(recs)
    for ln in body.splitlines():
        item = ln[2:].strip() if ln.startswith("- ") else ln.strip()
        assert item not in raw, item
        assert not re.match(r"^\s*\d+\u2192", item) and "has been updated successfully" not in item, item
    for name_ in ("Facts", "Decisions"):
        for ln in section(text, name_).splitlines():
            assert not re.search(r"\b(still|not yet|next task|currently|compiling|successfully|perfect)\b", ln, re.I), ln
    asked = section(text, "User requests")
    if asked:  # every request, in order (each by its opening words); any left out are counted
        keys = list(dict.fromkeys(" ".join(t.split())[:40] for _, _, t in requests(recs)))
        lines = [re.sub(r"^- \d+\. ", "", ln) for ln in asked.splitlines() if ln.startswith("- ")]
        found = [next((k for k, ln in enumerate(lines) if ln.startswith(key)), -1) for key in keys]
        seen = [f for f in found if f >= 0]
        assert seen == sorted(seen) and seen
        m = re.search(r"\((\d+) more not shown", asked)
        assert len(seen) + (int(m.group(1)) if m else 0) >= len(set(keys)) - 2, (keys, asked)
    # what is kept raw after the summary is bounded: a big tool output became a stub
    cap = max(60, int(max(1500, total // 20) * 0.25) // 12)
    at = next(i for i, r in enumerate(out) if r["kind"] == "summary")
    big = [r for r in out[at + 1:] if r.get("role") == "tool" and (r.get("tokens") or 0) > cap]
    assert not big, [(r.get("tokens"), r.get("content", "")[:80]) for r in big]


def test_an_error_a_later_run_resolved_is_never_shown_open(tmp_path):
    text, _ = compact(span_of(corpus("claude-code_spotter_fa812bfe_session.jsonl")), 6000, tmp_path,
                      "--summary-tokens", "4500")
    assert "13 tests, 1 failure → passed (last run: " in text  # a run's history, counts parsed
    m = re.search(r"Error from `mix test test/spotter/transcripts/jobs/sync_transcripts_test.exs`: .*", text)
    assert m and "→ fixed by editing `sync_transcripts_test.exs`" in m.group(0)
    for ln in section(text, "Current work").splitlines():
        assert "Assertion with == failed" not in ln


def _cc(lines: list[dict], tmp_path) -> str:
    p = tmp_path / "s.jsonl"
    base = {"sessionId": "s1", "cwd": "/w"}
    p.write_text("".join(json.dumps({**base, **ln}) + "\n" for ln in lines))
    return str(p)


def _tool_turn(n: int, tool: str, inp: dict, result: str, is_error: bool = False) -> list[dict]:
    tid = f"toolu_{n}"
    return [{"type": "assistant", "uuid": f"a{n}", "timestamp": f"2026-01-01T00:00:{n:02d}Z",
             "message": {"id": f"m{n}", "role": "assistant",
                         "content": [{"type": "tool_use", "id": tid, "name": tool, "input": inp}]}},
            {"type": "user", "uuid": f"r{n}", "timestamp": f"2026-01-01T00:00:{n:02d}Z",
             "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": result,
                                                      "is_error": is_error}]}}]


def test_queued_messages_are_user_requests_at_their_place(tmp_path):
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Fix the parser in parse.py"}}]
    turn = _tool_turn(2, "Bash", {"command": "pytest -q"}, "3 passed in 0.1s")
    lines += [turn[0],
              {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:03Z",
               "content": "more tasks were added, do them too"},
              turn[1],
              {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:04Z",
               "content": "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"}]
    recs = run("import", _cc(lines, tmp_path)).records()
    texts = [(r["role"], r.get("content"), r.get("flags") or []) for r in recs if r["kind"] == "message"]
    i = next(k for k, t in enumerate(texts) if t[1] == "more tasks were added, do them too")
    assert texts[i][0] == "user" and "meta" not in texts[i][2]
    assert texts[i - 1][0] == "tool"  # after the turn's tool result: a call and its result stay together
    note = next(t for t in texts if "<task-notification>" in (t[1] or ""))
    assert "meta" in note[2]
    assert [t for _, _, t in requests(recs)] == ["Fix the parser in parse.py", "more tasks were added, do them too"]


def test_a_rejected_tool_use_is_not_an_error_and_a_big_output_kept_raw_is_a_stub(tmp_path):
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Tidy the config loader"}}]
    lines += _tool_turn(2, "Edit", {"file_path": "/w/app/config.py", "old_string": "x = 1",
                                    "new_string": "def load():\n    return 1"},
                        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
                        "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
                        "wait for the user to tell you how to proceed.", is_error=True)
    lines += _tool_turn(3, "Edit", {"file_path": "/w/app/config.py", "old_string": "x = 1",
                                    "new_string": "def load_config():\n    return 1"},
                        "The file /w/app/config.py has been updated successfully.")
    dump = "\n".join(f"{k:6}\u2192line {k} of a long file with words" for k in range(25))
    lines += _tool_turn(4, "Read", {"file_path": "/w/app/big.py"}, dump)
    lines.append({"type": "assistant", "uuid": "a5", "timestamp": "2026-01-01T00:00:05Z",
                  "message": {"id": "m5", "role": "assistant",
                              "content": [{"type": "text", "text": "The loader reads big.py once."}]}})
    recs = run("import", _cc(lines, tmp_path)).records()
    text, out = compact(recs, 2000, tmp_path)
    assert "doesn't want to proceed" not in text
    assert "`app/config.py` edited (added `load_config`)" in text
    stubs = [r for r in out if r["kind"] == "stub"]
    assert len(stubs) == 1 and not any("line 24 of a long file" in (r.get("content") or "") for r in out)
    cid = stubs[0]["meta"]["chunk_id"]
    back = run("recover", "--chunk-id", cid, "--session", stubs[0]["session"])
    assert back.code == 0 and "line 24 of a long file" in back.stdout


def test_a_capped_section_says_how_many_were_left_out(tmp_path):
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Read every module of the app"}}]
    for n in range(2, 60):
        lines += _tool_turn(n, "Read", {"file_path": f"/w/app/module_number_{n}/implementation_{n}.py"}, f"x = {n}")
    recs = run("import", _cc(lines, tmp_path)).records()
    text, _ = compact(recs, 700, tmp_path, "--summary-tokens", "300")
    assert re.search(r"more not shown|\(\d+ of \d+\)", text), text


def test_the_model_reads_the_current_work_as_notes():
    from ctxkit.core.distill import distill
    from ctxkit.services.compaction import model_input

    d = distill(span_of(corpus("claude-code_spotter_8463c716_session.jsonl")))
    notes = model_input(d)
    assert "Current work:" in notes and "`spotter-fum.3`" in notes and "Next step:" in notes
    assert notes.index("Current work:") < notes.index("Steps so far, in order:")
    # the newest mid-work lines too: the git-ignored file to force-add before the commit
    assert "stage it with `git add -f`" in notes.split("Next step:", 1)[1]


def test_the_model_reads_what_this_kind_of_session_needs_as_notes():
    # an exploration cut before its report: the findings so far, question by question, are notes too
    from ctxkit.core.distill import distill, set_story
    from ctxkit.core.focus import for_span
    from ctxkit.core.writeup import standing
    from ctxkit.services.compaction import model_input

    recs = span_of(corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl"))
    span = recs[:int(len(recs) * 0.7)]
    while span and span[-1].get("tool_calls"):
        span = span[:-1]
    d = distill(span)
    set_story(d, *for_span(span))
    kinds = [n for n in standing(d.story, d.focus, d.latest, more=True) if n not in ("Current work", "Next step")]
    assert kinds, "an exploration cut mid-way has a section of its own"
    notes = model_input(d, cap_chars=20000)
    for name in kinds:
        assert f"\n{name}:\n- " in notes, name


def test_the_latest_request_is_the_users_words_after_a_bare_continue(tmp_path):
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Port the CLI to click"}}]
    lines += _tool_turn(2, "Edit", {"file_path": "/w/cli.py", "old_string": "a", "new_string": "def main():\n    pass"},
                        "The file /w/cli.py has been updated successfully.")
    lines += [{"type": "user", "uuid": "u3", "message": {"role": "user", "content": "continue"}},
              {"type": "assistant", "uuid": "a4", "message": {"id": "m4", "role": "assistant", "content": [
                  {"type": "text", "text": "Next I will wire the subcommands into the group."}]}}]
    lines += _tool_turn(5, "Bash", {"command": "pytest -q"}, "2 passed in 0.1s")
    text, _ = compact(run("import", _cc(lines, tmp_path)).records(), 300, tmp_path)
    assert section(text, "Latest request").strip() == "continue"
    assert "wire the subcommands" not in section(text, "Latest request")
