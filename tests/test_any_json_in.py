"""Any valid JSON in, valid output out: lone surrogates, deep nesting, huge numbers, NaN, BOMs and
wrong types are a clear FILE:LINE error before the first byte (or a counted skip with
--skip-invalid), never an internal error after part of the output."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import run

GOOD = {"v": 1, "kind": "message", "id": "a", "session": "s", "role": "user", "content": "hello there"}
COMMANDS = (("import", "-"), ("count", "-"), ("status", "-"), ("truncate", "--budget", "50", "-"),
            ("score", "--embedder", "keyword", "--query", "x", "-"), ("drop", "--cutoff", "0.5", "-"),
            ("export", "--to", "anthropic"), ("export", "--to", "openai"), ("compact", "--force", "--budget", "100", "-"))
HOSTILE_LINES = [
    json.dumps(dict(GOOD, id="b")).replace("hello there", "half \\ud83d an emoji"),
    json.dumps(dict(GOOD, id="b", content="lone low \udc00 too")),
    "[" * 100_000 + "]" * 100_000,
    json.dumps(dict(GOOD, id="b")).replace('"hello there"', '"x", "tokens": ' + "9" * 5000),
    json.dumps(dict(GOOD, id="b")).replace('"hello there"', '"x", "score": NaN'),
    json.dumps(dict(GOOD, id="b")).replace('"hello there"', '"x", "score": Infinity'),
    json.dumps(dict(GOOD, id="b", usage={"input_tokens": "12"})),
    json.dumps(dict(GOOD, id="b", usage={"input_tokens": [1]})),
    json.dumps(dict(GOOD, id="b", meta={"cwd": 5})),
    json.dumps(dict(GOOD, id="b", group={})),
    json.dumps(dict(GOOD, id="b", role="assistant", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": {"cmd": "ls"}}}])),
    json.dumps({"k": [{"x": 1}] * 3, "deep": {"a": {"b": {"c": None}}}}),
]


def _check(res, args, data):
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, (args, res.stderr[-400:])
    assert res.code in (0, 1, 2, 3), (args, res.code, res.stderr)
    if res.code == 1:  # an error: one line naming the input line
        assert ":2" in res.stderr or "stdin" in res.stderr, (args, res.stderr)
    res.stdout.encode("utf-8")  # valid UTF-8, whole lines of valid JSON (a stream stops at a line's end)
    assert res.stdout == "" or res.stdout.endswith("\n")
    if True:
        if args[0] not in ("count",) and res.stdout.strip() and res.stdout.lstrip()[0] in "{[":
            for line in res.stdout.splitlines():
                if line.strip():
                    json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in output"))


@pytest.mark.parametrize("line", range(len(HOSTILE_LINES)))
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_hostile_line_is_an_error_or_clean_output(tmp_path, args, line):
    data = json.dumps(GOOD) + "\n" + HOSTILE_LINES[line] + "\n"
    extra = ["--workspace", str(tmp_path / "ws")] if args[0] == "compact" else []
    res = run(*args, *extra, input=data)
    _check(res, args, data)
    if args[0] not in ("export", "count", "status"):
        skipped = run(*args, *extra, "--skip-invalid", input=data)
        _check(skipped, args, data)


def test_a_bom_is_not_text(tmp_path):
    p = tmp_path / "bom.jsonl"
    body = json.dumps(GOOD) + "\n"
    p.write_bytes(b"\xef\xbb\xbf" + body.encode())
    q = tmp_path / "plain.jsonl"
    q.write_text(body)
    assert run("count", p).stdout == run("count", q).stdout
    assert run("import", p).records()[0]["content"] == "hello there"


def test_a_lone_surrogate_never_crashes_and_output_is_utf8(tmp_path):
    data = json.dumps(GOOD) + "\n" + HOSTILE_LINES[0] + "\n"
    res = run("import", "-", input=data)
    assert res.code == 0, res.stderr
    recs = res.records()
    assert len(recs) == 2 and "\ud83d" in recs[1]["content"]  # kept exactly (tests/test_lone_surrogates.py)


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=False),
                    st.text(alphabet=st.characters(blacklist_categories=()), max_size=6))
VALUES = st.recursive(SCALARS, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=4), c, max_size=3)),
                      max_leaves=8)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["content", "tool_calls", "meta", "usage", "source", "group", "tokens", "score", "flags",
                              "name", "ts", "role", "kind", "v"]),
       value=VALUES, cmd=st.sampled_from(COMMANDS), skip=st.booleans())
def test_fuzz_any_json_value_in_any_field(field, value, cmd, skip, tmp_path):
    bad = dict(GOOD, id="b", **{field: value})
    data = json.dumps(GOOD) + "\n" + json.dumps(bad) + "\n"
    extra = ["--workspace", str(tmp_path / "ws")] if cmd[0] == "compact" else []
    args = list(cmd) + extra + (["--skip-invalid"] if skip and cmd[0] not in ("export", "count", "status") else [])
    _check(run(*args, input=data), cmd, data)


def test_wrong_typed_group_and_nan_score_are_named_not_silent():
    bad_group = json.dumps(dict(GOOD, group={}))
    res = run("import", "-", input=bad_group + "\n")
    assert res.code == 1 and "stdin:1" in res.stderr and "group must be a string" in res.stderr
    nan = json.dumps(GOOD).replace('"hello there"', '"x", "score": NaN')
    res = run("drop", "-", input=nan + "\n")
    assert res.code == 1 and "NaN is not JSON" in res.stderr
