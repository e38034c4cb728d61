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
