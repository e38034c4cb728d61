"""One answer to "how full am I", from a project directory, with the agents' sessions where the
agents keep them (a scratch HOME): ctx finds the session, says which, and leads with what the
model sees; drop, count, status and compact count the same thing; one workspace resolution."""
import hashlib
import json
import os
import pty
import re
import shutil
import subprocess

import pytest

from conftest import PY, ROOT, corpus

TRANSCRIPT = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")
SESSION = "491e126e-1e71-469c-ade2-fcc8af567c74"
RECORDED = "/home/marco/projects/spotter"   # the cwd the transcript recorded
REPORTED = 43862                            # its last response's usage: input + cache + output


def claude_key(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


@pytest.fixture
def world(tmp_path):
    home, proj = tmp_path / "home", tmp_path / "proj"
    (proj / "lib" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    kept = home / ".claude" / "projects" / claude_key(str(proj))
    kept.mkdir(parents=True)
    (kept / f"{SESSION}.jsonl").write_text(open(TRANSCRIPT).read().replace(RECORDED, str(proj)))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTX_", "CLAUDE_", "CODEX_", "GEMINI_",
                                                                     "COPILOT_"))}
    env.update(HOME=str(home), CTX_HOME=str(home / ".ctx"), CTX_EMBEDDER="keyword", PYTHONPATH=ROOT,
               NO_COLOR="1", COLUMNS="200")
    return {"home": home, "proj": proj, "env": env, "transcript": str(kept / f"{SESSION}.jsonl")}


def ctx(world, *args, cwd=None, stdin=None, tty=False):
    """`ctx ARGS` as a person runs it: on a terminal (stdin a pty) or with STDIN piped in."""
    if tty:
        master, slave = pty.openpty()
        try:
            p = subprocess.run([PY, "-m", "ctxkit", *args], cwd=cwd or world["proj"], env=world["env"],
                               stdin=slave, capture_output=True, text=True, timeout=300)
        finally:
            os.close(slave)
            os.close(master)
        return p
    return subprocess.run([PY, "-m", "ctxkit", *args], cwd=cwd or world["proj"], env=world["env"], input=stdin or "",
                          capture_output=True, text=True, timeout=300)


def headline_pct(table: str) -> float:
    m = re.match(r"(\d+\.\d)% of the model's window: ([\d,]+) of ([\d,]+) tokens", table)
    assert m, table[:300]
    return float(m.group(1))


def test_status_in_a_project_finds_the_session_and_leads_with_what_the_model_sees(world):
    p = ctx(world, "status", "-t", tty=True)
    assert p.returncode == 0, p.stderr
    assert world["transcript"] in p.stderr and "Claude Code" in p.stderr   # says which file it took
    assert headline_pct(p.stdout) == round(100 * REPORTED / 200_000, 1)    # Claude's window, not GPT-4o's
    assert "claude-opus-4-6's window" in p.stdout
    d = json.loads(ctx(world, "status", "--json", tty=True).stdout)
    assert d["window_tokens"] == REPORTED and d["window"] == 200_000 and d["window_method"] == "provider-reported"
    assert d["budget"] == 200_000 - 8000   # no budget set: the window less the reserve
    # from a subfolder: the same session, the same workspace as the project's hooks
    sub = ctx(world, "status", "--json", cwd=world["proj"] / "lib" / "deep", tty=True)
    assert world["transcript"] in sub.stderr
    assert json.loads(sub.stdout)["workspace"] == d["workspace"]


