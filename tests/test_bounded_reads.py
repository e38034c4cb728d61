"""Hooks read a transcript of any size in bounded work: a first read of a long one parses only
its recent part (from a turn's start, ids and line numbers as a full read gives them), a reader
keeps at most KEEP bytes parsed and starts a new window past it, and formats read whole every
time (Codex) are read from the same window after their metadata line. Nothing is refused for
its size. The window is made small here so the corpus transcripts are "huge"."""
import json

import pytest
from conftest import corpus

from ctxkit.io.adapters import open_records
from ctxkit.io.jsonl import Source
from ctxkit.services import hooks, transcripts
from ctxkit.store.home import Home

CC = "claude-code_spotter_8463c716_session.jsonl"
CODEX = "codex_agentv_rollout-019efc87.jsonl"


@pytest.fixture
def small_window(monkeypatch):
    monkeypatch.setattr(transcripts, "WINDOW", 200_000)
    monkeypatch.setattr(transcripts, "KEEP", 600_000)
    monkeypatch.setattr(transcripts, "ONCE_WINDOW", 200_000)


def _by_line(recs):
    return {(r.get("source") or {}).get("line"): r for r in recs if r.get("kind") == "message"}


def _check_window(got, full, start_line):
    """The window's messages are the full read's (same ids, same lines), from its first line on."""
    full_msgs = [r for r in full if r.get("kind") == "message" and (r.get("source") or {}).get("line", 0) >= start_line]
    got_msgs = [r for r in got if r.get("kind") == "message"]
    assert got_msgs and len(got_msgs) == len(full_msgs)
    for a, b in zip(got_msgs, full_msgs):
        assert a["id"] == b["id"] and a["source"]["line"] == b["source"]["line"] and a.get("content") == b.get("content")


def test_a_first_read_of_a_long_transcript_parses_its_last_window_from_a_turn(tmp_path, small_window):
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    data = open(corpus(CC), "rb").read()
    path.write_bytes(data)
    full = list(open_records(Source(str(path))))
    recs, how = transcripts.read(home, str(path), "s")
    assert how == "window"
    lines = data.splitlines(keepends=True)
    start_line = min(r["source"]["line"] for r in recs if r.get("source"))
    assert sum(map(len, lines[:start_line - 1])) >= len(data) - transcripts.WINDOW - 1
    assert transcripts._is_turn_start(lines[start_line - 1], "claude-code")
    _check_window(recs, full, start_line)
    assert not any(r.get("role") == "tool" and "orphan_result" in (r.get("flags") or ()) for r in recs)
    # nothing new: the cache answers; one more turn: only it is parsed, numbered on
    again, how = transcripts.read(home, str(path), "s")
    assert how == "cached" and json.dumps(again) == json.dumps(recs)


