"""Commands that read what the store keeps see it on either store (the suite runs on both):
`ctx dedupe` compares the workspace files with MEMORY.md where memory is kept, shell
completion offers the configured store's ids."""
import json

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
    import os

    return os.environ["CTX_STORE_PROJECT"]
