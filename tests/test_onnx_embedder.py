"""The query-time MiniLM path: ctxkit-minilm's graph over the published weights through
onnxruntime, no torch in the process, vectors close to sentence-transformers' (the reference;
the float32 graph's equal to them) on corpus texts; every file hash-checked."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, corpus, run

onnx = pytest.importorskip("ctxkit.backends.onnx_minilm")
pytestmark = pytest.mark.skipif(not onnx.available(), reason="ctxkit-minilm (the ml extra) is installed by make setup")


def corpus_texts(n=120):
    out = []
    for name in ("claude-code_spotter_491e126e_session.jsonl", "tau-bench_gpt-4o-airline_idx173_task23.json",
                 "swe-agent_pydicom__pydicom-1458.traj"):
        for r in run("import", corpus(name)).records():
            if r.get("content"):
                out.append(r["content"][:3000])
    return out[:n]


def reference(texts):
    from sentence_transformers import SentenceTransformer

    from ctxkit.backends.embedders import minilm_path

    return SentenceTransformer(minilm_path(), device="cpu").encode(texts, normalize_embeddings=True,
                                                                   convert_to_numpy=True)


def test_the_float32_graph_equals_sentence_transformers():
    import numpy as np

    texts = corpus_texts()
    a = onnx.OnnxMiniLM(graph=onnx.GRAPH_FP32).encode(texts)
    cos = (a * reference(texts)).sum(1)
    assert len(texts) >= 100 and float(np.min(cos)) >= 1 - 1e-5, float(np.min(cos))


def test_the_int8_graph_ctx_runs_is_close_to_sentence_transformers():
    """Not equal: int8 weights (one scale per output channel) and int8 activations (one scale
    per layer input and text) move each vector by a little. Measured on these texts: min cosine
    0.987, mean 0.993; on fa812bfe's 161 chunk texts min 0.989, mean 0.994. The embedding cache
    keeps its vectors apart from torch's (MiniLMEmbedder.model_id)."""
    import numpy as np

    texts = corpus_texts()
    cos = (onnx.OnnxMiniLM().encode(texts) * reference(texts)).sum(1)
    assert len(texts) >= 100 and float(np.min(cos)) >= 0.98 and float(np.mean(cos)) >= 0.99, \
        (float(np.min(cos)), float(np.mean(cos)))


def test_a_texts_vector_does_not_depend_on_the_texts_beside_it():
    """Each text runs alone: the same vector embedded alone, in a batch, first or last (the
    cache may hold either)."""
    import numpy as np

    texts = corpus_texts(40)
    engine = onnx.OnnxMiniLM()
    together = engine.encode(texts)
    for i in (0, 17, 39):
        assert np.array_equal(engine.encode([texts[i]])[0], together[i])


