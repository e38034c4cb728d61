"""The shared PostgreSQL store under load, and search at scale against the embedded store.

    PYTHONPATH=. .venv/bin/python bench/bench_pg.py                    # 16 agents x 500 ops; 10k, 100k chunks
    PYTHONPATH=. .venv/bin/python bench/bench_pg.py --agents 4 --ops 100 --sizes 10000
    PYTHONPATH=. nice .venv/bin/python bench/bench_pg.py --skip-fleet --sizes 10000,100000,1000000 \
        --vector-sizes 10000,100000 --maintenance-work-mem 1GB

Starts its own throwaway server (pgserver's PostgreSQL 16 with pgvector when installed, else the
machine's) on a Unix socket, like the tests. Part 1: N agent processes each run M operations
(drop, keyword search, recover, state update) on one server; afterwards every chunk each agent
dropped must load back with its own records (0 lost, 0 swapped: some ids are dropped by every
agent at once) and the shared state must hold every agent's update. Part 2: keyword search p50
(tsvector/GIN vs the embedded FTS5 index, both through search_cold's ranking) and semantic
candidate retrieval p50 (pgvector HNSW top-200 vs an exact scan of the same vectors in memory)
at each size. Sizes grow one data set: each size adds only the chunks it lacks (COPY, with the
GIN index dropped during the load and built after it; the HNSW index likewise, built after the
vectors are in, with `--maintenance-work-mem`), so 10k, 100k, 1M costs one 1M load, not 1.11M.
`--vector-sizes`: the sizes that also build and measure the HNSW index (the slow part).
Prints measured figures and ratios; asserts nothing about time.
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
CUM_WEIGHTS = list(__import__("itertools").accumulate(WEIGHTS))  # what choices() would sum on every call


def text_for(rnd: random.Random, n: int = 60) -> str:
    return " ".join(rnd.choices(VOCAB, cum_weights=CUM_WEIGHTS, k=n))


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
def _chunk(i: int, rnd: random.Random) -> tuple[str, str, str]:
    return f"s{i % 100}", f"c{i}", text_for(rnd)


def load_pg(url: str, start: int, n: int, dim: int, with_vectors: bool, mwm: str) -> dict:
    """Chunks start..n-1 into the 'scale' project (COPY; the GIN index rebuilt after); with
    vectors, their random vectors too and the HNSW index rebuilt. Seconds per step."""
    import psycopg

    took = {}
    with psycopg.connect(url, autocommit=True) as c:
        if start == 0:
            c.execute("DELETE FROM ctx_chunks WHERE project='scale'")
        c.execute(f"SET maintenance_work_mem = '{mwm}'")
        c.execute("SET max_parallel_maintenance_workers = 2")
        t = time.perf_counter()
        c.execute("DROP INDEX IF EXISTS ctx_chunks_tsv")
        with c.cursor().copy("COPY ctx_chunks (project, session, chunk_id, raw, records_hash, dropped_at, tokens, "
                             "gist, body, bytes) FROM STDIN") as cp:
            for i in range(start, n):
                sess, cid, body = _chunk(i, random.Random(i))
                raw = json.dumps({"chunk_id": cid, "session_id": sess, "records": []})
                cp.write_row(("scale", sess, cid, raw, "h", "2026-01-01T00:00:00Z", 80, body[:60], body, len(raw)))
        took["copy"] = time.perf_counter() - t
        t = time.perf_counter()
        c.execute("CREATE INDEX ctx_chunks_tsv ON ctx_chunks USING gin (tsv)")
        took["gin"] = time.perf_counter() - t
        if with_vectors:
            import numpy as np

            t = time.perf_counter()
            c.execute("DROP INDEX IF EXISTS ctx_vectors_hnsw")
            have = c.execute("SELECT COUNT(*) FROM ctx_vectors WHERE project='scale'").fetchone()[0]
            with c.cursor().copy("COPY ctx_vectors (project, session, chunk_id, model, embedding) FROM STDIN") as cp:
                for i in range(have, n):
                    v = np.random.default_rng(i).standard_normal(dim).astype(np.float32)
                    cp.write_row(("scale", f"s{i % 100}", f"c{i}", "minilm",
                                  "[" + ",".join(f"{x:.3f}" for x in v.tolist()) + "]"))
            took["vectors"] = time.perf_counter() - t
            t = time.perf_counter()
            c.execute("CREATE INDEX ctx_vectors_hnsw ON ctx_vectors USING hnsw (embedding vector_cosine_ops)")
            took["hnsw"] = time.perf_counter() - t
        c.execute("ANALYZE ctx_chunks")
    return took


def load_embedded(cold, start: int, n: int) -> float:
    """Chunks start..n-1 into the embedded store's index (the same texts as load_pg)."""
    t = time.perf_counter()
    db = cold.db
    db.execute("BEGIN")
    for i in range(start, n):
        sess, cid, body = _chunk(i, random.Random(i))
        cur = db.execute("INSERT INTO chunks (session, chunk_id, path, dropped_at, tokens, gist, text, hash, bytes) "
                         "VALUES (?,?,?,?,?,?,?,?,?)", (sess, cid, "x", "2026-01-01T00:00:00Z", 80,
                                                       body[:60], body, "h", 100))
        db.execute("INSERT INTO chunks_text(rowid, text) VALUES (?, ?)", (cur.lastrowid, body))
    db.execute("COMMIT")
    return time.perf_counter() - t


