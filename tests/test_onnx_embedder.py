"""The query-time MiniLM path: ctxkit-minilm's graph over the published weights through
onnxruntime, no torch in the process, vectors equal to sentence-transformers' (the reference)
on corpus texts; every file hash-checked."""
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


def test_onnx_vectors_equal_sentence_transformers():
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from ctxkit.backends.embedders import minilm_path

    texts = corpus_texts()
    a = onnx.OnnxMiniLM().encode(texts)
    b = SentenceTransformer(minilm_path(), device="cpu").encode(texts, normalize_embeddings=True,
                                                                convert_to_numpy=True)
    cos = (a * b).sum(1)
    assert len(texts) >= 100 and float(np.min(cos)) >= 1 - 1e-5, float(np.min(cos))


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
    """model.onnx is build_graph() over the weights' own byte ranges, and its sha256 is the one
    the loader checks (a changed graph is a new ctxkit-minilm version)."""
    import hashlib
    import os

    pytest.importorskip("onnx")
    from ctxkit.backends.embedders import minilm_path

    d = minilm_path()
    built = onnx.graph_bytes(os.path.join(d, onnx.WEIGHTS))
    assert hashlib.sha256(built).hexdigest() == onnx.GRAPH_SHA256
    assert open(os.path.join(d, onnx.GRAPH), "rb").read() == built


def test_damaged_weights_are_refused_and_a_verified_file_is_not_hashed_again(tmp_path):
    import shutil

    from ctxkit.backends.embedders import minilm_path
    from ctxkit.errors import ConfigError

    model, stamps = tmp_path / "model", tmp_path / "stamps"
    shutil.copytree(minilm_path(), model)
    first = onnx.OnnxMiniLM(str(model), str(stamps)).encode(["the parser drops the last line"])
    assert len(list(stamps.iterdir())) == 1  # verified once, remembered
    again = onnx.OnnxMiniLM(str(model), str(stamps)).encode(["the parser drops the last line"])
    assert (first == again).all()
    with open(model / onnx.WEIGHTS, "r+b") as f:  # one weight changed: a new mtime, so hashed again
        f.seek(-4, 2)
        f.write(b"\x00\x00\x80\x7f")
    with pytest.raises(ConfigError, match="sha256 does not match"):
        onnx.OnnxMiniLM(str(model), str(stamps))
    shutil.copy(minilm_path() + "/" + onnx.WEIGHTS, model / onnx.WEIGHTS)
    (model / onnx.GRAPH).write_bytes((model / onnx.GRAPH).read_bytes() + b"\0")
    with pytest.raises(ConfigError, match="model.onnx: sha256"):
        onnx.OnnxMiniLM(str(model), str(stamps))
