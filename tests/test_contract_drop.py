"""`ctx drop`, `ctx score --explain`, `ctx recover` and `ctx drops` keep the one output contract
(docs/output.md): errors before any output or write, the listing flags on their listing modes,
exit 2 for unknown or unsafe ids, finite numbers, recovery by id on a full disk or a read-only
home, and a drops log that says what each drop freed."""
import errno
import json
import os
import re
import sqlite3

import pytest

from conftest import ROOT, run

TRANSCRIPT = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")
ENV = {"CTX_EMBEDDER": "keyword", "COLUMNS": "100"}


@pytest.fixture
def streams(tmp_path):
    imported = run("import", TRANSCRIPT)
    assert imported.code == 0, imported.stderr
    scored = run("score", "-", "--query", "create the beads", env=ENV, input=imported.stdout)
    assert scored.code == 0, scored.stderr
    return imported.stdout, scored.stdout


def _jsonl(text: str) -> list:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def test_unscored_input_is_one_error_and_nothing_is_written(streams, ctx_home):
    imported, _ = streams
    for args in (["--free", "0.5"], ["--to-tokens", "1000"], []):
        res = run("drop", *args, input=imported)
        assert res.code == 1 and res.stdout == "", args
        assert res.stderr.strip().splitlines() == [
            "Error: stdin: the input is not scored: run `ctx score` first (hint: ctx score FILE | ctx drop)"]
    assert not (ctx_home / "cold-storage").exists() or not any((ctx_home / "cold-storage").rglob("c-*.jsonl"))
    assert run("drops", "--json").stdout == ""


def test_dry_run_is_a_listing_with_totals_and_says_why_chunks_stay(streams):
    _, scored = streams
    piped = run("drop", "--free", "0.5", "--dry-run", input=scored, env=ENV)
    rows = _jsonl(piped.stdout)
    assert piped.code == 0 and rows
    assert _jsonl(run("drop", "--free", "0.5", "--dry-run", "--json", input=scored, env=ENV).stdout) == rows
    frees = run("drop", "--free", "0.5", "--dry-run", "--jq", ".frees", input=scored, env=ENV)
    assert frees.code == 0 and sum(map(int, frees.stdout.split())) == sum(r["frees"] for r in rows)
    total = re.search(r"would drop (\d+) of (\d+) chunks, shrink (\d+), .*; (\d+) -> (\d+) tokens \(frees (\d+)\)",
                      piped.stderr)
    assert total, piped.stderr
    assert int(total[6]) == sum(r["frees"] for r in rows) == int(total[4]) - int(total[5])
    table = run("drop", "--free", "0.5", "--dry-run", "-t", "--fmt", "github", input=scored, env=ENV)
    assert table.code == 0 and table.stdout.startswith("| chunk_id")
    # under a budget a kept chunk says why it stays: the target was reached first (not "relevant")
    kept = [r for r in rows if r["decision"] == "keep" and r["reason"] not in ("recent", "protected", "not_a_message")]
    assert kept and {r["reason"] for r in kept} <= {"target_reached", "smaller_than_stub"}
    # and the real run frees what the dry run said it would
    real = run("drop", "--free", "0.5", input=scored, env=ENV)
    assert real.code == 0
    done = re.search(r"; (\d+) -> (\d+) tokens", real.stderr)
    assert int(done[1]) - int(done[2]) == int(total[6])


@pytest.mark.parametrize("flag", [["-t"], ["--json"], ["--jq", "."], ["--fmt", "github"]])
def test_listing_flags_without_the_listing_mode_are_usage_errors(streams, flag, ctx_home):
    imported, scored = streams
    res = run("drop", "--free", "0.5", *flag, input=scored, env=ENV)
    assert res.code == 2 and res.stdout == "" and "--dry-run" in res.stderr
    assert not (ctx_home / "cold-storage").exists() or not any((ctx_home / "cold-storage").rglob("c-*.jsonl"))
    res = run("score", "-", "--query", "beads", *flag, input=imported, env=ENV)
    assert res.code == 2 and res.stdout == "" and "--explain" in res.stderr


def test_explain_is_a_listing_whose_why_names_the_largest_contributions(streams):
    imported, _ = streams
    args = ["score", "-", "--query", "create the beads", "--explain"]
    rows = _jsonl(run(*args, input=imported, env=ENV).stdout)
    assert rows and _jsonl(run(*args, "--json", input=imported, env=ENV).stdout) == rows
    assert all("weights" not in r for r in rows)
    assert all(r["why"] for r in rows)                        # every row says why
    assert any("the query" in r["why"] for r in rows) and any("recent" in r["why"] for r in rows)
    for r in rows:                                            # its first reason is its largest contribution
        assert re.search(r"\([+-]\d\.\d\d\)", r["why"].split(";")[0]), r["why"]
    ids = run(*args, "--jq", ".chunk_id", "-r", input=imported, env=ENV)
    assert ids.stdout.split() == [r["chunk_id"] for r in rows]
    table = run(*args, "-t", input=imported, env=ENV)
    assert table.code == 0
    head = table.stdout.splitlines()[0].split()
    assert "why" in head and "weights" not in head            # the columns go to why, not to repeated weights
    assert table.stderr.count("ctx: weights: similarity") == 1


