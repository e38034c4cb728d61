"""Keyword search ranks in tiers (the rarest terms first, then the others, each tier bounded), the
same way on the embedded store and on PostgreSQL, and exactly as before where every term is rare;
PostgreSQL's term statistics follow drops and purges."""
import pytest

import ctxkit.core.keyword_tiers as kt
from ctxkit.core.keyword_tiers import tiers
from ctxkit.store.cold import ColdStorage, new_entry
from pgcluster import Cluster, usable_bin_dirs

BINS = usable_bin_dirs()
OWN_PG_SERVER = True


def chunks():
    """12 chunks: 'error' and 'file' in every one, 'token' in the first five, ident_K in chunk K only."""
    out = []
    for k in range(12):
        words = ["error in file", "token refresh" if k < 5 else "plain words", f"see ident_{k} here",
                 "error again" if k % 3 == 0 else "nothing more"]
        out.append((f"s{k % 2}", f"c{k:02d}", " ".join(words)))
    return out


def fill(cold):
    for s, c, text in chunks():
        recs = [{"v": 1, "kind": "message", "id": f"m-{c}", "session": s, "role": "user", "content": text,
                 "group": c}]
        cold.write(new_entry(s, c, recs, 20, "low_relevance", 0.1, None, 30, text[:30]))


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    emb = ColdStorage(str(tmp_path_factory.mktemp("emb") / "cold-storage"))
    fill(emb)
    if not BINS:
        yield emb, None
        emb.db.close()
        return
    from ctxkit.store.pg import PgStore

    c = Cluster(BINS[0][1]).start()
    pg = PgStore(c.url(c.new_db()), "tiers")
    pg.init()
    fill(pg.cold)
    pg.cold.cluster = c  # for the role test
    yield emb, pg.cold
    pg.close()
    emb.db.close()
    c.stop()


def keys(rows):
    return [(r[0], r[1]) for r in rows]


def test_tiers_put_rare_terms_first_and_leave_out_absent_ones():
    assert tiers(["error", "token", "ident_7", "zzz"], [4, 4, 1, 0], scan=4) == [
        ("any", ["ident_7"], []), ("all", ["error", "token"], ["ident_7"]), ("any", ["error", "token"], ["ident_7"])]
    assert tiers(["a", "b"], [3, 0], scan=4) == [("any", ["a"], [])]
    assert tiers(["a", "b", "c"], [3, 2, 9], scan=4) == [("any", ["b"], []), ("all", ["a", "c"], ["b"]),
                                                        ("any", ["a", "c"], ["b"])]  # the rarest first
    assert tiers(["zzz"], [0]) == []


def test_where_every_term_is_rare_the_embedded_ranking_is_the_exact_one(stores):
    emb, _ = stores
    for query in ("token error ident_3", "refresh again", "plain nothing ident_11 missingword"):
        exact = emb.db.execute(
            "SELECT c.session, c.chunk_id, bm25(chunks_text) AS rank FROM chunks_text JOIN chunks c "
            "ON c.rowid = chunks_text.rowid WHERE chunks_text MATCH ? ORDER BY rank, c.session, c.chunk_id",
            (" OR ".join(f'"{t}"' for t in __import__("ctxkit.core.bm25", fromlist=["x"]).tokenize(query)),)
        ).fetchall()
        got = emb.candidates(query, None, 50)
        assert [(s, c) for s, c, _ in exact] == keys(got)
        assert [round(r, 6) for *_, r in exact] == [round(r[4], 6) for r in got]


@pytest.mark.parametrize("session", [None, "s1"])
def test_both_stores_rank_the_same_tiers_and_agree(stores, monkeypatch, session):
    emb, pg = stores
    if pg is None:
        pytest.skip("no PostgreSQL binaries on this machine")
    monkeypatch.setattr(kt, "SCAN", 6)   # as if the store were large: error, file, ident are common here
    # limits that take whole tiers: each store orders inside a tier by its own rank (bm25, ts_rank)
    for query, limit in (("error token ident_7", 6), ("file token", 5), ("error", 20), ("ident_3 ident_9 error", 8)):
        a, b = emb.candidates(query, session, limit), pg.candidates(query, session, limit)
        assert sorted(keys(a)) == sorted(keys(b)) and keys(a)[0] == keys(b)[0], query
        assert 0 < len(a) <= limit
        if session:
            assert {s for s, _ in keys(a)} == {session}
    for cands in (emb.candidates("error token ident_7", None, 3), pg.candidates("error token ident_7", None, 3)):
        assert keys(cands)[0] == ("s1", "c07")                      # the rare term's chunk first
        assert {c for _, c in keys(cands)[1:]} <= {f"c0{k}" for k in range(5)}  # then both common terms
        assert [r[4] for r in cands] == sorted(r[4] for r in cands)  # ranks follow the order
    assert len(emb.candidates("error", None, 20)) == len(pg.candidates("error", None, 20)) == 6  # SCAN bounds it


