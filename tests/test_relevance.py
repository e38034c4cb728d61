"""ctx score / drop / drops / cold-storage / recover: correct, reversible, observable."""
import json
import math
import os
import random
import signal
import subprocess
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PY, ROOT, corpus, ctx_subprocess_env, log_events, run, stored_text
from ctxkit.core.score import record_importance


def rec(i, role, content, ts=None, **kw):
    r = {"v": 1, "kind": "message", "id": f"m{i}", "session": "s1", "role": role, "content": content, **kw}
    if ts:
        r["ts"] = ts
    return r


def jsonl(recs):
    return "".join(json.dumps(r) + "\n" for r in recs)


FILLER = " Some more words about it follow here to make the message longer than its stub would be." * 6
SESSION = [
    rec(1, "user", "Please fix the JWT refresh token bug in auth/jwt.py" + FILLER, "2026-01-01T00:00:00Z"),
    rec(2, "assistant", "The weather in Paris is sunny today" + FILLER, "2026-01-01T01:00:00Z"),
    rec(3, "user", "What's a good pasta recipe?" + FILLER, "2026-01-01T02:00:00Z"),
    rec(4, "assistant", "Boil water, add salt, cook the pasta" + FILLER, "2026-01-01T03:00:00Z"),
    rec(5, "user", "back to the refresh token: it expires too early" + FILLER, "2026-01-01T06:00:00Z"),
    rec(6, "assistant", "ok", "2026-01-01T06:00:00Z"),
]


def scored(recs=SESSION, *extra):
    res = run("score", "--query", "JWT refresh token", "--embedder", "keyword", *extra, input=jsonl(recs))
    assert res.code == 0, res.stderr
    return res


def test_score_formula_recency_decreases_with_age():
    out = [r for r in scored(SESSION, "--now", "2026-01-01T06:00:00Z").records() if r["kind"] == "message"]
    for r in out:
        p = r["score_parts"]
        raw = (0.2 * p["similarity"] + 0.1 * p["recency"] + 0.05 * p["importance"] + 0.6 * p["working_set"]
               ) - 0.2 * p["superseded"]   # the default weights add up to 0.95
        assert r["score"] == pytest.approx(min(1.0, max(0.0, raw)), abs=1e-3)
    rec_by_id = {r["id"]: r["score_parts"]["recency"] for r in out}
    assert rec_by_id["m1"] == pytest.approx(math.exp(-6 / 6), abs=1e-3)
    assert rec_by_id["m5"] == pytest.approx(1.0)
    assert rec_by_id["m1"] < rec_by_id["m2"] < rec_by_id["m3"] < rec_by_id["m4"] < rec_by_id["m5"]
    sim = {r["id"]: r["score_parts"]["similarity"] for r in out}
    assert sim["m1"] > sim["m3"] and sim["m5"] > sim["m2"]


def test_default_now_is_the_stream_newest_record():
    a = scored(SESSION).records()
    b = scored(SESSION, "--now", "2026-01-01T06:00:00Z").records()
    assert [r.get("score") for r in a[1:]] == [r.get("score") for r in b[1:]]


def test_no_timestamps_recency_from_position():
    recs = [{k: v for k, v in r.items() if k != "ts"} for r in SESSION]
    out = [r for r in scored(recs).records() if r["kind"] == "message"]
    rs = [r["score_parts"]["recency"] for r in out]
    assert rs == sorted(rs) and rs[-1] == 1.0 and rs[0] < 1.0


def test_weights_and_half_life_come_from_config(ctx_home):
    ctx_home.mkdir(parents=True)
    (ctx_home / "config.yaml").write_text("similarity_weight: 0\nrecency_weight: 1\nimportance_weight: 0\n"
                                          "half_life_hours: 2\nworking_set_weight: 0\nsuperseded_weight: 0\n")
    out = [r for r in scored(SESSION).records() if r["kind"] == "message"]
    assert out[0]["score"] == pytest.approx(math.exp(-6 / 2), abs=1e-3)


