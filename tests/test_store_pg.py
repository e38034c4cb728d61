"""The shared PostgreSQL store against a real server the tests start themselves (tests/pgcluster.py).

Skipped only when no PostgreSQL binaries exist on the machine."""
import json
import multiprocessing as mp
import os
import subprocess

import pytest

from conftest import PY, ROOT, needs_pg, run

pytestmark = needs_pg  # a server of their own (conftest's pg_cluster, pg_url); skipped without PostgreSQL

OWN_PG_SERVER = True  # these tests start their own server and choose the store per test (CTX_TEST_STORE aside)
FILLER = " Some more words about it follow here to make the message longer than its stub would be." * 6


def rec(i, role, content, ts, session="s1"):
    return {"v": 1, "kind": "message", "id": f"m{i}", "session": session, "role": role, "content": content, "ts": ts}


SESSION = [
    rec(1, "user", "Please fix the JWT refresh token bug in auth/jwt.py" + FILLER, "2026-01-01T00:00:00Z"),
    rec(2, "assistant", "The weather in Paris is sunny today ☀ — «quoted» ünïcode" + FILLER, "2026-01-01T01:00:00Z"),
    rec(3, "user", "What's a good pasta recipe?\ttabs\nand newlines" + FILLER, "2026-01-01T02:00:00Z"),
    rec(4, "assistant", "Boil water, add salt, cook the pasta" + FILLER, "2026-01-01T03:00:00Z"),
    rec(5, "user", "back to the refresh token: it expires too early" + FILLER, "2026-01-01T06:00:00Z"),
    rec(6, "assistant", "ok", "2026-01-01T06:00:00Z"),
]


def jsonl(recs):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)


def drop_pipeline():
    s = run("score", "--query", "JWT refresh token", "--embedder", "keyword", "--now", "2026-01-01T06:00:00Z",
            input=jsonl(SESSION))
    assert s.code == 0, s.stderr
    res = run("drop", "--min-keep", "1", "--cutoff", "0.25", "--keep", "0.7", input=s.stdout)
    assert res.code == 0, res.stderr
    return s.stdout, res


def test_drop_on_pg_then_recover_byte_exact_and_nothing_local(pg_url, ctx_home, monkeypatch, tmp_path):
    scored, res = drop_pipeline()
    stubs = [r for r in res.records() if r["kind"] == "stub"]
    assert stubs
    assert not (ctx_home / "cold-storage").exists() and not (ctx_home / "logs").exists()
    assert not (ctx_home / "sessions.json").exists()
    by_group = {}
    for line in scored.splitlines():
        by_group.setdefault(json.loads(line).get("group"), []).append(line)
    pg_out = {}
    for s in stubs:
        cid = s["meta"]["chunk_id"]
        assert s["meta"]["cold_storage_path"].startswith("postgresql:default/s1/")
        back = run("recover", "--chunk-id", cid)
        assert back.code == 0, back.stderr
        assert [json.loads(x) for x in back.stdout.splitlines()] == [json.loads(x) for x in by_group[cid]]
        pg_out[cid] = back.stdout
    # the same pipeline on the embedded store prints the very same bytes
    monkeypatch.delenv("CTX_STORE_URL")
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "embedded-home"))
    drop_pipeline()
    for cid, out in pg_out.items():
        assert run("recover", "--chunk-id", cid).stdout == out
    monkeypatch.setenv("CTX_STORE_URL", pg_url)
    monkeypatch.setenv("CTX_HOME", str(ctx_home))
    # the other commands read the shared store
    drops = run("drops", "--json")
    assert drops.code == 0, drops.stderr
    assert {json.loads(x)["chunk_id"] for x in drops.stdout.splitlines()} == set(pg_out)
    listed = run("cold-storage", "list", "--json")
    assert {json.loads(x)["chunk_id"] for x in listed.stdout.splitlines()} == set(pg_out)
    hits = run("cold-storage", "search", "pasta recipe", "--embedder", "keyword", "--json")
    assert hits.code == 0, hits.stderr
    assert any("pasta" in (json.loads(x).get("gist") or "").lower() for x in hits.stdout.splitlines())
    shown = run("cold-storage", "show", next(iter(pg_out)))
    assert shown.stdout == pg_out[next(iter(pg_out))]
    for name, event in (("recovery", "chunk_recovered"), ("drops", "chunk_dropped"), ("compaction", "relevance_drop")):
        logs = run("logs", name, "--json")
        assert logs.code == 0 and event in logs.stdout, logs.stderr
    assert "ctx_logs" in run("logs", "path").stdout
    sess = run("session", "list", "--json")
    assert sess.code == 0 and "s1" in sess.stdout, sess.stderr
    # purge leaves nothing to recover
    assert run("cold-storage", "purge", "--session", "s1", "--force").code == 0
    gone = run("recover", "--chunk-id", next(iter(pg_out)))
    assert gone.code != 0 and "no chunk" in gone.stderr
    chk = run("store", "check", "--json")
    assert chk.code == 0, chk.stderr
    info = json.loads(chk.stdout)
    assert info["schema_version"] == 2 and info["chunks"] == 0 and info["log_events"] > 0


