"""The shared PostgreSQL store under load, and search at scale against the embedded store.

    PYTHONPATH=. .venv/bin/python bench/bench_pg.py                    # 16 agents x 500 ops; 10k, 100k chunks
    PYTHONPATH=. .venv/bin/python bench/bench_pg.py --agents 4 --ops 100 --sizes 10000
    PYTHONPATH=. .venv/bin/python bench/bench_pg.py --sizes 10000,100000,1000000

Starts its own throwaway server (pgserver's PostgreSQL 16 with pgvector when installed, else the
machine's) on a Unix socket, like the tests. Part 1: N agent processes each run M operations
(drop, keyword search, recover, state update) on one server; afterwards every chunk each agent
dropped must load back with its own records (0 lost, 0 swapped: some ids are dropped by every
agent at once) and the shared state must hold every agent's update. Part 2: keyword search p50
(tsvector/GIN vs the embedded FTS5 index, both through search_cold's ranking) and semantic
candidate retrieval p50 (pgvector HNSW top-200 vs an exact scan of the same vectors in memory)
at each size. Prints measured figures and ratios; asserts nothing about time.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

WORDS = ("token refresh jwt auth parser transcript session chunk drop recover budget compact summary index "
         "postgres vector search cache file commit test error fix login expiry header cookie route handler "
         "schema migration lock retry queue worker agent prompt memory state version timeout socket pipe").split()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def _vocab(n: int = 20000) -> tuple[list[str], list[float]]:
    """A Zipf-distributed vocabulary (like real text): the WORDS first, then made-up words."""
    syl = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "fa", "gi", "hu", "be", "co"]
    r = random.Random(7)
    words = list(WORDS)
    seen = set(words)
    while len(words) < n:
        w = "".join(r.choice(syl) for _ in range(r.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words, [1.0 / (i + 1) for i in range(n)]


VOCAB, WEIGHTS = _vocab()


def text_for(rnd: random.Random, n: int = 60) -> str:
    return " ".join(rnd.choices(VOCAB, WEIGHTS, k=n))


def query_for(rnd: random.Random) -> str:
    return " ".join(rnd.choices(VOCAB[20:2000], k=2))


# ---------------------------------------------------------------- part 1: the fleet
def agent(url: str, k: int, ops: int, shared_ids: int, barrier, out) -> None:
    from ctxkit.core.context_md import Item
    from ctxkit.services.cold import search_cold
    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgStore

    store = PgStore(url, "bench")
    rnd = random.Random(k)
    lat: dict[str, list[float]] = {"drop": [], "search": [], "recover": [], "state": []}
    mine: list[tuple[str, str]] = []      # (chunk id as stored, content)
    barrier.wait()
    t0 = time.perf_counter()
    for i in range(ops):
        op = ("drop", "search", "recover", "state")[i % 4]
        t = time.perf_counter()
        if op == "drop":
            shared = (i // 4) < shared_ids             # the first drops use ids every agent uses at once
            cid = f"shared-{i // 4}" if shared else f"a{k}-{i}"
            content = f"agent {k} op {i} " + text_for(rnd)
            recs = [{"v": 1, "kind": "message", "id": f"m{k}-{i}", "session": "fleet", "role": "user",
                     "content": content, "group": cid}]
            _, stored, _ = store.cold.write(new_entry("fleet", cid, recs, 80, "low_relevance", 0.1, None, 30,
                                                      content[:60]))
            mine.append((stored, content))
        elif op == "search":
            search_cold(None, store.cold, query_for(rnd), 5, "fleet", "keyword")
        elif op == "recover":
            if mine:
                cid, content = rnd.choice(mine)
                e = store.cold.load(store.cold.find(cid, "fleet")[0]["path"])
                if e["records"][0]["content"] != content:
                    out.put(("swapped", k, cid))
        else:
            def change(ctx, i=i):
                ctx.sections.setdefault("Pinned", []).append(Item(f"agent {k} update {i}"))
                return ctx
            store.state_file("fleet-state").update(change)
        lat[op].append(time.perf_counter() - t)
    wall = time.perf_counter() - t0
    import resource

    mem = {"client_max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
    try:  # what this agent's server backend holds privately (the cost of one more connection)
        with open(f"/proc/{store.connect().info.backend_pid}/smaps_rollup") as f:
            mem["backend_private_kb"] = sum(int(line.split()[1]) for line in f
                                            if line.startswith(("Private_Clean", "Private_Dirty")))
    except OSError:
        pass
    out.put(("done", k, {"lat": lat, "mine": mine, "wall": wall, "mem": mem}))
    store.close()


def fleet(url: str, agents: int, ops: int) -> None:
    import psycopg

    from ctxkit.store.pg import PgStore

    ctxm = mp.get_context("spawn")
    barrier, q = ctxm.Barrier(agents), ctxm.Queue()
    ps = [ctxm.Process(target=agent, args=(url, k, ops, 5, barrier, q)) for k in range(agents)]
    t0 = time.perf_counter()
    for p in ps:
        p.start()
    results, swapped = {}, []
    while len(results) < agents:
        kind, k, data = q.get(timeout=1800)
        if kind == "done":
            results[k] = data
        else:
            swapped.append((k, data))
    for p in ps:
        p.join()
    wall = time.perf_counter() - t0
    store = PgStore(url, "bench")
    lost = 0
    for k, r in results.items():  # every drop must load back with its own records
        for cid, content in r["mine"]:
            found = store.cold.find(cid, "fleet")
            if not found:
                lost += 1
            elif store.cold.load(found[0]["path"])["records"][0]["content"] != content:
                swapped.append((k, cid))
    ctx = store.state_file("fleet-state").read()
    items = {it.text for it in ctx.sections.get("Pinned", [])}
    want = {f"agent {k} update {i}" for k in range(agents) for i in range(ops) if i % 4 == 3}
    lost_state = len(want - items)
    with psycopg.connect(url) as c:
        conns = c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name='ctx'").fetchone()[0]
    total = agents * ops
    print(f"\n== fleet: {agents} agent processes x {ops} ops against one server ({total} ops, wall {wall:.1f} s)")
    print(f"   lost chunks: {lost}   swapped chunks: {len(swapped)}   lost state updates: {lost_state}   "
          f"state version: {ctx.version} (want {len(want)})")
    busy = max(r["wall"] for r in results.values())
    print(f"   throughput: {total / busy:.0f} ops/s while all agents ran ({total / wall:.0f} ops/s counting "
          f"process start)")
    print(f"   {'op':8} {'n':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for op in ("drop", "search", "recover", "state"):
        xs = [x for r in results.values() for x in r["lat"][op]]
        print(f"   {op:8} {len(xs):6d} {pct(xs, 50) * 1000:8.2f} {pct(xs, 99) * 1000:8.2f}")
    def med(key):
        xs = [r["mem"][key] for r in results.values() if key in r["mem"]]
        return f"{pct(xs, 50) / 1024:.1f} MB" if xs else "not measured"
    print(f"   one more agent process: 1 connection; its server backend holds {med('backend_private_kb')} "
          f"privately; the ctx process peaks at {med('client_max_rss_kb')} RSS (connections left open "
          f"after the run: {conns})")


# ---------------------------------------------------------------- part 2: search at scale
def load_pg(url: str, n: int, rnd: random.Random, dim: int, with_vectors: bool) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DELETE FROM ctx_chunks WHERE project='scale'")
        with c.cursor().copy("COPY ctx_chunks (project, session, chunk_id, raw, records_hash, dropped_at, tokens, "
                             "gist, body, bytes) FROM STDIN") as cp:
            for i in range(n):
                body = text_for(rnd)
                raw = json.dumps({"chunk_id": f"c{i}", "session_id": f"s{i % 100}", "records": []})
                cp.write_row(("scale", f"s{i % 100}", f"c{i}", raw, "h", "2026-01-01T00:00:00Z", 80, body[:60], body,
                              len(raw)))
        if with_vectors:
            import numpy as np

            c.execute("DROP INDEX IF EXISTS ctx_vectors_hnsw")
            mat = np.random.default_rng(n).standard_normal((n, dim)).astype(np.float32)
            with c.cursor().copy("COPY ctx_vectors (project, session, chunk_id, model, embedding) FROM STDIN") as cp:
                for i in range(n):
                    cp.write_row(("scale", f"s{i % 100}", f"c{i}", "minilm",
                                  "[" + ",".join(f"{x:.3f}" for x in mat[i].tolist()) + "]"))
            c.execute("SET maintenance_work_mem = '1GB'")
            c.execute("SET max_parallel_maintenance_workers = 2")
            c.execute("CREATE INDEX ctx_vectors_hnsw ON ctx_vectors USING hnsw (embedding vector_cosine_ops)")
        c.execute("ANALYZE ctx_chunks")


def load_embedded(root: str, n: int, rnd: random.Random) -> object:
    from ctxkit.store.cold import ColdStorage

    cold = ColdStorage(root)
    db = cold.db
    db.execute("BEGIN")
    for i in range(n):
        body = text_for(rnd)
        cur = db.execute("INSERT INTO chunks (session, chunk_id, path, dropped_at, tokens, gist, text, hash, bytes) "
                         "VALUES (?,?,?,?,?,?,?,?,?)", (f"s{i % 100}", f"c{i}", "x", "2026-01-01T00:00:00Z", 80,
                                                       body[:60], body, "h", 100))
        db.execute("INSERT INTO chunks_text(rowid, text) VALUES (?, ?)", (cur.lastrowid, body))
    db.execute("COMMIT")
    return cold


def scale(url: str, sizes: list[int], queries: int, has_vec: bool) -> None:
    import numpy as np

    from ctxkit.services.cold import search_cold
    from ctxkit.store.pg import PgStore

    pg = PgStore(url, "scale")
    dim = 384
    print(f"\n== search at scale (p50 of {queries} queries; keyword through search_cold's ranking)")
    print(f"   {'chunks':>8} {'kw pg ms':>9} {'kw emb ms':>10} {'pg/emb':>7} {'vec pg ms':>10} {'scan ms':>8} "
          f"{'pg/scan':>8} {'load s':>7}")
    for n in sizes:
        rnd = random.Random(n)
        t = time.perf_counter()
        load_pg(url, n, rnd, dim, has_vec)
        tmp = tempfile.mkdtemp(prefix="ctx-bench-emb-")
        cold = load_embedded(os.path.join(tmp, "cold-storage"), n, random.Random(n))
        load_s = time.perf_counter() - t
        qs = [query_for(random.Random(j)) for j in range(queries)]
        kw_pg, kw_emb = [], []
        for q in qs:
            t = time.perf_counter()
            search_cold(None, pg.cold, q, 5, None, "keyword")
            kw_pg.append(time.perf_counter() - t)
            t = time.perf_counter()
            search_cold(None, cold, q, 5, None, "keyword")
            kw_emb.append(time.perf_counter() - t)
        vec_pg, scan = [], []
        mat = np.random.default_rng(n).standard_normal((n, dim)).astype(np.float32)
        mat /= np.linalg.norm(mat, axis=1, keepdims=True)
        for j in range(queries):
            qv = np.random.default_rng(10_000 + j).standard_normal(dim).astype(np.float32)
            if has_vec:
                t = time.perf_counter()
                pg.cold.vector_candidates("minilm", qv, None, 200)
                vec_pg.append(time.perf_counter() - t)
            t = time.perf_counter()
            sims = mat @ (qv / np.linalg.norm(qv))
            np.argpartition(-sims, 200)[:200]
            scan.append(time.perf_counter() - t)
        shutil.rmtree(tmp, ignore_errors=True)
        a, b = pct(kw_pg, 50) * 1000, pct(kw_emb, 50) * 1000
        v, s = (pct(vec_pg, 50) * 1000 if vec_pg else float("nan")), pct(scan, 50) * 1000
        print(f"   {n:8d} {a:9.2f} {b:10.2f} {a / b:7.2f} {v:10.2f} {s:8.2f} {v / s:8.2f} {load_s:7.1f}")
    print("   kw: top-200 keyword candidates + hybrid ranking; vec pg: pgvector HNSW top-200 (random 384-d vectors);")
    print("   scan: an exact in-memory cosine scan of the same number of vectors (what a store without a vector")
    print("   index pays; the embedded store itself ranks keyword candidates only above 20k chunks)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", type=int, default=16)
    ap.add_argument("--ops", type=int, default=500)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--skip-fleet", action="store_true")
    args = ap.parse_args()
    from pgcluster import Cluster, usable_bin_dirs

    bins = usable_bin_dirs()
    if not bins:
        print("no PostgreSQL binaries: install postgresql or pgserver", file=sys.stderr)
        sys.exit(1)
    c = Cluster(bins[0][1])
    c.start()
    try:
        url = c.url(c.new_db())
        from ctxkit.store.pg import PgStore

        pg = PgStore(url, "bench")
        pg.init()
        has_vec = pg.has_vectors()
        print(f"server: {bins[0][0]} PostgreSQL {pg.connect().info.parameter_status('server_version')}, "
              f"pgvector: {'yes' if has_vec else 'no'}; cpus: {os.cpu_count()}")
        pg.close()
        if not args.skip_fleet:
            fleet(url, args.agents, args.ops)
        scale(url, [int(x) for x in args.sizes.split(",") if x], args.queries, has_vec)
    finally:
        c.stop()


if __name__ == "__main__":
    main()
