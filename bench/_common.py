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
CORPUS = Path(os.environ["CTX_BENCH_CORPUS"]) if os.environ.get("CTX_BENCH_CORPUS") else \
    ROOT.parent / "shared" / "corpus"
PY = sys.executable
ENV = dict(os.environ, CTX_HOME=str(DATA / "home"), PYTHONPATH=str(ROOT))
# Another checkout measured beside this one in the same run (run_all.py --against DIR sets it):
# its own ctxkit, the same interpreter, the same inputs. Its commands run with their working
# directory in that checkout (`python -m` imports from the working directory first).
AGAINST = Path(os.environ["CTX_BENCH_AGAINST"]).resolve() if os.environ.get("CTX_BENCH_AGAINST") else None


def checkouts() -> list[tuple[str, Path]]:
    """("this", ROOT), and ("against", DIR) when another checkout is measured in the same run."""
    return [("this", ROOT)] + ([("against", AGAINST)] if AGAINST else [])


def env_for(root: Path, **extra) -> dict:
    """The benchmarks' environment for the ctxkit of `root`."""
    return dict(ENV, PYTHONPATH=str(root), **{k: str(v) for k, v in extra.items()})


def skipped(what: str, why: str) -> None:
    """One line on stderr for an input a benchmark leaves out: the run goes on."""
    print(f"bench: skipped {what}: {why}", file=sys.stderr, flush=True)


def pick(normal, smoke):
    """`normal`, or `smoke` in a smoke run."""
    return smoke if SMOKE else normal


_SAID: list = []


def corpus_files(smoke_n: int = 1) -> list[Path]:
    """The corpus sessions (the bundled example if shared/ is absent); the smallest in a smoke run."""
    files = sorted(p for p in CORPUS.glob("*") if p.suffix in (".jsonl", ".json", ".traj")) \
        if CORPUS.exists() else sorted((ROOT / "examples").glob("*.jsonl"))
    if not CORPUS.exists() and not SMOKE and not _SAID:
        _SAID.append(1)
        print(f"bench: no corpus at {CORPUS} (set CTX_BENCH_CORPUS): the bundled examples/ are measured instead",
              file=sys.stderr)
    if SMOKE:
        files = sorted(files, key=lambda p: p.stat().st_size)[:smoke_n]
    return files


def corpus_records() -> list[dict]:
    """Every corpus session imported to ctx records (the bundled example if shared/ is absent)."""
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source

    from ctxkit.errors import CtxError

    out = []
    for f in corpus_files(smoke_n=3):
        try:
            recs = list(open_records(Source(str(f))))  # whole or not at all
        except (CtxError, OSError, ValueError) as e:  # a format ctx does not read (yet): left out, said so
            skipped(f.name, f"ctx cannot read it ({type(e).__name__}: {str(e)[:200]})")
            continue
        out.extend(recs)
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

    from ctxkit.errors import CtxError

    sources = []
    for f in files:
        try:
            sources.append(list(annotate(get_tokenizer("cl100k_base"), open_records(Source(str(f))))))
        except (CtxError, OSError, ValueError) as e:
            skipped(f.name, f"ctx cannot read it ({type(e).__name__}: {str(e)[:200]})")
    if not sources:
        return build_session(target_tokens=target_tokens, name=name)
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


def timed(cmd: list[str], stdin=None, repeat: int = 1, root: Path = ROOT, env: dict | None = None) -> float:
    """Best wall time of `repeat` runs, in seconds, run in `root` with its ctxkit."""
    best = float("inf")
    for _ in range(pick(repeat, 1)):
        best = min(best, run_once(cmd, stdin, root, env))
    return best


def run_once(cmd: list[str], stdin=None, root: Path = ROOT, env: dict | None = None) -> float:
    """Wall seconds of one run of `cmd` in `root` with its ctxkit (a failure raises, with its stderr)."""
    t = time.perf_counter()
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL if stdin is None else open(stdin), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env or env_for(root), cwd=str(root))
    took = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} (in {root}) exited {p.returncode}: "
                           f"{p.stderr.decode(errors='replace')[-400:]}")
    return took


def alternate(cases: dict, repeat: int) -> dict:
    """Best result of each case's callable (returning seconds), the cases run in turn `repeat`
    times (A B C A B C …): a load that comes and goes on a shared machine hits every case alike."""
    best = {k: float("inf") for k in cases}
    for _ in range(pick(repeat, 1)):
        for k, fn in cases.items():
            best[k] = min(best[k], fn())
    return best


def loadavg() -> float:
    return round(os.getloadavg()[0], 2)


def peak_rss_mb(cmd: list[str]) -> float:
    """Peak RSS of one command, from GNU time (fork accounting in this process would count the
    benchmark's own memory, e.g. a loaded model, against the child)."""
    import shutil

    gtime = shutil.which("time") or "/usr/bin/time"
    p = subprocess.run([gtime, "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=ENV, cwd=str(ROOT))
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr[-300:]}")
    return int(p.stderr.strip().splitlines()[-1]) / 1024
