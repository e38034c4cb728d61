"""A first `ctx score` with MiniLM (no embedding cache yet) builds the model and embeds chunk
texts in a background thread while its input is still being read; it prints what the usual
path prints, byte for byte, and caches what it embedded."""
import time

import pytest

from conftest import corpus, run

onnx = pytest.importorskip("ctxkit.backends.onnx_minilm")
pytestmark = pytest.mark.skipif(not onnx.available(), reason="the ONNX export is made by make setup")

SCORE = ("score", "-", "--embedder", "minilm", "--query-from", "last-user")


def test_a_first_run_prints_what_the_usual_path_prints_and_caches_it(tmp_path, monkeypatch, ctx_home):
    from ctxkit.store.embcache import EmbeddingCache

    imported = run("import", corpus("claude-code_spotter_491e126e_session.jsonl")).stdout
    first = run(*SCORE, input=imported)   # no cache in this home: the model loads and embeds early
    assert first.code == 0, first.stderr
    assert "newly embedded" in first.stderr
    usual_home = tmp_path / "usual"
    EmbeddingCache(str(usual_home / "cache" / "embeddings.sqlite"))   # a cache, empty: the usual path
    monkeypatch.setenv("CTX_HOME", str(usual_home))
    usual = run(*SCORE, input=imported)
    assert usual.code == 0, usual.stderr
    assert (first.stdout, first.stderr) == (usual.stdout, usual.stderr)
    monkeypatch.setenv("CTX_HOME", str(ctx_home))
    again = run(*SCORE, input=imported)   # what the first run embedded early was cached
    assert again.code == 0 and again.stdout == first.stdout
    assert "newly embedded" not in again.stderr


def test_texts_embedded_early_are_the_vectors_of_the_model(tmp_path):
    import numpy as np

    from ctxkit.backends.embedders import text_hash
    from ctxkit.services.embedding import _Early

    texts = ["the parser drops the last line", "fix the JWT refresh bug in auth/jwt.py", "continue",
             "the parser drops the last line"]
    early = _Early()
    for t in texts:
        early.queue.put(t)
    deadline = time.monotonic() + 120
    while early.texts < len(texts) and time.monotonic() < deadline:
        time.sleep(0.05)
    engine, vecs, n = early.take()
    assert n == len(texts) and len(vecs) == 3   # a repeat counts, and is run once
    want = engine.encode(texts)
    for t, v in zip(texts, want):
        assert np.array_equal(vecs[text_hash(t)], v)
    left = _Early()   # stopped at once: the backlog is the caller's (to embed on every core), not the worker's
    for t in texts * 50:
        left.queue.put(t)
    _, vecs, n = left.take()
    assert n < len(texts) * 50


def test_a_run_that_embeds_nothing_leaves_no_preload_behind():
    from ctxkit.services import embedding

    event = '{"v": 1, "kind": "event", "id": "e1", "session": "s", "content": "", "meta": {"type": "note"}}\n'
    res = run("score", "-", "--embedder", "minilm", input=event)   # nothing to score: no make_embedder
    assert res.code == 0, res.stderr
    assert embedding._EARLY == {}
