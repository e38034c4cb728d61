"""Ids carrying a NUL (they come from data: a session or group id in a JSONL stream) are kept
exactly by both stores: dropped, listed, recovered byte for byte. On PostgreSQL, whose text
cannot hold a NUL, the key columns carry an escaped form and ctx gives the exact id back
(store/pg.py `_key`); a lone surrogate in an id is recovered exactly too (both stores list it
with U+FFFD, as the embedded index does). A command line cannot carry a NUL (`--chunk-id`
refuses it in one line on both stores): such a chunk comes back by a query."""
import json

from conftest import run

SID = "s\u0000x"
FILLER = " the build log says nothing new about the deploy here" * 20


def _stream(session=SID, group="g{i}") -> str:
    out = []
    for i in range(6):
        rec = {"v": 1, "kind": "message", "id": f"m{i}", "session": session, "group": group.format(i=i),
               "role": "user" if i % 2 == 0 else "assistant", "ts": f"2026-01-01T00:0{i}:00Z",
               "content": f"turn {i} about topic{i}{FILLER}"}
        out.append(json.dumps(rec))
    return "\n".join(out) + "\n"


def _drop(data):
    scored = run("score", "-", "--embedder", "keyword", "--query", "unrelated query", input=data)
    assert scored.code == 0, scored.stderr
    kept = run("drop", "--cutoff", "0.99", "--keep", "1.0", "--min-keep", "1", input=scored.stdout)
    assert kept.code == 0, kept.stderr
    by_group: dict = {}
    for line in scored.stdout.splitlines():
        by_group.setdefault(json.loads(line).get("group"), []).append(line)
    return scored, kept, [r for r in kept.records() if r["kind"] == "stub"], by_group


def test_a_nul_in_a_session_id_drops_lists_and_recovers_exactly(tmp_path):
    scored, kept, stubs, by_group = _drop(_stream())
    assert stubs and all(s["session"] == SID for s in stubs)
    listed = run("cold-storage", "list", "--json")
    assert listed.code == 0, listed.stderr
    assert {r["session_id"] for r in listed.records()} == {SID}
    assert [r["session_id"] for r in run("session", "list", "--json").records()] == [SID]
    assert {e["session_id"] for e in run("drops", "--json").records()} == {SID}
    f = tmp_path / "kept.jsonl"
    f.write_text(kept.stdout)
    for s in stubs:
        back = run("recover", "--chunk-id", s["meta"]["chunk_id"])
        assert back.code == 0, back.stderr
        assert back.stdout.splitlines() == by_group[s["group"]]  # byte for byte
        assert run("recover", "--chunk-id", s["meta"]["chunk_id"], "--into", f).code == 0
    spliced = f.read_text().splitlines()
    assert all(ln in spliced for s in stubs for ln in by_group[s["group"]])  # every stub replaced, exactly
    assert not any(json.loads(ln)["kind"] == "stub" for ln in spliced)
    found = run("cold-storage", "search", "deploy", "--json", "--embedder", "keyword")
    assert found.code == 0, found.stderr
    assert {h["session_id"] for h in found.records()} == {SID}


def test_a_nul_in_a_chunk_id_is_kept_and_comes_back_by_query():
    _, _, stubs, by_group = _drop(_stream(group="g\u0000{i}"))
    assert stubs and all("\u0000" in s["meta"]["chunk_id"] for s in stubs)
    listed = {r["chunk_id"] for r in run("cold-storage", "list", "--json").records()}
    assert listed == {s["meta"]["chunk_id"] for s in stubs}
    bad = run("recover", "--chunk-id", stubs[0]["meta"]["chunk_id"])
    assert bad.code == 2 and len(bad.stderr.strip().splitlines()) == 1 and "no NUL" in bad.stderr
    back = run("recover", "--query", "topic1", "--embedder", "keyword")
    assert back.code == 0, back.stderr
    assert back.stdout.splitlines() == by_group["g\u00001"]


def test_a_lone_surrogate_in_ids_is_recovered_exactly():
    _, _, stubs, by_group = _drop(_stream(session="s\ud83dx", group="g\udc00{i}"))
    assert stubs
    for s in stubs[:2]:
        back = run("recover", "--query", f"topic{s['group'][-1]}", "--embedder", "keyword")
        assert back.code == 0, back.stderr
        assert back.stdout.splitlines() == by_group[s["group"]]