def test_one_figure_before_and_after_drop_and_compact(world):
    """The headline equals what the model sees: the provider's figure while fresh; after drop and
    compact, ctx's count of the stream from its last boundary, the figure `ctx count` prints and
    the one drop and compact report."""
    scored = ctx(world, "score", "--query", "subagent detection", tty=True)
    assert scored.returncode == 0 and world["transcript"] in scored.stderr, scored.stderr
    dropped = ctx(world, "drop", "--free", "0.4", stdin=scored.stdout)
    assert dropped.returncode == 0, dropped.stderr
    counted = int(ctx(world, "count", stdin=dropped.stdout).stdout)
    d = json.loads(ctx(world, "status", "--json", stdin=dropped.stdout).stdout)
    assert d["window_method"] == "counted" and d["window_tokens"] == counted == d["total"]
    assert headline_pct(ctx(world, "status", "-t", stdin=dropped.stdout).stdout) == round(100 * counted / 200_000, 1)
    m = re.search(r"(\d+) -> (\d+) tokens", dropped.stderr)
    assert m and int(m.group(2)) == counted

    compacted = ctx(world, "compact", "--force", "--budget", "6000", stdin=dropped.stdout)
    assert compacted.returncode == 0, compacted.stderr
    after = int(ctx(world, "count", stdin=compacted.stdout).stdout)
    d = json.loads(ctx(world, "status", "--json", stdin=compacted.stdout).stdout)
    assert d["window_tokens"] == after == d["total"]
    m = re.search(r"(\d+) -> (\d+) tokens the model sees", compacted.stderr)
    assert m and int(m.group(2)) == after, compacted.stderr
    # compact's trigger is the same figure: not due at what status says
    again = ctx(world, "compact", "--trigger", "0.9", stdin=compacted.stdout)
    assert f"not due: {after / 200_000:.1%} of the model's 200000-token window" in again.stderr


def test_count_and_status_count_from_the_last_boundary_and_all_counts_the_history(world):
    stream = open(corpus("claude-code_spotter_8463c716_session.jsonl")).read()
    live = ctx(world, "count", stdin=stream)
    whole = ctx(world, "count", "--all", stdin=stream)
    assert "from the last compaction boundary on" in live.stderr
    assert int(whole.stdout) > int(live.stdout) > 0
    d = json.loads(ctx(world, "status", "--json", stdin=stream).stdout)
    assert d["total"] == int(live.stdout) and d["counts"] == "live"
    assert json.loads(ctx(world, "status", "--json", "--all", stdin=stream).stdout)["total"] == int(whole.stdout)


def test_stdin_still_wins_and_no_session_is_a_clear_error(world, tmp_path):
    piped = ctx(world, "count", stdin="hello world")
    assert piped.stdout.strip() == "2" and "newest session" not in piped.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = ctx(world, "status", cwd=elsewhere, tty=True)
    assert p.returncode == 2 and "no input" in p.stderr and "ctx sessions" in p.stderr


