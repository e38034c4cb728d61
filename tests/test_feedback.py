"""What a person sees while ctx works and when it reports: progress that moves with real counts
(silent under -q and in a pipe), configuration errors that say what is allowed, config get/set,
`compact --trigger` as a fraction or a percent, a time block that does not contradict itself, and
dedupe reports grouped by repeated text."""
import json
import os
import pty
import re
import subprocess
import sys

import pytest

from conftest import ROOT, corpus, ctx_subprocess_env, run

CTX = [sys.executable, "-m", "ctxkit"]


def _stderr_on_a_terminal(args, env):
    master, slave = pty.openpty()
    out_file = open(os.devnull if False else os.path.join(env["CTX_HOME"] + ".out"), "w+b")
    p = subprocess.Popen(CTX + args, stdout=out_file, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=300)
    out_file.seek(0)
    out = out_file.read()
    out_file.close()
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode("utf-8", "replace")


def test_progress_moves_with_real_counts_and_is_silent_under_q_and_in_a_pipe(tmp_path):
    pytest.importorskip("onnxruntime")
    src = tmp_path / "s.jsonl"
    with open(src, "w") as f:
        for i in range(120):
            role = "user" if i % 2 == 0 else "assistant"
            f.write(json.dumps({"role": role, "content": f"step {i}: look at module_{i}.py and its test {i * 7}"}) + "\n")
    src = str(src)
    env = ctx_subprocess_env(tmp_path / "h")
    env.pop("CTX_QUIET", None)
    args = ["score", src, "--embedder", "minilm", "--query", "search the web"]
    code, out, err = _stderr_on_a_terminal(args, env)
    assert code == 0 and out
    totals = {int(b) for _, b in re.findall(r"\b(\d+)/(\d+)\b", err)}
    positions = [int(a) for a, _ in re.findall(r"\b(\d+)/(\d+)\b", err)]
    assert len(totals) == 1, err  # one bar, its total the real number of texts
    total = totals.pop()
    assert total >= 32 and positions[-1] == total
    assert len(set(positions)) >= 3, positions  # it moved, not blank then 100 %
    assert positions == sorted(positions)
    # -q: nothing on the terminal (the embeddings are cached now; remove them to embed again)
    for f in (tmp_path / "h" / "cache").glob("embeddings.sqlite*"):
        f.unlink()
    code, out2, err = _stderr_on_a_terminal(["-q"] + args, env)
    assert code == 0 and out2.count(b"\n") == out.count(b"\n") and err.strip() == "", err
    # in a pipe: no bar either
    p = subprocess.run(CTX + args, capture_output=True, env=env)
    assert p.returncode == 0 and b"/" not in p.stderr


