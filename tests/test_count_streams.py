"""`ctx count` streams what it does not recognise as records: plain text is read and counted in
blocks, cut where no token spans the cut, so the count is that of the whole text and memory is
a block's, whatever the size (a 1 GB line included: bench/bench_hooks_huge.py). A JSON document
past max_record_mb is refused with a one-line error naming the file."""
import json
import os
import subprocess
import sys

from conftest import ROOT, corpus, run

from ctxkit.backends.tokenizers import count_blocks, get_tokenizer, truncate_blocks


def _blocks(text, size):
    return (text[i:i + size] for i in range(0, len(text), size))


def test_counting_in_blocks_gives_the_count_of_the_whole_text():
    tok = get_tokenizer("cl100k_base")
    texts = [open(corpus("SOURCES.md")).read() * 40,                      # lines
             ("lorem ipsum dolor sit amet, consectetur 12345 " * 60000),   # one long line
             open(corpus("aider_Aquaticat_Monochromatic.aider.chat.history.md")).read() * 3]
    for text in texts:
        whole = tok.count(text)
        for size in (1000, 65536, 1 << 20):
            assert count_blocks(tok, _blocks(text, size)) == whole


def test_truncating_in_blocks_gives_the_truncation_of_the_whole_text():
    tok = get_tokenizer("cl100k_base")
    text = open(corpus("SOURCES.md")).read() * 20
    for n in (1, 17, 5000, 10 ** 9):
        assert "".join(truncate_blocks(tok, _blocks(text, 4096), n)) == tok.truncate(text, n)


def test_a_long_single_line_is_counted_as_it_streams(tmp_path):
    """48 MB on one line: the count is the whole text's, and the process never holds the text
    (its peak RSS stays well under the size of the line)."""
    path = tmp_path / "line.txt"
    word = "lorem ipsum dolor sit amet consectetur adipiscing elit "
    with open(path, "w") as f:
        for _ in range(48):
            f.write(word * ((1 << 20) // len(word)))
    size_mb = os.path.getsize(path) / (1 << 20)
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run([sys.executable, '-m', 'ctxkit', 'count', '--tokenizer', 'approx', sys.argv[1]],"
             " capture_output=True, text=True)\n"
             "print(p.returncode, p.stdout.strip(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, env=env)
    code, n, rss_mb = out.stdout.split()
    assert code == "0" and int(n) == (os.path.getsize(path) + 3) // 4
    assert int(rss_mb) < size_mb * 1.5, f"peak RSS {rss_mb} MB for a {size_mb:.0f} MB line"


def test_text_files_and_words_count_as_before(tmp_path):
    tok = get_tokenizer("cl100k_base")
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("first file\nwith two lines\n")
    b.write_text("second file")
    res = run("count", "-i", a, "-i", b, "and", "words")
    assert res.code == 0 and int(res.stdout) == tok.count(a.read_text() + " " + b.read_text() + " and words")
    res = run("count", a)
    assert res.code == 0 and int(res.stdout) == tok.count(a.read_text())
    res = run("count", "-t", "3", a)
    assert res.code == 0 and res.stdout == tok.truncate(a.read_text(), 3)


def test_a_json_document_past_max_record_mb_is_refused_in_one_line(tmp_path, ctx_home):
    ctx_home.mkdir(parents=True, exist_ok=True)
    (ctx_home / "config.yaml").write_text("max_record_mb: 0.01\n")
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * 50000}]}))
    res = run("count", doc)
    assert res.code == 1 and "Traceback" not in res.stderr
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("Error")]
    assert len(err) == 1 and str(doc) in err[0] and "max_record_mb" in err[0]


def test_bad_utf8_in_streamed_text_names_its_line(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"fine\n" * 3 + b"bad \xff byte\n")
    res = run("count", "-i", path)
    assert res.code == 1 and f"{path}:4" in res.stderr and "UTF-8" in res.stderr
