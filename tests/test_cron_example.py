"""The cron example as cron runs it, without a daemon: each job line through /bin/sh with cron's bare
environment (PATH=/usr/bin:/bin plus the crontab's own variable lines). The daemon itself is
tests/test_cron.py's (it needs root and Debian's cron)."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, run

CRONTAB = ROOT / "examples" / "cron" / "crontab"
SESSION_SRC = ROOT / "examples" / "claude-code_spotter_491e126e_session.jsonl"


def _variables_and_jobs(text):
    env, jobs = {}, []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        first = s.split()[0]
        if "=" in first:
            k, _, v = s.partition("=")
            env[k.strip()] = v.strip()
        else:
            jobs.append(s.split(None, 5)[5])
    return env, jobs


def test_crontab_names_ctx_by_an_absolute_path_with_a_path_line():
    variables, jobs = _variables_and_jobs(CRONTAB.read_text())
    assert os.path.isabs(variables["CTX"]) and variables["CTX"].endswith("/.local/bin/ctx")
    assert os.path.dirname(variables["CTX"]) in variables["PATH"].split(":")
    assert all(j.startswith("$CTX ") for j in jobs)  # never a bare `ctx` (cron: "ctx: not found")
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in doc.read_text().splitlines():  # a crontab line in the docs names ctx the same way
            fields = line.split(None, 5)
            if len(fields) == 6 and all(re.fullmatch(r"[\d*/,-]+", f) for f in fields[:5]) and \
                    re.search(r"(?:^|[;&|]\s*)ctx\b", fields[5]):
                raise AssertionError(f"{doc.name}: a bare `ctx` in a crontab line: {line}")


def _cron_env(tmp_path, variables, ctx_home, max_tokens):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SHELL": "/bin/sh", "LOGNAME": "me"}
    env.update(variables)
    env.update(CTX=str(tmp_path / "ctx"), SESSION=str(tmp_path / "session.jsonl"), CTX_HOME=str(ctx_home),
               CTX_MAX_TOKENS=str(max_tokens), CTX_RESERVE_TOKENS="0",
               TIKTOKEN_CACHE_DIR=os.environ["TIKTOKEN_CACHE_DIR"], HF_HUB_OFFLINE="1")
    return env


def test_the_cron_status_job_mails_once_per_crossing_not_every_run(tmp_path):
    variables, jobs = _variables_and_jobs(CRONTAB.read_text())
    status_job = next(j for j in jobs if " status " in j)
    assert "--notify-once" in status_job
    shutil.copy(SESSION_SRC, tmp_path / "session.jsonl")
    (tmp_path / "ctx").write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m ctxkit "$@"\n')
    (tmp_path / "ctx").chmod(0o755)
    ctx_home = tmp_path / "ctx-home"

    def cron_run(max_tokens):
        p = subprocess.run(["/bin/sh", "-c", status_job], env=_cron_env(tmp_path, variables, ctx_home, max_tokens),
                           capture_output=True, text=True)
        return p.stdout + p.stderr  # cron mails whatever the job printed

    over, under = 12000, 1_000_000
    mails = [cron_run(m) for m in (over, over, over, under, under, over, over)]
    assert [bool(m) for m in mails] == [True, False, False, False, False, True, False], mails
    assert "crossed half the window" in mails[0]
    state = json.loads((ctx_home / "notify-state.json").read_text())
    assert list(state.values()) == [{"over": True}]
    assert oct((ctx_home / "notify-state.json").stat().st_mode & 0o777) == "0o600"


def test_notify_once_exits_3_on_the_crossing_only(tmp_path):
    s = str(SESSION_SRC)
    args = ("status", s, "--budget", "12000", "--notify-if-pct", "0.5", "--notify-once")
    assert [run(*args).code for _ in range(3)] == [3, 0, 0]
    assert run("status", s, "--budget", "12000", "--notify-if-pct", "0.5").code == 3  # without it: every time
    assert run("status", s, "--budget", "1000000", "--notify-if-pct", "0.5", "--notify-once").code == 0
    assert run(*args).code == 3  # fell below, crossed again
    bad = run("status", s, "--notify-once")
    assert bad.code == 2 and bad.stdout == "" and "--notify-if-pct" in bad.stderr