def test_config_errors_say_the_range_compile_regexes_and_check_tokenizers(ctx_home, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("half_life_hours: 0\nredact_patterns: ['(unclosed']\ntokenizer: nosuch\nmax_tokens: -5\n")
    res = run("config", "validate", p)
    assert res.code == 1 and "None" not in res.stderr and "internal error" not in res.stderr
    assert f"{p}:1: half_life_hours must be at least 0.01, got 0.0" in res.stderr
    assert f"{p}:2: redact_patterns: '(unclosed' is not a valid regular expression" in res.stderr
    assert f"{p}:3: tokenizer: unknown tokenizer 'nosuch'" in res.stderr
    assert f"{p}:4: max_tokens must be at least 1, got -5" in res.stderr
    # a bad regex in the home's config is a config error for every command, not an internal error
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("redact_patterns: ['(x']\n")
    res = run("count", "hello")
    assert res.code == 1 and "not a valid regular expression" in res.stderr and "internal" not in res.stderr


def test_two_spellings_of_one_knob_are_an_error(ctx_home):
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("MAX_TOKENS: 100000\nmax_tokens: 200000\n")
    res = run("config", "validate")
    assert res.code == 1 and "max_tokens and MAX_TOKENS both set max_tokens" in res.stderr


def test_config_get_and_set_validate_and_keep_the_file(ctx_home):
    assert run("config", "get", "max_tokens").stdout == "128000\n"
    assert run("config", "get", "MAX_TOKENS").stdout == "128000\n"  # the upper-case spelling too
    assert run("config", "get", "nosuch").code == 2
    assert run("config", "init").code == 0
    before = (ctx_home / "config.yaml").read_text()
    assert run("config", "set", "max_tokens", "200000").code == 0
    assert run("config", "get", "max_tokens", "--source").stdout == f"200000\tfile\t{ctx_home / 'config.yaml'}\n"
    text = (ctx_home / "config.yaml").read_text()
    assert text.count("\nmax_tokens: 200000\n") == 1 and len(text.splitlines()) == len(before.splitlines()) + 1
    assert run("config", "set", "MAX_TOKENS", "100000").code == 0  # replaces, never a second spelling
    assert run("config", "get", "max_tokens").stdout == "100000\n"
    for key, bad, why in (("relevance_cutoff", "2", "between 0 and 1"), ("tokenizer", "nosuch", "unknown tokenizer"),
                          ("redact_patterns", "(x", "not a valid regular expression"),
                          ("half_life_hours", "-1", "at least 0.01"),
                          ("reserve_tokens", "100000", "leaves no budget")):
        kept = (ctx_home / "config.yaml").read_text()
        res = run("config", "set", key, bad)
        assert res.code == 1 and why in res.stderr, (key, res.stderr)
        assert (ctx_home / "config.yaml").read_text() == kept  # nothing half-written
    assert run("config", "set", "redact_patterns", "['tok_[0-9]+', 'key=\\S+']").code == 0
    assert json.loads(run("config", "get", "redact_patterns").stdout) == ["tok_[0-9]+", "key=\\S+"]
    assert run("count", "tok_123").code == 0


def test_the_designs_own_config_file_used_as_is_works(ctx_home, tmp_path):
    """The design's context-config.yaml (upper-case names, RECENCY_BONUS, IMPORTANCE_BOOT, MEMFAS_*,
    a model name as SUMMARY_MODEL, ~ paths) works as the home's config.yaml, unedited."""
    ctx_home.mkdir(parents=True, exist_ok=True)
    text = (ROOT / "tests" / "fixtures" / "context-config.yaml").read_text()
    assert "RECENCY_BONUS" in text and "MEMFAS_MIN_SCORE" in text and "SUMMARY_MODEL: minimax/MiniMax-M2.1" in text
    (ctx_home / "config.yaml").write_text(text.replace("~/.clawdbot", str(tmp_path / "clawdbot")))
    res = run("config", "validate")
    assert res.code == 0, res.stderr
    for key, want in (("recency_weight", "0.2"), ("importance_weight", "0.1"), ("similarity_weight", "0.6"),
                      ("memory_min_score", "0.05"), ("summary_model", "minimax/MiniMax-M2.1"),
                      ("summary_target_tokens", "500")):
        assert run("config", "get", key).stdout.strip() == want, key
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    for args in (("status", src), ("count", src), ("compact", src, "--force", "--budget", "3000"),
                 ("score", src, "--embedder", "keyword", "--query", "web search")):
        res = run(*args)
        assert res.code == 0 and "unknown key" not in res.stderr, (args, res.stderr)
    if not os.environ.get("CTX_STORE_URL"):  # a shared store keeps its logs in the database
        assert (tmp_path / "clawdbot" / "logs" / "context").is_dir()  # LOG_PATH honoured


def test_compact_trigger_is_a_fraction_or_a_percent(tmp_path):
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    for trigger in ("5", "5%", "0.05"):
        res = run("compact", src, "--trigger", trigger, "--budget", "1000000", "--dry-run", "--json")
        assert res.code == 0, res.stderr
        text = res.stdout + res.stderr
        assert "500 %" not in text and "500%" not in text
        assert "5%" in text or "0.05" in text, text
    assert run("compact", src, "--trigger", "150", "--dry-run").code == 2


def test_time_never_says_days_ago_and_then_yesterday(ctx_home):
    run("status", corpus("claude-code_spotter_491e126e_session.jsonl"), "--log")  # last active 2026-02-10 22:03
    far = run("time", "--json", "--now", "2026-11-23T05:00:00Z").json()
    assert far["ago"] == "285 days ago" and far["gap_class"] == "long-break"
    assert "yesterday" not in far["hint"] and "285 days" in far["hint"]
    nextday = run("time", "--json", "--now", "2026-02-11T09:00:00Z").json()
    assert nextday["gap_class"] == "next-day" and "yesterday" in nextday["hint"] and nextday["ago"] == "10 hours ago"


def test_dedupe_groups_a_repeated_line_and_never_counts_more_than_the_files_hold(tmp_path):
    mem = tmp_path / "MEMORY.md"
    mem.write_text("# M\n" + "- Always run the tests before you push a commit.\n" * 30 +
                   "- Redis is on port 6380 in staging today.\n")
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# A\n- Always run the tests before you push a commit.\n")
    res = run("dedupe", mem, agents, "--embedder", "keyword", "--json")
    rows = res.records()
    assert len(rows) == 1  # one group, not 465 pairs
    r = rows[0]
    assert r["a"] == f"{mem}:2" and r["copies"] == 30 and len(r["places"]) == 31 and r["kind"] == "exact"
    assert r["places"][-1] == f"{agents}:2"
    held = int(run("count", "-i", mem, "-i", agents).stdout.strip())
    one = int(run("count", "Always run the tests before you push a commit.").stdout.strip())
    assert r["tokens_wasted_per_turn"] == 30 * one < held
    assert "1 passage(s) said more than once (30 extra copies)" in res.stderr