def test_importance_heuristics():
    assert record_importance(rec(1, "user", "hi")) == 0.8
    assert record_importance(rec(1, "assistant", "hi")) == 0.5
    assert record_importance(rec(1, "assistant", "We decided to use RS256")) == 0.7
    assert record_importance(rec(1, "assistant", "edit `auth/jwt.py`")) == 0.6
    assert record_importance(rec(1, "user", "remember this: TTL is 1h")) == 1.0
    assert record_importance(rec(1, "tool", "Traceback: ValueError", tool_call_id="x")) == 0.55
    assert record_importance(rec(1, "tool", "ok", tool_call_id="x", flags=["important"])) == 1.0


def test_query_from_last_user_and_score_event():
    out = run("score", "--query-from", "last-user", "--embedder", "keyword", input=jsonl(SESSION)).records()
    ev = out[0]
    assert ev["kind"] == "event" and ev["meta"]["query"] == SESSION[4]["content"]


def test_chunks_smaller_than_their_stub_are_never_dropped():
    tiny = [rec(1, "user", "hi"), rec(2, "assistant", "hello"), rec(3, "user", "ok")]
    s = run("score", "--query", "zebra", "--embedder", "keyword", input=jsonl(tiny)).stdout
    out = run("drop", "--min-keep", "0", "--cutoff", "0.99", "--keep", "1.0", input=s).records()
    assert not [r for r in out if r["kind"] == "stub"]
    assert run("score", "--query", "x", "--query-from", "last-user", input=jsonl(SESSION)).code == 2