def test_the_term_statistics_follow_drops_and_purges(stores):
    _, pg = stores
    if pg is None:
        pytest.skip("no PostgreSQL binaries on this machine")
    assert pg.s.has_term_stats()
    assert pg._term_counts(["error", "token", "ident_7", "nowhere"], 100) == [12, 5, 1, 0]
    pg.write(new_entry("s9", "extra", [{"v": 1, "kind": "message", "id": "x", "session": "s9", "role": "user",
                                        "content": "token token again"}], 5, "low_relevance", 0.1, None, 30, "t"))
    assert pg._term_counts(["token", "again"], 100) == [6, 5]
    pg.delete("s9", "extra")
    assert pg._term_counts(["token", "again"], 100) == [5, 4]


def test_semantic_candidates_of_one_session_are_not_cut_by_the_index(stores):
    """The HNSW index yields the nearest of every session; a small session's share of them would
    be a few: its own vectors are searched exactly instead (pgvector before 0.8 scans no further)."""
    _, pg = stores
    if pg is None or not pg.s.has_vectors():
        pytest.skip("no PostgreSQL with pgvector on this machine")
    import random

    rnd = random.Random(3)
    items = []
    for i in range(400):
        sess = "small" if i % 20 == 0 else "big"
        pg.write(new_entry(sess, f"v{i}", [{"v": 1, "kind": "message", "id": f"v{i}", "content": f"vector {i}"}],
                           5, "r", 0.1, None, 30, f"v{i}"))
        items.append((sess, f"v{i}", [rnd.gauss(0, 1) for _ in range(384)]))
    pg.put_vectors("minilm", items)
    q = [rnd.gauss(0, 1) for _ in range(384)]
    near = pg.vector_candidates("minilm", q, "small", 20)
    assert len(near) == 20 and {r[0] for r in near} == {"small"}
    sims = [r[4] for r in near]
    assert sims == sorted(sims, reverse=True)
    assert len(pg.vector_candidates("minilm", q, None, 50)) == 50


def test_a_role_kept_to_its_project_drops_searches_and_purges(stores):
    """The term statistics are a tenant table: a role granted one project keeps them with its drops
    and reads them in its searches (grant-sql grants them)."""
    import psycopg

    from ctxkit.store.pg import PgStore
    from ctxkit.store.pg_schema import grant_sql

    _, pg = stores
    if pg is None:
        pytest.skip("no PostgreSQL binaries on this machine")
    with psycopg.connect(pg.s.url, autocommit=True) as c:
        c.execute(grant_sql("tiers_role", "tiers"))
        c.execute("ALTER ROLE tiers_role PASSWORD 'pw-t'")
    db = pg.s.url.split("@/")[1].split("?")[0]
    mine = PgStore(pg.cluster.url(db, "tiers_role", "pw-t"), "tiers")
    mine.cold.write(new_entry("s7", "mine", [{"v": 1, "kind": "message", "id": "y", "session": "s7", "role": "user",
                                              "content": "zebra crossing"}], 5, "low_relevance", 0.1, None, 30, "z"))
    assert keys(mine.cold.candidates("zebra token", None, 3))[0] == ("s7", "mine")
    assert mine.cold._term_counts(["zebra"], 10) == [1]
    mine.cold.delete("s7", "mine")
    assert mine.cold._term_counts(["zebra"], 10) == [0] and mine.cold.candidates("zebra", None, 3) == []
    mine.close()


