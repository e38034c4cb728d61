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