def test_minilm_scores_for_real_and_caches_embeddings(ctx_home):
    path = corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")
    recs = run("import", path).records()
    half = jsonl(recs[: len(recs) // 2])
    first = run("score", "--query", "which files implement the transcript parser", "--embedder", "minilm",
                input=half)
    assert first.code == 0, first.stderr
    m = [int(x) for x in first.stderr.split("(")[1].split()[:1]][0]
    second = run("score", "--query", "which files implement the transcript parser", "--embedder", "minilm",
                 input=jsonl(recs))
    n_new = int(second.stderr.split("(")[1].split()[0])
    chunks = len({r["group"] for r in recs})
    assert n_new < chunks  # only the new half (plus nothing for the query) was embedded
    assert m >= 1 and n_new >= 1
    third = run("score", "--query", "which files implement the transcript parser", "--embedder", "minilm",
                input=jsonl(recs))
    assert "newly embedded" not in third.stderr  # everything came from the cache
    assert [r.get("score") for r in second.records()] == [r.get("score") for r in third.records()]
    sims = [r["score_parts"]["similarity"] for r in second.records() if r.get("score_parts")]
    assert 0 <= min(sims) and max(sims) <= 1 and max(sims) > 0.2


def test_minilm_ranks_the_relevant_chunk_first():
    recs = [rec(1, "user", "Our flight to Tokyo leaves at 9am from gate 12"),
            rec(2, "user", "The JWT refresh token expires after 3600 seconds, which breaks login"),
            rec(3, "user", "Pasta needs salted boiling water"),
            rec(4, "user", "ok")]
    out = run("score", "--query", "authentication token expiry bug", "--embedder", "minilm",
              input=jsonl(recs)).records()
    sims = {r["id"]: r["score_parts"]["similarity"] for r in out if r["kind"] == "message"}
    assert max(sims, key=sims.get) == "m2"


def drop_stream(extra=(), recs=SESSION, now="2026-01-01T06:00:00Z"):
    s = scored(recs, "--now", now).stdout
    return run("drop", "--min-keep", "1", *extra, input=s)


def test_drop_keeps_summarizes_drops_and_writes_cold_storage(ctx_home):
    ctx_home.mkdir(parents=True, exist_ok=True)   # similarity-led weights, so the three bands are all used
    (ctx_home / "config.yaml").write_text("similarity_weight: 0.6\nrecency_weight: 0.2\nimportance_weight: 0.1\n"
                                          "working_set_weight: 0\nsuperseded_weight: 0\n")
    res = drop_stream(("--cutoff", "0.25", "--keep", "0.7"))
    assert res.code == 0, res.stderr
    out = res.records()
    stubs = [r for r in out if r["kind"] == "stub"]
    assert stubs, res.stderr
    kinds = {r["id"]: r for r in out}
    assert "m6" in kinds  # the newest chunk is always kept
    for s in stubs:
        meta = s["meta"]
        assert s["content"].startswith(f"[dropped chunk {meta['chunk_id']}")
        assert f"ctx recover --chunk-id {meta['chunk_id']}" in s["content"]
        entry = json.loads(stored_text(meta["cold_storage_path"]))
        for key in ("chunk_id", "session_id", "timestamp", "records", "tokens", "drop_reason", "relevance_score",
                    "prompt_at_drop", "recoverable_until"):
            assert key in entry
        assert entry["prompt_at_drop"] == "JWT refresh token"
        assert entry["drop_reason"] == "low_relevance" and entry["relevance_score"] <= 0.25
        assert meta["cold_storage_path"].startswith((str(ctx_home / "cold-storage" / "s1"), "postgresql:"))
    assert any("summarize" in r.get("flags", []) for r in out)
    drops = log_events("drops")
    assert len(drops) == len(stubs)
    assert drops[0]["event"] == "chunk_dropped" and drops[0]["threshold_used"] == 0.25
    comp = log_events("compaction")
    assert comp[-1]["chunks_dropped"] == len(stubs) and comp[-1]["tokens_after"] < comp[-1]["tokens_before"]


def test_drop_always_keeps_protected_and_recent():
    recs = [dict(r) for r in SESSION]
    recs[1] = dict(recs[1], flags=["pinned"])
    recs.insert(0, rec(0, "system", "be brief", "2025-01-01T00:00:00Z"))
    res = drop_stream(("--cutoff", "0.99", "--keep", "1.0", "--min-keep", "2"), recs=recs)
    ids = [r["id"] for r in res.records() if r["kind"] == "message"]
    assert ids == ["m0", "m2", "m5", "m6"]


def test_dry_run_changes_nothing(ctx_home):
    res = drop_stream(("--cutoff", "0.5", "--dry-run"))
    assert res.code == 0
    rows = res.records()
    assert {r["decision"] for r in rows} >= {"drop", "keep"}
    assert not (ctx_home / "cold-storage").exists()
    assert not (ctx_home / "logs").exists()
    assert run("cold-storage", "list", "--json").stdout.strip() == "" and not log_events("drops")  # either store


def test_recover_by_id_exact_and_into_file(ctx_home, tmp_path):
    src = scored(SESSION, "--now", "2026-01-01T06:00:00Z").stdout
    kept = run("drop", "--min-keep", "1", "--cutoff", "0.3", input=src)
    stubs = [r for r in kept.records() if r["kind"] == "stub"]
    cid = stubs[0]["meta"]["chunk_id"]
    back = run("recover", "--chunk-id", cid).records()
    original = [r for r in map(json.loads, src.strip().split("\n")) if r.get("group") == cid]
    assert back == original  # exactly the records that went in
    f = tmp_path / "kept.jsonl"
    f.write_text(kept.stdout)
    res = run("recover", "--chunk-id", cid, "--into", f)
    assert res.code == 0, res.stderr
    after = [json.loads(x) for x in f.read_text().splitlines()]
    assert not any(r["kind"] == "stub" and r["meta"]["chunk_id"] == cid for r in after)
    assert [r["id"] for r in after if r.get("group") == cid] == [r["id"] for r in original]
    before = os.stat(f)
    again = run("recover", "--chunk-id", cid, "--into", f)  # recovered before: a no-op that says so
    assert again.code == 0 and again.stdout == "" and "already back" in again.stderr, again.stderr
    assert os.stat(f).st_mtime_ns == before.st_mtime_ns  # not even rewritten
    other = tmp_path / "other.jsonl"  # a file that never had the chunk is still an error
    other.write_text("")
    res = run("recover", "--chunk-id", cid, "--into", other)
    assert res.code == 1 and "no stub for chunk" in res.stderr
    assert f.read_text() == "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in after)
    log = log_events("recovery")
    assert [e["method"] for e in log] == ["id", "id"] and log[1]["into"] == str(f)


def test_recover_errors():
    assert run("recover").code == 2
    assert run("recover", "--chunk-id", "c-9999").code == 2  # an unknown id is a usage error
    for bad in ("../etc", "/abs", "a/b", ".."):  # looked up in the index, never opened as a path: refused
        res = run("recover", "--chunk-id", bad)
        assert res.code == 2 and "unsafe chunk id" in res.stderr
    res = run("recover", "--chunk-id", "x\x00y")
    assert res.code == 2 and "invalid chunk id" in res.stderr
    res = run("recover", "--chunk-id", "a\nb")  # a newline is a valid id (a stub's command quotes it): not here
    assert res.code == 2 and "no chunk" in res.stderr
    assert run("cold-storage", "list", "--session", "../x").records() == []


def test_same_chunk_id_in_two_sessions_needs_session(ctx_home):
    for sid in ("alpha", "beta"):
        recs = [dict(r, session=sid) for r in SESSION]
        drop_stream(("--cutoff", "0.3"), recs=recs)
    ids = [r["chunk_id"] for r in run("cold-storage", "list", "--json").records()]
    dup = next(c for c in ids if ids.count(c) == 2)
    res = run("recover", "--chunk-id", dup)
    assert res.code == 2 and "alpha, beta" in res.stderr
    assert run("recover", "--chunk-id", dup, "--session", "beta").code == 0


def test_hostile_session_ids_stay_inside_cold_storage(ctx_home):
    recs = [dict(r, session="../../evil") for r in SESSION]
    drop_stream(("--cutoff", "0.3"), recs=recs)
    cold = ctx_home / "cold-storage"
    for d, _, files in os.walk(ctx_home.parent):
        for f in files:
            if f.endswith(".jsonl") and "c-" in f:
                assert os.path.realpath(d).startswith(str(cold))
    assert [r["session_id"] for r in run("cold-storage", "list", "--json").records()][0] == "../../evil"
    # every stub's own recovery command works when pasted into a shell
    import shlex

    stubs = [r for r in drop_stream(("--cutoff", "0.3"), recs=recs).records() if r["kind"] == "stub"]
    assert stubs
    for st in stubs:
        cmd = st["content"].rsplit("| ", 1)[1].rstrip("]")
        res = run(*shlex.split(cmd)[1:])
        assert res.code == 0, (cmd, res.stderr)
        assert res.records() and res.records()[0]["session"] == "../../evil"


def test_cold_storage_list_show_search_purge_reindex_stats(ctx_home):
    drop_stream(("--cutoff", "0.3",))
    rows = run("cold-storage", "list", "--json").records()
    assert rows and all(r["session_id"] == "s1" for r in rows)
    cid = rows[0]["chunk_id"]
    shown = run("cold-storage", "show", cid).records()
    assert shown and all(r["group"] == cid for r in shown)
    hits = run("cold-storage", "search", "pasta recipe", "--embedder", "keyword", "--json").records()
    assert hits and "pasta" in hits[0]["gist"].lower() or hits[0]["score"] > 0
    # the README's and `make run`'s idiom: the id of the best hit, raw, straight into recover
    best = run("cold-storage", "search", "pasta recipe", "--embedder", "keyword", "-n", "1", "--jq", ".chunk_id",
               "-r").stdout.strip()
    assert best == hits[0]["chunk_id"] and run("recover", "--chunk-id", best, "--session", "s1").code == 0
    if os.environ.get("CTX_STORE_URL"):
        assert run("cold-storage", "reindex").code == 0  # the database keeps its indexes: a no-op
        return  # what follows edits the embedded store's chunk files
    os.unlink(ctx_home / "cold-storage" / "index.sqlite")
    assert run("cold-storage", "reindex").code == 0
    assert run("cold-storage", "list", "--json").records() == rows
    st_ = run("cold-storage", "stats", "--json").records()
    assert st_[0]["chunks"] == len(rows) and st_[0]["bytes"] > 0
    assert run("cold-storage", "purge", "--expired", "-f").code == 0
    assert len(run("cold-storage", "list", "--json").records()) == len(rows)  # nothing expired yet
    path = ctx_home / "cold-storage" / "s1" / f"{cid}.jsonl"
    e = json.loads(path.read_text())
    e["recoverable_until"] = "2020-01-01T00:00:00Z"
    path.write_text(json.dumps(e) + "\n")
    run("cold-storage", "reindex")
    assert [r["chunk_id"] for r in run("cold-storage", "list", "--expired", "--json").records()] == [cid]
    dry = run("cold-storage", "purge", "--expired", "--dry-run")
    assert dry.code == 0 and path.exists() and f"would delete s1/{cid}" in dry.stdout
    refused = run("cold-storage", "purge", "--expired")  # as git clean: nothing goes without -f
    assert refused.code == 2 and path.exists() and "--force" in refused.stderr
    assert run("cold-storage", "purge", "--expired", "-f").code == 0
    assert not path.exists()
    assert cid not in [r["chunk_id"] for r in run("cold-storage", "list", "--json").records()]
    assert run("cold-storage", "purge").code == 2


def test_drops_listing_filters(ctx_home):
    drop_stream(("--cutoff", "0.3",))
    all_ = run("drops", "--json").records()
    assert all_ and all(d["session_id"] == "s1" for d in all_)
    assert run("drops", "--session", "nope", "--json").records() == []
    assert run("drops", "--reason", "low_relevance", "--since", "1h", "--json").records() == all_
    assert run("drops", "--jq", ".chunk_id").stdout.split() == [json.dumps(d["chunk_id"]) for d in all_]
    assert run("drops", "--jq", ".chunk_id", "-r").stdout.split() == [d["chunk_id"] for d in all_]
    assert "chunk_id" in run("drops", "-t").stdout


def test_auto_recover_brings_back_relevant_cold_chunks(ctx_home):
    src = scored(SESSION, "--now", "2026-01-01T06:00:00Z").stdout
    kept = run("drop", "--min-keep", "1", "--cutoff", "0.5", input=src).stdout
    stub_ids = [r["meta"]["chunk_id"] for r in map(json.loads, kept.splitlines()) if r["kind"] == "stub"]
    assert stub_ids
    res = run("score", "--query", "pasta recipe boil water", "--embedder", "keyword", "--auto-recover", input=kept)
    assert res.code == 0, res.stderr
    out = res.records()
    back = {r["id"] for r in out if r["kind"] == "message"}
    assert {"m3", "m4"} & back  # the pasta chunk came back
    log = log_events("recovery")
    assert log and all(e["method"] == "auto" for e in log)


def test_concurrent_drops_lose_nothing(tmp_path):
    home = tmp_path / "shared-home"
    env = ctx_subprocess_env(home)
    inputs = []
    for k in range(4):
        recs = [dict(r, session=f"p{k}") for r in SESSION]
        s = run("score", "--query", "JWT refresh token", "--embedder", "keyword", "--now",
                "2026-01-01T06:00:00Z", input=jsonl(recs)).stdout
        inputs.append(s)
    procs = [subprocess.Popen([PY, "-m", "ctxkit", "drop", "--min-keep", "1", "--cutoff", "0.45"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=ROOT, text=True) for _ in inputs]
    outs = [p.communicate(s, timeout=120) for p, s in zip(procs, inputs)]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    stubs = [json.loads(x) for o, _ in outs for x in o.splitlines() if '"kind":"stub"' in x]
    listed = subprocess.run([PY, "-m", "ctxkit", "cold-storage", "list", "--json"], capture_output=True,
                            text=True, env=env, cwd=ROOT).stdout.splitlines()
    assert len(listed) == len(stubs) >= 4
    for s in stubs:
        p = s["meta"]["cold_storage_path"]
        assert os.path.exists(p) or p.startswith("postgresql:")
    drops = log_events("drops") if os.environ.get("CTX_STORE_URL") else \
        (home / "logs" / "drops.jsonl").read_text().splitlines()
    assert len(drops) == len(stubs)


def _big_input(tmp_path):
    path = corpus("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl")
    recs = run("import", path).records()
    many = []
    for k in range(30):
        many += [dict(r, session=f"kill{k}") for r in recs]
    s = run("score", "--query", "unrelated topic about gardening", "--embedder", "keyword", input=jsonl(many))
    f = tmp_path / "big.jsonl"
    f.write_text(s.stdout)
    return f


def test_sigkill_at_random_moments_loses_nothing(tmp_path):
    """Every stub that reached the output has its chunk complete in cold storage."""
    src = _big_input(tmp_path)
    rnd = random.Random(7)
    interrupted = 0
    for attempt in range(5):
        home = tmp_path / f"home{attempt}"
        out = tmp_path / f"out{attempt}.jsonl"
        env = ctx_subprocess_env(home)
        with open(src) as fin, open(out, "w") as fout:
            p = subprocess.Popen([PY, "-m", "ctxkit", "drop", "--min-keep", "1", "--cutoff", "0.99",
                                  "--keep", "1.0"], stdin=fin, stdout=fout, stderr=subprocess.DEVNULL,
                                 env=env, cwd=ROOT)
            time.sleep(rnd.uniform(0.5, 1.5))
            p.send_signal(signal.SIGKILL)
            interrupted += p.wait() == -signal.SIGKILL
        lines = out.read_text().split("\n")
        lines = [x for x in lines if x]
        if lines and not lines[-1].endswith("}"):
            lines = lines[:-1]  # a half-written last line is the reader's to discard
        for line in lines:
            r = json.loads(line)
            if r["kind"] == "stub":
                entry = json.loads(stored_text(r["meta"]["cold_storage_path"]))
                assert entry["chunk_id"] == r["meta"]["chunk_id"] and entry["records"]
        for d, _, files in os.walk(home / "cold-storage"):
            for f in files:
                if f.endswith(".jsonl") and not f.startswith("."):
                    json.loads(open(os.path.join(d, f)).read())  # complete, never half-written
    assert interrupted >= 3  # the kills really landed mid-run


@st.composite
def streams(draw):
    recs, i = [], 0
    for _ in range(draw(st.integers(2, 12))):
        if draw(st.booleans()):
            cid = f"call{i}"
            recs.append(rec(i, "assistant", draw(st.sampled_from(["checking", "reading file", ""])),
                            tool_calls=[{"id": cid, "type": "function", "function": {"name": "read", "arguments": "{}"}}]))
            i += 1
            recs.append(rec(i, "tool", draw(st.text(min_size=1, max_size=40)) + FILLER, tool_call_id=cid,
                            name="read"))
        else:
            recs.append(rec(i, draw(st.sampled_from(["user", "assistant"])),
                            draw(st.text(min_size=1, max_size=60)) + draw(st.sampled_from(["", FILLER]))))
        i += 1
    return recs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(streams(), st.floats(0.0, 1.0))
def test_property_score_drop_recover_roundtrip(recs, cutoff):
    scored_ = run("score", "--query", "read the file", "--embedder", "keyword", input=jsonl(recs))
    assert scored_.code == 0, scored_.stderr
    kept = run("drop", "--min-keep", "0", "--cutoff", str(cutoff), "--keep", "1.0", input=scored_.stdout)
    assert kept.code == 0, kept.stderr
    out = kept.records()
    restored = []
    for r in out:
        if r["kind"] == "event":
            continue
        if r["kind"] == "stub":
            back = run("recover", "--chunk-id", r["meta"]["chunk_id"], "--session", r["session"])
            assert back.code == 0, back.stderr
            restored.extend(back.records())
        else:
            restored.append(r)
    assert [(r["id"], r.get("content")) for r in restored] == [(r["id"], r["content"]) for r in recs]


def test_warm_cache_rescoring_never_loads_the_model(tmp_path):
    """Everything cached -> no torch, no sentence-transformers: rescoring is cheap in a hook."""
    from test_startup_help import PROBE

    f = tmp_path / "s.jsonl"
    f.write_text(jsonl(SESSION))
    env = ctx_subprocess_env(tmp_path / "h")
    argv = json.dumps(["score", str(f), "--query", "JWT refresh", "--embedder", "minilm"])
    heavy = []
    for _ in range(2):
        p = subprocess.run([PY, "-c", PROBE, argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
        heavy.append(json.loads(p.stderr.rsplit("HEAVY=", 1)[1]))
    # the first run embeds: the ONNX export of the same model when setup made it, else torch
    assert "onnxruntime" in heavy[0] or ("torch" in heavy[0] and "sentence_transformers" in heavy[0])
    assert "torch" not in heavy[0] or "onnxruntime" not in heavy[0]
    assert heavy[1] == [] or heavy[1] == ["numpy"]  # all cached: no model at all
