"""Damaged rows in the shared store are what damaged files are on the embedded store
(tests/test_state_files.py): never an internal error. A chunk whose stored text is not a chunk
(bad JSON, NaN, nesting 100k deep, a 5,000-digit number), a log line that is not an event, a
session state that is not CONTEXT.md: one clear line naming the row's locator, exit 1, nothing
printed; a session index entry of the wrong shape or a maintain state that is not an object is
read as what it can be (as the embedded store reads its derived files)."""
import json

import psycopg
import pytest

from conftest import needs_pg, run

pytestmark = needs_pg
OWN_PG_SERVER = True

DAMAGE = {
    "bad json": '{"a": ',
    "nan": '{"a": NaN}',
    "deep": "[" * 100_000 + "]" * 100_000,
    "huge number": '{"a": ' + "9" * 5000 + "}",
    "not an object": "[1, 2]",
    "no records": '{"session_id": "s", "chunk_id": "c-0001"}',
}


def _one_line(res, where):
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr[-500:]
    assert res.code == 1, (res.code, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and where in lines[0], res.stderr
    assert res.stdout == ""


def _drop():
    recs = "\n".join(json.dumps({"v": 1, "kind": "message", "id": f"m{i}", "session": "s", "role": "assistant",
                                 "content": "the build log says nothing new here " * 30}) for i in range(6))
    scored = run("score", "-", "--embedder", "keyword", "--query", "unrelated", input=recs + "\n").stdout
    kept = run("drop", "--cutoff", "0.99", "--keep", "1.0", "--min-keep", "1", input=scored)
    assert kept.code == 0, kept.stderr
    return next(r for r in kept.records() if r["kind"] == "stub")


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_chunk_row_is_named(pg_url, damage):
    stub = _drop()
    cid = stub["meta"]["chunk_id"]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("UPDATE ctx_chunks SET raw=%s WHERE session='s' AND chunk_id=%s", (DAMAGE[damage], cid))
    for cmd in (("cold-storage", "show", cid, "--session", "s"), ("recover", "--chunk-id", cid, "--session", "s")):
        _one_line(run(*cmd), stub["meta"]["cold_storage_path"])


@pytest.mark.parametrize("damage", ["bad json", "nan", "deep", "huge number", "not an object"])
def test_a_damaged_log_row_is_named(pg_url, damage):
    _drop()
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("INSERT INTO ctx_logs (project, name, line) VALUES ('default', 'drops', %s)", (DAMAGE[damage],))
    for cmd in (("drops",), ("stats", "drops")):
        _one_line(run(*cmd), "log drops")


def test_a_damaged_session_state_row_is_named(pg_url):
    from ctxkit.store.pg import PgStore

    sf = PgStore(pg_url, "default").state_file("s")
    sf.update(lambda ctx: ctx.state.__setitem__("session", "s"))
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("UPDATE ctx_state SET body=%s WHERE session='s'", ("# CONTEXT\n<!-- ctx: version=x -->\n## ???\n",))
    from ctxkit.errors import InputError

    with pytest.raises(InputError) as e:
        sf.read()
    assert sf.path in str(e.value)


@pytest.mark.parametrize("entry", [{"records": "many", "title": 5, "agents": "x"}, {"session": None}])
def test_a_session_index_row_of_the_wrong_shape_is_read_as_what_it_can_be(pg_url, entry):
    _drop()
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("UPDATE ctx_sessions SET entry=%s WHERE session='s'", (json.dumps(entry),))
    res = run("session", "list", "--json")
    assert res.code == 0 and "internal error" not in res.stderr, res.stderr
    assert len(res.records()) == 1 and res.records()[0]["records"] is None  # as the embedded index reads it


@pytest.mark.parametrize("value", ["[1, 2]", '"x"', "null", '{"through": "many"}'])
def test_a_maintain_state_that_is_not_an_object_is_rebuilt(pg_url, value, tmp_path):
    recs = "\n".join(json.dumps({"v": 1, "kind": "message", "id": f"m{i}", "session": "s",
                                 "role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} about the build"})
                     for i in range(4)) + "\n"
    assert run("maintain", "-", input=recs).code == 0
    with psycopg.connect(pg_url, autocommit=True) as c:
        n = c.execute("UPDATE ctx_runstate SET value=%s::jsonb WHERE name='maintain'", (value,)).rowcount
    assert n >= 1
    res = run("maintain", "-", input=recs)
    assert res.code == 0 and "internal error" not in res.stderr, res.stderr