def scale(url: str, sizes: list[int], queries: int, has_vec: bool, vector_sizes: set[int], mwm: str) -> None:
    import numpy as np

    from ctxkit.services.cold import search_cold
    from ctxkit.store.cold import ColdStorage
    from ctxkit.store.pg import PgStore

    pg = PgStore(url, "scale")
    dim = 384
    tmp = tempfile.mkdtemp(prefix="ctx-bench-emb-")
    cold = ColdStorage(os.path.join(tmp, "cold-storage"))
    print(f"\n== search at scale (p50 of {queries} queries; keyword through search_cold's ranking)", flush=True)
    print(f"   {'chunks':>8} {'kw pg ms':>9} {'kw emb ms':>10} {'pg/emb':>7} {'vec pg ms':>10} {'scan ms':>8} "
          f"{'pg/scan':>8}  load (s)", flush=True)
    have = 0
    try:
        for n in sorted(sizes):
            vec = has_vec and n in vector_sizes
            took = load_pg(url, have, n, dim, vec, mwm)
            took["embedded"] = load_embedded(cold, have, n)
            have = n
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
            if vec:
                mat = np.stack([np.random.default_rng(i).standard_normal(dim).astype(np.float32) for i in range(n)])
                mat /= np.linalg.norm(mat, axis=1, keepdims=True)
                for j in range(queries):
                    qv = np.random.default_rng(10_000_000 + j).standard_normal(dim).astype(np.float32)
                    t = time.perf_counter()
                    pg.cold.vector_candidates("minilm", qv, None, 200)
                    vec_pg.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    sims = mat @ (qv / np.linalg.norm(qv))
                    np.argpartition(-sims, 200)[:200]
                    scan.append(time.perf_counter() - t)
                del mat
            a, b = pct(kw_pg, 50) * 1000, pct(kw_emb, 50) * 1000
            v = pct(vec_pg, 50) * 1000 if vec_pg else float("nan")
            sc = pct(scan, 50) * 1000 if scan else float("nan")
            loads = " ".join(f"{k} {x:.0f}" for k, x in took.items())
            print(f"   {n:8d} {a:9.2f} {b:10.2f} {a / b:7.2f} {v:10.2f} {sc:8.2f} {v / sc:8.2f}  {loads}", flush=True)
            print(f"            keyword p99: pg {pct(kw_pg, 99) * 1000:.1f} ms, embedded {pct(kw_emb, 99) * 1000:.1f} ms"
                  + (f"; vector p99: pg {pct(vec_pg, 99) * 1000:.1f} ms" if vec_pg else ""), flush=True)
    finally:
        cold.db.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("   kw: top-200 keyword candidates + hybrid ranking; vec pg: pgvector HNSW top-200 (random 384-d vectors,")
    print("   the worst case for HNSW); scan: an exact in-memory cosine scan of the same vectors (what a store")
    print("   without a vector index pays; the embedded store itself ranks keyword candidates only above 20k chunks)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", type=int, default=16)
    ap.add_argument("--ops", type=int, default=500)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--skip-fleet", action="store_true")
    ap.add_argument("--vector-sizes", default=None, help="sizes that build and measure the HNSW index "
                    "(default: every size)")
    ap.add_argument("--maintenance-work-mem", default="1GB", help="for the GIN and HNSW builds")
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
        sizes = [int(x) for x in args.sizes.split(",") if x]
        vsizes = set(sizes) if args.vector_sizes is None else {int(x) for x in args.vector_sizes.split(",") if x}
        scale(url, sizes, args.queries, has_vec, vsizes, args.maintenance_work_mem)
    finally:
        c.stop()


if __name__ == "__main__":
    main()
