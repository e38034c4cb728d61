"""Hot context verbs, observer, reflector, maintain."""
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys

from conftest import PY, ROOT, corpus, ctx_subprocess_env, memory_docs, run
from ctxkit.core import context_md as C
from ctxkit.core.entities import extract

CC = "claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl"


def doc(ctx_home):
    return C.parse((ctx_home / "workspace" / "CONTEXT.md").read_text())


def test_goals_decisions_constraints_remember(ctx_home):
    assert run("goal", "add", "Implement JWT auth", "--priority", "high").stdout.strip() == "g-001"
    assert run("goal", "add", "Write tests", "--parent", "g-001", "--agent", "bot").stdout.strip() == "g-002"
    assert run("goal", "add", "x", "--parent", "g-404").code == 2  # an unknown id: usage
    run("goal", "start", "g-002")
    run("goal", "complete", "g-001")
    goals = [json.loads(x) for x in run("goal", "list", "--json").stdout.splitlines()]
    assert [(g["goal_id"], g["status"], g["priority"], g["parent"]) for g in goals] == [
        ("g-001", "complete", "high", None), ("g-002", "in-progress", "medium", "g-001")]
    assert goals[1]["by"] == "bot"
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", g["created"]) for g in goals)  # seed 004: created
    assert run("goal", "list", "--status", "pending", "--json").stdout == ""
    assert run("goal", "list", "--jq", ".goal_id", "-r").stdout.split() == ["g-001", "g-002"]
    run("decision", "log", "Use RS256", "--why", "key rotation", "--agent", "agent-a")
    run("constraint", "add", "TTL must be 1 hour")
    assert run("constraint", "list", "--jq", ".constraint", "-r").stdout.strip() == "TTL must be 1 hour"
    assert run("constraint", "remove", "nope").code == 1
    run("remember", "Staging DB is read-only on Fridays")
    d = doc(ctx_home)
    assert d.sections["Decisions"][0].why == "key rotation" and d.sections["Decisions"][0].by == "agent-a"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", d.sections["Decisions"][0].at)  # decisions carry a time
    assert d.sections["Pinned"][0].text == "Staging DB is read-only on Fridays"
    assert run("goal", "start", "g-002", "--if-version", "1").code == 4


def test_goal_ids_complete_in_the_shell(ctx_home):
    run("goal", "add", "Implement JWT auth")
    run("goal", "add", "Write tests")
    env = {**os.environ, "COMP_WORDS": "ctx goal start g-00", "COMP_CWORD": "3", "_CTX_COMPLETE": "bash_complete"}
    p = subprocess.run([sys.executable, "-m", "ctxkit"], env=env, capture_output=True, text=True)
    assert p.stdout.split() == ["plain,g-001", "plain,g-002"], p.stdout + p.stderr
    files = subprocess.run([sys.executable, "-m", "ctxkit"], capture_output=True, text=True, cwd=str(ctx_home.parent),
                           env={**env, "COMP_WORDS": "ctx status ctx-h", "COMP_CWORD": "2"})
    assert files.stdout.split() == ["file,ctx-h"]  # FILE arguments complete as files


def test_pinned_fact_survives_compaction(ctx_home):
    run("remember", "The deploy key lives in vault:secret/deploy")
    path = corpus(CC)
    run("compact", path, "--budget", "3000", "--force")
    run("compact", path, "--budget", "2000", "--force")
    d = doc(ctx_home)
    assert [i.text for i in d.sections["Pinned"]] == ["The deploy key lives in vault:secret/deploy"]
    summary = [r for r in run("compact", path, "--budget", "2000", "--force").records() if r["kind"] == "summary"]
    assert "vault:secret/deploy" in summary[0]["content"]


def test_completed_goals_age_out_of_the_prompt_but_stay_in_the_file(ctx_home):
    run("goal", "add", "Old goal")
    run("goal", "complete", "g-001")
    run("goal", "add", "Live goal")
    ws = ctx_home / "workspace"
    assert "Old goal" in run("prompt", "build", "--workspace", ws).stdout
    out = run("prompt", "build", "--workspace", ws, env={"CTX_AGE_OUT_HOURS": "0"}).stdout
    assert "Old goal" not in out and "Live goal" in out
    assert "Old goal" in (ws / "CONTEXT.md").read_text()


def test_entities_are_extracted_and_merged(ctx_home):
    recs = [{"v": 1, "kind": "message", "role": "user", "content": "Ask @sarah about src/auth/jwt.py, see "
             "https://example.com/rfc7519 and `validate_token()`; run pip install pyjwt cryptography"}]
    found = extract(recs)
    assert found["people"] == ["@sarah"] and found["urls"] == ["https://example.com/rfc7519"]
    assert "src/auth/jwt.py" in found["files"] and "validate_token" in found["functions"]
    assert found["packages"] == ["pyjwt", "cryptography"]
    run("entities", "-", input=json.dumps(recs[0]) + "\n")
    items = [i.text for i in doc(ctx_home).sections["Key entities"]]
    assert "people: @sarah" in items