def _writer(url, records, barrier, out):
    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgStore

    store = PgStore(url, "default")
    entry = new_entry("s1", "c-1", records, 10, "low_relevance", 0.1, None, 30, "g")
    barrier.wait()
    out.put((records[0]["content"], *store.cold.write(entry)[1:]))


@pytest.mark.parametrize("same", [True, False])
def test_two_processes_dropping_one_id_one_chunk_no_swap(pg_url, same):
    ctxm = mp.get_context("spawn")
    a = [{"v": 1, "kind": "message", "id": "m1", "session": "s1", "role": "user", "content": "alpha", "group": "c-1"}]
    b = a if same else [dict(a[0], content="beta")]
    for rnd in range(4):
        import psycopg

        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute("DELETE FROM ctx_chunks")
        barrier, q = ctxm.Barrier(2), ctxm.Queue()
        ps = [ctxm.Process(target=_writer, args=(pg_url, r, barrier, q)) for r in (a, b)]
        for p in ps:
            p.start()
        got = [q.get(timeout=60) for _ in ps]
        for p in ps:
            p.join(60)
            assert p.exitcode == 0
        from ctxkit.store.pg import PgStore

        store = PgStore(pg_url, "default")
        rows = store.cold.rows()
        if same:
            assert len(rows) == 1 and sorted(r for _, _, r in got) == [False, True]
        else:
            assert len(rows) == 2 and all(not redrop for _, _, redrop in got)
            for content, cid, _ in got:  # each writer's id holds its own records
                assert store.cold.load(store.cold.find(cid, "s1")[0]["path"])["records"][0]["content"] == content


def _state_worker(url, k, n):
    from ctxkit.store.pg import PgStore

    sf = PgStore(url, "default").state_file("s-shared")
    for i in range(n):
        def change(ctx, i=i):
            from ctxkit.core.context_md import Item

            ctx.sections.setdefault("Pinned", []).append(Item(f"fact {k}-{i}"))
            return ctx
        sf.update(change)


