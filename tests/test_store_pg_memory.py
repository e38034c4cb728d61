"""Memory, observations, maintain state, reset and the state archive on the shared PostgreSQL store,
against a real server the tests start (tests/pgcluster.py): every command works as on the
embedded store, nothing is written to local files, concurrent writers lose nothing."""
import json
import multiprocessing as mp
import os

import pytest

from conftest import corpus, memory_docs, needs_pg, run
from test_store_pg import drop_pipeline

pytestmark = needs_pg

OWN_PG_SERVER = True
CC = "claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl"


@pytest.fixture
def pg_url(pg_url, monkeypatch):  # conftest's, in project proj-a
    monkeypatch.setenv("CTX_STORE_PROJECT", "proj-a")
    return pg_url


def _local_memory(ws):
    return [p for p in ("MEMORY.md", "observations") if (ws / p).exists()]


def test_observe_reflect_and_search_share_memory_across_machines(pg_url, ctx_home, tmp_path, monkeypatch):
    ws = ctx_home / "workspace"
    res = run("observe", corpus(CC))
    assert res.code == 0, res.stderr
    assert res.stdout.strip().startswith("postgresql:proj-a/observations/") and res.stdout.strip().endswith(".md")
    r1 = run("reflect", "--json", "--embedder", "keyword")
    assert r1.code == 0, r1.stderr
    r1 = r1.json()
    assert r1["added"] >= 1 and r1["memory"] == "postgresql:proj-a/MEMORY.md"
    assert _local_memory(ws) == []  # nothing in the workspace folder: it is the store's
    docs = memory_docs(ctx_home)
    assert docs["MEMORY.md"].count("\n") == r1["added"]
    assert all("(from observations/" in line for line in docs["MEMORY.md"].splitlines())
    again = run("reflect", "--json", "--embedder", "keyword").json()
    assert again["added"] == 0 and again["skipped"]["duplicate"] >= r1["added"]  # idempotent, as on files
    # another machine: another home and workspace, the same project, sees the memory
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "machine-b"))
    monkeypatch.setenv("CTX_WORKSPACE", str(tmp_path / "machine-b" / "ws"))
    fact = docs["MEMORY.md"].splitlines()[0][2:].rsplit(" (from ", 1)[0]
    hits = run("memory", "search", fact, "--embedder", "keyword", "--json")
    assert hits.code == 0, hits.stderr
    found = [json.loads(x) for x in hits.stdout.splitlines()]
    assert found and found[0]["source"].startswith(("MEMORY.md:", "observations/")), found
    # a third project sees none of it
    monkeypatch.setenv("CTX_STORE_PROJECT", "proj-b")
    assert run("memory", "search", fact, "--embedder", "keyword", "--json").stdout.strip() == ""


def test_memory_is_redacted_before_it_is_sent(pg_url, ctx_home):
    from ctxkit.store.backend import open_store
    from ctxkit.store.home import Home

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    mem = open_store(Home()).memory
    mem.update_memory(lambda t: t + f"- the deploy token is {secret}\n")
    mem.write_observation("x.md", f"## Outcomes\n- token {secret} rotated\n")
    stored = json.dumps(memory_docs(ctx_home))
    assert secret not in stored and "the deploy token is" in stored


def _memory_worker(url, k, n):
    from ctxkit.store.pg import PgStore

    mem = PgStore(url, "proj-a").memory
    for i in range(n):
        mem.update_memory(lambda t, i=i: t + f"- fact {k}-{i}\n")


