"""Hooks read a growing transcript once: the lines appended since the session's last read are
parsed, the rest comes from the cache, and the records are exactly those of a full read; a
transcript rewritten, truncated or replaced is read whole again. The transcript cache and the
hook state stay on the machine whatever the store; the session state they write is read from
the configured store (the suite runs on both)."""
import json
import os

from conftest import corpus, run, stored_text

from ctxkit.io.adapters import open_records
from ctxkit.io.jsonl import Source
from ctxkit.services import hooks, transcripts
from ctxkit.store.home import Home

SMALL = "claude-code_spotter_491e126e_session.jsonl"


def _state_text(ctx_home, sid) -> str:
    """The session's stored CONTEXT.md, from whichever store is configured."""
    from ctxkit.store.backend import close_store
    from ctxkit.store.session_state import state_file

    h = Home(str(ctx_home))
    try:
        return stored_text(state_file(h, sid).path)
    finally:
        close_store(h)


def _full(path):
    return list(open_records(Source(str(path))))


def _is_prompt(line: bytes) -> bool:
    o = json.loads(line)
    c = (o.get("message") or {}).get("content") if o.get("type") == "user" else None
    return isinstance(c, str) or (isinstance(c, list) and bool(c) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c))


def _lines():
    return open(corpus(SMALL), "rb").read().splitlines(keepends=True)


def test_reading_on_from_any_cut_gives_exactly_the_records_of_a_full_read(tmp_path):
    lines = _lines()
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines))
    want = json.dumps(_full(path))
    modes = {}
    for cut in range(1, len(lines)):
        path.write_bytes(b"".join(lines[:cut]))
        key = f"s{cut}"
        first, how = transcripts.read(home, str(path), key)
        assert how == "full" and json.dumps(first) == json.dumps(_full(path))
        with open(path, "ab") as f:
            f.writelines(lines[cut:])
        got, how = transcripts.read(home, str(path), key)
        modes.setdefault(how, []).append(cut)
        assert json.dumps(got) == want, (cut, how)
        again, how = transcripts.read(home, str(path), key)
        assert how == "cached" and json.dumps(again) == want
    # wherever a turn starts (where Stop and UserPromptSubmit read), only the new lines are parsed
    turns = [i for i in range(1, len(lines)) if _is_prompt(lines[i])]
    assert turns and set(turns) <= set(modes["appended"])
    # a cut inside a turn (a tool call waiting for its result) is read whole: still exact
    assert modes.get("full")


def test_a_line_still_being_written_waits_for_its_newline(tmp_path):
    lines = _lines()
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    cut = next(i for i in range(1, len(lines)) if _is_prompt(lines[i]))
    path.write_bytes(b"".join(lines[:cut]) + lines[cut][:40])
    recs, _ = transcripts.read(home, str(path), "s")
    assert len(recs) == len(_full_of(lines[:cut], tmp_path))
    with open(path, "ab") as f:
        f.write(lines[cut][40:])
        f.writelines(lines[cut + 1:])
    recs, how = transcripts.read(home, str(path), "s")
    assert how == "appended" and json.dumps(recs) == json.dumps(_full(path))


def _full_of(lines, tmp_path):
    p = tmp_path / "part.jsonl"
    p.write_bytes(b"".join(lines))
    return _full(p)


def test_a_rewritten_truncated_or_replaced_transcript_is_read_whole(tmp_path):
    lines = _lines()
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    cut = max(i for i in range(1, len(lines)) if _is_prompt(lines[i]))
    path.write_bytes(b"".join(lines[:cut]))
    transcripts.read(home, str(path), "s")
    # the last line read was changed (same size): the file is not the one read
    body = bytearray(path.read_bytes())
    i = body.rindex(b'"timestamp":"2', body.rindex(b"\n", 0, len(body) - 1)) + 14
    body[i] = ord("1")  # 2025-… becomes 1025-…
    path.write_bytes(bytes(body) + b"".join(lines[cut:]))
    recs, how = transcripts.read(home, str(path), "s")
    assert how == "full" and json.dumps(recs) == json.dumps(_full(path))
    # shorter than what was read
    path.write_bytes(b"".join(lines[: cut // 2]))
    recs, how = transcripts.read(home, str(path), "s")
    assert how == "full" and json.dumps(recs) == json.dumps(_full(path))
    # another file at the same path (a new inode), grown past the old size
    path.unlink()
    path.write_bytes(b"".join(lines))
    recs, how = transcripts.read(home, str(path), "s")
    assert how == "full" and json.dumps(recs) == json.dumps(_full(path))
    # a damaged cache is not trusted: the file is read again
    cache = transcripts._cache_path(home, "s")
    with open(cache, "r+b") as f:
        f.write(b"{not json")
    with open(path, "ab") as f:
        f.write(lines[-1])
    assert json.dumps(hooks.records_of(str(path), None, home, "s")) == json.dumps(_full(path))


def test_stop_reads_only_what_was_appended_and_session_end_forgets_the_cache(tmp_path, ctx_home):
    lines = _lines()
    t = tmp_path / "t.jsonl"
    cut = max(i for i in range(1, len(lines)) if _is_prompt(lines[i]))
    t.write_bytes(b"".join(lines[:cut]))
    sid = "491e126e-1e71-469c-ade2-fcc8af567c74"
    payload = {"hook_event_name": "Stop", "session_id": sid, "transcript_path": str(t), "cwd": str(tmp_path)}
    assert run("hook", "claude-code", "Stop", input=json.dumps(payload)).code == 0
    state = json.load(open(ctx_home / "hooks-state.json"))["read:" + sid]
    assert state["offset"] == t.stat().st_size and state["lines"] == cut
    # an early line changed in place (same size) is not read again: only the appended turn is
    body = bytearray(t.read_bytes())
    j = body.index(b"websearch")
    body[j:j + 9] = b"WEBSEARCH"
    t.write_bytes(bytes(body) + b"".join(lines[cut:]))
    res = run("hook", "claude-code", "Stop", input=json.dumps(payload))
    assert res.code == 0, res.stderr
    state = json.load(open(ctx_home / "hooks-state.json"))["read:" + sid]
    assert state["offset"] == t.stat().st_size and state["lines"] == len(lines)
    ctx = _state_text(ctx_home, sid)
    assert "websearch" in ctx and "WEBSEARCH" not in ctx  # the early lines came from the cache
    assert "create the beads" in ctx  # the appended turn was folded in
    cache = transcripts._cache_path(Home(str(ctx_home)), sid)
    assert os.path.exists(cache) and oct(os.stat(cache).st_mode & 0o777) == "0o600"
    end = dict(payload, hook_event_name="SessionEnd")
    assert run("hook", "claude-code", "SessionEnd", input=json.dumps(end)).code == 0
    assert not os.path.exists(cache)
    assert "read:" + sid not in json.load(open(ctx_home / "hooks-state.json"))


def test_a_last_line_without_its_newline_is_read_all_the_same(tmp_path):
    lines = _lines()
    home = Home(str(tmp_path / "home"))
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines).rstrip(b"\n"))  # a file written without the final newline
    recs, how = transcripts.read(home, str(path), "s")
    assert how == "full" and json.dumps(recs) == json.dumps(_full(path)) and recs
    path.write_bytes(b"".join(lines))
    recs, how = transcripts.read(home, str(path), "s")
    assert json.dumps(recs) == json.dumps(_full(path))
