"""A lone surrogate (an emoji cut in half: JavaScript's JSON.stringify writes `\\ud83d`) is kept
exactly: it goes through every stage, into cold storage and back as the same `\\udXXX` escape,
never U+FFFD and never a crash. Only sinks that take Unicode text alone (the SQLite index, a
model's tokenizer, PostgreSQL's text columns for what ctx derives) see U+FFFD in its place.
Runs on both stores: on PostgreSQL the chunk's stored text holds the same escape as the file."""
import json
import os

from conftest import TEST_STORE, run


HALF = "\\ud83d"   # as it stands in the JSON line
LOW = "\\udc00"


def _session() -> str:
    lines = []
    for i in range(8):
        role = "user" if i % 2 == 0 else "assistant"
        rec = {"v": 1, "kind": "message", "id": f"m{i}", "session": "sur", "role": role,
               "ts": f"2026-01-01T00:{i:02d}:00Z", "content": f"turn {i} about the deploy script: " + "the build log says nothing new here " * 30}
        line = json.dumps(rec)
        if i == 3:
            line = line.replace("about the deploy", f"about the half {HALF} emoji and a low {LOW} one, the deploy")
        lines.append(line)
    return "\n".join(lines) + "\n"


def _stored_chunks(ctx_home) -> list[str]:
    """Every chunk's stored text: the chunk files (embedded), the rows' `raw` (PostgreSQL)."""
    if TEST_STORE == "pg":
        from ctxkit.store.backend import close_store, open_store
        from ctxkit.store.home import Home

        h = Home(str(ctx_home))
        try:
            return [raw for _, _, raw in open_store(h).cold.iter_raw()]
        finally:
            close_store(h)
    return [open(os.path.join(d, f), encoding="utf-8").read() for d, _, fs in os.walk(ctx_home / "cold-storage")
            for f in fs if f.endswith(".jsonl")]


def test_import_keeps_the_escape_exactly():
    res = run("import", "-", input=_session())
    assert res.code == 0, res.stderr
    assert HALF in res.stdout and LOW in res.stdout and "\ufffd" not in res.stdout
    res.stdout.encode("utf-8")  # the output is valid UTF-8: the surrogate travels as its escape
    rec = res.records()[3]
    assert "\ud83d" in rec["content"] and "\udc00" in rec["content"]


def test_drop_then_recover_is_byte_exact_with_a_lone_surrogate(ctx_home, tmp_path):
    data = run("import", "-", input=_session()).stdout
    scored = run("score", "-", "--embedder", "keyword", "--query", "unrelated query", input=data)
    assert scored.code == 0, scored.stderr
    kept = run("drop", "--cutoff", "0.99", "--keep", "1.0", "--min-keep", "1", input=scored.stdout)
    assert kept.code == 0, kept.stderr
    group = next(r["group"] for r in scored.records() if r.get("id") == "m3")
    cid = next(r["meta"]["chunk_id"] for r in kept.records() if r["kind"] == "stub" and r["group"] == group)
    assert any(HALF in t for t in _stored_chunks(ctx_home))  # valid UTF-8 where it is kept, escape kept
    back = run("recover", "--chunk-id", cid, "--session", "sur")
    assert back.code == 0, back.stderr
    original = [ln for ln in scored.stdout.splitlines() if '"id":"m3"' in ln]
    assert [ln for ln in back.stdout.splitlines() if '"id":"m3"' in ln] == original  # byte for byte
    f = tmp_path / "kept.jsonl"
    f.write_text(kept.stdout)
    assert run("recover", "--chunk-id", cid, "--session", "sur", "--into", f).code == 0
    assert [ln for ln in f.read_text().splitlines() if '"id":"m3"' in ln] == original
    found = run("cold-storage", "search", "emoji", "--json")  # the index holds U+FFFD in its place, no crash
    assert found.code == 0, found.stderr


def test_every_stage_takes_a_lone_surrogate(ctx_home, tmp_path):
    data = _session()
    for args in (("count", "--per-record"), ("truncate", "--budget", "2000"), ("compact", "--force", "--budget", "40"),
                 ("export", "--to", "openai"), ("export", "--to", "anthropic"), ("status", "--json"),
                 ("entities",), ("observe",)):
        res = run(*args, "-", input=data)
        assert res.code == 0, (args, res.stderr)
        assert "internal error" not in res.stderr
        res.stdout.encode("utf-8")
        if args[0] in ("count", "truncate", "export"):
            assert HALF in res.stdout, args