def test_an_empty_stream_scores_and_drops_to_nothing():
    for args in (["score", "-"], ["score", "-", "--explain"], ["drop"], ["drop", "--free", "0.5"]):
        res = run(*args, input="", env=ENV)
        assert res.code == 0 and res.stdout == "", (args, res.stderr)


def test_unknown_and_unsafe_ids_are_usage_errors(streams):
    _, scored = streams
    assert run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV).code == 0
    unknown = run("recover", "--chunk-id", "c-9999")
    assert unknown.code == 2 and unknown.stdout == "" and "no chunk 'c-9999'" in unknown.stderr
    for bad in ("../../etc/passwd", "a/b", ".."):
        res = run("recover", "--chunk-id", bad)
        assert res.code == 2 and res.stdout == "" and "unsafe chunk id" in res.stderr, bad
    for args in (["drops", "--session", "zz-nothing"], ["recover", "--chunk-id", "c-0001", "--session", "zz"]):
        res = run(*args)
        assert res.code == 2 and res.stdout == "" and "no session" in res.stderr, args
    res = run("drops", "--session", "../x")
    assert res.code == 2 and "unsafe session id" in res.stderr
    assert run("goal", "complete", "g-404").code == 2


@pytest.mark.parametrize("args", [["drop", "--free", "nan"], ["drop", "--cutoff", "nan"], ["drop", "--keep", "inf"],
                                  ["drop", "--free", "-inf"], ["recover", "--query", "x", "--min-score", "nan"],
                                  ["truncate", "--budget", "10", "--min-importance", "nan"]])
def test_nan_and_inf_are_usage_errors(args):
    res = run(*args, input="")
    assert res.code == 2 and res.stdout == "" and "finite" in res.stderr and "internal error" not in res.stderr


def test_nan_in_config_is_refused(ctx_home, streams):
    _, scored = streams
    ctx_home.mkdir(exist_ok=True)
    (ctx_home / "config.yaml").write_text("relevance_cutoff: .nan\n")
    res = run("drop", input=scored, env=ENV)
    assert res.code == 1 and res.stdout == "" and "relevance_cutoff must be a finite number" in res.stderr
    res = run("drop", input=scored, env={**ENV, "CTX_RELEVANCE_KEEP": "inf"})
    assert res.code == 1 and res.stdout == ""


def test_recover_into_a_link_writes_through_to_its_target(streams, tmp_path):
    _, scored = streams
    kept = run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV)
    stub = next(r for r in kept.records() if r["kind"] == "stub")
    real = tmp_path / "real.jsonl"
    real.write_text(kept.stdout)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    res = run("recover", "--chunk-id", stub["meta"]["chunk_id"], "--into", link)
    assert res.code == 0, res.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    after = _jsonl(real.read_text())
    assert not any(r["kind"] == "stub" and r["group"] == stub["group"] for r in after)
    assert any(r.get("group") == stub["group"] and r["kind"] == "message" for r in after)


def test_a_home_that_is_a_file_is_one_line(tmp_path):
    f = tmp_path / "home-file"
    f.write_text("")
    for args in (["drops"], ["count", TRANSCRIPT], ["status", TRANSCRIPT]):
        res = run(*args, env={"CTX_HOME": str(f)})
        assert res.code == 1 and res.stdout == "", args
        assert res.stderr.splitlines() == [f"Error: CTX_HOME {f} is not a directory"], args


@pytest.mark.embedded_only
def test_recover_by_id_on_a_full_disk_reads_the_chunk_file_alone(streams, ctx_home, monkeypatch):
    """Failure injection: the index cannot be opened (disk full) and the log cannot be appended to."""
    _, scored = streams
    kept = run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV)
    stub = next(r for r in kept.records() if r["kind"] == "stub")
    expected = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in
                _jsonl(scored) if r.get("group") == stub["group"]]
    index = ctx_home / "cold-storage" / "index.sqlite"
    assert index.exists()
    from ctxkit.store import atomic, cold

    def full(self):
        e = sqlite3.OperationalError("database or disk is full")
        e.sqlite_errorcode = 13
        raise e

    def no_space(path, line):
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(cold.ColdStorage, "_open_db", full)
    monkeypatch.setattr(atomic, "append_line", no_space)
    monkeypatch.setattr("ctxkit.store.logs.append_line", no_space)
    res = run("recover", "--chunk-id", stub["meta"]["chunk_id"])
    assert res.code == 0, res.stderr
    assert res.stdout.splitlines() == expected
    assert "the recovery is not logged" in res.stderr and "No space left on device" in res.stderr
    # the index itself is never taken for damaged on a full disk: an error, and it stays where it is
    search = run("recover", "--query", "beads")
    assert search.code == 1 and "database or disk is full" in search.stderr and "damaged" not in search.stderr
    assert index.exists() and not list(index.parent.glob("index.sqlite.corrupt-*"))


