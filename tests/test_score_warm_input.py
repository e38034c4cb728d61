"""Warm input: `ctx score` skips parsing, validating and redacting an input line whose exact bytes
an earlier run of the same session read clean (io.seen). What it prints never changes: a warm run
is byte for byte the cold one; a secret, a changed line, a changed redaction setting always go the
full way."""
import glob
import json
import os
import shutil

import pytest

from conftest import CORPUS_FILES, corpus, run
from ctxkit.io.adapters import open_records
from ctxkit.io.jsonl import Source
from ctxkit.services.scoring import line_memo
from ctxkit.store import signalcache
from ctxkit.store.home import Home

NOW = "2026-06-01T00:00:00Z"
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def score_cli(path_or_text, *extra, file=True):
    args = ("score", "--embedder", "keyword", "--now", NOW, *extra)
    res = run(*args, path_or_text) if file else run(*args, input=path_or_text)
    assert res.code == 0, res.stderr
    return res.stdout


def line_tables(home) -> list[dict]:
    home = Home(str(home))
    from ctxkit.services.scoring import fingerprint

    return [signalcache.load(p, fingerprint()) for p in glob.glob(os.path.join(home.cache_dir, "signals", "*.lines"))]


def read_with_memo(home, path):
    memo = line_memo(Home(str(home)))
    recs = list(open_records(Source(path), memo=memo))
    return memo, recs


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_a_warm_run_prints_what_the_cold_run_printed(ctx_home, tmp_path, name):
    res = run("import", corpus(name))
    assert res.code == 0, res.stderr
    src = tmp_path / "s.jsonl"
    src.write_text(res.stdout)
    cold = score_cli(str(src))
    warm = score_cli(str(src))
    assert warm == cold
    assert sum(len(t) for t in line_tables(ctx_home)) > 0   # the second run had lines to skip
    shutil.rmtree(os.path.join(str(ctx_home), "cache"))
    assert score_cli(str(src)) == cold                       # and a cold home agrees
    # the transcript itself (not ctx lines): scored the full way, the same on every run
    assert score_cli(corpus(name)) == score_cli(corpus(name))


def test_known_lines_are_read_unparsed_and_a_changed_line_goes_the_full_way(ctx_home, tmp_path):
    res = run("import", corpus("claude-code_spotter_fa812bfe_session.jsonl"))
    src = tmp_path / "s.jsonl"
    src.write_text(res.stdout)
    cold = score_cli(str(src))
    memo, recs = read_with_memo(ctx_home, str(src))
    n, hits = len(res.stdout.splitlines()), memo.hits
    assert hits > n * 0.9 and sum(type(r).__name__ == "Seen" for r in recs) == hits
    # one line changed (a secret put in it): that line is read, validated and redacted anew
    lines = res.stdout.splitlines()
    k = next(i for i, x in enumerate(lines) if '"role":"assistant"' in x and '"content":"' in x)
    rec = json.loads(lines[k])
    rec["content"] = f"export GITHUB_TOKEN={GH_TOKEN}\n" + rec["content"]
    lines[k] = json.dumps(rec, ensure_ascii=False)
    src2 = tmp_path / "s2.jsonl"
    src2.write_text("\n".join(lines) + "\n")
    warm = score_cli(str(src2))
    assert GH_TOKEN not in warm and "[REDACTED:" in warm
    for t in line_tables(ctx_home):   # the line with the secret is not among the known
        assert all(GH_TOKEN not in (e[2] or "") for e in t.values())
    memo, _ = read_with_memo(ctx_home, str(src2))
    assert memo.hits == hits - 1
    shutil.rmtree(os.path.join(str(ctx_home), "cache"))
    assert score_cli(str(src2)) == warm
    assert cold != warm


