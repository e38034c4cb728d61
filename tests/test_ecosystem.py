"""Man pages, completions, docs from the CLI, stats, terminal manners."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import PY, ROOT, corpus, ctx_subprocess_env, log_events, run
from ctxkit.cli import docgen
from ctxkit.cli.completion import script
from ctxkit.cli.main import COMMANDS


def test_man_pages_docs_and_completions_are_fresh():
    assert docgen.stale() == [], "run `python -m ctxkit.cli.docgen all` (make docs)"


def test_every_command_is_in_docs_and_man():
    for path, _ in docgen.commands():
        page = open(os.path.join(ROOT, "docs", f"ctx-{path[0]}.md")).read()
        assert f"`ctx {' '.join(path)}`" in page
    for name in COMMANDS:
        assert os.path.exists(os.path.join(ROOT, "man", f"ctx-{name}.1")), name
        see_also = open(os.path.join(ROOT, "man", "ctx.1")).read().split(".SH SEE ALSO")[1]
        assert ".BR ctx\\-" + name.replace("-", "\\-") + " (1)" in see_also, name  # every page named


@pytest.mark.skipif(not shutil.which("groff"), reason="groff not installed")
def test_man_pages_render_without_warnings():
    for f in sorted(os.listdir(os.path.join(ROOT, "man"))):
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", os.path.join(ROOT, "man", f)],
                           capture_output=True, text=True)
        assert p.returncode == 0 and p.stderr == "", (f, p.stderr[:300])
        import re

        plain = re.sub(".\x08", "", p.stdout)  # undo overstrike bold
        assert "EXIT STATUS" in plain and "ENVIRONMENT" in plain and "SEE ALSO" in plain


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_committed_and_fresh(shell):
    committed = open(os.path.join(ROOT, "completions", f"ctx.{shell}")).read()
    assert committed == script(shell)
    assert run("completion", shell).stdout == committed


def _bash_complete(words, cword, home):
    env = ctx_subprocess_env(home)
    env["PATH"] = os.path.dirname(PY) + os.pathsep + env.get("PATH", "")
    cmd = (f"source {ROOT}/completions/ctx.bash; COMP_WORDS=({words}); COMP_CWORD={cword}; "
           "_ctx_completion ctx; printf '%s\\n' \"${COMPREPLY[@]}\"")
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=60)
    return p.stdout.split()


def test_bash_completes_commands_and_cold_ids_for_real(tmp_path, ctx_home):
    home = tmp_path / "h"
    assert _bash_complete("ctx cold-st", 1, home) == ["cold-storage"]
    assert "search" in _bash_complete("ctx cold-storage s", 2, home)
    # dynamic: chunk and session ids from the configured store (the embedded index, or PostgreSQL)
    from test_relevance import SESSION, jsonl

    env = ctx_subprocess_env(home)
    scored = subprocess.run([PY, "-m", "ctxkit", "score", "--query", "JWT refresh token", "--embedder", "keyword",
                             "--now", "2026-01-01T06:00:00Z"], input=jsonl(SESSION), capture_output=True,
                            text=True, env=env, cwd=ROOT).stdout
    subprocess.run([PY, "-m", "ctxkit", "drop", "--min-keep", "1", "--cutoff", "0.3"], input=scored,
                   capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    chunks = _bash_complete("ctx recover --chunk-id c-", 3, home)
    assert chunks and all(c.startswith("c-0") for c in chunks)
    assert _bash_complete("ctx cold-storage list --session s", 4, home) == ["s1"]


def test_dynamic_completion_imports_nothing_heavy(tmp_path):
    env = ctx_subprocess_env(tmp_path / "h")
    env.update({"COMP_WORDS": "ctx recover --chunk-id c-", "COMP_CWORD": "3", "_CTX_COMPLETE": "bash_complete"})
    probe = ("import sys, runpy\nsys.argv=['ctx']\n"
             "try:\n from ctxkit.cli.main import main; main()\nexcept SystemExit: pass\n"
             "sys.stderr.write('HEAVY=' + repr([m for m in ('torch','sentence_transformers','llama_cpp','git','numpy')"
             " if m in sys.modules]))")
    p = subprocess.run([PY, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert "HEAVY=[]" in p.stderr


def test_stats_drops_compaction_recovery_suggest(ctx_home):
    from test_relevance import SESSION, jsonl

    s = run("score", "--query", "JWT refresh token", "--embedder", "keyword", "--now", "2026-01-01T06:00:00Z",
            input=jsonl(SESSION)).stdout
    kept = run("drop", "--min-keep", "1", "--cutoff", "0.3", input=s).records()
    stub = next(r for r in kept if r["kind"] == "stub")
    run("recover", "--chunk-id", stub["meta"]["chunk_id"])
    d = run("stats", "drops", "--json").json()
    assert d["drops"] >= 2 and d["reasons"] == {"low_relevance": d["drops"]}
    assert d["tokens_saved"]["sum"] > 0 and d["score"]["p50"] <= 0.3
    text = run("stats", "drops", "-t").stdout
    assert "0.1-0.2 |" in text and "#" in text
    c = run("stats", "compaction", "--json").json()
    assert c["acted"] >= 1 and c["saved"]["sum"] > 0
    r = run("stats", "recovery", "--json").json()
    assert r["recoveries"] == 1 and r["methods"] == {"id": 1}
    sug = run("stats", "suggest", "--json").json()
    assert sug["wrong_drops"] == 1 and sug["suggested_cutoff"] < stub["score"]
    assert "based on" in run("stats", "suggest", "-t").stdout
    assert run("stats", "drops", "--plot", ctx_home / "x.png").code in (0, 1)


def test_quiet_silences_notes_not_errors():
    path = corpus("tau-bench_gpt-4o-airline_idx173_task23.json")
    loud = run("truncate", path, "--budget", "500")
    quiet = run("--quiet", "truncate", path, "--budget", "500")
    assert "kept" in loud.stderr and quiet.stderr == "" and quiet.stdout == loud.stdout
    assert run("--quiet", "import", "/nope").stderr.startswith("Error:")


def test_progress_never_pollutes_stdout_when_piped(ctx_home):
    path = corpus("claude-code_spotter_491e126e_session.jsonl")
    res = run("score", path, "--query", "beads", "--embedder", "minilm")
    assert all(json.loads(x) for x in res.stdout.strip().split("\n"))  # only JSON on stdout


def test_tables_fit_the_terminal():
    from ctxkit.io.tables import render_table

    rows = [{"a": "x" * 200, "b": "short", "c": 1}]
    out = render_table(rows, width=60)
    assert max(len(line) for line in out.split("\n")) <= 60
    assert "short" in out and "…" in out


def test_tables_never_cut_ids_and_say_what_they_hide():
    from ctxkit.io.tables import render_table

    sid = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    rows = [{"session_id": sid, "chunk_id": "c-0002", "tokens": 1149, "dropped_at": "2026-11-22T14:09:31.5+00:00",
             "gist": "Bash " * 40}]
    out = render_table(rows, width=80)
    assert max(len(line) for line in out.split("\n")) <= 80
    assert sid in out and "c-0002" in out and "2026-11-22 14:09" in out
    narrow = render_table(rows, width=50)
    assert sid in narrow and "hidden" in narrow and max(len(line) for line in narrow.split("\n")) <= 50
    for fmt in ("grid", "github", "psql", "plain"):  # every --fmt fits too
        out = render_table(rows, fmt=fmt, width=80)
        assert max(len(line) for line in out.split("\n")) <= 80 and sid in out, fmt


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux not installed")
def test_tables_fit_80_and_160_columns_in_tmux(ctx_home, tmp_path):
    import time

    path = corpus("claude-code_spotter_fa812bfe_session.jsonl")
    scored = run("score", path, "--query", "elixir tests", "--embedder", "keyword").stdout
    assert run("drop", "--cutoff", "0.5", input=scored).code == 0
    run("session", "list")
    sid = json.loads(run("cold-storage", "list", "--json").stdout.split("\n")[0])["session_id"]
    env = ctx_subprocess_env(ctx_home)
    script_ = tmp_path / "tables.sh"
    cmds = ["cold-storage list", "cold-storage stats", "drops", "logs drops", "session list", "config show",
            "drops --fmt grid"]
    script_.write_text("".join(f"{PY} -m ctxkit {c}\n" for c in cmds) + "echo __DONE__\nsleep 60\n")
    for width in (80, 160):
        sock = f"ctx-test-{os.getpid()}-{width}"
        tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
        subprocess.run(tmux + ["new-session", "-d", "-x", str(width), "-y", "50", "bash", "--noprofile", "--norc",
                               str(script_)], env=env, check=True)
        try:
            text = ""
            for _ in range(600):
                text = subprocess.run(tmux + ["capture-pane", "-p", "-J", "-S", "-", "-t", "0"],
                                      capture_output=True, text=True).stdout
                if "__DONE__" in text:
                    break
                time.sleep(0.1)
            assert "__DONE__" in text
        finally:
            subprocess.run(tmux + ["kill-server"], capture_output=True)
        lines = text.rstrip().split("\n")
        assert max(len(line.rstrip()) for line in lines) <= width, max(lines, key=len)
        assert text.count(sid) >= 4  # the full id, in every table that names a session
        assert "session_id" in text and "chunk_id" in text


def test_cron_example_and_exit_codes_documented():
    cron = open(os.path.join(ROOT, "examples", "cron", "crontab")).read()
    assert "status" in cron and "--notify-if-pct 0.5 --log" in cron.replace("--log --notify-if-pct 0.5",
                                                                                "--notify-if-pct 0.5 --log")
    assert "cold-storage purge --expired" in cron and "compact" in cron
    man = open(os.path.join(ROOT, "man", "ctx.1")).read()
    for code in ("0", "1", "2", "3", "4", "130"):
        assert f".B {code}\n" in man


@pytest.mark.skipif(not shutil.which("fish"), reason="fish not installed (.ci/run installs it when it can)")
def test_fish_completion_for_real(tmp_path):
    env = ctx_subprocess_env(tmp_path / "h")
    env["PATH"] = os.path.dirname(PY) + os.pathsep + env.get("PATH", "")
    p = subprocess.run(["fish", "-c", f"source {ROOT}/completions/ctx.fish; complete -C 'ctx cold-st'; "
                                      "complete -C 'ctx cold-storage s'"], capture_output=True, text=True, env=env,
                       timeout=60)
    names = [line.split("\t")[0] for line in p.stdout.splitlines()]
    assert names[0] == "cold-storage" and {"search", "show", "stats"} <= set(names)


def test_jq_on_every_reporting_command_with_jqs_exit_codes(tmp_path, ctx_home):
    src = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")
    assert run("status", src, "--jq", ".records", "-r").stdout.strip() == "36"
    assert run("time", "--jq", ".gap_class", "-r").code == 0
    outside = run("external", "--repo", str(tmp_path), "--jq", ".git.repo")  # not a repository: an error
    assert outside.code == 1 and outside.stdout == "" and "not in a git repository" in outside.stderr
    run("compact", src, "--force", "--budget", "3000", "--workspace", tmp_path / "ws")
    task = run("context", "show", "--workspace", tmp_path / "ws", "--jq", ".task", "-r").stdout
    assert task.startswith("websearch to learn")
    for sub in ("drops", "compaction", "recovery", "suggest"):
        assert run("stats", sub, "--jq", "keys").code == 0, sub
    assert "{" not in run("stats", "recovery", "-t").stdout  # no Python reprs
    bad = run("status", src, "--jq", ".records | error(\"boom\")")
    assert bad.code == 5  # jq's exit status for an error at run time
    assert run("status", src, "--jq", "][").code == 2  # a malformed expression is a usage error


def test_man_pages_are_installed_beside_the_venvs_bin():
    share = os.path.join(os.path.dirname(os.path.dirname(PY)), "share", "man", "man1")
    assert os.path.exists(os.path.join(share, "ctx.1")) and os.path.exists(os.path.join(share, "ctx-compact.1"))
    if shutil.which("man"):
        env = dict(os.environ, PATH=os.path.dirname(PY) + os.pathsep + os.environ.get("PATH", ""))
        env.pop("MANPATH", None)
        p = subprocess.run(["man", "-w", "ctx"], capture_output=True, text=True, env=env)
        assert p.returncode == 0 and p.stdout.strip().startswith(share), p.stdout + p.stderr


def test_seed_003_names_and_log_fields(tmp_path, ctx_home):
    src = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")
    assert run("health", src, "--notify-if-pct", "0.01", "--json").code == 3  # seed 003's `ctx health`
    assert run("compact", src, "--now", "--budget", "3000", "--workspace", tmp_path / "ws").code == 0
    ev = log_events("compaction")[-1]
    assert ev["chunks_dropped"] == 0 and "summary_target_tokens=" in ev["config_used"]
    rows = run("session", "list", "--json").records()
    assert rows[0]["ago"].endswith("ago") and rows[0]["records"] == 36