def test_a_reader_keeps_at_most_keep_bytes_then_starts_a_new_window(tmp_path, small_window):
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    lines = open(corpus(CC), "rb").read().splitlines(keepends=True)
    cut = len(lines) // 3
    path.write_bytes(b"".join(lines[:cut]))
    _, how = transcripts.read(home, str(path), "s")
    assert how == "window"
    hows = []
    step = max(1, (len(lines) - cut) // 12)
    for i in range(cut, len(lines), step):
        with open(path, "ab") as f:
            f.writelines(lines[i:i + step])
        recs, how = transcripts.read(home, str(path), "s")
        hows.append(how)
        state = hooks.read_state(home)[transcripts.STATE_PREFIX + "s"]
        assert state["offset"] - state["start"] <= transcripts.KEEP
    assert "window" in hows and ("appended" in hows)
    full = list(open_records(Source(str(path))))
    start_line = min(r["source"]["line"] for r in recs if r.get("source"))
    _check_window(recs, full, start_line)


def test_codex_is_read_from_its_window_after_its_metadata_line(tmp_path, small_window):
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(open(corpus(CODEX), "rb").read())
    full = list(open_records(Source(str(path))))
    recs = hooks.records_of(str(path), None, home, "codex-s")
    assert recs and len(recs) < len(full)
    start_line = min(r["source"]["line"] for r in recs if r.get("source") and r.get("kind") == "message")
    assert {r.get("session") for r in recs} == {r.get("session") for r in full if r.get("kind") == "message"}
    full_msgs = [r for r in full if r.get("kind") == "message" and r["source"]["line"] >= start_line]
    got_msgs = [r for r in recs if r.get("kind") == "message"]
    assert [r["id"] for r in got_msgs][-20:] == [r["id"] for r in full_msgs][-20:]


def test_nothing_is_refused_for_its_size(tmp_path, small_window):
    """A transcript past any size is read (its recent part), never "not read"."""
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    data = open(corpus(CC), "rb").read()
    path.write_bytes(data * 3)
    recs = hooks.records_of(str(path), None, home, "big")
    assert recs and all(r["source"]["line"] > len(data.splitlines()) * 2 for r in recs if r.get("source"))


def _cut_mid_line(src: str, dest, keep: int) -> None:
    data = open(corpus(src), "rb").read()[:keep]
    assert not data.endswith(b"\n")
    dest.write_bytes(data)


@pytest.mark.parametrize("agent,src,event", [
    ("claude-code", "claude-code_spotter_491e126e_session.jsonl", "Stop"),
    ("codex", "codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl", "Stop"),
    ("copilot", "formats/copilot-cli_agentv_10fb4666.jsonl", "agentStop"),
])
def test_a_hook_skips_a_half_written_last_line_with_a_note(tmp_path, agent, src, event):
    from conftest import run

    t = tmp_path / "live.jsonl"
    _cut_mid_line(src, t, 30000)
    proj = tmp_path / "p"
    proj.mkdir()
    key = "sessionId" if agent == "copilot" else "session_id"
    tkey = "transcriptPath" if agent == "copilot" else "transcript_path"
    payload = {key: "live-1", tkey: str(t), "cwd": str(proj), "hook_event_name": event}
    res = run("hook", agent, event, input=json.dumps(payload))
    assert res.code == 0 and "Traceback" not in res.stderr
    assert f"{t}: skipped a half-written last line" in res.stderr


def test_import_skips_a_half_written_last_line_but_a_bad_line_inside_stays_an_error(tmp_path):
    from conftest import run

    t = tmp_path / "live.jsonl"
    _cut_mid_line("claude-code_spotter_491e126e_session.jsonl", t, 30000)
    res = run("import", t)
    assert res.code == 0 and "skipped a half-written last line" in res.stderr
    lines = t.read_bytes().split(b"\n")
    lines[3] = lines[3][:40]
    t.write_bytes(b"\n".join(lines))
    res = run("import", t)
    assert res.code == 1 and f"{t}:4:" in res.stderr


def test_a_compaction_is_handed_back_when_earlier_ones_are_out_of_the_window(tmp_path):
    """Gemini CLI and Copilot CLI get the state back at the prompt once per compaction they made.
    A huge transcript is read from its recent part, where fewer compactions may be in sight than
    were counted before: a newest compaction that is not the one handed back is new all the same."""
    home = Home(str(tmp_path / "home"))
    t = hooks.Target(session="gemini-w", project=str(tmp_path), workspace=str(tmp_path / "ws"), agent="gemini")

    def b(i):
        return {"v": 1, "kind": "summary", "id": f"b{i}", "session": "gemini-w", "role": "system",
                "content": "The user asked to build the alpha exporter; next: document it.",
                "flags": ["compact_boundary"]}

    def m(i, role="user"):
        return {"v": 1, "kind": "message", "id": f"m{i}", "session": "gemini-w", "role": role,
                "content": f"Build the alpha exporter step {i}" if role == "user" else f"Done step {i}: exporter.py"}

    whole = [m(0), m(1, "assistant"), b(1), m(2), m(3, "assistant"), b(2), m(4), m(5, "assistant")]
    assert hooks.restore_after_compaction(home, t, whole)
    assert not hooks.restore_after_compaction(home, t, whole)            # once per compaction
    window = [b(2), m(4), m(5, "assistant"), m(6), m(7, "assistant")]    # b1 out of sight: nothing new
    assert not hooks.restore_after_compaction(home, t, window)
    window += [b(3), m(8), m(9, "assistant")]                           # a new one, though only 2 in sight
    assert hooks.restore_after_compaction(home, t, window)
    assert not hooks.restore_after_compaction(home, t, window)