def test_sessions_lists_every_agents_sessions_of_the_project(world):
    proj, home = str(world["proj"]), world["home"]
    codex = home / ".codex" / "sessions" / "2026" / "06" / "25" / "rollout-2026-06-25T02-07-10-019efc87.jsonl"
    codex.parent.mkdir(parents=True)
    codex.write_text(open(corpus("codex_agentv_rollout-019efc87.jsonl")).read()
                     .replace("/home/entity/projects/EntityProcess/agentv", proj + "/lib"))
    gem = home / ".gemini" / "tmp" / hashlib.sha256(proj.encode()).hexdigest() / "chats" / "session-2026-01-15T20-51-f7633853.json"
    gem.parent.mkdir(parents=True)
    shutil.copy(corpus("formats/gemini-cli_entire-cli_f7633853.json"), gem)
    cop = home / ".copilot" / "session-state" / "10fb4666-56f0-4352-90fc-715caf95b418" / "events.jsonl"
    cop.parent.mkdir(parents=True)
    cop.write_text(open(corpus("formats/copilot-cli_agentv_10fb4666.jsonl")).read()
                   .replace("/home/entity/projects/EntityProcess/agentv", proj))
    other = home / ".copilot" / "session-state" / "aaaa" / "events.jsonl"   # another project's: not listed
    other.parent.mkdir(parents=True)
    shutil.copy(corpus("formats/copilot-cli_agentv_10fb4666.jsonl"), other)
    for i, f in enumerate((gem, cop, codex)):   # the Claude Code session stays the newest
        os.utime(f, (1_700_000_000 + i, 1_700_000_000 + i))
    rows = [json.loads(line) for line in ctx(world, "sessions", "--json").stdout.splitlines()]
    assert [r["agent"] for r in rows] == ["claude-code", "codex", "copilot", "gemini"]
    assert rows[0]["session_id"] == SESSION and rows[0]["window_pct"] == round(REPORTED / 200_000, 4)
    assert rows[1]["session_id"] == "019efc87-fa98-7971-91df-0c9512a065da" and rows[1]["window_pct"] > 0
    assert all(r["size"] > 0 and r["modified"] and r["path"] for r in rows)
    assert ctx(world, "sessions", "--jq", ".agent", "-r").stdout.split() == [r["agent"] for r in rows]
    assert "window_pct" in ctx(world, "sessions", "-t").stdout
    sub = world["home"] / ".claude" / "projects" / claude_key(proj) / "agent-a2898e3.jsonl"   # a subagent's
    shutil.copy(corpus("claude-code_spotter_4d5611e5_subagents_agent-a2898e3.jsonl"), sub)
    assert len(ctx(world, "sessions", "--json").stdout.splitlines()) == 4
    os.utime(codex, None)   # the newest now: ctx takes it, whatever the agent
    p = ctx(world, "count", tty=True)
    assert str(codex) in p.stderr and "Codex" in p.stderr


def test_compact_from_a_subfolder_writes_where_the_projects_hooks_look(world, tmp_path):
    """No repository: the shell's folder would be a project of its own; the session's recorded
    directory decides, and a line says so."""
    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    t = plain / "s.jsonl"
    t.write_text(open(TRANSCRIPT).read().replace(RECORDED, str(plain)))
    p = ctx(world, "compact", str(t), "--force", "--budget", "3000", cwd=plain / "sub")
    assert p.returncode == 0, p.stderr
    assert f"from the session's directory {plain}" in p.stderr
    hook = ctx(world, "context", "path", cwd=plain)   # where a hook with cwd=plain resolves
    written = re.search(r"wrote (\S+CONTEXT\.md)", p.stderr)
    assert written and written.group(1) == hook.stdout.strip()


def test_top_lists_what_is_eating_the_window_with_the_files_it_names(world):
    p = ctx(world, "top", "-n", "20", "--json", tty=True)
    assert p.returncode == 0 and world["transcript"] in p.stderr, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == 16 and [r["tokens"] for r in rows] == sorted((r["tokens"] for r in rows), reverse=True)
    total = json.loads(ctx(world, "status", "--json", tty=True).stdout)["total"]
    assert re.search(rf"\d+ chunks, {total} tokens from the last compaction boundary on", p.stderr)
    assert all(r["kind"] and r["age"] and 0 < r["share"] <= 1 for r in rows)
    named = {r["tool"]: r for r in rows if r["file"]}
    assert set(named) == {"Read", "Write"}, named
    assert named["Read"]["file"] == str(world["proj"] / "mix.exs")
    # the gist names the tool and the file's tail, never cut before the file name
    assert "Read …/proj/mix.exs" in named["Read"]["gist"], named["Read"]["gist"]
    table = ctx(world, "top", "-n", "20", "-t", tty=True).stdout
    assert "…/mix.exs" in table and "…/plan.md" in table


def test_a_gist_keeps_the_file_name():
    from ctxkit.core.drop import gist

    long = "/home/USER/projects/spotter-worktrees/spotter-fum/lib/spotter/session_live.ex"
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "t1", "type": "function", "function": {"name": "Read", "arguments": json.dumps({"file_path": long})}}]}
    assert gist([call], 60) == "Read …/spotter/session_live.ex"
    bash = dict(call, tool_calls=[{"id": "t2", "type": "function", "function": {
        "name": "Bash", "arguments": json.dumps({"command": "mix test " + "x" * 100})}}])
    assert gist([bash], 100).startswith('Bash({"command": "mix test') and gist([bash], 100).endswith("…)")


