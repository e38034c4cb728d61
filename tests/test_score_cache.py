"""Warm rescoring: each chunk's signals are cached by a hash of the chunk; a rescoring prints the
same records, never lets a secret through, and never caches what redaction would change."""
import glob
import io
import json
import os

import pytest

from conftest import corpus, run
from ctxkit.core.bm25 import bm25_of_stats, bm25_scores, doc_stats
from ctxkit.core.groups import iter_groups
from ctxkit.core.working_set import FocusTracker, lean, turn_texts
from ctxkit.io.jsonl import Writer
from ctxkit.services.embedding import make_embedder
from ctxkit.services.scoring import score_stream
from ctxkit.store.home import Home

NOW = "2026-06-01T00:00:00Z"
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def imported(name):
    res = run("import", corpus(name))
    assert res.code == 0, res.stderr
    return res.stdout


def score_cli(text, *extra):
    res = run("score", "--embedder", "keyword", "--now", NOW, *extra, input=text)
    assert res.code == 0, res.stderr
    return res.stdout


def score_lib(home, records):
    from ctxkit.core.timeutil import parse_ts

    buf = io.StringIO()
    r = score_stream(home, [dict(x) for x in records], None, "keyword", parse_ts(NOW), Writer(buf),
                     lambda h, n, k: make_embedder(h, n, k))
    return r, buf.getvalue()


def cache_files(home):
    return glob.glob(os.path.join(str(home), "cache", "signals", "*.bin"))


def test_rescoring_prints_the_same_records_from_the_cache(ctx_home):
    text = imported("claude-code_spotter_fa812bfe_session.jsonl")
    recs = [json.loads(x) for x in text.splitlines()]
    home = Home(str(ctx_home))
    first, out1 = score_lib(home, recs)
    assert first.reused == 0 and cache_files(ctx_home)
    second, out2 = score_lib(home, recs)
    assert second.reused == second.chunks > 100
    assert out1 == out2
    # the CLI too: a cold home and a warm one print the same lines
    assert score_cli(text) == score_cli(text)


def test_a_grown_session_reuses_what_it_had(ctx_home):
    recs = [json.loads(x) for x in imported("claude-code_spotter_fa812bfe_session.jsonl").splitlines()]
    home = Home(str(ctx_home))
    cut = len(recs) * 2 // 3
    while cut < len(recs) and recs[cut].get("group") == recs[cut - 1].get("group"):
        cut += 1
    score_lib(home, recs[:cut])
    warm, out = score_lib(home, recs)
    assert 0 < warm.reused < warm.chunks
    import shutil

    shutil.rmtree(os.path.join(str(ctx_home), "cache"))
    cold, out_cold = score_lib(home, recs)
    assert cold.reused == 0 and out == out_cold


def test_rescoring_a_scored_stream_scores_it_anew(ctx_home):
    text = imported("codex_kunalcode12_Empire-of-bits-vorld.rollout.jsonl")
    once = [json.loads(x) for x in score_cli(text).splitlines()]
    again = [json.loads(x) for x in score_cli(score_cli(text)).splitlines()]
    assert once == again   # the same fields and values (key order aside)


def test_a_secret_is_redacted_on_every_run_and_never_cached(ctx_home):
    home = Home(str(ctx_home))
    recs = [
        {"v": 1, "kind": "message", "id": "u1", "session": "sec", "role": "user", "group": "g1",
         "content": "set up deploy.py with the new key", "ts": "2026-01-01T00:00:00Z"},
        {"v": 1, "kind": "message", "id": "a1", "session": "sec", "role": "assistant", "group": "g2",
         "content": f"I will export GITHUB_TOKEN={GH_TOKEN} in deploy.py", "ts": "2026-01-01T00:01:00Z"},
        {"v": 1, "kind": "message", "id": "a2", "session": "sec", "role": "assistant", "group": "g3",
         "content": "done with deploy.py", "ts": "2026-01-01T00:02:00Z"},
    ]
    for k in range(2):
        r, out = score_lib(home, recs)   # records handed over unredacted (library use)
        assert GH_TOKEN not in out and "[REDACTED:" in out
        assert r.reused == (2 if k else 0)   # the chunk with the secret is found anew each time
    for f in cache_files(ctx_home):
        data = open(f, "rb").read()
        assert GH_TOKEN.encode() not in data and b"a1B2c3D4" not in data


def test_a_new_redaction_pattern_is_never_skipped_by_the_cache(ctx_home):
    recs = "".join(json.dumps(r) + "\n" for r in [
        {"v": 1, "kind": "message", "id": "u1", "session": "pat", "role": "user", "content": "look at tok_48151623 in app.py"},
        {"v": 1, "kind": "message", "id": "a1", "session": "pat", "role": "assistant", "content": "app.py uses tok_48151623"},
    ])
    assert "tok_48151623" in score_cli(recs)
    assert "tok_48151623" in score_cli(recs)   # cached as clean under the settings of the day
    assert run("config", "set", "redact_patterns", "['tok_[0-9]+']").code == 0
    out = score_cli(recs)
    assert "tok_48151623" not in out and "[REDACTED:custom#" in out