def test_a_role_counts_and_ranks_its_own_project_only(stores):
    """Keyword search runs in functions that use the index whatever row-level security says (an
    agent role's plain query could not: tsvector's @@ is not leakproof). They check the login
    role's projects themselves: another project's chunks are neither counted nor ranked, even
    when the role names that project in a direct call."""
    import psycopg

    from ctxkit.store.pg import PgStore
    from ctxkit.store.pg_schema import grant_sql

    _, pg = stores
    if pg is None:
        pytest.skip("no PostgreSQL binaries on this machine")
    db = pg.s.url.split("@/")[1].split("?")[0]
    other = PgStore(pg.s.url, "other-project")
    other.cold.write(new_entry("s1", "theirs", [{"v": 1, "kind": "message", "id": "o", "session": "s1", "role": "user",
                                                 "content": "zebra crossing at ident_7"}], 5, "low_relevance", 0.1,
                               None, 30, "z"))
    with psycopg.connect(pg.s.url, autocommit=True) as c:
        c.execute(grant_sql("tiers_reader", "tiers"))
        c.execute("ALTER ROLE tiers_reader PASSWORD 'pw-r'")
    mine = PgStore(pg.cluster.url(db, "tiers_reader", "pw-r"), "tiers")
    assert mine.has_search_functions()
    for query in ("error token ident_7", "ident_3 again", "plain nothing ident_11"):   # as the owner ranks them
        assert keys(mine.cold.candidates(query, None, 20)) == keys(pg.candidates(query, None, 20))
    assert mine.cold._term_counts(["zebra", "ident_7", "token"], 10) == [0, 1, 5]
    assert keys(other.cold.candidates("zebra ident_7", None, 5)) == [("s1", "theirs")]
    assert other.cold._term_counts(["zebra", "ident_7"], 10) == [1, 1]
    theirs = PgStore(pg.cluster.url(db, "tiers_reader", "pw-r"), "other-project")
    assert theirs.cold.candidates("zebra ident_7", None, 5) == []
    assert theirs.cold._term_counts(["zebra", "ident_7"], 10) == [0, 0]
    with theirs.connect().cursor() as cur:   # the functions called directly, naming the other project
        cur.execute("SELECT * FROM ctx_keyword_match('other-project', to_tsquery('simple', 'zebra'), NULL, NULL, "
                    "to_tsquery('simple', 'zebra'), 10, 10)")
        assert cur.fetchall() == []
        assert cur.execute("SELECT ctx_term_counts('other-project', ARRAY['zebra', 'ident_7'], 10)").fetchone()[0] \
            == [0, 0]
    for s in (mine, theirs, other):
        s.close()


def test_a_store_searched_before_migrations_103_and_104_ranks_the_same_and_init_brings_them(stores):
    """A store an older ctx made (term statistics, no search functions) is searched with plain
    queries, with the same results; `init` adds the functions and the index by project."""
    import random

    import psycopg

    from ctxkit.store.pg import PgStore

    _, pg = stores
    if pg is None:
        pytest.skip("no PostgreSQL binaries on this machine")
    queries = [("error token ident_7", None), ("ident_3 again", "s1"), ("file token", None), ("error", "s0")]
    now = {q: pg.candidates(q, s, 20) for q, s in queries}
    vectors = pg.s.has_vectors()
    if vectors:
        pg.put_vectors("minilm", [(s, c, [random.Random(c).gauss(0, 1) for _ in range(384)]) for s, c, _ in chunks()])
        vq = [random.Random(9).gauss(0, 1) for _ in range(384)]
        near = [pg.vector_candidates("minilm", vq, s, 5) for s in (None, "s1")]
    with psycopg.connect(pg.s.url, autocommit=True) as c:   # as ctx before migrations 103 and 104 left it
        c.execute("DROP FUNCTION ctx_keyword_match, ctx_term_counts")
        c.execute("DROP FUNCTION IF EXISTS ctx_vector_match")
        c.execute("DROP FUNCTION ctx_may_search")
        c.execute("DROP INDEX ctx_chunks_words")
        c.execute("CREATE INDEX ctx_chunks_tsv ON ctx_chunks USING gin (tsv)")
        c.execute("ALTER TABLE ctx_chunks ALTER COLUMN tsv SET STORAGE EXTENDED")
        c.execute("DELETE FROM ctx_schema_migrations WHERE version IN (103, 104)")
    old = PgStore(pg.s.url, "tiers")
    assert not old.has_search_functions() and "ctx store init" in old.check()["keyword_search"]
    assert not old.has_vector_function()
    assert {q: old.cold.candidates(q, s, 20) for q, s in queries} == now
    if vectors:
        assert [old.cold.vector_candidates("minilm", vq, s, 5) for s in (None, "s1")] == near
    assert old.init() == ["103: keyword search by project, for every role"] + \
        (["104: vector search for every role"] if vectors else [])
    assert old.has_search_functions() and old.check()["keyword_search"] == "indexed by project, for every role"
    assert {q: old.cold.candidates(q, s, 20) for q, s in queries} == now
    if vectors:
        assert old.has_vector_function()
        assert [old.cold.vector_candidates("minilm", vq, s, 5) for s in (None, "s1")] == near
    old.close()


