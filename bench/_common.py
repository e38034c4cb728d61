"""Shared helpers for the benchmarks: build big sessions from the corpus, time commands."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# CTX_BENCH_SMOKE=1: every benchmark runs once on tiny inputs (sizes / 100, one corpus file, one
# repeat, no model summarizer), in its own data directory: the test suite runs them so a benchmark
# never rots unnoticed. Its numbers mean nothing.
SMOKE = os.environ.get("CTX_BENCH_SMOKE", "") not in ("", "0")
DATA = Path(os.environ["CTX_BENCH_DATA"]) if os.environ.get("CTX_BENCH_DATA") else \
    ROOT / "bench" / ("data/smoke" if SMOKE else "data")
CORPUS = ROOT.parent / "shared" / "corpus"
PY = sys.executable
ENV = dict(os.environ, CTX_HOME=str(DATA / "home"), PYTHONPATH=str(ROOT))


def pick(normal, smoke):
    """`normal`, or `smoke` in a smoke run."""
    return smoke if SMOKE else normal


def corpus_files(smoke_n: int = 1) -> list[Path]:
    """The corpus sessions (the bundled example if shared/ is absent); the smallest in a smoke run."""
    files = sorted(p for p in CORPUS.glob("*") if p.suffix in (".jsonl", ".json", ".traj")) \
        if CORPUS.exists() else sorted((ROOT / "examples").glob("*.jsonl"))
    if SMOKE:
        files = sorted(files, key=lambda p: p.stat().st_size)[:smoke_n]
    return files


def corpus_records() -> list[dict]:
    """Every corpus session imported to ctx records (the bundled example if shared/ is absent)."""
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source

    out = []
    for f in corpus_files(smoke_n=3):
        out.extend(open_records(Source(str(f))))
    return out


def build_session(target_tokens: int | None = None, target_bytes: int | None = None, name: str = "s") -> Path:
    """Repeat corpus sessions under fresh ids until the target size; cached in bench/data."""
    DATA.mkdir(parents=True, exist_ok=True)
    if SMOKE:
        target_tokens = target_tokens and max(2000, target_tokens // 100)
        target_bytes = target_bytes and max(20_000, target_bytes // 100)
    key = f"{name}-{target_tokens or 0}-{target_bytes or 0}.jsonl"
    path = DATA / key
    if path.exists():
        return path
    from ctxkit.backends.tokenizers import annotate, get_tokenizer

    base = list(annotate(get_tokenizer("cl100k_base"), [dict(r) for r in corpus_records()]))
    tokens = size = 0
    n = 0
    with open(path, "w") as f:
        while True:
            sid = f"bench-{uuid.uuid4().hex[:8]}"
            n += 1
            for r in base:
                if r.get("kind") == "event":
                    continue  # bookkeeping has no group and costs no tokens
                r2 = dict(r, session=sid, id=f"{r.get('id')}-{n}", group=f"{r['group']}-{n}")
                line = json.dumps(r2, ensure_ascii=False) + "\n"
                f.write(line)
                tokens += r.get("tokens") or 0
                size += len(line.encode())
                if (target_tokens and tokens >= target_tokens) or (target_bytes and size >= target_bytes):
                    return path


def build_transcript_session(target_tokens: int, name: str = "cc") -> Path:
    """One long session shaped as real work: the corpus's Claude Code session transcripts
    (the main sessions, not their subagents), imported as `ctx import` writes them (no token
    counts) and repeated in turn under ONE session id with fresh record ids until the target
    size (compaction's episodes and focus see one long story, not many short sessions);
    cached in bench/data."""
    DATA.mkdir(parents=True, exist_ok=True)
    files = [f for f in corpus_files(smoke_n=1) if f.name.startswith("claude-code") and f.name.endswith("_session.jsonl")]
    if not files:  # no Claude Code session here (a smoke run reads the smallest corpus file only)
        return build_session(target_tokens=target_tokens, name=name)
    if SMOKE:
        target_tokens = max(2000, target_tokens // 100)
    path = DATA / f"{name}-{target_tokens}.jsonl"
    if path.exists():
        return path
    from ctxkit.backends.tokenizers import annotate, get_tokenizer
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source

    sources = [list(annotate(get_tokenizer("cl100k_base"), open_records(Source(str(f))))) for f in files]
    sid = next(r["session"] for r in sources[0] if r.get("session"))
    tokens, n = 0, 0
    with open(path, "w") as f:
        while True:
            for recs in sources:
                n += 1
                for r in recs:  # as `ctx import` writes them: no token counts (compaction counts them)
                    r2 = {k: v for k, v in r.items() if k not in ("tokens", "tokenizer")}
                    r2.update(session=sid, id=f"{r.get('id')}-{n}")
                    if r.get("group"):
                        r2["group"] = f"{r['group']}-{n}"
                    f.write(json.dumps(r2, ensure_ascii=False) + "\n")
                    tokens += r.get("tokens") or 0
                    if tokens >= target_tokens:
                        return path


def timed(cmd: list[str], stdin=None, repeat: int = 1) -> float:
    """Best wall time of `repeat` runs, in seconds."""
    best = float("inf")
    for _ in range(pick(repeat, 1)):
        t = time.perf_counter()
        subprocess.run(cmd, stdin=stdin if stdin is None else open(stdin), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=ENV, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def peak_rss_mb(cmd: list[str]) -> float:
    """Peak RSS of one command, from GNU time (fork accounting in this process would count the
    benchmark's own memory, e.g. a loaded model, against the child)."""
    import shutil

    gtime = shutil.which("time") or "/usr/bin/time"
    p = subprocess.run([gtime, "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=ENV)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr[-300:]}")
    return int(p.stderr.strip().splitlines()[-1]) / 1024