def test_replayed_operations_give_the_same_focus(ctx_home):
    recs = [json.loads(x) for x in imported("claude-code_spotter_fa812bfe_session.jsonl").splitlines()]
    groups = list(iter_groups(recs))
    fed = FocusTracker()
    kept = []
    for g in groups:
        fed.record = ops = []
        for r in g:
            fed.feed(r)
        kept.append(lean(ops))
    replayed = FocusTracker()
    replayed.resolve = lambda ref: turn_texts(groups[ref[0]])[ref[1]]
    for i, ops in enumerate(kept):
        replayed.replay(ops, i)
    a, b = fed.focus(), replayed.focus()
    assert a.explain() == b.explain() and a.terms() == b.terms() and a.query() == b.query()
    assert list(fed.writes) == list(replayed.writes) and a.recent


def test_bm25_from_kept_statistics_matches_bm25_over_the_texts():
    docs = ["refresh_token expires in auth/jwt.py", "pasta recipe with salt", "", "the token, the token again"]
    q = "fix the refresh token bug"
    assert bm25_of_stats(q, [doc_stats(d) for d in docs]) == pytest.approx(bm25_scores(q, docs))
    assert bm25_of_stats(q, []) == []


def _call(i, name, args, result, group):
    return [
        {"v": 1, "kind": "message", "id": f"a{i}", "session": "s", "role": "assistant", "group": group, "content": "",
         "tool_calls": [{"id": f"t{i}", "type": "function",
                         "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"v": 1, "kind": "message", "id": f"r{i}", "session": "s", "role": "tool", "group": group,
         "tool_call_id": f"t{i}", "content": result},
    ]


def test_a_search_whose_listed_file_was_then_opened_is_superseded():
    from ctxkit.core.working_set import found_paths
    from ctxkit.services.scoring import signals

    grep = _call(1, "Grep", {"pattern": "refresh_token"}, "src/auth/jwt.py\nsrc/auth/session.py", "g1")
    glob_ = _call(2, "Bash", {"command": "cd /repo && find . -name '*.toml'"}, "./pyproject.toml\n./ruff.toml", "g2")
    read = _call(3, "Read", {"file_path": "/repo/src/auth/jwt.py"}, "def refresh_token(): ...", "g3")
    other = _call(4, "Bash", {"command": "pytest -q tests/test_jwt.py"}, "1 passed", "g4")
    assert found_paths(grep) == ("src/auth/jwt.py", "src/auth/session.py") and found_paths(glob_)
    assert found_paths(other) == () and found_paths(read) == ()
    _, sup = signals([grep, glob_, read, other])
    assert sup == [1.0, 0.0, 0.0, 0.0]   # the grep served to find jwt.py, which g3 shows; no toml was opened


def test_a_stub_lists_distinct_names_a_file_name_ending_a_listed_path_is_not_repeated():
    from ctxkit.core.shrink import names_of

    text = "\n".join(f"/repo/lib/app/module_{i}.ex defines Module{i}.handle_event_{i}" for i in range(30))
    g = [{"v": 1, "kind": "message", "id": "r1", "session": "s", "role": "tool", "group": "g", "content": text}]
    names = names_of(g, 10_000)
    assert "/repo/lib/app/module_0.ex" in names and "module_0.ex" not in names
    assert len(names) == len(set(names)) == 40   # the cap, filled with distinct names


def test_a_shrink_note_lists_what_the_cut_lines_name_most_used_first_up_to_its_cap():
    from ctxkit.core.shrink import NAMES_MAX, note, shrink_text
    from ctxkit.core.working_set import terms_of

    lines = ["$ cat lib/app.ex"] + [f"  def handler_{i}(conn), do: Helper{i}.call_{i}(conn)" for i in range(100)]
    lines[50] = "  def wanted_function(conn), do: conn"
    for k in (70, 80, 90):   # what the file keeps using, far down: it comes first
        lines[k] += "  # session_store.fetch(conn) via lib/app/session_store.ex"
    s = shrink_text("\n".join(lines), {"wanted_function"})
    assert s is not None and "wanted_function" in s.text
    assert len(s.names) == len(set(s.names)) == NAMES_MAX == 60
    assert s.names[:2] == ("session_store.fetch", "lib/app/session_store.ex")   # used 3 times, first seen on line 70
    # then first seen first (the head keeps 6 lines); names used as often do not count a longer
    # name's parts (handler_5 is not counted in handler_50)
    assert s.names[2:5] == ("handler_5", "Helper5.call_5", "handler_6")
    assert not set(s.names) & terms_of(s.text) and "wanted_function" not in s.names   # only what was cut
    assert f"the cut lines name: {', '.join(s.names)}" in note(s, "c-0001", "s")