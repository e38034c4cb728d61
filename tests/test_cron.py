"""The cron example, run by a real cron daemon (Debian's `cron`): quiet on success, one mail on failure.

cron parses a crontab in ways a shell never sees (`%` is a newline, a variable line keeps everything
after `=`), so the job lines are installed as they are written, with only their schedule set to every
minute. What cron would mail is captured by a stand-in SHELL that runs /bin/sh and keeps each run's
output (cron mails a job's output when there is any: one run, one mail); MAILTO="" keeps cron itself
from mailing anything.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CRONTAB = ROOT / "examples" / "cron" / "crontab"
SESSION_SRC = ROOT / "examples" / "claude-code_spotter_491e126e_session.jsonl"

pytestmark = [
    pytest.mark.skipif(not shutil.which("cron") or not shutil.which("crontab"),
                       reason="Debian's cron is not installed (.ci/run installs it: apt-get install cron)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="a cron daemon and root's crontab need root"),
]

SHELL_STANDIN = """#!/bin/sh
# cron runs: $SHELL -c COMMAND (stdin: what followed a %). Keep what cron would mail.
out=$(mktemp)
/bin/sh "$@" >"$out" 2>&1
if [ -s "$out" ]; then
  mail="$MAILDIR/mail.$PHASE.$$"
  { echo "X-Cron-Command: $2"; echo; cat "$out"; } >"$mail.tmp" && mv "$mail.tmp" "$mail"
fi
rm -f "$out"
echo "$PHASE $2" >>"$MAILDIR/ran"
"""


def _jobs(text):
    """The example's job lines (not its comments or variable lines)."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        first = s.split()[0]
        if "=" in first:
            continue
        out.append(s.split(None, 5)[5])
    return out


def _job_name(cmd):
    for name in ("status", "purge", "compact"):
        if f" {name} " in f" {cmd} ":
            return name
    return cmd


def _cron_running():
    return subprocess.run(["pgrep", "-x", "cron"], capture_output=True).returncode == 0


def test_example_crontab_under_real_cron_quiet_on_success_one_mail_on_failure(tmp_path, tiktoken_cache):
    text = CRONTAB.read_text()
    jobs = _jobs(text)
    assert len(jobs) == 3 and {_job_name(j) for j in jobs} == {"status", "purge", "compact"}
    ctx = Path(sys.executable).parent / "ctx"
    assert ctx.exists()
    for line in text.splitlines():  # cron keeps a comment on a variable line as part of the value
        if "=" in line.split(" ")[0] and not line.startswith("#"):
            assert "#" not in line, line
    maildir = tmp_path / "mail"
    maildir.mkdir()
    shell = tmp_path / "cron-shell"
    shell.write_text(SHELL_STANDIN)
    shell.chmod(0o755)
    # three phases in the same minute: healthy, over the threshold, failing (the session is missing)
    phases = {"ok": "1000000", "over": "12000", "fail": "1000000"}
    lines = [f"SHELL={shell}", 'MAILTO=""', f"MAILDIR={maildir}", f"CTX={ctx}", f"PYTHONPATH={ROOT}",
             f"TIKTOKEN_CACHE_DIR={tiktoken_cache}", "HF_HUB_OFFLINE=1", "CTX_RESERVE_TOKENS=0"]
    for phase, max_tokens in phases.items():
        session = tmp_path / phase / "session.jsonl"
        session.parent.mkdir()
        if phase != "fail":
            shutil.copy(SESSION_SRC, session)
        lines += [f"PHASE={phase}", f"SESSION={session}", f"CTX_HOME={tmp_path / phase / 'home'}",
                  f"CTX_MAX_TOKENS={max_tokens}"]
        lines += [f"* * * * * {job}" for job in jobs]
    saved = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    daemon = None
    try:
        # install before the minute turns, with a margin for cron to read it
        if time.time() % 60 > 55:
            time.sleep(61 - time.time() % 60)
        subprocess.run(["crontab", "-"], input="\n".join(lines) + "\n", text=True, check=True)
        if not _cron_running():
            daemon = subprocess.Popen(["cron", "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 150
        ran = maildir / "ran"
        while time.time() < deadline:
            if ran.exists() and len(ran.read_text().splitlines()) >= 9:
                break
            time.sleep(1)
        assert ran.exists(), "cron ran none of the jobs"
        assert len(ran.read_text().splitlines()) == 9, ran.read_text()
    finally:
        if saved.returncode == 0 and saved.stdout.strip():
            subprocess.run(["crontab", "-"], input=saved.stdout, text=True)
        else:
            subprocess.run(["crontab", "-r"], capture_output=True)
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)

    mails = {}
    for f in sorted(maildir.glob("mail.*")):
        head, _, body = f.read_text().partition("\n\n")
        mails.setdefault((f.name.split(".")[1], _job_name(head)), []).append(body)
    # healthy: no mail at all (a `%` would make each run mail a shell syntax error)
    assert not [k for k in mails if k[0] == "ok"], mails
    # over the threshold: the status job mails once, saying so; the nightly jobs stay quiet
    assert {k: len(v) for k, v in mails.items() if k[0] == "over"} == {("over", "status"): 1}, mails
    assert "compact soon" in mails[("over", "status")][0]
    # failing: each job that failed mails exactly once, with ctx's own error line in it
    fail = {k[1]: v for k, v in mails.items() if k[0] == "fail"}
    assert {k: len(v) for k, v in fail.items()} == {"status": 1, "compact": 1}, mails
    assert "ctx status failed (exit 1)" in fail["status"][0]
    assert "session.jsonl" in fail["status"][0] and "Traceback" not in fail["status"][0] + fail["compact"][0]
    assert (tmp_path / "ok" / "session.jsonl.ctx.jsonl").exists()
