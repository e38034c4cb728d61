"""Home, config (strict, with precedence), logs and reset."""
import json
import os

import pytest


from conftest import run
from ctxkit.store.config import KNOBS


def test_config_init_show_validate_path(ctx_home):
    res = run("config", "path")
    assert res.stdout.strip() == str(ctx_home / "config.yaml")
    assert run("config", "init").code == 0
    assert run("config", "init").code == 2  # refuses to overwrite
    assert "ok" in run("config", "validate").stdout
    rows = run("config", "show", "--json").records()
    assert {r["key"] for r in rows} == set(KNOBS)
    # init writes every knob commented out: nothing is pinned, every value is still the default
    assert all(r["source"] == "default" for r in rows if r["key"] not in ("store", "store_project"))
    assert all(r["source"] in ("default", "env") for r in rows)  # the suite's PostgreSQL pass sets CTX_STORE_*
    text = (ctx_home / "config.yaml").read_text()
    assert all(f"# {k}:" in text for k in KNOBS)


def test_config_reports_every_problem_ranges_and_cross_rules(ctx_home, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("relevance_cutoff: 1.5\nnope: 3\nmax_tokens: x\nrelevance_keep: 0.2\n")
    res = run("config", "validate", p)
    assert res.code == 1
    for want in (f"{p}:1: relevance_cutoff must be between 0 and 1, got 1.5", f"{p}:2: unknown key 'nope'",
                 f"{p}:3: max_tokens must be an integer"):
        assert want in res.stderr
    p.write_text("relevance_cutoff: 0.5\nrelevance_keep: 0.2\n")
    assert "relevance_cutoff (0.5) is above relevance_keep (0.2)" in run("config", "validate", p).stderr
    assert run("config", "validate", tmp_path / "missing.yaml").code == 1


def test_seed_003_upper_case_keys_are_aliases(ctx_home, tmp_path):
    p = tmp_path / "context-config.yaml"
    p.write_text("COMPACTION_TRIGGER_PCT: 0.6\nRELEVANCE_CUTOFF: 0.2\nMIN_CHUNKS_TO_KEEP: 3\n")
    res = run("config", "validate", p)
    assert res.code == 0 and "COMPACTION_TRIGGER_PCT read as compaction_trigger_pct" in res.stderr


def test_unknown_key_names_key_file_and_line(ctx_home):
    ctx_home.mkdir(parents=True)
    p = ctx_home / "config.yaml"
    p.write_text("max_tokens: 1000\nrelevence_cutoff: 0.2\n")
    res = run("config", "validate")
    assert res.code == 1
    assert f"{p}:2: unknown key 'relevence_cutoff' (did you mean relevance_cutoff?)" in res.stderr
    assert run("status", input="").code == 1  # every command refuses a bad config


def test_wrong_type_names_expected_type(ctx_home):
    ctx_home.mkdir(parents=True)
    p = ctx_home / "config.yaml"
    p.write_text("max_tokens: lots\n")
    res = run("config", "validate")
    assert res.code == 1
    assert res.stderr == f"Error: {p}:1: max_tokens must be an integer, got 'lots'\n"


def test_precedence_flag_env_file_default(ctx_home):
    ctx_home.mkdir(parents=True)
    (ctx_home / "config.yaml").write_text("truncation_strategy: middle_out\nmax_tokens: 9000\n")
    rows = {r["key"]: r for r in run("config", "show", "--json", env={"CTX_MAX_TOKENS": "7000"}).records()}
    assert rows["max_tokens"]["value"] == 7000 and rows["max_tokens"]["source"] == "env"
    assert rows["truncation_strategy"]["source"] == "file"
    assert rows["reserve_tokens"]["source"] == "default"
    bad = run("config", "show", env={"CTX_MAX_TOKENS": "many"})
    assert bad.code == 1 and "$CTX_MAX_TOKENS: max_tokens must be" in bad.stderr


def test_home_flag_overrides_env(tmp_path):
    other = tmp_path / "other"
    assert run("--home", other, "config", "path").stdout.strip() == str(other / "config.yaml")
    assert run("config", "path", "--home", other).stdout.strip() == str(other / "config.yaml")


def package_code_outside_config() -> str:
    root = os.path.join(os.path.dirname(__file__), "..", "ctxkit")
    code = ""
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py") and f != "config.py":
                code += open(os.path.join(d, f)).read()
    return code


def test_every_knob_is_read_by_code():
    """Each config knob is used outside the config module (no dead knobs, unlike seed 003)."""
    code = package_code_outside_config()
    unused = [k for k in KNOBS if f'"{k}"' not in code and not KNOBS[k].reserved]
    assert unused == [], f"knobs never read: {unused}"


def test_reserved_knobs_are_not_read_yet():
    """A knob marked reserved must really be unread, so the mark is removed when a command reads it."""
    code = package_code_outside_config()
    stale = [k for k in KNOBS if KNOBS[k].reserved and f'"{k}"' in code]
    assert stale == []


@pytest.mark.embedded_only  # the log files; on either store: tests/test_store_parity.py
def test_logs_since_jq_and_table(ctx_home):
    logs = ctx_home / "logs"
    logs.mkdir(parents=True)
    (logs / "drops.jsonl").write_text(
        json.dumps({"timestamp": "2020-01-01T00:00:00Z", "chunk_id": "c-0001", "relevance_score": 0.1}) + "\n" +
        json.dumps({"timestamp": "2999-01-01T00:00:00Z", "chunk_id": "c-0002", "relevance_score": 0.2}) + "\n")
    assert [r["chunk_id"] for r in run("logs", "drops").records()] == ["c-0001", "c-0002"]
    assert [r["chunk_id"] for r in run("logs", "drops", "--since", "24h").records()] == ["c-0002"]
    assert run("logs", "drops", "--jq", ".chunk_id").stdout.split() == ['"c-0001"', '"c-0002"']
    table = run("logs", "drops", "-t").stdout
    assert "chunk_id" in table and "c-0002" in table
    assert run("logs", "drops", "--since", "yesterday-ish").code == 2
    assert run("logs", "drops", "--jq", ".[").code == 2
    assert run("logs", "path").stdout.strip() == str(logs)


@pytest.mark.embedded_only  # on PostgreSQL: test_store_pg_memory's reset test
def test_reset_refuses_without_force(ctx_home):
    (ctx_home / "logs").mkdir(parents=True)
    (ctx_home / "logs" / "drops.jsonl").write_text("{}\n")
    (ctx_home / "config.yaml").write_text("max_tokens: 1000\nreserve_tokens: 100\n")
    res = run("reset")  # as git clean: refused without -f, and -n lists what would go
    assert res.code == 2 and res.stdout == "" and "--force" in res.stderr and "--dry-run" in res.stderr
    dry = run("reset", "-n")
    assert dry.code == 0 and f"would delete {ctx_home / 'logs'}" in dry.stdout
    assert (ctx_home / "logs").exists()
    assert run("reset", "-f", "-n").code == 2
    assert run("reset", "--force").code == 0
    assert not (ctx_home / "logs").exists()
    assert (ctx_home / "config.yaml").exists()


def test_atomic_write_and_lock(tmp_path):
    from ctxkit.store.atomic import append_line, atomic_write

    p = tmp_path / "f.txt"
    atomic_write(str(p), "one")
    atomic_write(str(p), "two")
    assert p.read_text() == "two"
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []
    for i in range(3):
        append_line(str(tmp_path / "log.jsonl"), json.dumps({"i": i}))
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 3


def test_concurrent_log_appends_lose_nothing(tmp_path):
    import multiprocessing as mp


    path = str(tmp_path / "log.jsonl")
    procs = [mp.Process(target=_appender, args=(path, k)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    lines = [json.loads(x) for x in open(path)]
    assert len(lines) == 4 * 50
    assert {(x["p"], x["i"]) for x in lines} == {(k, i) for k in range(4) for i in range(50)}


def _appender(path, k):
    from ctxkit.store.atomic import append_line

    for i in range(50):
        append_line(path, json.dumps({"p": k, "i": i, "pad": "x" * 5000}))