def test_drops_say_what_each_drop_freed(streams, ctx_home):
    _, scored = streams
    res = run("drop", "--free", "0.5", input=scored, env=ENV)
    assert res.code == 0
    before, after = map(int, re.search(r"; (\d+) -> (\d+) tokens", res.stderr).groups())
    rows = run("drops", "--json").records()
    assert sum(r["tokens_freed"] for r in rows) == before - after
    freed = run("drops", "--jq", ".tokens_freed")
    assert sum(map(int, freed.stdout.split())) == before - after   # the README idiom
    assert {r["event"] for r in rows} <= {"chunk_dropped", "chunk_shrunk"}
    assert all((r["event"] == "chunk_shrunk") == r["reason"].endswith("_shrunk") for r in rows)
    assert all(r["threshold_used"] is None for r in rows)       # a --free run uses no threshold


@pytest.mark.embedded_only
def test_drops_lines_from_before_tokens_freed_still_read(streams, ctx_home):
    _, scored = streams
    assert run("drop", "--free", "0.5", input=scored, env=ENV).code == 0
    log = ctx_home / "logs" / "drops.jsonl"
    with open(log, "a") as f:
        f.write(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "event": "chunk_dropped", "chunk_id": "c-old",
                            "session_id": "s", "reason": "budget_shrunk", "relevance_score": 0.3,
                            "threshold_used": 0.2, "tokens": 500}) + "\n")
    old = run("drops", "--json").records()[-1]
    assert old["chunk_id"] == "c-old" and old["tokens_freed"] is None and old["event"] == "chunk_shrunk"
    assert run("stats", "drops", "--json").code == 0


def test_counts_agree_and_reasons_are_never_cut(streams):
    imported, scored = streams
    chunks = {r["group"] for r in _jsonl(imported) if r.get("kind") == "message" and r.get("group")}
    res = run("drop", "--cutoff", "0.3", input=scored, env=ENV)
    assert f"of {len(chunks)} chunks" in res.stderr
    explained = _jsonl(run("score", "-", "--query", "beads", "--explain", input=imported, env=ENV).stdout)
    assert len(explained) == len(chunks)
    table = run("drops", "-t", env=ENV)
    reasons = {r["reason"] for r in run("drops", "--json").records()}
    assert all(reason in table.stdout for reason in reasons)


def test_drop_says_how_many_of_its_tokens_the_model_no_longer_sees(streams):
    """A Claude Code transcript compacted by Claude keeps its history before the boundary: drop
    says what the model sees before and after (from the last boundary on, as `ctx count` and
    `ctx status` count) and how many of the stream's tokens precede the boundary."""
    _, scored = streams
    recs = _jsonl(scored)
    k = next(i for i, r in enumerate(recs) if r.get("kind") == "message" and i > len(recs) // 2
             and r.get("group") != recs[i - 1].get("group"))
    boundary = {"v": 1, "kind": "summary", "id": "cb-1", "session": recs[k]["session"], "role": "system",
                "content": "Conversation compacted", "flags": ["compact_boundary"], "group": "cb-1"}
    stream = recs[:k] + [boundary] + recs[k:]
    text = "".join(json.dumps(r) + "\n" for r in stream)
    before = int(run("count", "-", input="".join(json.dumps(r) + "\n" for r in recs[:k])).stdout.strip())
    out = run("drop", "--free", "0.5", env=ENV, input=text)
    assert out.code == 0, out.stderr
    m = re.search(r"what the model sees: (\d+) -> (\d+) tokens .* the (\d+) tokens before it", out.stderr)
    assert m and int(m.group(3)) == before
    assert int(m.group(2)) < int(m.group(1))
    kept = run("count", "-", input=out.stdout)
    assert int(kept.stdout) == int(m.group(2))   # count, like status, counts what follows the boundary
    assert int(run("status", "--json", input=out.stdout).json()["total"]) == int(m.group(2))
    plain = run("drop", "--free", "0.5", env=ENV, input=scored)
    assert "compaction boundary" not in plain.stderr