def test_a_line_known_clean_is_redacted_once_a_pattern_covers_it(ctx_home, tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in [
        {"v": 1, "kind": "message", "id": "u1", "session": "pat", "role": "user", "group": "g1",
         "content": "look at tok_48151623 in app.py"},
        {"v": 1, "kind": "message", "id": "a1", "session": "pat", "role": "assistant", "group": "g2",
         "content": "app.py uses tok_48151623"},
    ]))
    assert "tok_48151623" in score_cli(str(src))
    memo, _ = read_with_memo(ctx_home, str(src))
    assert memo.hits == 1   # known clean under the settings of the day (the first line names the session: read)
    assert run("config", "set", "redact_patterns", "['tok_[0-9]+']").code == 0
    out = score_cli(str(src))
    assert "tok_48151623" not in out and "[REDACTED:custom#" in out
    assert all("tok_48151623" not in (e[2] or "") for t in line_tables(ctx_home) for e in t.values())


def test_records_grouped_by_their_neighbours_are_always_read_in_full(ctx_home, tmp_path):
    """A record without a group takes one from the records before it: it is never skipped, and a
    known line between such records does not change which group they get."""
    recs = [
        {"v": 1, "kind": "message", "id": "u1", "session": "grp", "role": "user", "content": "fix app.py"},
        {"v": 1, "kind": "message", "id": "a1", "session": "grp", "role": "assistant", "content": "",
         "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\": \"app.py\"}"}}]},
        {"v": 1, "kind": "event", "id": "e1", "session": "grp", "content": "", "meta": {"type": "note"}},
        {"v": 1, "kind": "message", "id": "r1", "session": "grp", "role": "tool", "tool_call_id": "t1",
         "content": "def main(): pass"},
        {"v": 1, "kind": "message", "id": "a2", "session": "grp", "role": "assistant", "group": "mine",
         "content": "app.py read"},
        {"v": 1, "kind": "message", "id": "u2", "session": "grp", "role": "user", "content": "and the tests"},
    ]
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    cold = score_cli(str(src))
    assert score_cli(str(src)) == cold
    memo, got = read_with_memo(ctx_home, str(src))
    assert memo.hits == 2     # the event and the record with its own group
    assert [r["group"] for r in got if r["kind"] != "event"] == ["c-0001", "c-0002", "c-0002", "mine", "c-0003"]
    shutil.rmtree(os.path.join(str(ctx_home), "cache"))
    assert score_cli(str(src)) == cold


def test_a_scored_stream_and_stdin_are_rescored_the_same_warm_or_cold(ctx_home):
    text = run("import", corpus("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")).stdout
    scored = score_cli(text, file=False)
    assert score_cli(text, file=False) == scored
    again = score_cli(scored, file=False)
    assert score_cli(scored, file=False) == again
    shutil.rmtree(os.path.join(str(ctx_home), "cache"))
    assert score_cli(scored, file=False) == again


def test_a_transcript_scored_between_two_runs_leaves_the_known_lines_alone(ctx_home, tmp_path):
    """Only ctx JSONL lines are known: scoring the session's transcript itself (another format)
    neither reads nor replaces the table."""
    name = "claude-code_spotter_491e126e_session.jsonl"
    src = tmp_path / "s.jsonl"
    src.write_text(run("import", corpus(name)).stdout)
    cold = score_cli(str(src))
    before = line_tables(ctx_home)
    score_cli(corpus(name))
    assert line_tables(ctx_home) == before
    memo, _ = read_with_memo(ctx_home, corpus(name))
    assert memo.hits == 0 and memo.path is None
    assert score_cli(str(src)) == cold


def test_a_growing_session_file_skips_what_it_had_even_its_unfinished_last_line(ctx_home, tmp_path):
    text = run("import", corpus("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")).stdout
    lines = text.splitlines()
    src = tmp_path / "s.jsonl"
    src.write_text("\n".join(lines[: len(lines) // 2]))     # no newline after the last line yet
    score_cli(str(src))
    src.write_text("\n".join(lines) + "\n")
    memo, _ = read_with_memo(ctx_home, str(src))
    assert memo.hits == len(lines) // 2 - 1    # all it read before (the first line names the session: read)
    warm = score_cli(str(src))
    shutil.rmtree(os.path.join(str(ctx_home), "cache"))
    assert score_cli(str(src)) == warm
