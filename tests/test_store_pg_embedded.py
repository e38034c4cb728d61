"""The store interface on the embedded default: psycopg never imported unless a postgresql
store is chosen, DSN passwords masked, the `store` knobs validated."""
import json
import subprocess

import pytest

from conftest import PY, ROOT, ctx_subprocess_env, run

from test_startup_help import HEAVY, PROBE as HEAVY_PROBE

PROBE = HEAVY_PROBE.replace(repr(HEAVY), repr(("psycopg", "psycopg_binary")))


@pytest.mark.embedded_only
def test_embedded_commands_never_import_psycopg(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps({"v": 1, "kind": "message", "id": "m1", "session": "s", "role": "user",
                             "content": "hello"}) + "\n")
    for argv in (["--help"], ["status", str(f)], ["store", "--help"], ["cold-storage", "list"], ["logs", "drops"]):
        p = subprocess.run([PY, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True,
                           env=ctx_subprocess_env(tmp_path / "h"), cwd=ROOT, timeout=120)
        assert json.loads(p.stderr.rsplit("HEAVY=", 1)[1]) == [], argv


def test_redact_dsn_masks_passwords_in_every_spelling():
    from ctxkit.store.backend import redact_dsn

    assert redact_dsn("postgresql://bob:hunter2@db/x?sslmode=require") == "postgresql://bob:***@db/x?sslmode=require"
    assert "hunter2" not in redact_dsn("host=db password=hunter2 user=bob")
    assert "hunter 2" not in redact_dsn("host=db password='hunter 2' user=bob")
    assert redact_dsn("postgresql://bob@db/x") == "postgresql://bob@db/x"


@pytest.mark.embedded_only
def test_store_check_on_the_embedded_store_and_a_bad_url(ctx_home, monkeypatch):
    res = run("store", "check", "--json")
    assert res.code == 0 and json.loads(res.stdout)["store"] == "embedded"
    monkeypatch.setenv("CTX_STORE_URL", "mysql://u:topsecret@h/db")
    bad = run("cold-storage", "list")
    assert bad.code != 0 and "topsecret" not in bad.stderr and "postgresql://" in bad.stderr


@pytest.mark.embedded_only
def test_store_knob_in_config_selects_the_backend(ctx_home):
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("store: postgresql://nobody:pw-in-config@/nodb?host=/nonexistent\n"
                                          "store_project: team-a\n")
    res = run("drops")
    assert res.code != 0 and "pw-in-config" not in res.stderr and "cannot connect" in res.stderr
    shown = run("config", "show", "--json")
    assert shown.code == 0 and "pw-in-config" not in shown.stdout and "nobody:***@" in shown.stdout


def test_grant_sql_names_the_role_and_project_and_refuses_odd_roles():
    out = run("store", "grant-sql", "agents_a", "proj-a").stdout
    assert "ENABLE" not in out and "INSERT INTO public.ctx_project_roles" in out and "'proj-a'" in out
    assert run("store", "grant-sql", "Robert'); DROP", "p").code == 2
    assert run("store", "grant-sql", "agents_a", "p", "--schema", "x; DROP TABLE y").code == 2
    # no role-taking function is granted; PUBLIC's EXECUTE and TEMP are revoked (tried for real in
    # tests/test_store_pg_tenancy.py)
    assert "ctx_may_access" not in out and "ctx_may_search" not in out
    assert "REVOKE EXECUTE ON FUNCTION" in out and "REVOKE TEMPORARY ON DATABASE" in out
