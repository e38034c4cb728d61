"""Faults say their cause: a full disk during `ctx drop` is one line naming the file ("database or
disk is full", never "cannot rollback"), a failed tiktoken seed leaves no temp file, a read-only
home (a snapshot, a backup) can be inspected (`cold-storage list`, `recover` to stdout, `prompt
build`, `status`), no lock file is left per chunk, and provider usage that is not a count is
ignored with a note. The full disk and the read-only home are real (a small tmpfs, a read-only
bind mount, in a private mount namespace: `unshare -rm`); where that cannot be made, the test is
skipped and the failure-injection tests below still run."""
import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from conftest import ROOT, corpus, run

TRANSCRIPT = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")
ENV = {"CTX_EMBEDDER": "keyword"}
PY = sys.executable


def _scored() -> str:
    imported = run("import", TRANSCRIPT)
    assert imported.code == 0, imported.stderr
    scored = run("score", "-", "--query", "create the beads", env=ENV, input=imported.stdout)
    assert scored.code == 0, scored.stderr
    return scored.stdout


def _can_mount() -> bool:
    if not shutil.which("unshare"):
        return False
    p = subprocess.run(["unshare", "-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d"],
                       capture_output=True)
    return p.returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(), reason="no private mount namespace here (unshare -rm)")


def _in_namespace(script: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", "-rm", "sh", "-ec", script], capture_output=True, text=True,
                          env={**os.environ, **env, "PYTHONPATH": str(ROOT)})


def _locks(folder) -> list:
    return [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".lock")]


def _tmps(folder) -> list:
    return [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".tmp")]


@pytest.mark.embedded_only
@needs_mount
def test_a_full_disk_during_drop_is_one_line_naming_the_file_and_leaves_no_temp_file(tmp_path):
    scored = tmp_path / "scored.jsonl"
    scored.write_text(_scored())
    mnt = tmp_path / "m"
    mnt.mkdir()
    out = tmp_path / "out"
    script = (f"mount -t tmpfs -o size=160k tmpfs {mnt}; export CTX_HOME={mnt}/home TIKTOKEN_CACHE_DIR={mnt}/tk; "
              f"set +e; {PY} -m ctxkit drop --cutoff 0.9 --keep 0.95 --min-keep 1 {scored} > {out}; echo rc=$?; "
              f"find {mnt} -name '*.tmp' -o -name '*.lock' | sed 's/^/left: /'")
    p = _in_namespace(script, {**ENV, "CTX_WORKSPACE": str(tmp_path / "ws")})
    assert "rc=1" in p.stdout, (p.stdout, p.stderr)
    assert "left: " not in p.stdout, p.stdout
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("Error")]
    assert len(errors) == 1, p.stderr
    assert str(mnt) in errors[0] and ("database or disk is full" in errors[0] or "No space left" in errors[0])
    assert "internal error" not in p.stderr and "cannot rollback" not in p.stderr
    assert out.read_text() == ""   # no half output


@pytest.mark.embedded_only
@needs_mount
def test_a_read_only_home_can_be_inspected(tmp_path, ctx_home):
    scored = _scored()
    kept = run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV)
    assert kept.code == 0, kept.stderr
    stub = next(r for r in kept.records() if r["kind"] == "stub")
    chunk = stub["meta"]["chunk_id"]
    (tmp_path / "kept.jsonl").write_text(kept.stdout)
    before = sorted(str(p) for p in ctx_home.rglob("*"))
    cmds = [["cold-storage", "list"], ["recover", "--chunk-id", chunk], ["prompt", "build"],
            ["status", str(tmp_path / "kept.jsonl")], ["recover", "--query", "beads"]]
    script = f"mount --bind -o ro {ctx_home} {ctx_home}; set +e; " + "; ".join(
        f"{PY} -m ctxkit {' '.join(c)} > {tmp_path}/out{i} 2> {tmp_path}/err{i}; echo rc{i}=$?"
        for i, c in enumerate(cmds))
    p = _in_namespace(script, {**ENV, "CTX_HOME": str(ctx_home), "CTX_WORKSPACE": str(ctx_home / "workspace")})
    for i, c in enumerate(cmds):
        err = (tmp_path / f"err{i}").read_text()
        assert f"rc{i}=0" in p.stdout, (c, err)
        assert "Read-only file system" not in err or "not logged" in err, (c, err)
        assert (tmp_path / f"out{i}").read_text().strip(), c
    assert chunk in (tmp_path / "out0").read_text()
    assert sorted(str(p) for p in ctx_home.rglob("*")) == before   # nothing made, not even a lock file


@pytest.mark.embedded_only   # the embedded store's SQLite index
def test_an_index_write_that_fails_keeps_its_cause(ctx_home, monkeypatch):
    """Failure injection at the write: SQLite has rolled back on its own (a full disk does), so
    the ROLLBACK after it would say "no transaction is active" and hide why."""
    from ctxkit.store import cold

    real = cold.ColdStorage._insert

    def full(self, db, *a, **kw):
        real(self, db, *a, **kw)
        db.execute("ROLLBACK")   # what SQLite does itself on SQLITE_FULL
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cold.ColdStorage, "_insert", full)
    res = run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=_scored(), env=ENV)
    assert res.code == 1 and res.stdout == ""
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("Error")]
    assert len(err) == 1 and "index.sqlite: database or disk is full" in err[0], res.stderr
    assert "cannot rollback" not in res.stderr and "internal error" not in res.stderr