def _mixed_updates(home, k):
    env = ctx_subprocess_env(home)
    os.environ.update(env)
    from ctxkit.cli.main import main

    for i in range(50):
        args = [["decision", "log", f"d{k}-{i}"], ["constraint", "add", f"c{k}-{i}"], ["remember", f"r{k}-{i}"],
                ["goal", "add", f"g{k}-{i}"]][i % 4]
        try:
            main(args)
        except SystemExit as e:
            assert e.code in (0, None)


def test_eight_processes_fifty_mixed_updates_lose_nothing(tmp_path):
    home = tmp_path / "h"
    procs = [mp.Process(target=_mixed_updates, args=(home, k)) for k in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert all(p.exitcode == 0 for p in procs)
    d = C.parse((home / "workspace" / "CONTEXT.md").read_text())
    assert d.version == 400
    # every update applied (version 400); uncapped sections keep every item, capped ones their newest
    assert {i.text for i in d.sections["Pinned"]} == {f"r{k}-{i}" for k in range(8) for i in range(2, 50, 4)}
    # constraints are never evicted; decisions over their cap of 20 move to archive/decisions.md, none lost
    assert {i.text for i in d.sections["Constraints"]} == {f"c{k}-{i}" for k in range(8) for i in range(1, 50, 4)}
    archived = (home / "workspace" / "archive" / "decisions.md").read_text().splitlines()
    kept = {i.text for i in d.sections["Decisions"]}
    assert len(kept) == 20
    assert kept | {re.sub(r" \(at [^)]*\)$", "", line[2:]) for line in archived} == \
        {f"d{k}-{i}" for k in range(8) for i in range(0, 50, 4)}
    goals = [i for i in d.sections["Goals"]]
    assert len(goals) == 8 * 12 and len({g.text.split(" ")[0] for g in goals}) == 96  # unique ids under the lock


def test_observe_then_reflect_fill_memory_with_traceable_facts(ctx_home):
    path = corpus(CC)
    ws = ctx_home / "workspace"
    ws.mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Always read mix.exs before changing dependencies in the project.\n")
    res = run("observe", path)
    assert res.code == 0, res.stderr
    obs = res.stdout.strip()
    assert os.path.basename(obs).endswith("_6c2214d7-b87e-4432-8e41-22ba294ea584.agent-afc096d.md")
    text = memory_docs(ctx_home)["observations/" + os.path.basename(obs)]
    for s in ("## Requests", "## Decisions", "## Outcomes", "## Files", "## Errors"):
        assert s in text
    assert doc(ctx_home).sections["Recent"]
    r1 = run("reflect", "--json", "--embedder", "keyword").json()
    mem = memory_docs(ctx_home)["MEMORY.md"]
    assert r1["added"] >= 1
    for line in mem.strip().split("\n"):
        assert line.startswith("- ") and "(from observations/" in line and "<think" not in line
    r2 = run("reflect", "--json", "--embedder", "keyword").json()
    assert r2["added"] == 0 and r2["skipped"]["duplicate"] >= r1["added"]  # idempotent


def test_reflect_refreshes_a_stale_context(ctx_home):
    path = corpus(CC)
    run("observe", path)
    cpath = ctx_home / "workspace" / "CONTEXT.md"
    old = os.path.getmtime(cpath) - 3 * 86400
    os.utime(cpath, (old, old))
    assert run("reflect", "--json", "--embedder", "keyword").json()["context_refreshed"] is True


def test_maintain_is_idempotent_and_reports_events(ctx_home, tmp_path):
    path = corpus(CC)
    first = [json.loads(x) for x in run("maintain", path).stdout.splitlines()]
    assert first[0]["event"] == "status"
    assert {"summary_refresh"} <= {e["event"] for e in first}
    again = [json.loads(x) for x in run("maintain", path).stdout.splitlines()]
    assert again == [{"event": "nothing_to_do", "session": first[0]["session"], "reason": "no new records"}]
    hot = [json.loads(x) for x in run("maintain", path, "--session-end",
                                      env={"CTX_MAX_TOKENS": "40000", "CTX_RESERVE_TOKENS": "0"}).stdout.splitlines()]
    kinds = [e["event"] for e in hot]
    assert "curation" in kinds and "emergency_compaction" in kinds and "observation" in kinds


def test_maintain_concurrent_with_itself(tmp_path):
    home = tmp_path / "h"
    env = ctx_subprocess_env(home)
    path = corpus(CC)
    procs = [subprocess.Popen([PY, "-m", "ctxkit", "maintain", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=ROOT, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    events = [json.loads(x)["event"] for o, _ in outs for x in o.splitlines()]
    assert events.count("status") == 1 and events.count("nothing_to_do") == 2


def test_curation_triggers_drops_to_cold_storage(ctx_home, tmp_path):
    """Seed 003: at curation_trigger_pct, maintain curates: low-relevance chunks go to cold
    storage (recoverable), and curation.jsonl says how many drops it triggered."""
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("embedder: keyword\nmax_tokens: 300000\ncompaction_trigger_pct: 0.9\n"
                                          "max_context_pct: 0.95\n")
    path = corpus("claude-code_spotter_fa812bfe_session.jsonl")
    events = [json.loads(x) for x in run("maintain", path, "--workspace", tmp_path).stdout.splitlines()]
    cur = next(e for e in events if e["event"] == "curation")
    logged = run("logs", "curation", "--json").records()[-1]
    assert logged["event"] == "memfas_curation" and logged["drops_triggered"] == cur["drops_triggered"] > 0
    assert logged["token_savings"] > 0 and logged["total_hits_before_curation"] > logged["drops_triggered"]
    drops = [d for d in run("drops", "--reason", "curation", "--json").records()]
    assert len(drops) == cur["drops_triggered"]
    back = run("recover", "--chunk-id", drops[0]["chunk_id"], "--session", drops[0]["session_id"])
    assert back.code == 0 and back.records() and all("score" not in r for r in back.records())


def test_entities_without_prose_noise_and_packages_from_manifests_and_imports():
    from ctxkit.core.entities import extract, manifest_packages

    call = {"id": "t1", "type": "function", "function": {"name": "Read", "arguments": json.dumps({"file_path": "mix.exs"})}}
    recs = [
        {"role": "user", "kind": "message", "content": "Fix it 1/2 of the time, and/or open/closed/blocked; the "
                                                        "function that renders, a class component, n/a"},
        {"role": "assistant", "kind": "message", "content": "Run `pip install --upgrade-strategy only-if-needed "
                                                             "aider-chat[google]` then the tests. See render/1 in "
                                                             "lib/app/live.ex and def load_session(x)."},
        {"role": "assistant", "kind": "message", "content": "", "tool_calls": [call]},
        {"role": "tool", "kind": "message", "tool_call_id": "t1",
         "content": '     1→defp deps do\n     2→  [{:phoenix, "~> 1.7"}, {:oban, ">= 2.0"}]\n     3→end'},
    ]
    got = extract(recs)
    assert sorted(got["packages"]) == ["aider-chat", "oban", "phoenix"]
    assert "render/1" in got["functions"] and "load_session" in got["functions"]
    assert not {"that", "component"} & set(got["functions"])
    assert "lib/app/live.ex" in got["files"]
    assert not {"1/2", "and/or", "open/closed/blocked", "n/a"} & set(got["files"])
    assert manifest_packages("src/a.py", "import os\nimport numpy as np\nfrom pydicom.dataset import X\n"
                                         "import the rest later, from the docs\n") == ["numpy", "pydicom"]
    assert manifest_packages("package.json", '{"dependencies": {"react": "18"}, "devDependencies": {"vitest": "1"}}') \
        == ["react", "vitest"]
    assert manifest_packages("requirements.txt", "requests>=2\n# c\n-r base.txt\nclick\n") == ["requests", "click"]
    assert manifest_packages("web/app.ts", "import x from 'lodash'\nimport y from './y'\n") == ["lodash"]


def test_curation_scores_against_what_the_agent_is_doing_when_the_request_is_continue(ctx_home, tmp_path):
    """A bare "continue" names nothing: curation (maintain, the Stop hook's worker) scores against
    what `ctx score` scores against by default, the open work item, the agent's last words and the
    files in play, never the word "continue"."""
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("embedder: keyword\nmax_tokens: 300000\ncompaction_trigger_pct: 0.9\n"
                                          "max_context_pct: 0.95\n")
    recs = run("import", corpus("claude-code_spotter_fa812bfe_session.jsonl")).records()
    last = recs[-1]
    recs.append({"v": 1, "kind": "message", "id": "u-continue", "session": last["session"], "ts": last["ts"],
                 "role": "user", "content": "continue"})
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    events = [json.loads(x) for x in run("maintain", path, "--workspace", tmp_path).stdout.splitlines()]
    cur = next(e for e in events if e["event"] == "curation")
    scored = run("score", path).records()
    query = scored[0]["meta"]["query"]
    assert cur["query"] == query[:100] and "continue" not in query.split("\n")[0].lower()
    assert "spotter-a0y" in query   # the work item in progress
    assert cur["drops_triggered"] > 0
