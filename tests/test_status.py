"""ctx status: breakdown, budget, thresholds, exit 3, context-health log."""
import json

from conftest import corpus, log_events, run


def stream(*recs):
    return "\n".join(json.dumps({"v": 1, "kind": "message", **r}) if "kind" not in r else json.dumps({"v": 1, **r})
                     for r in recs) + "\n"


RECS = stream(
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "hello " * 50},
    {"kind": "summary", "role": "user", "content": "[CONTEXT SUMMARY] earlier work"},
    {"kind": "stub", "role": "user", "content": "[dropped c-0001: 300 tokens]"},
    {"kind": "event", "content": "bookkeeping"},
)


def test_breakdown_and_budget():
    d = run("status", "--budget", "1000", "--json", input=RECS).json()
    assert d["system"] > 0 and d["messages"] > 50 and d["summaries"] > 0 and d["stubs"] > 0
    assert d["tools"] == 0
    assert d["total"] == d["system"] + d["messages"] + d["summaries"] + d["stubs"]
    assert d["budget"] == 1000 and d["available"] == 1000 - d["total"]
    assert d["pct_used"] == round(d["total"] / 1000, 4)
    assert d["compaction_trigger_pct"] == 0.5 and d["hard_limit_pct"] == 0.85
    assert d["records"] == 4  # the event is not context


def test_budget_from_config_and_env(ctx_home):
    ctx_home.mkdir(parents=True)
    (ctx_home / "config.yaml").write_text("max_tokens: 5000\nreserve_tokens: 1000\ncompaction_trigger_pct: 0.01\n")
    d = run("status", "--json", input=RECS).json()
    assert d["budget"] == 4000 and d["compaction_due"] is True
    d = run("status", "--json", input=RECS, env={"CTX_MAX_TOKENS": "3000"}).json()
    assert d["budget"] == 2000
    d = run("status", "--json", "--max-tokens", "2500", input=RECS, env={"CTX_MAX_TOKENS": "3000"}).json()
    assert d["budget"] == 1500


def test_notify_if_pct_exit_3():
    res = run("status", "--budget", "100", "--notify-if-pct", "0.5", "--json", input=RECS)
    assert res.code == 3
    assert "at or above 50%" in res.stderr
    assert json.loads(res.stdout)["pct_used"] > 0.5
    assert run("status", "--budget", "1000000", "--notify-if-pct", "0.5", input=RECS).code == 0


def test_log_appends_context_health(ctx_home):
    for _ in range(2):
        assert run("status", "--budget", "1000", "--log", input=RECS).code == 0
    lines = log_events("context-health")
    assert len(lines) == 2
    ev = lines[0]
    for key in ("timestamp", "current_tokens", "limit", "pct_used", "next_compaction_estimate",
                "memcached_chunks", "cold_storage_chunks"):
        assert key in ev
    assert ev["limit"] == 1000 and ev["next_compaction_estimate"] == 500
    out = run("logs", "context-health", "--since", "1h", "--jq", ".pct_used")
    assert out.stdout.splitlines() == [str(ev["pct_used"])] * 2


def test_reported_vs_counted_on_claude_code():
    d = run("status", corpus("claude-code_spotter_491e126e_session.jsonl"), "--json").json()
    assert d["reported_tokens"] == 43862  # last response: input + cache read + cache creation + output
    assert d["counted_at_report"] == d["total"]
    assert d["count_error_pct"] == round((d["total"] - 43862) / 43862, 4)


def test_table_output():
    res = run("status", "--budget", "1000", "-t", input=RECS)
    assert res.code == 0
    assert "messages" in res.stdout and "compaction at 50%" in res.stdout
    assert not res.stdout.lstrip().startswith("{")


def test_tools_registry_counts(tmp_path):
    reg = tmp_path / "tools.json"
    reg.write_text(json.dumps([{"type": "function", "function": {"name": "task_board", "description": "Manage tasks",
                                                                 "parameters": {"type": "object"}}}]))
    d = run("status", "--json", "--tools", reg, input=RECS).json()
    assert d["tools"] > 5