def test_concurrent_state_updates_lose_nothing(pg_url):
    ctxm = mp.get_context("spawn")
    ps = [ctxm.Process(target=_state_worker, args=(pg_url, k, 10)) for k in range(4)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(120)
        assert p.exitcode == 0
    from ctxkit.store.pg import PgStore, state_versions

    store = PgStore(pg_url, "default")
    ctx = store.state_file("s-shared").read()
    pinned = "\n".join(x.text for x in ctx.sections.get("Pinned", []))
    assert all(f"fact {k}-{i}" in pinned for k in range(4) for i in range(10))
    assert ctx.version == 40 and state_versions(store, "s-shared") == list(range(1, 41))
    # a stale version is refused, not merged
    from ctxkit.errors import ConflictError

    with pytest.raises(ConflictError):
        store.state_file("s-shared").update(lambda c: c, if_version=3)


def _tree(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".jsonl"):
                p = os.path.join(d, f)
                out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def test_migrate_embedded_to_pg_and_back_exact_and_resumable(pg_cluster, ctx_home, monkeypatch, tmp_path):
    drop_pipeline()  # on the embedded store
    run("recover", "--chunk-id", json.loads(run("cold-storage", "list", "--json").stdout.splitlines()[0])["chunk_id"])
    before = _tree(ctx_home / "cold-storage")
    logs_before = {n: open(ctx_home / "logs" / n, "rb").read() for n in os.listdir(ctx_home / "logs")
                   if n.endswith(".jsonl")}
    assert before and logs_before
    url = pg_cluster.url(pg_cluster.new_db())
    assert run("store", "init", "--url", url).code == 0
    first = run("store", "migrate", "--to", url)
    assert first.code == 0, first.stderr
    assert f"chunks_added {len(before)}" in first.stderr and "chunks" in first.stderr
    again = run("store", "migrate", "--to", url)
    assert "chunks_present" in again.stderr and "chunks_added" not in again.stderr and "log_lines_added" not in again.stderr
    # every chunk recoverable from the store, as it was
    monkeypatch.setenv("CTX_STORE_URL", url)
    for rel, raw in before.items():
        entry = json.loads(raw)
        back = run("recover", "--chunk-id", entry["chunk_id"], "--session", entry["session_id"])
        assert [json.loads(x) for x in back.stdout.splitlines()] == entry["records"]
    # and back to a fresh embedded home, byte for byte
    monkeypatch.delenv("CTX_STORE_URL")
    home2 = tmp_path / "home2"
    monkeypatch.setenv("CTX_HOME", str(home2))
    res = run("store", "migrate", "--to", "embedded", "--from", url)
    assert res.code == 0, res.stderr
    assert _tree(home2 / "cold-storage") == before
    recovered_before = logs_before["recovery.jsonl"]
    assert open(home2 / "logs" / "recovery.jsonl", "rb").read().startswith(recovered_before)
    for n, data in logs_before.items():
        if n != "recovery.jsonl":
            assert open(home2 / "logs" / n, "rb").read() == data
    assert run("store", "migrate", "--to", "embedded", "--from", url).code == 0  # resumable: nothing changes
    assert _tree(home2 / "cold-storage") == before
    listed = run("cold-storage", "list", "--json")
    assert len(listed.stdout.splitlines()) == len(before)


def test_row_level_security_keeps_a_role_to_its_project(pg_cluster, pg_url):
    import psycopg

    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgError, PgStore

    for proj in ("proj-a", "proj-b"):
        PgStore(pg_url, proj).cold.write(new_entry("s1", f"c-{proj}", [{"v": 1, "kind": "message", "id": "m",
                                                   "content": f"secret of {proj}"}], 5, "r", 0.1, None, 30, "g"))
    sql = run("store", "grant-sql", "agent_a", "proj-a").stdout
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(sql)
        c.execute("ALTER ROLE agent_a PASSWORD 'pw-a'")
    db = pg_url.split("@/")[1].split("?")[0]
    url_a = pg_cluster.url(db, "agent_a", "pw-a")
    mine, theirs = PgStore(url_a, "proj-a"), PgStore(url_a, "proj-b")
    assert [r["chunk"] for r in mine.cold.rows()] == ["c-proj-a"]
    assert theirs.cold.rows() == [] and theirs.cold.find("c-proj-b") == []
    with psycopg.connect(url_a, autocommit=True) as c:  # not even with hand-written SQL
        assert c.execute("SELECT project FROM ctx_chunks").fetchall() == [("proj-a",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor by granting itself more
            c.execute("INSERT INTO ctx_project_roles VALUES ('agent_a', 'proj-b')")
    with pytest.raises(PgError, match="row-level security"):
        theirs.cold.write(new_entry("s1", "c-x", [{"v": 1, "kind": "message", "id": "m", "content": "x"}], 5, "r",
                                    0.1, None, 30, "g"))


def test_password_never_in_error_output(pg_cluster, pg_url, monkeypatch):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("CREATE ROLE pw_user LOGIN PASSWORD 'right-pw-123'")
    db = pg_url.split("@/")[1].split("?")[0]
    for url in (pg_cluster.url(db, "pw_user", "Wr0ng-Secret-pw"), pg_cluster.url("no_such_db", "pw_user", "right-pw-123"),
                pg_cluster.url(db, "pw_user", "right-pw-123")):
        monkeypatch.setenv("CTX_STORE_URL", url)
        pw = url.split(":")[2].split("@")[0]
        for args in (("cold-storage", "list"), ("store", "check"), ("drops",)):
            res = run(*args)
            assert res.code != 0
            assert pw not in res.stderr and pw not in res.stdout
            assert "***" in res.stderr or "permission denied" in res.stderr
    # and in a subprocess (the real entry point's error path)
    env = dict(os.environ, CTX_STORE_URL=pg_cluster.url(db, "pw_user", "Wr0ng-Secret-pw"), PYTHONPATH=str(ROOT))
    p = subprocess.run([PY, "-m", "ctxkit", "cold-storage", "list"], env=env, capture_output=True, text=True)
    assert p.returncode != 0 and "Wr0ng-Secret-pw" not in p.stderr + p.stdout and "password" in p.stderr


def test_no_schema_is_a_clear_error(pg_cluster, monkeypatch):
    monkeypatch.setenv("CTX_STORE_URL", pg_cluster.url(pg_cluster.new_db()))
    res = run("cold-storage", "list")
    assert res.code == 1 and "no ctx schema" in res.stderr and "ctx store init" in res.stderr


def test_vector_search_with_pgvector(pg_cluster, pg_url):
    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgStore

    if not pg_cluster.has_vector():
        pytest.skip("this PostgreSQL has no pgvector (install pgserver for the bundled one)")
    store = PgStore(pg_url, "default")
    assert store.has_vectors()
    import random

    rnd = random.Random(1)
    vecs = {}
    for i in range(50):
        store.cold.write(new_entry("s1", f"c{i}", [{"v": 1, "kind": "message", "id": f"m{i}",
                                                   "content": f"text {i}"}], 5, "r", 0.1, None, 30, f"g{i}"))
        v = [rnd.gauss(0, 1) for _ in range(384)]
        vecs[f"c{i}"] = v
    store.cold.put_vectors("minilm", [("s1", c, v) for c, v in vecs.items()])
    near = store.cold.vector_candidates("minilm", vecs["c17"], None, 3)
    assert near[0][1] == "c17" and near[0][4] == pytest.approx(1.0, abs=1e-4)
    assert store.cold.missing_vectors("minilm", 10) == []


def test_semantic_search_without_pgvector_ranks_keyword_candidates(monkeypatch, ctx_home):
    from pgcluster import Cluster, usable_bin_dirs

    system = [d for label, d in usable_bin_dirs() if label != "pgserver"]
    if not system:
        pytest.skip("no PostgreSQL without pgvector here to test the fallback on")
    c = Cluster(system[0]).start()
    try:
        if c.has_vector():
            pytest.skip("this PostgreSQL has pgvector")
        monkeypatch.setenv("CTX_STORE_URL", c.url(c.new_db()))
        init = run("store", "init")
        assert init.code == 0 and "pgvector is not available" in init.stderr, init.stderr
        assert "not available" in json.loads(run("store", "check", "--json").stdout)["pgvector"]
        drop_pipeline()
        import ctxkit.services.cold as cold

        monkeypatch.setattr(cold, "FULL_SCAN_MAX", 0)  # as if the store were too big to scan whole
        res = run("cold-storage", "search", "pasta recipe", "--embedder", "minilm", "--json")
        assert res.code == 0, res.stderr
        assert "no vector index" in res.stderr
        assert "pasta" in json.loads(res.stdout.splitlines()[0])["gist"].lower()
    finally:
        c.stop()


def test_a_dropped_connection_is_retried_and_noted(pg_url, capfd):
    import psycopg

    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgStore

    store = PgStore(pg_url, "default")
    assert store.cold.count() == 0
    pid = store.connect().info.backend_pid
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(%s)", (pid,))
    store.cold.write(new_entry("s1", "c-1", [{"v": 1, "kind": "message", "id": "m", "content": "x"}], 5, "r", 0.1,
                               None, 30, "g"))
    assert store.cold.count() == 1
    err = capfd.readouterr().err
    assert "store connection lost" in err and "retry 1/2" in err


def test_compact_on_pg_keeps_logs_index_and_state_in_the_store(pg_url, ctx_home):
    from conftest import corpus

    path = corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")
    budget = max(200, int(int(run("count", path).stdout) * 0.1))
    res = run("compact", path, "--budget", budget, "--force")
    assert res.code == 0, res.stderr
    assert not (ctx_home / "logs").exists() and not (ctx_home / "sessions").exists()
    assert not (ctx_home / "sessions.json").exists()
    ev = [json.loads(x) for x in run("logs", "compaction", "--json").stdout.splitlines()]
    assert any(e["event"].startswith("compaction") and e.get("tokens_before") for e in ev), ev
    info = json.loads(run("store", "check", "--json").stdout)
    assert info["sessions"] >= 1 and info["session_states"] >= 1, info
    listed = [json.loads(x) for x in run("session", "list", "--json").stdout.splitlines()]
    assert listed, "no session listed"
    sid = listed[0]["session_id"]
    back = run("session", "restore", sid, "-n", "2")
    assert back.code == 0, back.stderr
    summ = [r for r in back.records() if r["kind"] == "summary"]
    assert summ and summ[0]["meta"]["restored_from"].startswith("postgresql:default/sessions/"), summ


def test_recover_by_query_into_a_file_stats_and_status_on_pg(pg_url, ctx_home, tmp_path):
    _, res = drop_pipeline()
    kept = tmp_path / "kept.jsonl"
    kept.write_text(res.stdout)
    back = run("recover", "--query", "pasta recipe", "--embedder", "keyword", "--into", str(kept))
    assert back.code == 0, back.stderr
    assert "pasta recipe" in kept.read_text()
    stubs_after = [x for x in kept.read_text().splitlines() if json.loads(x).get("kind") == "stub"]
    assert len(stubs_after) == len([r for r in res.records() if r["kind"] == "stub"]) - 1  # one spliced back
    st = run("cold-storage", "stats", "--json")
    assert st.code == 0 and json.loads(st.stdout.splitlines()[0])["session_id"] == "s1", st.stderr
    for sub in ("drops", "recovery"):
        s = run("stats", sub, "--json")
        assert s.code == 0, (sub, s.stderr)
    assert json.loads(run("stats", "recovery", "--json").stdout)  # the recovery above is counted
    health = run("status", str(kept), "--log", "--json")
    assert health.code == 0, health.stderr
    ev = [json.loads(x) for x in run("logs", "context-health", "--json").stdout.splitlines()]
    assert ev and ev[-1]["cold_storage_chunks"] == len(run("cold-storage", "list", "--json").stdout.splitlines())
    assert not (ctx_home / "logs").exists() and not (ctx_home / "cold-storage").exists()


def test_hook_recall_finds_cold_chunks_in_the_store(pg_url, tmp_path):
    from ctxkit.services.hooks import recall
    from ctxkit.store.home import Home

    drop_pipeline()
    hits = recall(Home(), str(tmp_path), "a good pasta recipe please")
    assert any(h["source"].startswith("cold:s1/") for h in hits), hits


def test_semantic_search_with_pgvector_agrees_with_the_embedded_store(pg_cluster, pg_url, monkeypatch, tmp_path):
    if not pg_cluster.has_vector():
        pytest.skip("this PostgreSQL has no pgvector (install pgserver for the bundled one)")
    import ctxkit.services.cold as cold

    drop_pipeline()
    emb = run("store", "embed")
    assert emb.code == 0 and "embedded" in emb.stderr, emb.stderr
    monkeypatch.setattr(cold, "FULL_SCAN_MAX", 0)  # as if the store were too big to scan whole: the HNSW index
    queries = ("cooking noodles in the kitchen", "sunny weather in France")
    pg_top = []
    for q in queries:
        res = run("cold-storage", "search", q, "--embedder", "minilm", "--json")
        assert res.code == 0 and "no vector index" not in res.stderr, res.stderr
        pg_top.append(json.loads(res.stdout.splitlines()[0])["chunk_id"])
    monkeypatch.delenv("CTX_STORE_URL")
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "embedded"))
    monkeypatch.setattr(cold, "FULL_SCAN_MAX", 20_000)
    drop_pipeline()
    emb_top = [json.loads(run("cold-storage", "search", q, "--embedder", "minilm", "--json").stdout.splitlines()[0])
               ["chunk_id"] for q in queries]
    assert pg_top == emb_top


def test_recover_racing_a_purge_is_a_clear_error(pg_url):
    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgError, PgStore

    a, b = PgStore(pg_url, "default"), PgStore(pg_url, "default")
    a.cold.write(new_entry("s1", "c-1", [{"v": 1, "kind": "message", "id": "m", "content": "x"}], 5, "r", 0.1,
                           None, 30, "g"))
    hit = a.cold.find("c-1", "s1")[0]
    b.cold.delete("s1", "c-1")            # another machine purges between the lookup and the read
    with pytest.raises(PgError, match="purged meanwhile"):
        a.cold.load(hit["path"])
