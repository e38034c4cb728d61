"""What compaction writes, read as a user would, on every corpus transcript: a real Task, no
narration, no duplicate or cut bullets, a prompt view within its budget; per-session state;
bad spans that never crash."""
import json
import os
import re

import pytest

from conftest import CORPUS, CORPUS_FILES, corpus, put_memory, run, stored_archives, stored_sessions, stored_text
from ctxkit.core import context_md as C
from ctxkit.core.hygiene import ends_mid_word, is_narration, near_duplicate

FILES = CORPUS_FILES
NARRATION = re.compile(r"^(let me|let's|i see|i'll|i need|i will|now i|okay|that's the bug - my)\b", re.I)


def bullets(text: str) -> list[str]:
    return [ln[2:].strip() for ln in text.split("\n") if ln.startswith("- ")]


@pytest.mark.parametrize("name", FILES)
def test_summary_reads_well(name, tmp_path):
    src = corpus(name)
    total = int(run("count", src).stdout)
    res = run("compact", src, "--budget", str(max(400, total // 10)), "--force", "--workspace", tmp_path)
    assert res.code == 0, res.stderr
    summ = [r for r in res.records() if r["kind"] == "summary" and "compaction" in r.get("flags", [])]
    assert len(summ) == 1
    for text in (summ[0]["content"], (tmp_path / "CONTEXT.md").read_text()):
        bs = [re.sub(r"^\[[ x]\] ", "", b) for b in bullets(text)]
        for b in bs:
            assert not NARRATION.match(b) and not is_narration(b), b
            assert not ends_mid_word(b), b
            assert "\\n" not in b, b
            assert "Optional Next Step" not in b and "<summary>" not in b
        for section in re.split(r"\n## ", text):   # within a section (a step is one): a step's history may
            prose = [re.sub(r"^\[[ x]\] ", "", b) for b in bullets(section) if not b.startswith("`")]
            for i, a in enumerate(prose):     # repeat an earlier step's kind of line, a section never itself
                for b in prose[i + 1:]:
                    assert not near_duplicate(a, b, 0.95), (a, b)
    assert "<think" not in summ[0]["content"].lower()


@pytest.mark.parametrize("name", FILES)
def test_prompt_view_is_within_500_tokens(name, tmp_path):
    src = corpus(name)
    assert run("compact", src, "--budget", "1000", "--force", "--workspace", tmp_path).code == 0
    out = json.loads(run("prompt", "build", "--workspace", tmp_path, "--format", "json").stdout)
    sec = [s for s in out["sections"] if s["name"].startswith("Context")]
    assert sec and sec[0]["tokens"] <= 500
    ctx = C.parse((tmp_path / "CONTEXT.md").read_text())
    assert ctx.task and ctx.task in out["system"] or ctx.task[:100] in out["system"]


def test_summary_fills_what_compaction_freed(tmp_path):
    src = corpus("claude-code_spotter_fa812bfe_session.jsonl")
    small = run("compact", src, "--budget", "6000", "--force", "--workspace", tmp_path / "a", "--summary-tokens", "600")
    big = run("compact", src, "--budget", "6000", "--force", "--workspace", tmp_path / "b", "--summary-tokens", "4000")
    s1 = [r for r in small.records() if r["kind"] == "summary"][0]
    s2 = [r for r in big.records() if r["kind"] == "summary"][0]
    assert s1["tokens"] <= 600 < s2["tokens"]
    assert sum(r.get("tokens") or 0 for r in big.records()) <= 6000 + 50  # the whole output fits the budget


def test_subagent_never_replaces_the_main_sessions_state(tmp_path, ctx_home):
    ws = tmp_path / "ws"
    main = corpus("claude-code_spotter_8463c716_session.jsonl")
    sub = corpus("claude-code_spotter_8463c716_subagents_agent-acompact-f46190.jsonl")
    assert run("compact", main, "--budget", "3000", "--force", "--workspace", ws).code == 0
    before = C.parse((ws / "CONTEXT.md").read_text())
    res = run("compact", sub, "--budget", "500", "--force", "--workspace", ws)
    assert res.code == 0 and "belongs to another session" in res.stderr
    after = C.parse((ws / "CONTEXT.md").read_text())
    assert after.task == before.task and after.state["session"] == before.state["session"]
    stored = [s for s in stored_sessions(ctx_home) if "agent-acompact" in s]
    assert stored, "the subagent's state is kept in the session store"


def test_session_restore_makes_that_state_current(tmp_path, ctx_home):
    ws = tmp_path / "ws"
    a = corpus("claude-code_spotter_8463c716_session.jsonl")
    b = corpus("claude-code_spotter_491e126e_session.jsonl")
    run("compact", a, "--budget", "3000", "--force", "--workspace", ws)
    run("constraint", "add", "never push to main", "--workspace", ws)
    run("compact", b, "--budget", "3000", "--force", "--workspace", ws)  # another session: left alone
    assert C.parse((ws / "CONTEXT.md").read_text()).task.startswith("Work on bead spotter-fum")
    res = run("session", "restore", "491e126e-1e71-469c-ade2-fcc8af567c74", "--last", "0", "--workspace", ws)
    assert res.code == 0, res.stderr
    now = C.parse((ws / "CONTEXT.md").read_text())
    assert now.task.startswith("websearch to learn") and now.latest == "create the beads"
    assert [i.text for i in now.sections["Constraints"]] == ["never push to main"]  # workspace-level, carried over
    assert "Latest request: create the beads" in res.stderr and "Active goals" in res.stderr


def test_context_archive_and_clear(tmp_path, ctx_home):
    ws = tmp_path / "ws"
    run("compact", corpus("claude-code_spotter_491e126e_session.jsonl"), "--budget", "3000", "--force", "--workspace", ws)
    run("remember", "the deploy key is in vault", "--workspace", ws)
    dest = run("context", "archive", "--workspace", ws).stdout.strip()
    assert "## Task" in (stored_text(dest) or "")
    assert run("context", "clear", "--workspace", ws).code == 0
    ctx = C.parse((ws / "CONTEXT.md").read_text())
    assert not ctx.task and list(ctx.sections) == ["Pinned"]
    assert len(stored_archives(ctx_home)) == 2  # clear archived first


def _recs(rows):
    return "".join(json.dumps({"v": 1, "kind": "message", **r}) + "\n" for r in rows)


def test_bad_spans_never_crash_and_say_what_is_missing(tmp_path):
    only_tools = [{"id": f"a{i}", "role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})}}]}
        for i in range(5)]
    rows = []
    for i, r in enumerate(only_tools):
        rows += [r, {"id": f"t{i}", "role": "tool", "tool_call_id": f"c{i}", "content": "x " * 300}]
    res = run("compact", "-", "--budget", "300", "--force", "--workspace", tmp_path / "a", input=_recs(rows))
    assert res.code == 0, res.stderr
    text = [r for r in res.records() if r["kind"] == "summary"][0]["content"]
    assert "no user request found" in text
    huge = [{"id": "u", "role": "user", "content": "parse the log"},
            {"id": "a", "role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"cat x.log\"}"}}]},
            {"id": "t", "role": "tool", "tool_call_id": "c", "content": "Error: boom " + "y" * 1_100_000},
            {"id": "a2", "role": "assistant", "content": "The log is one long line."}]
    res = run("compact", "-", "--budget", "2000", "--force", "--workspace", tmp_path / "b", input=_recs(huge))
    assert res.code == 0, res.stderr
    summ = [r for r in res.records() if r["kind"] == "summary"][0]
    assert summ["tokens"] < 2000 and "parse the log" in summ["content"]


def test_maintain_cadence_refreshes_the_summary_and_archives(tmp_path, ctx_home):
    recs = run("import", corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")).stdout.splitlines()
    ws = tmp_path / "ws"
    env = {"CTX_ARCHIVE_EVERY_MESSAGES": "30", "CTX_WORKSPACE": str(ws)}
    events = []
    for n in (20, 40):
        part = tmp_path / f"p{n}.jsonl"
        part.write_text("\n".join(recs[:n]) + "\n")
        events += run("maintain", part, env=env).records()
    refresh = [e for e in events if e["event"] == "summary_refresh"]
    assert len(refresh) == 2 and all(e["groups_summarized"] > 0 for e in refresh)
    archived = [e for e in events if e["event"] == "archive"]
    assert len(archived) == 1 and stored_text(archived[0]["path"])
    assert C.parse((ws / "CONTEXT.md").read_text()).task.startswith("Explore the Elixir/Phoenix")


def test_reflect_keeps_narration_out_of_memory(tmp_path):
    ws = tmp_path / "ws"
    put_memory(ws, observations={"20260101T000000Z_s.md":
        "# Observation: s\n\n## Decisions\n- That's the bug - my code was treating it as a list.\n"
        "- Let me use find_file to locate the handler.\n"
        "- Uploads are limited to 10 MB by `MAX_UPLOAD` in settings.py.\n\n## Outcomes\n- Now update the tests.\n"})
    out = run("reflect", "--workspace", ws, "--json")
    assert out.code == 0, out.stderr
    memory = stored_text(out.json()["memory"])
    assert "MAX_UPLOAD" in memory
    assert "my code" not in memory and "Let me" not in memory and "Now update" not in memory


def test_clusters_of_similar_chunks_are_compacted_into_one_fact():
    from ctxkit.core.clusters import cluster_bullet, clusters

    def turn(i, text):
        return [{"v": 1, "kind": "message", "id": f"u{i}", "role": "user", "content": "run it again", "group": f"c-{i}"},
                {"v": 1, "kind": "message", "id": f"a{i}", "role": "assistant", "group": f"c-{i}", "content": text}]

    groups = [turn(i, "The flaky `test_upload_retry` fails on the S3 mock timeout again, so the build stays red.")
              for i in range(4)]
    groups += [turn(10, "Renamed the settings module to config.py and updated every import of it."),
               turn(11, "Pagination of the /users endpoint now uses cursors instead of offsets.")]
    found = clusters(groups)
    assert found == [[0, 1, 2, 3]]
    b = cluster_bullet(groups, found[0])
    assert b.startswith("4 similar exchanges (c-0, c-1, c-2, c-3): ") and "test_upload_retry" in b


def test_maintain_runs_cluster_compaction_on_its_cadence(tmp_path, ctx_home):
    recs = run("import", corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")).stdout
    p = tmp_path / "s.jsonl"
    p.write_text(recs)
    events = run("maintain", p, env={"CTX_WORKSPACE": str(tmp_path / "ws"), "CTX_CLUSTER_EVERY_MESSAGES": "50"}).records()
    assert any(e["event"] == "cluster_compaction" for e in events)


def test_a_stream_over_the_window_is_compacted_window_by_window(ctx_home, tmp_path):
    """Issue 12: compact holds one window of input (compact_window_mb), not the stream. Forced to
    five windows, the session's first request stays the Task, its latest the Latest request, the
    tool pairs stay whole, and the probes find what the one-pass compaction finds."""
    import json

    from conftest import corpus, run

    src = corpus("claude-code_spotter_fa812bfe_session.jsonl")
    one = run("compact", src, "--force", "--budget", "8000", "--workspace", tmp_path / "a")
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("compact_window_mb: 0.15\n")
    win = run("compact", src, "--force", "--budget", "8000", "--workspace", tmp_path / "b")
    assert win.code == 0 and "compacted in windows" in win.stderr
    recs = [json.loads(x) for x in win.stdout.splitlines()]
    assert recs[0]["kind"] == "summary" and sum(r.get("tokens") or 0 for r in recs) <= 8000
    calls = {c["id"] for r in recs for c in r.get("tool_calls") or ()}
    assert calls == {r["tool_call_id"] for r in recs if r.get("role") == "tool"}
    a, b = (open(tmp_path / d / "CONTEXT.md").read() for d in ("a", "b"))
    task = a.split("## Task\n", 1)[1].split("\n", 1)[0]
    assert task.startswith("Work on bead spotter-a0y") and f"## Task\n{task}\n" in b
    assert "## Latest request\ncontinue until all are done" in b and "## Step " in b
    for cand, name in ((one.stdout, "one"), (win.stdout, "win")):
        (tmp_path / f"{name}.jsonl").write_text(cand)
    probes = {}
    for name in ("one", "win"):
        rows = run("eval", src, "--candidate", tmp_path / f"{name}.jsonl", "--json").records()
        probes[name] = {r["category"]: r["recall"] for r in rows}
    for cat in ("artifact", "error", "continuation"):
        assert probes["win"][cat] >= probes["one"][cat] - 0.05, (cat, probes)