def test_drop_works_on_what_the_model_sees_unless_all(world):
    """Claude Code keeps the history before its /compact; dropping it frees nothing the model sees."""
    scored = ctx(world, "score", corpus("claude-code_spotter_fa812bfe_session.jsonl"), "--embedder", "keyword").stdout
    plan = [json.loads(line) for line in ctx(world, "drop", "--free", "0.3", "--dry-run", "--json",
                                             stdin=scored).stdout.splitlines()]
    before = [r for r in plan if r["reason"] == "compacted_away"]
    assert before and all(r["decision"] == "keep" for r in before)
    assert any(r["decision"] in ("drop", "shrink") for r in plan[len(before):])
    whole = [json.loads(line) for line in ctx(world, "drop", "--free", "0.3", "--all", "--dry-run", "--json",
                                              stdin=scored).stdout.splitlines()]
    assert not any(r["reason"] == "compacted_away" for r in whole)
    assert any(r["decision"] in ("drop", "shrink") for r in whole[:len(before)])


def test_compacting_past_the_agents_own_boundary_keeps_ctxs_summary_in_view(world):
    """A Claude Code session compacted by /compact, compacted again by ctx: ctx's summary takes the
    old boundary's place (a boundary left after it would hide it), and compact, count and status
    give one figure."""
    stream = open(corpus("claude-code_spotter_8463c716_session.jsonl")).read()
    p = ctx(world, "compact", "--force", "--budget", "60000", stdin=stream)
    assert p.returncode == 0, p.stderr
    out = [json.loads(line) for line in p.stdout.splitlines()]
    first = next(i for i, r in enumerate(out) if "compaction" in (r.get("flags") or []))
    assert not any({"compact_boundary", "compact_summary"} & set(r.get("flags") or []) for r in out[first:])
    seen = int(re.search(r"-> (\d+) tokens the model sees", p.stderr).group(1))
    assert int(ctx(world, "count", stdin=p.stdout).stdout) == seen
    assert json.loads(ctx(world, "status", "--json", stdin=p.stdout).stdout)["window_tokens"] == seen


def test_compact_and_status_agree_on_a_dropped_stream(world):
    """The boundary's own summary is part of what the model sees, for compact's trigger as for status."""
    scored = ctx(world, "score", corpus("claude-code_spotter_fa812bfe_session.jsonl"), "--embedder", "keyword").stdout
    kept = ctx(world, "drop", "--free", "0.3", stdin=scored).stdout
    d = json.loads(ctx(world, "status", "--json", stdin=kept).stdout)
    p = ctx(world, "compact", stdin=kept)
    assert f"not due: {d['window_pct']:.1%} of the model's 200000-token window (counted)" in p.stderr, p.stderr


def test_notify_if_pct_watches_the_headline_unless_a_budget_is_set(world):
    over = ctx(world, "status", "--notify-if-pct", "0.2", "--json", tty=True)   # 21.9 % of the window
    assert over.returncode == 3 and "usage 21.9% is at or above 20%" in over.stderr
    assert ctx(world, "status", "--notify-if-pct", "0.25", tty=True).returncode == 0
    own = ctx(world, "status", "--notify-if-pct", "0.2", "--budget", "1000000", tty=True)   # of your own budget
    assert own.returncode == 0


def test_a_subfolder_uses_the_projects_ctx_folder(world):
    """./.ctx/ at the repository root is the workspace from any folder of the project, as for a hook
    whose cwd is the root."""
    (world["proj"] / ".ctx").mkdir()
    deep = ctx(world, "context", "path", cwd=world["proj"] / "lib" / "deep")
    root = ctx(world, "context", "path", cwd=world["proj"])
    assert deep.stdout == root.stdout and deep.stdout.strip() == str(world["proj"] / ".ctx" / "CONTEXT.md")