def test_concurrent_memory_updates_lose_nothing(pg_url):
    ctxm = mp.get_context("spawn")
    ps = [ctxm.Process(target=_memory_worker, args=(pg_url, k, 10)) for k in range(4)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(120)
        assert p.exitcode == 0
    from ctxkit.store.pg import PgStore

    store = PgStore(pg_url, "proj-a")
    text = store.memory.memory_text()
    assert sorted(text.splitlines()) == sorted(f"- fact {k}-{i}" for k in range(4) for i in range(10))
    version = store.run(lambda cur: cur.execute("SELECT version FROM ctx_memory WHERE project='proj-a'").fetchone()[0],
                        "reading")
    assert version == 40


def test_what_leaves_a_kept_section_of_a_session_state_is_archived(pg_url, capfd):
    from ctxkit.core.context_md import Item
    from ctxkit.store.pg import PgStore

    sf = PgStore(pg_url, "proj-a").state_file("s1")
    sf.update(lambda c: c.sections.setdefault("Pinned", []).extend([Item("keep the API stable"), Item("use RS256")])
              or c)
    sf.update(lambda c: c.sections.__setitem__("Pinned", [i for i in c.sections["Pinned"] if "RS256" not in i.text])
              or c)
    assert [x.text for x in sf.read().sections["Pinned"]] == ["keep the API stable"]
    assert sf.archived("Pinned") == ["use RS256"]
    err = capfd.readouterr().err
    assert "1 item left Pinned in CONTEXT.md; kept in postgresql:proj-a/sessions/s1/archive/pinned.md" in err


def test_maintain_on_pg_remembers_its_pass_in_the_store(pg_url, ctx_home):
    path = corpus(CC)
    first = [json.loads(x) for x in run("maintain", path).stdout.splitlines()]
    assert first[0]["event"] == "status" and "summary_refresh" in {e["event"] for e in first}
    again = run("maintain", path)
    assert again.code == 0, again.stderr
    assert [json.loads(x) for x in again.stdout.splitlines()] == [
        {"event": "nothing_to_do", "session": first[0]["session"], "reason": "no new records"}]
    assert not (ctx_home / "maintain-state.json").exists() and not (ctx_home / "logs").exists()
    end = [json.loads(x) for x in run("maintain", path, "--session-end").stdout.splitlines()]
    obs = [e for e in end if e["event"] == "observation"]
    assert obs and obs[0]["path"].startswith("postgresql:proj-a/observations/")


def _maintain_proc(url, home, path):
    import subprocess

    from conftest import PY, ctx_subprocess_env

    env = ctx_subprocess_env(home)
    env.update(CTX_STORE_URL=url, CTX_STORE_PROJECT="proj-a")
    return subprocess.Popen([PY, "-m", "ctxkit", "maintain", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)


def test_two_machines_maintaining_one_session_run_one_pass(pg_url, tmp_path):
    path = corpus(CC)
    procs = [_maintain_proc(pg_url, tmp_path / f"m{k}", path) for k in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    events = [[json.loads(x)["event"] for x in o[0].splitlines()] for o in outs]
    # the session's lock makes them take turns: one did the pass, the other found nothing new
    assert sorted(e == ["nothing_to_do"] for e in events) == [False, True], events


def test_reset_on_pg_deletes_the_projects_cold_storage_logs_and_maintain_state_only(pg_url, ctx_home, monkeypatch):
    drop_pipeline()
    run("observe", corpus(CC))
    monkeypatch.setenv("CTX_STORE_PROJECT", "proj-b")
    drop_pipeline()
    monkeypatch.setenv("CTX_STORE_PROJECT", "proj-a")
    dry = run("reset", "-n")
    assert dry.code == 0 and "would delete" in dry.stdout and "cold-storage chunks" in dry.stdout, dry.stderr
    assert run("cold-storage", "list", "--json").stdout.strip()  # nothing deleted without --force
    res = run("reset", "--force")
    assert res.code == 0, res.stderr
    assert run("cold-storage", "list", "--json").stdout.strip() == ""
    assert run("logs", "drops", "--json").stdout.strip() == ""
    assert any(k.startswith("observations/") for k in memory_docs(ctx_home))  # memory is kept, as workspaces are
    monkeypatch.setenv("CTX_STORE_PROJECT", "proj-b")
    assert run("cold-storage", "list", "--json").stdout.strip()  # another project's rows are untouched


def test_a_session_index_edit_is_retried_on_a_dropped_connection(pg_url, capfd):
    import psycopg

    from ctxkit.store.pg import PgStore

    store = PgStore(pg_url, "proj-a")
    store.sessions.update(lambda idx: idx.__setitem__("s1", {"session": "s1", "records": 1}))
    pid = store.connect().info.backend_pid
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(%s)", (pid,))
    calls = []

    def change(idx):
        calls.append(dict(idx))
        idx["s2"] = {"session": "s2", "records": 2}
    store.sessions.update(change)
    assert store.sessions.load() == {"s1": {"session": "s1", "records": 1}, "s2": {"session": "s2", "records": 2}}
    err = capfd.readouterr().err
    assert "store connection lost while updating the session index" in err and "retry 1/2" in err
    assert calls and calls[-1] == {"s1": {"session": "s1", "records": 1}}  # the retry saw the index as it was


def test_context_archive_goes_to_the_store(pg_url, ctx_home):
    assert run("context", "update", "--task", "ship the JWT fix").code == 0
    res = run("context", "archive", "--title", "JWT fix")
    assert res.code == 0, res.stderr
    first, second = res.stdout.splitlines()
    assert first.startswith("postgresql:proj-a/archive/CONTEXT-") and second.startswith("postgresql:proj-a/observations/")
    assert not (ctx_home / "archive").exists() and not (ctx_home / "workspace" / "observations").exists()
    assert run("memory", "search", "ship the JWT fix", "--embedder", "keyword", "--json").stdout.strip()


def test_migrate_moves_the_workspaces_memory_in_and_out(pg_cluster, ctx_home, monkeypatch, tmp_path):
    ws = ctx_home / "workspace"
    assert run("observe", corpus(CC)).code == 0  # on the embedded store: files in the workspace
    assert run("reflect", "--embedder", "keyword").code == 0
    before = memory_docs(ctx_home)
    assert "MEMORY.md" in before and any(k.startswith("observations/") for k in before)
    url = pg_cluster.url(pg_cluster.new_db())
    assert run("store", "init", "--url", url).code == 0
    first = run("store", "migrate", "--to", url)
    assert first.code == 0, first.stderr
    assert "memory_added 1" in first.stderr and "observations_added" in first.stderr
    again = run("store", "migrate", "--to", url)
    assert "memory_present 1" in again.stderr and "_added" not in again.stderr
    monkeypatch.setenv("CTX_STORE_URL", url)
    assert memory_docs(ctx_home) == before
    monkeypatch.delenv("CTX_STORE_URL")
    ws2 = tmp_path / "ws2"
    monkeypatch.setenv("CTX_WORKSPACE", str(ws2))
    back = run("store", "migrate", "--to", "embedded", "--from", url)
    assert back.code == 0, back.stderr
    assert memory_docs(ctx_home, ws2) == before
    assert (ws2 / "MEMORY.md").read_text() == (ws / "MEMORY.md").read_text()


def test_a_store_at_schema_1_is_refused_until_init_migrates_it(pg_url):
    import psycopg

    from ctxkit.store.pg_schema import TENANT_TABLES_V2

    with psycopg.connect(pg_url, autocommit=True) as c:  # as an older ctx left it
        c.execute("DROP TABLE " + ", ".join(TENANT_TABLES_V2))
        c.execute("DELETE FROM ctx_schema_migrations WHERE version = 2")
    old = run("memory", "search", "anything", "--embedder", "keyword")
    assert old.code != 0 and "schema version 1" in old.stderr and "ctx store init" in old.stderr, old.stderr
    res = run("store", "init")
    assert res.code == 0 and "applied migration 2:" in res.stderr, res.stderr
    assert run("memory", "search", "anything", "--embedder", "keyword").code == 0