def test_a_role_finds_its_own_projects_nearest_vectors_only(stores):
    """The nearest vectors come through a function too (under row-level security a role's plain
    query ranked every vector of the project instead of reading the HNSW index): the same as the
    owner's for the role's project, nothing for another project."""
    import psycopg

    from ctxkit.store.pg import PgStore
    from ctxkit.store.pg_schema import grant_sql

    _, pg = stores
    if pg is None or not pg.s.has_vectors():
        pytest.skip("no PostgreSQL with pgvector on this machine")
    import random

    rnd = random.Random(5)
    db = pg.s.url.split("@/")[1].split("?")[0]
    other = PgStore(pg.s.url, "vectors-elsewhere")
    for store, prefix in ((pg, "mine"), (other.cold, "theirs")):
        items = []
        for i in range(30):
            store.write(new_entry("sv", f"{prefix}{i}", [{"v": 1, "kind": "message", "id": f"{prefix}{i}",
                                                          "content": f"vector {prefix} {i}"}], 5, "r", 0.1, None, 30,
                                  f"{prefix}{i}"))
            items.append(("sv", f"{prefix}{i}", [rnd.gauss(0, 1) for _ in range(384)]))
        store.put_vectors("minilm", items)
    with psycopg.connect(pg.s.url, autocommit=True) as c:
        c.execute(grant_sql("tiers_vectors", "tiers"))
        c.execute("ALTER ROLE tiers_vectors PASSWORD 'pw-v'")
    assert pg.s.has_vector_function()
    q = [rnd.gauss(0, 1) for _ in range(384)]
    mine = PgStore(pg.cluster.url(db, "tiers_vectors", "pw-v"), "tiers")
    got = mine.cold.vector_candidates("minilm", q, "sv", 10)
    assert [r[:2] for r in got] == [r[:2] for r in pg.vector_candidates("minilm", q, "sv", 10)]
    assert len(got) == 10 and all(r[1].startswith("mine") for r in got)
    theirs = PgStore(pg.cluster.url(db, "tiers_vectors", "pw-v"), "vectors-elsewhere")
    assert theirs.cold.vector_candidates("minilm", q, None, 10) == []
    assert len(other.cold.vector_candidates("minilm", q, None, 10)) == 10
    for s in (mine, theirs, other):
        s.close()


def test_a_project_is_matched_in_the_index_or_through_the_words_alone_with_the_same_results(stores):
    """A project holding a third of the rows or more is searched through the words' index entries
    alone (its rows checked one by one); a smaller one through the index by project. Which one
    is a matter of speed: the chunks found are the same."""
    import psycopg

    _, pg = stores
    if pg is None:
        pytest.skip("no PostgreSQL binaries on this machine")
    queries = [("error token ident_7", None), ("ident_3 again", "s1"), ("file token", None), ("refresh_token", None)]
    with psycopg.connect(pg.s.url, autocommit=True) as c:
        def form():
            c.execute("ANALYZE ctx_chunks")
            return c.execute("SELECT ctx_project_match('tiers')").fetchone()[0]

        assert form() == "(c.project = $1) IS TRUE"       # the project holds most rows
        most = {q: (pg.candidates(q, s, 20), pg._term_counts(q.split(), 100)) for q, s in queries}
        n = c.execute("SELECT COUNT(*) FROM ctx_chunks").fetchone()[0]
        c.execute("INSERT INTO ctx_chunks (project, session, chunk_id, raw, records_hash, body, bytes) "
                  "SELECT 'filler', 's', 'f' || i, '{}', 'h', 'filler words', 2 FROM generate_series(1, %s) i",
                  (4 * n,))
        try:
            assert form() == "ARRAY[c.project] @> ARRAY[$1]"   # a fifth of the rows: by project in the index
            assert {q: (pg.candidates(q, s, 20), pg._term_counts(q.split(), 100)) for q, s in queries} == most
        finally:
            c.execute("DELETE FROM ctx_chunks WHERE project = 'filler'")
            c.execute("ANALYZE ctx_chunks")
