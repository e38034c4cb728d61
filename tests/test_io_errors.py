"""Streaming I/O manners: FILE:LINE errors, --skip-invalid, empty input, pipes, Ctrl-C."""
import json
import signal
import subprocess

from conftest import PY, ROOT, corpus, ctx_subprocess_env, run

GOOD = json.dumps({"v": 1, "kind": "message", "role": "user", "content": "hi"})


def test_bad_line_names_file_and_line_and_writes_nothing_past_it(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(f"{GOOD}\n{{oops\n{GOOD}\n")
    res = run("import", p)
    assert res.code == 1
    assert res.stderr.strip() == (f"Error: {p}:2: invalid JSON: Expecting property name enclosed in double "
                                  f"quotes (column 2) (hint: fix the line or pass --skip-invalid)")
    assert res.records() == []  # the output is held back: a bad line fails it before anything is written
    streamed = run("import", "-", input=p.read_text())
    assert streamed.code == 1 and streamed.stdout == ""  # stdin too: an error before the first byte


def test_invalid_record_names_line(tmp_path):
    res = run("count", "-", input=f"{GOOD}\n" + json.dumps({"v": 1, "kind": "nope"}) + "\n")
    assert res.code == 1
    assert "stdin:2: unknown kind 'nope'" in res.stderr


def test_skip_invalid_counts_skipped_lines():
    res = run("import", "--skip-invalid", input=f"{GOOD}\nnot json\n{GOOD}\n{{\n")
    assert res.code == 0
    assert len(res.records()) == 2
    assert "skipped 2 invalid lines in stdin (first at line 2)" in res.stderr


def test_empty_input_is_valid():
    for cmd in (["import"], ["truncate", "--budget", "10"]):
        res = run(*cmd, input="")
        assert res.code == 0 and res.stdout == "" and res.stderr == ""
    assert run("count", input="").stdout.strip() == "0"
    assert run("status", "--json", input="").json()["total"] == 0


def test_missing_file_is_one_line():
    res = run("import", "/no/such/file.jsonl")
    assert res.code == 1
    assert res.stderr == "Error: /no/such/file.jsonl: no such file\n"


def test_head_closes_pipe_quietly(tmp_path):
    src = corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")
    env = ctx_subprocess_env(tmp_path / "h")
    cmd = f"{PY} -m ctxkit import {src} | head -1"
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert json.loads(p.stdout)["v"] == 1


def test_ctrl_c_exits_130(tmp_path):
    env = ctx_subprocess_env(tmp_path / "h")
    # a terminal's Ctrl-C meets the default disposition; a suite started in the background (`make test &`)
    # would hand its children SIGINT ignored, and Python keeps an ignored SIGINT ignored
    p = subprocess.Popen([PY, "-m", "ctxkit", "import", "--stream", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    p.stdin.write(GOOD + "\n")
    p.stdin.flush()
    line = p.stdout.readline()  # the first record is out: we are mid-stream
    assert json.loads(line)["content"] == "hi"
    p.send_signal(signal.SIGINT)
    p.wait(timeout=20)   # stdin stays open: the interrupt alone ends it (closing it first races the signal)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130
    assert err == "Error: aborted\n"  # one line, no blank line before it, no traceback


def test_traceback_only_when_asked():
    res = run("import", input="{oops\n")
    assert "Traceback" not in res.stderr
    res = run("import", input="{oops\n", env={"CTX_DEBUG": "1"})
    assert "Traceback" in res.stderr and "stdin:1: invalid JSON" in res.stderr


def test_writer_flushes_each_line_with_stream(tmp_path):
    """With --stream a downstream stage sees the first record before the input ends (without it,
    nothing is written before the whole input is read: tests/test_no_half_output.py)."""
    env = ctx_subprocess_env(tmp_path / "h")
    p = subprocess.Popen([PY, "-m", "ctxkit", "import", "--stream", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=ROOT, text=True)
    p.stdin.write(GOOD + "\n")
    p.stdin.flush()
    assert json.loads(p.stdout.readline())["role"] == "user"
    p.stdin.close()
    p.wait(timeout=20)
    assert p.returncode == 0
