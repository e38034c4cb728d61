"""`ctx store migrate` moves the state archives and `ctx maintain`'s state both ways, exactly and
resumably: what left a kept section of a session's state (sessions/ID/archive/SECTION.md),
the archived CONTEXT.md copies ($CTX_HOME/archive/*.md) and maintain-state.json."""
import json
import os

from conftest import needs_pg, run

pytestmark = needs_pg
OWN_PG_SERVER = True
SID = "sess-1"


def _seed_embedded(home):
    """A session whose Decisions lost two items (archived), an archived CONTEXT.md copy, and a
    maintain state for two sessions: through the embedded store's own code."""
    from ctxkit.core.context_md import Item
    from ctxkit.store.home import Home
    from ctxkit.store.runstate import FileRunState
    from ctxkit.store.session_state import archive_context, state_file

    h = Home(str(home))
    sf = state_file(h, SID)

    def add(ctx):
        ctx.state["session"] = SID
        ctx.sections["Decisions"] = [Item(f"decision {i}: use RS256 ünïcode") for i in range(4)]
        ctx.sections["Pending"] = [Item("rotate the keys", done=False)]
    sf.update(add)
    sf.update(lambda ctx: ctx.sections.__setitem__("Decisions", ctx.sections["Decisions"][2:]))
    sf.update(lambda ctx: ctx.sections.__setitem__("Pending", []))
    assert sf.archived("Decisions") == ["decision 0: use RS256 ünïcode", "decision 1: use RS256 ünïcode"]
    copy = archive_context(h, sf)
    assert copy and os.path.exists(copy)
    for key, n in ((SID, 7), ("other", 3)):
        with FileRunState(h).hold("maintain", key) as st:
            st.update({"through": n, "summarized_at": "2026-01-01T00:00:00Z", "clusters": [1, 2]})


def _files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if not f.endswith(".lock"):
                p = os.path.join(d, f)
                out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def test_migrate_moves_state_archives_and_maintain_state_both_ways(pg_cluster, ctx_home, monkeypatch, tmp_path):
    _seed_embedded(ctx_home)
    archives = {k: v for k, v in _files(ctx_home / "sessions").items() if "/archive/" in k}
    copies = _files(ctx_home / "archive")
    maintain = json.loads((ctx_home / "maintain-state.json").read_text())
    assert len(archives) == 2 and len(copies) == 1 and set(maintain) == {SID, "other"}

    url = pg_cluster.url(pg_cluster.new_db())
    assert run("store", "init", "--url", url).code == 0
    first = run("store", "migrate", "--to", url)
    assert first.code == 0, first.stderr
    for what in ("archived_items_added 3", "context_archives_added 1", "maintain_states_added 2"):
        assert what in first.stderr, first.stderr
    again = run("store", "migrate", "--to", url)  # resumable: a second run adds nothing
    assert again.code == 0 and "_added" not in again.stderr, again.stderr
    assert "archived_items_present 3" in again.stderr and "maintain_states_present 2" in again.stderr

    # on the store, every command sees them
    monkeypatch.setenv("CTX_STORE_URL", url)
    from ctxkit.store.backend import close_store, open_store
    from ctxkit.store.home import Home

    h = Home(str(ctx_home))
    try:
        pg = open_store(h)
        assert pg.state_file(SID).archived("Decisions") == ["decision 0: use RS256 ünïcode",
                                                            "decision 1: use RS256 ünïcode"]
        assert pg.state_file(SID).archived("Pending") == ["[ ] rotate the keys"]
        assert {n: t.encode() for n, t in pg.context_archives()} == copies
        assert pg.runstate.entries("maintain") == maintain
        with pg.runstate.hold("maintain", SID) as st:   # maintain goes on where it was
            assert st["through"] == 7
    finally:
        close_store(h)

    # and back into a fresh home, byte for byte
    monkeypatch.delenv("CTX_STORE_URL")
    home2 = tmp_path / "home2"
    monkeypatch.setenv("CTX_HOME", str(home2))
    back = run("store", "migrate", "--to", "embedded", "--from", url)
    assert back.code == 0, back.stderr
    assert {k: v for k, v in _files(home2 / "sessions").items() if "/archive/" in k} == archives
    assert _files(home2 / "archive") == copies
    assert json.loads((home2 / "maintain-state.json").read_text()) == maintain
    before = _files(home2)
    again = run("store", "migrate", "--to", "embedded", "--from", url)
    assert again.code == 0 and "_added" not in again.stderr, again.stderr
    assert {k: v for k, v in _files(home2).items() if not k.startswith("logs")} == \
        {k: v for k, v in before.items() if not k.startswith("logs")}


def test_migrate_back_never_overwrites_a_different_maintain_state(pg_cluster, ctx_home, monkeypatch, tmp_path):
    _seed_embedded(ctx_home)
    url = pg_cluster.url(pg_cluster.new_db())
    assert run("store", "init", "--url", url).code == 0
    assert run("store", "migrate", "--to", url).code == 0
    home2 = tmp_path / "home2"
    home2.mkdir()
    (home2 / "maintain-state.json").write_text(json.dumps({SID: {"through": 99}}))
    monkeypatch.setenv("CTX_HOME", str(home2))
    res = run("store", "migrate", "--to", "embedded", "--from", url)
    assert res.code != 0 and "differ" in res.stderr and SID in res.stderr, res.stderr
    state = json.loads((home2 / "maintain-state.json").read_text())
    assert state[SID] == {"through": 99} and state["other"]["through"] == 3  # kept; the rest added


def test_odd_ids_and_lone_surrogates_move_both_ways_byte_for_byte(pg_cluster, ctx_home, monkeypatch, tmp_path):
    from test_odd_ids import _drop, _stream

    data = _stream().replace("topic1", "half \\ud83d emoji topic1")
    assert "\\ud83d" in data
    _drop(data)                                          # a NUL in the session id, on the embedded store
    _drop(_stream(session="plain", group="g\u0000{i}"))  # a NUL in chunk ids
    before = _files(ctx_home / "cold-storage")
    before = {k: v for k, v in before.items() if k.endswith(".jsonl")}
    assert len(before) >= 8 and any(b"\\ud83d" in v for v in before.values())
    url = pg_cluster.url(pg_cluster.new_db())
    assert run("store", "init", "--url", url).code == 0
    first = run("store", "migrate", "--to", url)
    assert first.code == 0 and f"chunks_added {len(before)}" in first.stderr, first.stderr
    assert "chunks_added" not in run("store", "migrate", "--to", url).stderr
    monkeypatch.setenv("CTX_STORE_URL", url)
    assert {r["session_id"] for r in run("cold-storage", "list", "--json").records()} == {"s\u0000x", "plain"}
    monkeypatch.delenv("CTX_STORE_URL")
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home2"))
    back = run("store", "migrate", "--to", "embedded", "--from", url)
    assert back.code == 0, back.stderr
    after = {k: v for k, v in _files(tmp_path / "home2" / "cold-storage").items() if k.endswith(".jsonl")}
    assert after == before                               # same files, same names, same bytes
