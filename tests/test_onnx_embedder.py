"""The query-time MiniLM path: the same model through onnxruntime, no torch in the process,
vectors equal to sentence-transformers' (the reference) on corpus texts."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, corpus, run

onnx = pytest.importorskip("ctxkit.backends.onnx_minilm")
pytestmark = pytest.mark.skipif(not onnx.available(), reason="the ONNX export is made by make setup")


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
    assert float(np.min(cos)) >= 0.9999, float(np.min(cos))


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
