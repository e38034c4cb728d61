"""prompt build, tools, memory, time, external, dedupe, session, hooks: on a real workspace
made in a temp dir (real files, a real git repository)."""
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, corpus, log_events, put_memory, run
from ctxkit.core.timeinfo import gap_class
from ctxkit.core.timeutil import parse_ts

SOUL = """# Soul
You are Nano, a small local agent that helps Marco with his projects.

## Style
Be concise, use tools, never fabricate.
Answer in English unless Marco writes German.
"""
USER = "# User\nMarco writes Elixir and Rust.\nAssumptions are forbidden: ask when unsure.\n"
AGENTS = "# Agents\nAssumptions are forbidden: ask when unsure.\nAlways pass the model to spawn.\n"
MEMORY = "- LoRA training on the 3B model uses rank 16 and alpha 32\n- The deploy script lives in scripts/deploy.sh\n" \
         "- Marco prefers pytest over unittest\n"
TOOLS = [{"type": "function", "function": {"name": n, "description": f"The {n} tool",
                                           "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}}
         for n in ("exec", "read_file", "write_file", "task_board", "web_search")]


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "agent"
    ws.mkdir()
    (ws / "SOUL.md").write_text(SOUL)
    (ws / "USER.md").write_text(USER)
    (ws / "AGENTS.md").write_text(AGENTS)
    (ws / "tools.json").write_text(json.dumps(TOOLS))
    put_memory(ws, MEMORY, {"2026-01-01_s1.md": "- Trained a LoRA adapter for 3 epochs\n"})
    return ws


def test_prompt_build_text_lean_and_labelled(workspace):
    res = run("prompt", "build", "--workspace", workspace, "--budget", "2000")
    assert res.code == 0, res.stderr
    out = res.stdout
    assert f"# SOUL.md ({workspace / 'SOUL.md'})" in out
    assert "Available tools: exec, read_file, write_file, task_board, web_search" in out
    assert '"parameters"' not in out  # schemas are on demand only
    assert "# Time" in out and "Last interaction:" in out
    assert out.count("Assumptions are forbidden") == 1  # duplicated line said once
    assert int(run("count", input=out).stdout) <= 2000


def test_static_part_is_byte_identical_and_first(workspace):
    a = json.loads(run("prompt", "build", "--workspace", workspace, "--format", "json").stdout)
    b = json.loads(run("prompt", "build", "--workspace", workspace, "--format", "json").stdout)
    static_a = a["system"].split("# Time")[0]
    assert static_a == b["system"].split("# Time")[0]
    kinds = [s["static"] for s in a["sections"]]
    assert kinds == sorted(kinds, reverse=True)  # every static section before every dynamic one


def test_query_adds_relevant_memory_within_its_budget(workspace, ctx_home):
    res = run("prompt", "build", "--workspace", workspace, "--query", "LoRA training", "--embedder", "keyword")
    assert "# Relevant Memory" in res.stdout and "rank 16" in res.stdout
    cur = log_events("curation")
    assert cur[-1]["query"] == "LoRA training" and cur[-1]["hits_found"] >= 1
    assert cur[-1]["total_hits_before_curation"] >= cur[-1]["hits_found"]


def test_budget_drops_and_reports_never_mid_sentence(workspace):
    (workspace / "CONTEXT.md").write_text("<!-- ctx:context v1 version=1 -->\n# Context\n\n## Task\nShip v2.\n")
    res = run("prompt", "build", "--workspace", workspace, "--budget", "120", "--format", "json")
    d = json.loads(res.stdout)
    statuses = {s["name"].split(" (")[0]: s["status"] for s in d["sections"]}
    assert statuses["Tools"] == "omitted"
    assert statuses["Context"] == "included"  # hot context is never dropped
    for s in d["sections"]:
        if s["status"] == "shortened":
            assert s["note"].startswith("shortened to fit the budget")
    assert d["tokens"] <= 120
    explain = run("prompt", "build", "--workspace", workspace, "--budget", "120", "--explain", "-t").stdout
    assert "omitted" in explain and "TOTAL" in explain
    rows = run("prompt", "build", "--workspace", workspace, "--budget", "120", "--explain").records()  # piped: JSONL
    assert rows[-1]["section"] == "TOTAL" and any(r["status"] == "omitted" for r in rows)


def test_pinned_file_never_dropped(workspace):
    (workspace / "AGENTS.md").write_text("<!-- ctx:pinned -->\nNever push to main. " * 3)
    d = json.loads(run("prompt", "build", "--workspace", workspace, "--budget", "60", "--format", "json").stdout)
    agents = [s for s in d["sections"] if s["name"].startswith("AGENTS.md") and str(workspace) in s["name"]]
    assert agents and agents[0]["status"] == "included"


def test_messages_format_with_records(workspace):
    recs = corpus("tau-bench_gpt-4o-airline_idx173_task23.json")
    kept = workspace / "kept.jsonl"
    kept.write_text(run("import", recs).stdout)
    d = json.loads(run("prompt", "build", "--workspace", workspace, "--format", "messages", "--records", kept,
                       "--history-budget", "1500").stdout)
    msgs = d["messages"]
    assert msgs[0]["role"] == "system" and len(msgs) > 2
    # seed 002: the history opens with the session's start, in local time
    assert re.fullmatch(r"\[Session started: \d{4}-\d\d-\d\d \d\d:\d\d \(local\)\]", msgs[1]["content"])
    assert "# Environment\nWorking directory: " in msgs[0]["content"] and "Operating system: " in msgs[0]["content"]
    calls = {c["id"] for m in msgs for c in m.get("tool_calls") or ()}
    assert calls == {m["tool_call_id"] for m in msgs if m["role"] == "tool"}


def test_environment_layer_names_os_distro_wsl_terminal_and_mode():
    from ctxkit.sources.environment import describe_os, environment_lines, os_release

    ubuntu = 'NAME="Ubuntu"\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n'
    assert os_release(ubuntu) == "Ubuntu 24.04.1 LTS" and os_release('NAME=Arch\nVERSION_ID=1\n') == "Arch 1"
    wsl = describe_os("Linux", "5.15.153.1-microsoft-standard-WSL2", "Linux version 5.15 (Microsoft)", ubuntu)
    assert wsl == "Linux (Ubuntu 24.04.1 LTS, WSL2 on Windows)"
    assert describe_os("Linux", "6.8.0", "Linux version 6.8.0", ubuntu) == "Linux (Ubuntu 24.04.1 LTS)"
    assert describe_os("Darwin", "23.5.0", "", "", "14.5") == "macOS 14.5"
    os.environ["TERM_PROGRAM"], os.environ["TERM"] = "vscode", "xterm-256color"
    try:
        lines = environment_lines("/src/app", "interactive")
        assert lines[0] == "Working directory: /src/app" and "Terminal: vscode (xterm-256color)" in lines
        assert lines[-1] == "Mode: Interactive terminal"
        assert not any(x.startswith("Terminal") for x in environment_lines("/src/app", "pipeline"))
    finally:
        del os.environ["TERM_PROGRAM"]


def test_soul_and_user_condensed_and_prompt_never_over_budget(workspace, ctx_home):
    soul = "# Soul\n\n" + "\n\n".join(f"## Part {i}\n" + "\n".join(
        f"- rule {i}.{j}: " + " ".join(f"w{i}{j}{k}" for k in range(25)) for j in range(5)) for i in range(6))
    (workspace / "SOUL.md").write_text(soul)
    (workspace / "USER.md").write_text(soul.replace("Soul", "User").replace("rule", "pref"))
    (workspace / "AGENTS.md").write_text(soul.replace("Soul", "Agents").replace("rule", "duty") * 2)
    run("compact", corpus("claude-code_spotter_fa812bfe_session.jsonl"), "--force", "--workspace", workspace)
    d = json.loads(run("prompt", "build", "--workspace", workspace, "--budget", "4000", "--format", "json").stdout)
    by = {s["name"].split(" (")[0] + ("@ws" if str(workspace) in s["name"] else ""): s for s in d["sections"]}
    for name in ("SOUL.md@ws", "USER.md@ws"):  # seed 000: about 200 tokens, every part represented
        assert by[name]["status"] == "condensed" and 150 <= by[name]["tokens"] <= 215, by[name]
    assert all(f"## Part {i}" in d["system"] for i in range(6))
    for budget in (3000, 1000, 600, 300, 120, 60):
        d = json.loads(run("prompt", "build", "--workspace", workspace, "--budget", budget, "--format", "json").stdout)
        assert d["tokens"] <= budget, (budget, d["tokens"])
        by = {s["name"].split(" (")[0] + ("@ws" if str(workspace) in s["name"] else ""): s for s in d["sections"]}
        if budget >= 600:  # identity gives way last: shortened, never omitted, while the budget allows
            assert by["SOUL.md@ws"]["status"] != "omitted" and by["Context@ws"]["status"] != "omitted"
    (workspace / "AGENTS.md").write_text("<!-- ctx:pinned -->\n" + "Never push to main on Fridays. " * 40)
    res = run("prompt", "build", "--workspace", workspace, "--budget", "100")
    assert res.code == 1 and "pinned files alone need" in res.stderr


def test_tools_list_show_and_near_matches(workspace):
    assert run("tools", "list", "--workspace", workspace, "--jq", ".name", "-r").stdout.split() == \
        [t["function"]["name"] for t in TOOLS]  # piped, the listing is JSONL: --jq -r for bare names
    shown = json.loads(run("tools", "show", "task_board", "--workspace", workspace).stdout)
    assert shown["function"]["parameters"]["properties"]["x"]["type"] == "string"
    res = run("tools", "show", "task_bord", "--workspace", workspace)
    assert res.code == 1 and "did you mean task_board" in res.stderr
    y = workspace / "tools.yaml"
    y.write_text("tools:\n  - type: function\n    function: {name: cron, description: schedule}\n")
    assert [r["name"] for r in run("tools", "list", "--registry", y).records()] == ["cron"]


def test_memory_search_sources_and_scores(workspace):
    hits = run("memory", "search", "LoRA training", "--workspace", workspace, "--embedder", "keyword",
               "--json").records()
    assert hits[0]["source"] in ("MEMORY.md:1", "observations/2026-01-01_s1.md:1")
    assert all(0 < h["score"] <= 1 for h in hits)
    real = run("memory", "search", "how do I ship to production", "--workspace", workspace, "-n", "1",
               "--json").records()
    assert real[0]["source"] == "MEMORY.md:2"  # semantic (minilm): deploy script, no shared keyword


def test_time_gap_classes():
    now = parse_ts("2026-02-12T13:49:00Z")
    cases = {"2026-02-12T13:47:00Z": "continue", "2026-02-12T13:30:00Z": "brief",
             "2026-02-12T12:30:00Z": "reorient", "2026-02-12T09:00:00Z": "summarize",
             "2026-02-11T09:00:00Z": "next-day"}
    for ts, cls in cases.items():
        assert gap_class(parse_ts(ts), now)[0] == cls
    assert gap_class(None, now)[0] == "first"


def test_time_from_the_session_index(ctx_home):
    run("status", corpus("claude-code_spotter_491e126e_session.jsonl"), "--log")
    d = run("time", "--json", "--now", "2026-02-10T23:00:00Z").json()
    assert d["last_interaction"] == "2026-02-10T22:03:51Z" and d["gap_class"] == "reorient"
    assert d["session_id"] == "491e126e-1e71-469c-ade2-fcc8af567c74"


def test_external_with_a_real_git_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    g = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    g("init", "-q", "-b", "main")
    g("config", "user.email", "t@example.com")
    g("config", "user.name", "T")
    (repo / "a.py").write_text("x = 1\n")
    g("add", ".")
    g("commit", "-qm", "first commit")
    g("remote", "add", "origin", "https://user:s3cret@example.com/r.git")
    (repo / "a.py").write_text("x = 2\n")
    (repo / "new.txt").write_text("n\n")
    d = run("external", "--repo", repo, "--since", "1h", "--json").json()
    git = d["git"]
    assert git["branch"] == "main"
    assert {c["path"] for c in git["changed"]} == {"a.py", "new.txt"}
    assert [c["subject"] for c in git["commits_since"]] == ["first commit"]
    assert "s3cret" not in json.dumps(d) and git["remotes"]["origin"] == "https://example.com/r.git"
    text = run("external", "--repo", repo, "--since", "1h", "-t").stdout
    assert "Branch: main" in text and "Commits since last session: 1" in text


def test_external_outside_git_is_a_note_or_an_error(tmp_path, monkeypatch):
    res = run("external", "--repo", tmp_path, "--json")  # a --repo that is not a repository: an error
    assert res.code == 1 and res.stdout == "" and "not in a git repository" in res.stderr
    monkeypatch.chdir(tmp_path)  # no --repo, and the current folder is not in one: a note, no git part
    res = run("external", "--json")
    assert res.code == 0 and res.json()["git"]["repo"] is None and "no git changes" in res.stderr


def test_dedupe_finds_exact_and_near(workspace):
    rows = run("dedupe", workspace / "USER.md", workspace / "AGENTS.md", workspace / "SOUL.md", "--json").records()
    exact = [r for r in rows if r["kind"] == "exact"]
    assert exact and exact[0]["a"].endswith("USER.md:3") and exact[0]["b"].endswith("AGENTS.md:2")
    assert exact[0]["tokens_wasted_per_turn"] > 5
    assert run("dedupe", "--workspace", workspace, "-t").code == 0


def test_dedupe_finds_a_paraphrase_with_the_measured_default(tmp_path, ctx_home):
    """bench/bench_defaults.py: word shingles never catch a paraphrase; MiniLM at 0.6 caught
    10 of 12 with no false pair. The default (minilm, 0.6) fires; keyword mode does not."""
    (tmp_path / "SOUL.md").write_text("# Soul\n- Never push directly to the main branch.\n"
                                      "- Ask before deleting any file in the repository.\n")
    (tmp_path / "AGENTS.md").write_text("# Agents\n- Do not commit straight onto main; always use a branch.\n"
                                        "- Run the full test suite before every commit.\n")
    files = [tmp_path / "SOUL.md", tmp_path / "AGENTS.md"]
    rows = run("dedupe", *files, "--json").records()
    assert [(r["a"].split("/")[-1], r["b"].split("/")[-1], r["kind"]) for r in rows] == [
        ("SOUL.md:2", "AGENTS.md:2", "paraphrase")]
    assert rows[0]["similarity"] >= 0.6
    assert run("dedupe", *files, "--embedder", "keyword", "--json").records() == []


def test_session_list_show_restore(ctx_home, tmp_path):
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    run("compact", src, "--budget", "3000", "--force")
    rows = run("session", "list", "--json").records()
    sid = "491e126e-1e71-469c-ade2-fcc8af567c74"
    assert rows[0]["session_id"] == sid and rows[0]["records"] == 36
    assert json.loads(run("session", "show", sid).stdout)["source"] == src
    res = run("session", "restore", sid, "--last", "4")
    out = res.records()
    assert out[0]["kind"] == "summary" and out[0]["meta"]["restored_from"].endswith("CONTEXT.md")
    assert out[-1]["id"] == run("import", src).records()[-1]["id"]
    assert run("session", "restore", "nope").code == 2  # an unknown id: usage


HOOK_ENV_KEYS = ("session_id", "transcript_path", "cwd", "hook_event_name")


def test_claude_code_hooks_end_to_end(ctx_home, tmp_path):
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    base = {"session_id": "491e126e", "transcript_path": t, "cwd": str(tmp_path)}
    pre = run("hook", "claude-code", "PreCompact",
              input=json.dumps({**base, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}))
    # PreCompact's stdout is the instructions for Claude's own summary: the verified state
    assert pre.code == 0 and pre.stdout.startswith("ctx has the verified state of this session")
    assert "## Task" in pre.stdout
    ctx_md = ctx_home / "workspace" / "CONTEXT.md"
    assert "## Files" in ctx_md.read_text()
    start = run("hook", "claude-code", "SessionStart",
                input=json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}))
    out = json.loads(start.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "## Files" in out["additionalContext"] and "Last interaction" in out["additionalContext"]
    low = run("hook", "claude-code", "UserPromptSubmit",
              input=json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
              env={"CTX_MAX_TOKENS": "10000000"})
    assert low.code == 0 and low.stdout == ""  # below the trigger: nothing to say
    high = run("hook", "claude-code", "UserPromptSubmit",
               input=json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
               env={"CTX_CONTEXT_WINDOW": "50000"})
    assert json.loads(high.stdout)["hookSpecificOutput"]["additionalContext"].startswith("Context: ")
    stop = run("hook", "claude-code", "Stop", input=json.dumps({**base, "hook_event_name": "Stop"}))
    assert stop.code == 0
    assert run("session", "list", "--json").records()[0]["session_id"].startswith("491e126e")
    bad = run("hook", "claude-code", "Stop", input="{not json")
    assert bad.code == 1  # a real problem is exit 1 (shown, never blocking); never 2, which would block Claude
    # Claude Code runs some hooks before it writes the transcript: nothing to read is no error
    missing = run("hook", "claude-code", "Stop", input=json.dumps({"transcript_path": "/nope.jsonl"}))
    assert missing.code == 0


def test_generic_hook_prints_plain_text(ctx_home):
    t = corpus("claude-code_spotter_491e126e_session.jsonl")
    assert run("hook", "generic", "SessionEnd", "--transcript", t).code == 0
    out = run("hook", "generic", "SessionStart", "--transcript", t).stdout
    assert out.startswith("# Context") and "## Time" in out


def test_example_settings_wire_every_event():
    d = json.load(open(os.path.join(ROOT, "examples", "claude-code", "settings.json")))
    for ev in ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop", "SessionEnd"):
        assert d["hooks"][ev][0]["hooks"][0]["command"] == f"ctx hook claude-code {ev}"


def test_memory_search_include_cold_finds_dropped_chunks(workspace, ctx_home):
    from test_relevance import SESSION, jsonl

    s = run("score", "--query", "JWT refresh token", "--embedder", "keyword", "--now", "2026-01-01T06:00:00Z",
            input=jsonl(SESSION)).stdout
    run("drop", "--min-keep", "1", "--cutoff", "0.3", input=s)
    hits = run("memory", "search", "pasta recipe", "--workspace", workspace, "--embedder", "keyword",
               "--include-cold", "--json").records()
    cold = [h for h in hits if h["source"].startswith("cold:s1/")]
    assert cold and cold[0]["recover"].startswith("ctx recover --chunk-id ")
    back = run(*cold[0]["recover"].split()[1:])
    assert back.code == 0 and back.records()


def test_external_ignores_ctx_own_files_and_names_a_missing_git(tmp_path, ctx_home):
    import subprocess as sp
    import sys

    ws = tmp_path / ".ctx"
    run("remember", "x", "--workspace", ws)
    (ws / "notes.md").write_text("edited by hand")
    from datetime import datetime, timedelta, timezone

    from ctxkit.sources.external import modified_files

    files = [f["path"] for f in modified_files(str(ws), datetime.now(timezone.utc) - timedelta(hours=1))]
    assert files == ["notes.md"]
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path), "CTX_HOME": str(ctx_home)}
    code = "from ctxkit.sources.external import git_changes; print(git_changes('.', None)['note'])"
    p = sp.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert "git command is not installed" in p.stdout, p.stdout + p.stderr


def test_prompt_build_is_the_same_with_remembered_counts(workspace, ctx_home):
    first = run("prompt", "build", "--workspace", workspace).stdout      # fits by the bounds: nothing counted
    as_json = json.loads(run("prompt", "build", "--workspace", workspace, "--format", "json").stdout)["system"]
    assert (ctx_home / "cache" / "token-counts.json").exists()          # exact counts, remembered
    second = run("prompt", "build", "--workspace", workspace).stdout
    strip = lambda t: "\n".join(x for x in t.split("\n") if "Now:" not in x and "ago" not in x)  # noqa: E731
    assert strip(first) == strip(second) == strip(as_json)
    for budget in ("300", "600", "900"):  # tight budgets: the bound path cuts exactly as the exact path does
        small = run("prompt", "build", "--workspace", workspace, "--budget", budget).stdout
        exact = json.loads(run("prompt", "build", "--workspace", workspace, "--budget", budget,
                               "--format", "json").stdout)["system"]
        assert strip(small) == strip(exact)