def test_a_failed_tiktoken_seed_leaves_no_temp_file_and_names_the_file(tmp_path, monkeypatch):
    from ctxkit.backends import tokenizers

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tokenizers.os, "fsync", no_space)
    with pytest.raises(OSError) as e:
        tokenizers.seed_tiktoken_cache("cl100k_base", str(tmp_path / "tk"))
    assert e.value.errno == errno.ENOSPC and str(tmp_path / "tk") in str(e.value.filename)
    assert not _tmps(tmp_path)


def test_an_atomic_write_on_a_full_disk_names_the_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    from ctxkit.store import atomic

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", no_space)
    with pytest.raises(OSError) as e:
        atomic.atomic_write(str(tmp_path / "f.json"), "{}")
    assert e.value.filename == str(tmp_path / "f.json") and not _tmps(tmp_path)


@pytest.mark.embedded_only
def test_no_lock_file_is_left_after_drops_recoveries_and_hooks(tmp_path, ctx_home):
    scored = _scored()
    kept = run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV)
    assert kept.code == 0, kept.stderr
    stubs = [r for r in kept.records() if r["kind"] == "stub"]
    assert len(stubs) > 3
    assert run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV).code == 0
    for s in stubs[:3]:
        assert run("recover", "--chunk-id", s["meta"]["chunk_id"]).code == 0
    (tmp_path / "p").mkdir()
    payload = {"session_id": "locks-1", "transcript_path": corpus("claude-code_spotter_491e126e_session.jsonl"),
               "cwd": str(tmp_path / "p"), "hook_event_name": "Stop"}
    assert run("hook", "claude-code", "Stop", input=json.dumps(payload)).code == 0
    assert _locks(ctx_home) == []


def test_locks_still_exclude_each_other_when_their_files_go(tmp_path):
    """Two writers in separate processes under one lock: each increments a counter file read and
    written back, 200 times; none is lost (the lock file is removed on each release)."""
    counter = tmp_path / "n"
    counter.write_text("0")
    code = ("import sys\nfrom ctxkit.store.atomic import locked\n"
            "for _ in range(200):\n"
            "    with locked(sys.argv[1]):\n"
            "        n = int(open(sys.argv[1]).read())\n"
            "        open(sys.argv[1], 'w').write(str(n + 1))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([PY, "-c", code, str(counter)], env=env) for _ in range(3)]
    assert all(p.wait() == 0 for p in procs)
    assert counter.read_text() == "600" and _locks(tmp_path) == []


def test_provider_usage_that_is_not_a_count_is_ignored_with_a_note(tmp_path):
    lines = open(corpus("claude-code_spotter_491e126e_session.jsonl")).read().splitlines()
    out = []
    for ln in lines:
        o = json.loads(ln)
        msg = o.get("message")
        if o.get("type") == "assistant" and isinstance(msg, dict) and "usage" in msg:
            msg["usage"] = "lots" if len(out) % 2 else {"input_tokens": "12", "output_tokens": [1],
                                                        "cache_read_input_tokens": 5}
        out.append(json.dumps(o))
    t = tmp_path / "t.jsonl"
    t.write_text("\n".join(out) + "\n")
    for args in (["status", t], ["count", t], ["import", t]):
        res = run(*args)
        assert res.code == 0 and "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
        assert "ignored provider usage that is not a count" in res.stderr
    ctx_line = json.dumps({"v": 1, "kind": "message", "id": "m1", "role": "assistant", "content": "hi",
                           "usage": {"input_tokens": "x", "output_tokens": 3}})
    res = run("status", "-", input=ctx_line + "\n")
    assert res.code == 0 and "usage.input_tokens" in res.stderr


def test_splicing_as_it_streams_gives_what_splicing_the_whole_list_gives():
    """`recover --into` streams FILE (a huge one is never held): the streamed splice of several
    chunks, stubs and shrunk outputs alike, equals the list splice applied chunk by chunk."""
    from ctxkit.core.splice import splice, splice_stream, stubs
    from ctxkit.store.backend import open_store
    from ctxkit.store.home import Home

    scored = _scored()
    kept = run("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored, env=ENV)
    assert kept.code == 0, kept.stderr
    recs = kept.records()
    found = stubs(recs)
    assert len(found) >= 3
    store = open_store(Home(os.environ["CTX_HOME"])).cold
    chunks = []
    for cid, sess in found:
        hit = store.find(cid, sess)
        chunks.append((cid, sess, store.load(hit[0]["path"])["records"]))
    want = recs
    for cid, sess, body in chunks:
        want, done = splice(want, cid, sess, body)
        assert done
    assert list(splice_stream(iter(recs), chunks)) == want
    kinds = {r.get("kind") for r in recs if any(r.get("group") == c[0] for c in chunks)} | \
        {"shrunk" for r in recs if isinstance((r.get("meta") or {}).get("shrunk"), dict)}
    assert "stub" in kinds


def test_dedupe_names_a_file_it_cannot_read_whole(tmp_path, ctx_home):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"a line\n\xff not text\n")
    res = run("dedupe", bad, "--embedder", "keyword")
    assert res.code == 1 and f"{bad}:2: invalid UTF-8" in res.stderr and "internal error" not in res.stderr
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("max_record_mb: 0.001\n")
    big = tmp_path / "big.md"
    big.write_text("a paragraph of words\n" * 200)
    res = run("dedupe", big, "--embedder", "keyword")
    assert res.code == 1 and str(big) in res.stderr and "max_record_mb" in res.stderr


def test_a_spool_on_a_full_temp_folder_names_it():
    import tempfile

    from ctxkit.services.spool import OutputSpool

    class Full:   # failure injection at the write: the temp folder is full
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    spool = OutputSpool()
    spool._f = Full()
    with pytest.raises(OSError) as e:
        spool.write("x")
    assert e.value.errno == errno.ENOSPC and tempfile.gettempdir() in e.value.filename
