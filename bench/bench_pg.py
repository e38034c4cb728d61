"""The shared PostgreSQL store under load, and search at scale against the embedded store.

    PYTHONPATH=. .venv/bin/python bench/bench_pg.py                    # 16 agents x 500 ops; 10k, 100k chunks
    PYTHONPATH=. .venv/bin/python bench/bench_pg.py --agents 4 --ops 100 --sizes 10000
    PYTHONPATH=. nice .venv/bin/python bench/bench_pg.py --skip-fleet --sizes 10000,100000,1000000 --vector-sizes 0
    PYTHONPATH=. nice .venv/bin/python bench/bench_pg.py --skip-fleet --data worst --sizes 100000,300000,1000000 \
        --vector-sizes 100000,300000,1000000 --ef-search 200,400,800 --maintenance-work-mem 4GB

Starts its own throwaway server (pgserver's PostgreSQL 16 with pgvector when installed, else the
machine's) on a Unix socket, like the tests, with `--shared-buffers` (2GB). Part 1: N agent
processes each run M operations (drop, keyword search, recover, state update) on one server;
afterwards every chunk each agent dropped must load back with its own records (0 lost, 0 swapped:
some ids are dropped by every agent at once) and the shared state must hold every agent's update.
Part 2: keyword search p50 (tsvector/GIN vs the embedded FTS5 index, both through search_cold's
ranking) on two data sets in one table, side by side: `worst` (a tiny Zipf vocabulary: every query
term matches a large share of all chunks) and `real` (the corpus transcripts' text cut into
chunks, each copy's identifiers, paths and hashes made distinct; queries: real user prompts and
identifiers of stored chunks). Searches run as an agent's login role under row-level security, as
`ctx store grant-sql` sets one up (`--search-as owner`: as the store's owner). Beside each: the
median number of chunks a query matches, the p50 of the exact ranking (every match ranked, as
before the tiers of core.keyword_tiers) and the tiers' recall@10 against it. Then semantic
candidate retrieval (pgvector HNSW top-200 through the store's search vs an exact scan of the same
vectors in memory, recall@10 and @200, at each --ef-search) at the --vector-sizes, on MiniLM
vectors of real text extended by derived ones (RealVectors; `--vectors random`: random vectors).
Sizes grow one data set: each size adds only the chunks it lacks (COPY, each chunk with its
records as a drop stores them; the GIN index dropped during the load and built after it; the HNSW
index likewise, built after the vectors are in, with `--maintenance-work-mem` and
`--build-workers`), so 10k, 100k, 1M costs one 1M load, not 1.11M.
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
class WorstCase:
    """Chunk text drawn from a ~60-word vocabulary then made-up Zipf words: every query term
    matches a large share of all chunks (the worst case for keyword ranking, unlike real text)."""
    name, project = "worst", "scale"

    def key(self, i: int) -> tuple[str, str]:
        return f"s{i % 100}", f"c{i}"

    def chunk(self, i: int) -> tuple[str, str, str]:
        return (*self.key(i), text_for(random.Random(i)))

    def queries(self, n: int, have: int) -> list[str]:
        return [query_for(random.Random(j)) for j in range(n)]


def pieces_of(text: str, piece: int = 1200) -> list[str]:
    """`text` cut into pieces of at most `piece` characters, at a space where one is near."""
    out = []
    while text:
        cut = text.rfind(" ", 0, piece) if len(text) > piece else len(text)
        cut = cut if cut > piece // 2 else min(piece, len(text))
        if text[:cut].strip():
            out.append(text[:cut])
        text = text[cut:]
    return out


class RealText:
    """Chunks cut from the real corpus transcripts' text (tool output, file reads, prompts), each
    copy made distinct: identifiers, paths and hashes carry the copy's own tag (as many projects'
    chunks would: a natural, Zipf-distributed vocabulary plus many distinctive identifiers).
    Queries: real user prompts (their first 300 characters) and identifiers of chunks in the store."""
    name, project = "real", "real"
    IDENT = __import__("re").compile(r"\b(?:[A-Za-z][A-Za-z0-9]*(?:[_./-][A-Za-z0-9]+)+|[0-9a-f]{7,40})\b")

    def __init__(self, piece: int = 1200):
        sys.path.insert(0, str(ROOT / "bench"))
        from _common import corpus_records
        from ctxkit.store.cold import entry_text

        groups: dict = {}
        prompts = []
        for r in corpus_records():
            if r.get("kind") == "event":
                continue
            groups.setdefault((r.get("session"), r.get("group")), []).append(r)
            if r.get("role") == "user" and isinstance(r.get("content"), str) and len(r["content"]) > 15:
                prompts.append(r["content"][:300])
        self.texts = [entry_text({"records": recs}) for recs in groups.values()]
        self.pieces = [p for text in self.texts for p in pieces_of(text, piece)]
        self.prompts = prompts

    def _tag(self, copy: int) -> str:
        return "v" + __import__("numpy").base_repr(copy, 36).lower()

    def key(self, i: int) -> tuple[str, str]:
        return f"r{i // len(self.pieces) % 100}", f"r{i}"

    def chunk(self, i: int) -> tuple[str, str, str]:
        base, tag = self.pieces[i % len(self.pieces)], self._tag(i // len(self.pieces))
        return (*self.key(i), self.IDENT.sub(lambda m: f"{m.group(0)}_{tag}", base))

    def queries(self, n: int, have: int) -> list[str]:
        rnd = random.Random(11)
        out = []
        for j in range(n):
            if j % 2 == 0:
                out.append(rnd.choice(self.prompts))
                continue
            for _ in range(50):   # an identifier from a chunk in the store, with a word around it
                body = self.chunk(rnd.randrange(have))[2]
                ids = self.IDENT.findall(body)
                if ids:
                    words = body.split()
                    out.append(f"{rnd.choice(words)} {rnd.choice(ids)}")
                    break
            else:
                out.append(rnd.choice(self.prompts))
        return out


class RealVectors:
    """MiniLM vectors with the neighbourhood structure of real text, for the HNSW part (random
    vectors, the other choice, have none: every cosine is near 0, the worst case for HNSW).

    Base: the product's embedder (all-MiniLM-L6-v2) run on `base` distinct real chunks: the corpus
    transcripts' pieces (cut at two offsets) and then pieces of the source and documentation
    files of the Python installation here (code and prose, as agents read them), at most two
    pieces a file; embedded once (about an hour on 2 cores) and cached in bench/data/pg-vectors/.
    Past the base, every vector is derived from a random base vector (its parent): moved a random
    share (0 to 1/2) of the way towards one of the parent's 10 nearest base neighbours (a mixture),
    plus noise shaped like the base set's own spread (its covariance), scaled so that a derived
    vector is as near its parent as a real chunk is to its nearest other real chunk (median
    cosine). Queries: real user prompts of the corpus and held-out chunks (pieces of files not in
    the base), embedded by the same model."""
    name = "minilm"
    HELD_OUT = 100

    def __init__(self, base: int = 20000):
        import hashlib

        import numpy as np

        self.base_n = base
        texts, held = self._texts(base)
        self.prompts = RealText().prompts
        qtexts = [x for pair in zip(self.prompts, held) for x in pair] + held[len(self.prompts):]
        key = hashlib.sha256("\0".join(texts + ["--"] + qtexts).encode("utf-8", "surrogatepass")).hexdigest()[:12]
        d = ROOT / "bench" / "data" / "pg-vectors"
        d.mkdir(parents=True, exist_ok=True)
        self.base = _embedded(texts, d / f"base-{base}-{key}.npy")
        self.query_vecs = _embedded(qtexts, d / f"queries-{base}-{key}.npy")
        knn_file = d / f"knn-{base}-{key}.npy"
        if knn_file.exists():
            self.knn, self.nn_cos = np.load(knn_file), None
        else:
            self.knn = np.zeros((base, 10), np.int32)
            for a in range(0, base, 2000):
                sims = self.base[a:a + 2000] @ self.base.T
                sims[np.arange(sims.shape[0]), np.arange(a, a + sims.shape[0])] = -2   # not itself
                self.knn[a:a + 2000] = np.argsort(-sims, axis=1)[:, :10]
            np.save(knn_file, self.knn)
        self.nn_cos = float(np.median(np.einsum("ij,ij->i", self.base, self.base[self.knn[:, 0]])))
        centred = self.base - self.base.mean(0)
        # noise with the base set's covariance: z @ shape, z standard normal
        u, sv, vt = np.linalg.svd(centred / np.sqrt(base), full_matrices=False)
        self.shape = (sv[:, None] * vt).astype(np.float32)
        self.noise = self._calibrate()

    @staticmethod
    def _texts(base: int) -> tuple[list[str], list[str]]:
        import sysconfig

        rt = RealText()
        texts = list(dict.fromkeys(rt.pieces + [p for t in rt.texts for p in pieces_of(t[600:])]))
        seen = set(texts)
        files = []
        for root in dict.fromkeys((sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"])):
            for dirpath, dirnames, names in os.walk(root):
                dirnames.sort()
                files += [os.path.join(dirpath, f) for f in sorted(names) if f.endswith((".py", ".md", ".rst", ".txt"))]
        rnd = random.Random(5)
        rnd.shuffle(files)
        held: list[str] = []
        for f in files:
            try:
                ps = [p for p in pieces_of(Path(f).read_text(encoding="utf-8", errors="replace")) if len(p) > 200]
            except OSError:
                continue
            ps = [p for p in rnd.sample(ps, min(2, len(ps))) if p not in seen]
            if len(texts) < base:
                texts += ps[: base - len(texts)]
                seen.update(ps)
            elif ps:
                held.append(ps[0])
                if len(held) == RealVectors.HELD_OUT:
                    break
        return texts[:base], held

    def _derive(self, n: int, rng, noise: float):
        import numpy as np

        parent = rng.integers(self.base_n, size=n)
        other = self.knn[parent, rng.integers(10, size=n)]
        lam = rng.uniform(0, 0.5, size=(n, 1)).astype(np.float32)
        v = self.base[parent] * (1 - lam) + self.base[other] * lam
        v += noise * (rng.standard_normal((n, self.shape.shape[0])).astype(np.float32) @ self.shape)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return v, parent

    def _calibrate(self) -> float:
        """The noise scale at which a derived vector's median cosine to its parent is the base
        set's median nearest-neighbour cosine."""
        import numpy as np

        lo, hi = 0.0, 64.0
        for _ in range(30):
            mid = (lo + hi) / 2
            v, parent = self._derive(4000, np.random.default_rng(99), mid)
            if np.median(np.einsum("ij,ij->i", v, self.base[parent])) > self.nn_cos:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    def vectors(self, start: int, n: int):
        """Rows start..n-1: the base first, then derived vectors (seeded by block of 10,000, so a
        size's vectors are the prefix of the next size's)."""
        import numpy as np

        out = [self.base[start:min(n, self.base_n)]]
        first = max(start, self.base_n)
        for b in range((first - self.base_n) // 10000, max(0, (n - self.base_n + 9999) // 10000)):
            lo = self.base_n + b * 10000
            v, _ = self._derive(10000, np.random.default_rng(1000 + b), self.noise)
            out.append(v[max(0, first - lo):max(0, n - lo)])
        return np.concatenate(out)

    def queries(self, n: int):
        return self.query_vecs[:n]

    def describe(self) -> str:
        return (f"real MiniLM vectors of {self.base_n} distinct chunks (corpus text, code and docs), the rest derived "
                f"(mixture with a near neighbour + covariance-shaped noise {self.noise:.3f}; median cosine to the "
                f"parent = the base's median nearest-neighbour cosine {self.nn_cos:.3f}); queries: "
                f"{len(self.prompts)} real prompts and held-out chunks")


class RandomVectors:
    """Random unit 384-d vectors: no neighbourhood structure (every cosine near 0), the worst case."""
    name = "random"

    def vectors(self, start: int, n: int):
        return vectors_for(start, n, 384)

    def queries(self, n: int):
        import numpy as np

        out = [np.random.default_rng(10_000_000 + j).standard_normal(384).astype(np.float32) for j in range(n)]
        return np.stack([v / np.linalg.norm(v) for v in out])

    def describe(self) -> str:
        return "random 384-d unit vectors (no neighbourhood structure: the worst case for HNSW)"


def _embedded(texts: list[str], path: Path):
    """MiniLM vectors of `texts` (the product's embedder, ONNX when set up), cached at `path`;
    resumable: the rows done so far are saved as it goes."""
    import numpy as np

    if path.exists():
        return np.load(path)
    from ctxkit.backends.embedders import MiniLMEmbedder

    part = path.with_suffix(".part.npy")
    done = np.load(part) if part.exists() else np.zeros((0, 384), np.float32)
    emb = MiniLMEmbedder()
    t0 = time.perf_counter()
    for a in range(len(done), len(texts), 256):
        done = np.concatenate([done, emb.embed(texts[a:a + 256])])
        np.save(part, done)
        print(f"   embedded {len(done)}/{len(texts)} texts ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    np.save(path, done)
    part.unlink(missing_ok=True)
    return done


def _copy_binary_vectors(cp, rows) -> None:
    """pgvector's binary form in a binary COPY: faster than formatting a million 384-d vectors."""
    import struct

    cp.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
    for fields in rows:
        out = [struct.pack(">h", len(fields))]
        for f in fields:
            b = f if isinstance(f, bytes) else f.encode()
            out.append(struct.pack(">i", len(b)) + b)
        cp.write(b"".join(out))
    cp.write(struct.pack(">h", -1))


def vectors_for(start: int, n: int, dim: int):
    """Random unit 384-d vectors for chunks start..n-1 (seeded by block: a size's vectors are the
    prefix of the next size's), as float32 rows."""
    import numpy as np

    out = []
    for b in range(start // 10000, (n + 9999) // 10000):
        m = np.random.default_rng(b).standard_normal((10000, dim)).astype(np.float32)
        out.append(m)
    mat = np.concatenate(out)[start - (start // 10000) * 10000:][: n - start]
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    return mat


def load_pg(url: str, data, start: int, n: int, vecs, opts) -> dict:
    """Chunks start..n-1 of `data` into its project (COPY; the GIN index rebuilt after); with a
    vector source `vecs`, its vectors for them too and the HNSW index rebuilt. Seconds per step."""
    import struct

    import psycopg

    took = {}
    with psycopg.connect(url, autocommit=True) as c:
        if start == 0:
            c.execute("DELETE FROM ctx_chunks WHERE project=%s", (data.project,))
        c.execute(f"SET maintenance_work_mem = '{opts.maintenance_work_mem}'")
        c.execute(f"SET max_parallel_maintenance_workers = {opts.build_workers}")
        t = time.perf_counter()
        # the keyword index (whatever the schema made it) dropped for the load and built after it
        gin = c.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename='ctx_chunks' "
                        "AND indexdef LIKE '%USING gin%'").fetchall()
        for name, _ in gin:
            c.execute(f"DROP INDEX {name}")
        with c.cursor().copy("COPY ctx_chunks (project, session, chunk_id, raw, records_hash, dropped_at, tokens, "
                             "gist, body, bytes) FROM STDIN") as cp:
            for i in range(start, n):
                sess, cid, body = data.chunk(i)
                # as a dropped chunk's entry holds it: its records, whose text the body is
                raw = json.dumps({"chunk_id": cid, "session_id": sess, "records": [
                    {"v": 1, "kind": "message", "id": f"m-{cid}", "session": sess, "role": "tool", "content": body}]},
                    ensure_ascii=False)
                cp.write_row((data.project, sess, cid, raw, "h", "2026-01-01T00:00:00Z", 80, body[:60], body,
                              len(raw)))
        took["copy"] = time.perf_counter() - t
        t = time.perf_counter()
        for _, define in gin:
            c.execute(define)
        took["gin"] = time.perf_counter() - t
        if vecs is not None:
            t = time.perf_counter()
            c.execute("DROP INDEX IF EXISTS ctx_vectors_hnsw")
            have = c.execute("SELECT COUNT(*) FROM ctx_vectors WHERE project=%s", (data.project,)).fetchone()[0]
            mat = vecs.vectors(have, n)
            dim = mat.shape[1]
            head = struct.pack(">hh", dim, 0)
            with c.cursor().copy("COPY ctx_vectors (project, session, chunk_id, model, embedding) FROM STDIN "
                                 "(FORMAT BINARY)") as cp:
                _copy_binary_vectors(cp, ((data.project, *data.key(i), "minilm",
                                           head + mat[i - have].astype(">f4").tobytes()) for i in range(have, n)))
            took["vectors"] = time.perf_counter() - t
            t = time.perf_counter()
            c.execute(f"CREATE INDEX ctx_vectors_hnsw ON ctx_vectors USING hnsw (embedding vector_cosine_ops) "
                      f"WITH (m = {opts.hnsw_m}, ef_construction = {opts.ef_construction})")
            took["hnsw"] = time.perf_counter() - t
            took["hnsw_mb"] = c.execute("SELECT pg_relation_size('ctx_vectors_hnsw')").fetchone()[0] / 2**20
        c.execute("ANALYZE ctx_chunks")
        if vecs is not None:
            c.execute("ANALYZE ctx_vectors")
    return took


def load_embedded(cold, data, start: int, n: int) -> float:
    """Chunks start..n-1 into the embedded store's index (the same texts as load_pg)."""
    t = time.perf_counter()
    db = cold.db
    db.execute("BEGIN")
    for i in range(start, n):
        sess, cid, body = data.chunk(i)
        cur = db.execute("INSERT INTO chunks (session, chunk_id, path, dropped_at, tokens, gist, text, hash, bytes) "
                         "VALUES (?,?,?,?,?,?,?,?,?)", (sess, cid, "x", "2026-01-01T00:00:00Z", 80,
                                                       body[:60], body, "h", 100))
        db.execute("INSERT INTO chunks_text(rowid, text) VALUES (?, ?)", (cur.lastrowid, body))
    db.execute("COMMIT")
    return time.perf_counter() - t


def exact_pg(pg, query: str, limit: int) -> tuple[list[tuple], int]:
    """The ranking before tiers: every chunk holding any term ranked (ts_rank); and how many match."""
    from ctxkit.core.bm25 import tokenize

    terms = list(dict.fromkeys(tokenize(query)))
    if not terms:
        return [], 0
    tsq = ("to_tsquery('simple', array_to_string(ARRAY(SELECT quote_literal(t) FROM unnest(%s::text[]) t), ' | '))")
    q = (f"SELECT session, chunk_id, -ts_rank(tsv, {tsq}, 1) AS rank FROM ctx_chunks WHERE project=%s "
         f"AND tsv @@ {tsq} ORDER BY rank LIMIT %s")
    conn = pg.s.connect()
    rows = conn.execute(q, (terms, pg.s.project, terms, limit)).fetchall()
    n = conn.execute(f"SELECT COUNT(*) FROM ctx_chunks WHERE project=%s AND tsv @@ {tsq}",
                     (pg.s.project, terms)).fetchone()[0]
    return rows, n


def exact_embedded(cold, query: str, limit: int) -> tuple[list[tuple], int]:
    from ctxkit.core.bm25 import tokenize

    terms = list(dict.fromkeys(tokenize(query)))
    if not terms:
        return [], 0
    match = " OR ".join('"' + t + '"' for t in terms)
    rows = cold.db.execute("SELECT c.session, c.chunk_id, bm25(chunks_text) AS rank FROM chunks_text JOIN chunks c "
                           "ON c.rowid = chunks_text.rowid WHERE chunks_text MATCH ? ORDER BY rank LIMIT ?",
                           (match, limit)).fetchall()
    n = cold.db.execute("SELECT COUNT(*) FROM chunks_text WHERE chunks_text MATCH ?", (match,)).fetchone()[0]
    return rows, n


def recall_at(got: list, exact: list, k: int = 10) -> float | None:
    """Of the tiered top k, the share the exact ranking also puts in its top k (a tie with the
    exact k-th rank counts: many chunks share a rank)."""
    if not exact:
        return None
    ex = {(r[0], r[1]): r[-1] for r in exact}
    kth = sorted(ex.values())[min(k, len(ex)) - 1]
    top = [(r[0], r[1]) for r in got[:k]]
    return sum(1 for key in top if key in ex and ex[key] <= kth + 1e-9) / min(k, len(ex))


def med(xs) -> float:
    xs = [x for x in xs if x is not None]
    return pct(xs, 50) if xs else float("nan")


def agent_url(url: str, projects: list[str], role: str = "bench_agent", password: str = "bench-agent-pw") -> str:
    """A login role granted `projects` as `ctx store grant-sql` sets one up; its URL."""
    import psycopg

    from ctxkit.store.pg_schema import grant_sql

    with psycopg.connect(url, autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            c.execute(f"CREATE ROLE {role} LOGIN")
        c.execute(f"ALTER ROLE {role} PASSWORD '{password}'")
        for p in projects:
            c.execute("\n".join(x for x in grant_sql(role, p).splitlines() if not x.startswith("CREATE ROLE")))
    return url.replace("ctx@", f"{role}:{password}@", 1)


def scale(url: str, sizes: list[int], queries: int, vecs, vector_sizes: set[int], opts) -> None:
    import numpy as np

    from ctxkit.services.cold import FTS_CANDIDATES, search_cold
    from ctxkit.store.cold import ColdStorage
    from ctxkit.store.pg import PgStore

    sets = [{"worst": WorstCase, "real": RealText}[x]() for x in opts.data.split(",")]
    tmp = tempfile.mkdtemp(prefix="ctx-bench-emb-")
    colds = {d.name: ColdStorage(os.path.join(tmp, d.name, "cold-storage")) for d in sets}
    owner = {d.name: PgStore(url, d.project) for d in sets}
    # searches run as an agent's role would (row-level security on: the setup the docs give a
    # fleet), or as the store's owner with --search-as owner; loading and the exact reference as the owner
    pgs = owner if opts.search_as == "owner" else {d.name: PgStore(agent_url(url, [d.project for d in sets]),
                                                                   d.project) for d in sets}
    print(f"\n== keyword search at scale (p50 of {queries} queries through search_cold's ranking; 'exact': every "
          f"match ranked, as before the tiers)", flush=True)
    print(f"   {'data':5} {'chunks':>8} {'matches':>8} {'pg ms':>7} {'emb ms':>7} {'pg exact':>9} {'emb exact':>9} "
          f"{'rec@10 pg':>9} {'rec@10 emb':>10}  load (s)", flush=True)
    vec_rows = []
    have = dict.fromkeys(colds, 0)
    try:
        for n in sorted(sizes):
            for d in sets:
                vec = vecs is not None and n in vector_sizes and d.name == sets[0].name
                took = load_pg(url, d, have[d.name], n, vecs if vec else None, opts)
                took["embedded"] = load_embedded(colds[d.name], d, have[d.name], n)
                have[d.name] = n
                pg, cold, ref = pgs[d.name], colds[d.name], owner[d.name]
                lat = {k: [] for k in ("pg", "emb", "pg_x", "emb_x")}
                rec = {"pg": [], "emb": []}
                matches = []
                for q in d.queries(queries, n):
                    for key, store in (("pg", pg.cold), ("emb", cold)):
                        t = time.perf_counter()
                        search_cold(None, store, q, 5, None, "keyword")
                        lat[key].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    ex_pg, m = exact_pg(ref.cold, q, FTS_CANDIDATES)
                    lat["pg_x"].append(time.perf_counter() - t)   # includes a count of the matches
                    t = time.perf_counter()
                    ex_emb, _ = exact_embedded(cold, q, FTS_CANDIDATES)
                    lat["emb_x"].append(time.perf_counter() - t)
                    matches.append(m)
                    rec["pg"].append(recall_at(pg.cold.candidates(q, None, FTS_CANDIDATES), ex_pg))
                    rec["emb"].append(recall_at(cold.candidates(q, None, FTS_CANDIDATES), ex_emb))
                ms = {k: med(v) * 1000 for k, v in lat.items()}
                loads = " ".join(f"{k} {x:.0f}" for k, x in took.items())
                print(f"   {d.name:5} {n:8d} {med(matches):8.0f} {ms['pg']:7.2f} {ms['emb']:7.2f} {ms['pg_x']:9.2f} "
                      f"{ms['emb_x']:9.2f} {med(rec['pg']):9.2f} {med(rec['emb']):10.2f}  {loads}", flush=True)
                print(f"         p99: pg {pct(lat['pg'], 99) * 1000:.1f} ms, embedded {pct(lat['emb'], 99) * 1000:.1f} ms;"
                      f" mean recall@10: pg {np.mean([x for x in rec['pg'] if x is not None]):.2f}, embedded "
                      f"{np.mean([x for x in rec['emb'] if x is not None]):.2f}", flush=True)
                if vec:
                    vec_rows += vectors_part(pg, d, vecs, n, queries, took, opts)
    finally:
        for cold in colds.values():
            cold.db.close()
        for pg in [*pgs.values(), *owner.values()]:
            pg.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("   matches: median number of chunks holding any query term (what the exact ranking ranks); rec@10: "
          "median recall of the tiered top 10 against the exact ranking's top 10")
    if vec_rows:
        print(f"\n== semantic candidates: pgvector HNSW top-{FTS_CANDIDATES} through the store's search vs an exact "
              f"scan of the same vectors (numpy, in memory);\n   {vecs.describe()};\n   m={opts.hnsw_m} "
              f"ef_construction={opts.ef_construction}, {opts.build_workers} parallel build workers, "
              f"maintenance_work_mem {opts.maintenance_work_mem}")
        print(f"   {'chunks':>8} {'ef_search':>9} {'hnsw ms':>8} {'p99':>7} {'scan ms':>8} {'rec@10':>7} {'rec@200':>7}"
              f"  build (s), index size")
        for r in vec_rows:
            print(f"   {r['n']:8d} {r['ef']:9d} {r['p50']:8.2f} {r['p99']:7.2f} {r['scan']:8.2f} {r['recall']:7.3f} "
                  f"{r['recall_all']:7.3f}  vectors {r['load']:.0f} hnsw {r['build']:.0f}, {r['mb']:.0f} MB")
        print("   rec@10: mean share of the exact 10 nearest among the index's first 10; rec@200: the same for all "
              "candidates")


def vectors_part(pg, data, vecs, n: int, queries: int, took: dict, opts) -> list[dict]:
    """HNSW candidates through the store's search (at each --ef-search) against an exact scan."""
    import numpy as np

    import ctxkit.store.pg as pgmod
    from ctxkit.services.cold import FTS_CANDIDATES

    mat = vecs.vectors(0, n)
    qvs = vecs.queries(queries)
    exact, scan = [], []
    for qv in qvs:
        t = time.perf_counter()
        sims = mat @ qv
        top = np.argpartition(-sims, FTS_CANDIDATES)[:FTS_CANDIDATES]
        top = top[np.argsort(-sims[top])]
        scan.append(time.perf_counter() - t)
        exact.append([data.key(int(i))[1] for i in top])
    del mat
    out = []
    default_ef = pgmod.EF_SEARCH
    for ef in [int(x) for x in opts.ef_search.split(",")] if opts.ef_search else [default_ef]:
        pgmod.EF_SEARCH = ef
        for qv in qvs[:3]:   # warm the index's pages: the first queries read it from disk
            pg.cold.vector_candidates("minilm", qv, None, FTS_CANDIDATES)
        lat, recall, recall_all = [], [], []
        for qv, ex in zip(qvs, exact):
            t = time.perf_counter()
            near = pg.cold.vector_candidates("minilm", qv, None, FTS_CANDIDATES)
            lat.append(time.perf_counter() - t)
            got = [c for _, c, *_ in near]
            recall.append(len(set(ex[:10]) & set(got[:10])) / 10)
            recall_all.append(len(set(ex) & set(got)) / len(ex))
        out.append({"n": n, "ef": max(ef, FTS_CANDIDATES), "p50": pct(lat, 50) * 1000, "p99": pct(lat, 99) * 1000,
                    "scan": pct(scan, 50) * 1000, "recall": float(np.mean(recall)),
                    "recall_all": float(np.mean(recall_all)), "load": took.get("vectors", 0),
                    "build": took.get("hnsw", 0), "mb": took.get("hnsw_mb", 0)})
    pgmod.EF_SEARCH = default_ef
    return out


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
    ap.add_argument("--build-workers", type=int, default=2, help="parallel maintenance workers (GIN, HNSW)")
    ap.add_argument("--hnsw-m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=64)
    ap.add_argument("--ef-search", default=None, help="hnsw.ef_search values to measure, e.g. 200,400 (default: the "
                    "store's; never below the 200 candidates asked)")
    ap.add_argument("--vectors", default="real", choices=("real", "random"), help="real: MiniLM vectors of real "
                    "chunks, extended by derived ones (RealVectors); random: random unit vectors")
    ap.add_argument("--vector-base", type=int, default=20000, help="real vectors: distinct chunks embedded")
    ap.add_argument("--data", default="worst,real", help="data sets: worst (a tiny vocabulary: every term matches "
                    "a large share of chunks), real (the corpus transcripts' text, identifiers made distinct per "
                    "copy); the HNSW part runs on the first")
    ap.add_argument("--shared-buffers", default="2GB", help="the server's shared_buffers (PostgreSQL's default, "
                    "128MB, is meant to be raised: a search reads up to 2,000 rows a tier from it)")
    ap.add_argument("--search-as", default="agent", choices=("agent", "owner"), help="keyword searches as an agent's "
                    "login role under row-level security (the fleet setup), or as the store's owner")
    ap.add_argument("--scan", type=int, default=None, help="keyword tiers: matches ranked per tier (default: the store's)")
    args = ap.parse_args()
    import ctxkit.core.keyword_tiers as kt

    kt.SCAN = args.scan or kt.SCAN
    print(f"keyword tiers: at most {kt.SCAN} matches ranked per tier")
    from pgcluster import Cluster, usable_bin_dirs

    bins = usable_bin_dirs()
    if not bins:
        print("no PostgreSQL binaries: install postgresql or pgserver", file=sys.stderr)
        sys.exit(1)
    c = Cluster(bins[0][1])
    c.start({"shared_buffers": args.shared_buffers})
    try:
        url = c.url(c.new_db())
        from ctxkit.store.pg import PgStore

        pg = PgStore(url, "bench")
        pg.init()
        has_vec = pg.has_vectors()
        print(f"server: {bins[0][0]} PostgreSQL {pg.connect().info.parameter_status('server_version')}, "
              f"pgvector: {'yes' if has_vec else 'no'}, shared_buffers {args.shared_buffers}; cpus: {os.cpu_count()}; "
              f"searches as {'the owner' if args.search_as == 'owner' else 'an agent role (row-level security)'}")
        pg.close()
        if not args.skip_fleet:
            fleet(url, args.agents, args.ops)
        sizes = [int(x) for x in args.sizes.split(",") if x]
        vsizes = set(sizes) if args.vector_sizes is None else {int(x) for x in args.vector_sizes.split(",") if x}
        vecs = None
        if has_vec and vsizes & set(sizes):
            vecs = RealVectors(args.vector_base) if args.vectors == "real" else RandomVectors()
        scale(url, sizes, args.queries, vecs, vsizes, args)
    finally:
        c.stop()


if __name__ == "__main__":
    main()
