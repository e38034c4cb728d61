"""An error before the first byte: every command that reads records (a FILE or stdin) and fails
on bad line N prints nothing on stdout, one `FILE:N: …` line on stderr, exits non-zero and
leaves the home and the workspace as they were. The output is held in one spool
(services.spool.OutputSpool: memory up to a limit, then a temp file) and goes out only on
success."""
import hashlib
import io
import json
import os

import pytest

from conftest import corpus, run

GOOD = {"v": 1, "kind": "message", "session": "s1", "role": "user", "content": "fix the parser in src/app.py"}


def _records(n: int) -> list[str]:
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append(json.dumps(dict(GOOD, id=f"m{i}", role=role, ts=f"2026-01-01T00:{i:02d}:00Z",
                                   content=f"step {i}: editing src/app.py and tests/test_app.py " * 4)))
    return out


BAD_LINES = {
    "not json": "{oops",
    "invalid record": json.dumps({"v": 1, "kind": "nope", "id": "x"}),
    "not utf-8": None,  # bytes, written below
}

# every command that takes records on stdin or a FILE
COMMANDS = [
    ("import",), ("count",), ("count", "--per-record"), ("status", "--json"),
    ("truncate", "--budget", "200"), ("score", "--embedder", "keyword", "--query", "parser"),
    ("drop", "--cutoff", "0.9", "--min-keep", "0"), ("export", "--to", "openai"), ("export", "--to", "anthropic"),
    ("compact", "--force", "--budget", "100"), ("entities",), ("observe",), ("maintain",),
]


def _tree(*roots) -> dict:
    out = {}
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.mark.parametrize("bad", sorted(BAD_LINES))
@pytest.mark.parametrize("via", ["file", "stdin"])
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_bad_line_n_prints_nothing_and_changes_nothing(tmp_path, ctx_home, args, via, bad):
    lines = [s.encode() for s in _records(8)]
    n = 6
    lines.insert(n - 1, BAD_LINES[bad].encode() if BAD_LINES[bad] is not None else b'{"v": 1, "content": "\xff\xfe"}')
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(_records(4)) + "\n")
    assert run("compact", "--force", "--budget", "100", good).code == 0  # a home and a workspace with state in them
    ws = os.environ["CTX_WORKSPACE"]
    before = _tree(ctx_home, ws)

    res = run(*args, path) if via == "file" else run(*args, "-", input=data)

    name = str(path) if via == "file" else "stdin"
    assert res.code != 0, res.stdout[:200]
    assert res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and f"{name}:{n}: " in err[0], res.stderr
    assert "internal error" not in err[0]
    assert _tree(ctx_home, ws) == before


@pytest.mark.parametrize("args", [("import",), ("truncate", "--budget", "100000"), ("count", "--per-record")])
def test_output_past_the_memory_limit_is_spooled_to_disk_and_still_all_or_nothing(ctx_home, tmp_path, monkeypatch,
                                                                                 args):
    from ctxkit.services.spool import OutputSpool

    monkeypatch.setattr(OutputSpool, "MEM", 4096)  # a few records' worth: the rest goes to the temp file
    recs = _records(60)
    ok = run(*args, input="\n".join(recs) + "\n")
    assert ok.code == 0 and len(ok.records()) == 60 and len(ok.stdout) > 4 * 4096
    bad = run(*args, input="\n".join(recs) + "\n{oops\n")
    assert bad.code == 1 and bad.stdout == "" and "stdin:61: invalid JSON" in bad.stderr


def test_the_spool_keeps_bytes_exact_past_memory_and_discards_on_error():
    from ctxkit.services.spool import OutputSpool

    text = "".join(f'{{"i":{i},"t":"é✓ \\ud83d"}}\n' for i in range(2000))
    dest = io.StringIO()
    with OutputSpool(dest, mem=1000) as out:
        for line in text.splitlines(True):
            out.write(line)
        assert out.spilled
    assert dest.getvalue() == text
    dest = io.StringIO()
    with pytest.raises(RuntimeError):
        with OutputSpool(dest, mem=1000) as out:
            out.write(text)
            raise RuntimeError("boom")
    assert dest.getvalue() == ""


def test_a_real_transcript_with_a_bad_last_line_prints_nothing(tmp_path, ctx_home):
    src = corpus("claude-code_spotter_491e126e_session.jsonl")
    data = open(src, "rb").read() + b"{oops\n"
    n = data.count(b"\n")
    for args in (("import",), ("score", "--embedder", "keyword", "--query", "tests"), ("drop", "--cutoff", "0.9")):
        res = run(*args, "-", input=data)
        assert res.code == 1 and res.stdout == "" and f"stdin:{n}: invalid JSON" in res.stderr, (args, res.stderr)
    assert not (ctx_home / "cold-storage").exists() or not any((ctx_home / "cold-storage").rglob("*.jsonl"))