def test_a_fresh_semantic_search_imports_no_torch(tmp_path):
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    recs = "".join(json.dumps({"v": 1, "kind": "message", "id": f"m{i}", "session": "s", "role": "user",
                               "content": f"notes about topic {i} and the JWT refresh flow " * 12, "score": 0.0,
                               "group": f"c-{i:04d}"}) + "\n" for i in range(8))
    subprocess.run([sys.executable, "-m", "ctxkit", "drop", "--cutoff", "0.5", "--keep", "1.0", "--min-keep", "0"],
                   input=recs, env=env, capture_output=True, text=True, check=True)
    code = ("import sys, runpy; sys.argv=['ctx','cold-storage','search','token refresh','--embedder','minilm',"
            "'--json']\ntry:\n    runpy.run_module('ctxkit', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print('TORCH' if 'torch' in sys.modules or 'sentence_transformers' in sys.modules else 'CLEAN', "
            "file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.stdout.strip(), p.stderr
    assert p.stderr.strip().endswith("CLEAN"), p.stderr


def test_cached_vectors_are_shared_with_the_reference(tmp_path):
    from ctxkit.backends.embedders import MiniLMEmbedder
    from ctxkit.store.embcache import EmbeddingCache

    cache = EmbeddingCache(str(tmp_path / "e.sqlite"))
    e = MiniLMEmbedder(cache=cache)
    e.embed(["the parser drops the last line"])
    again = MiniLMEmbedder(cache=cache)
    again.embed(["the parser drops the last line"])
    assert e.encoded == 1 and again.encoded == 0


def test_the_two_engines_never_share_a_cached_vector(tmp_path, monkeypatch):
    from ctxkit.backends.embedders import MiniLMEmbedder
    from ctxkit.store.embcache import EmbeddingCache

    cache = EmbeddingCache(str(tmp_path / "e.sqlite"))
    onnx_ids = MiniLMEmbedder(cache=cache).model_id
    monkeypatch.setenv("CTX_EMBED_ENGINE", "torch")
    assert MiniLMEmbedder(cache=cache).model_id != onnx_ids


def test_spinner_while_the_model_loads_only_on_a_terminal(monkeypatch, capsys):
    import io

    from ctxkit.backends.embedders import MiniLMEmbedder
    from ctxkit.cli import progress

    class TTY(io.StringIO):
        def isatty(self):
            return True

    fake = TTY()
    monkeypatch.setattr(progress.sys, "stderr", fake)
    monkeypatch.delenv("CTX_QUIET", raising=False)
    e = MiniLMEmbedder(loading=progress.spinner)
    e.embed(["a text that needs the model"])
    assert "loading MiniLM" in fake.getvalue()
    pipe = io.StringIO()  # not a terminal: nothing at all
    monkeypatch.setattr(progress.sys, "stderr", pipe)
    MiniLMEmbedder(loading=progress.spinner).embed(["another text for the model"])
    assert pipe.getvalue() == ""


def test_the_shipped_graph_is_what_the_builder_makes():
    """model-int8.onnx and model.onnx are build_graph()'s int8 and float32 graphs over the weights
    (their own byte ranges for what stays float32), and their sha256 are the ones the loader
    checks (a changed graph is a new ctxkit-minilm version)."""
    import hashlib
    import os

    pytest.importorskip("onnx")
    from ctxkit.backends.embedders import minilm_path

    d = minilm_path()
    for name, int8, want in ((onnx.GRAPH, True, onnx.GRAPH_SHA256), (onnx.GRAPH_FP32, False, onnx.GRAPH_FP32_SHA256)):
        built = onnx.graph_bytes(os.path.join(d, onnx.WEIGHTS), int8)
        assert hashlib.sha256(built).hexdigest() == want
        assert open(os.path.join(d, name), "rb").read() == built


def test_damaged_weights_are_refused_and_a_verified_file_is_not_hashed_again(tmp_path):
    import shutil

    from ctxkit.backends.embedders import minilm_path
    from ctxkit.errors import ConfigError

    model, stamps = tmp_path / "model", tmp_path / "stamps"
    shutil.copytree(minilm_path(), model)
    first = onnx.OnnxMiniLM(str(model), str(stamps)).encode(["the parser drops the last line"])
    assert len(list(stamps.iterdir())) == 2  # the weights and the int8 graph verified once, remembered
    again = onnx.OnnxMiniLM(str(model), str(stamps)).encode(["the parser drops the last line"])
    assert (first == again).all()
    with open(model / onnx.WEIGHTS, "r+b") as f:  # one weight changed: a new mtime, so hashed again
        f.seek(-4, 2)
        f.write(b"\x00\x00\x80\x7f")
    with pytest.raises(ConfigError, match="sha256 does not match"):
        onnx.OnnxMiniLM(str(model), str(stamps))
    shutil.copy(minilm_path() + "/" + onnx.WEIGHTS, model / onnx.WEIGHTS)
    (model / onnx.GRAPH).write_bytes((model / onnx.GRAPH).read_bytes() + b"\0")
    with pytest.raises(ConfigError, match=f"{onnx.GRAPH}: sha256"):
        onnx.OnnxMiniLM(str(model), str(stamps))
