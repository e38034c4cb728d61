"""Commands that read what the store keeps see it on either store (the suite runs on both):
`ctx dedupe` compares the workspace files with MEMORY.md where memory is kept, shell
completion offers the configured store's ids."""
import json
import os

from conftest import TEST_STORE, put_memory, run

LINE = "Always run the tests before you push a commit."


def test_dedupe_sees_the_stored_memory(ctx_home):
    ws = ctx_home / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "AGENTS.md").write_text(f"# Agents\n- {LINE}\n- Use tabs in the Makefile.\n")
    put_memory(ws, f"# Memory\n- {LINE}\n- Redis is on port 6380 in staging.\n")
    assert (ws / "MEMORY.md").exists() == (TEST_STORE != "pg")  # PostgreSQL: nothing in the workspace
    res = run("dedupe", "--embedder", "keyword", "--json")
    assert res.code == 0, res.stderr
    rows = res.records()
    assert len(rows) == 1 and rows[0]["kind"] == "exact" and rows[0]["copies"] == 1, rows
    assert rows[0]["a"] == f"{ws / 'AGENTS.md'}:2"
    memory_name = rows[0]["b"].rsplit(":", 1)[0]
    assert memory_name == (f"postgresql:{_project()}/MEMORY.md" if TEST_STORE == "pg" else str(ws / "MEMORY.md"))
    assert rows[0]["tokens_wasted_per_turn"] > 0
    # files named on the command line are read as they are, whatever the store
    other = ctx_home / "other.md"
    other.write_text(f"- {LINE}\n")
    named = run("dedupe", ws / "AGENTS.md", other, "--embedder", "keyword", "--json").records()
    assert [r["b"] for r in named] == [f"{other}:1"]


def _project() -> str:
    return os.environ["CTX_STORE_PROJECT"]


def test_logs_since_jq_and_table_on_the_configured_store(ctx_home):
    """What tests/test_config_logs_reset.py checks on the embedded log files, through the store."""
    from ctxkit.store import logs
    from ctxkit.store.backend import close_store
    from ctxkit.store.home import Home

    h = Home(str(ctx_home))
    try:
        for ts, cid in (("2020-01-01T00:00:00Z", "c-0001"), ("2999-01-01T00:00:00Z", "c-0002")):
            logs.append(h, "drops", {"timestamp": ts, "chunk_id": cid, "relevance_score": 0.1})
    finally:
        close_store(h)
    assert [r["chunk_id"] for r in run("logs", "drops").records()] == ["c-0001", "c-0002"]
    assert [r["chunk_id"] for r in run("logs", "drops", "--since", "24h").records()] == ["c-0002"]
    assert [r["chunk_id"] for r in run("logs", "drops", "-n", "1").records()] == ["c-0002"]
    assert run("logs", "drops", "--jq", ".chunk_id").stdout.split() == ['"c-0001"', '"c-0002"']
    table = run("logs", "drops", "-t").stdout
    assert "chunk_id" in table and "c-0002" in table
    assert run("logs", "drops", "--since", "yesterday-ish").code == 2
    where = run("logs", "path").stdout.strip()
    assert where == (f"{os.environ['CTX_STORE_URL']} (table ctx_logs)" if TEST_STORE == "pg" else str(ctx_home / "logs"))
