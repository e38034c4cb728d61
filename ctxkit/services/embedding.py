"""The embedder factory: one place that builds an embedder with its cache and progress."""
from __future__ import annotations

import os
from typing import Callable


def make_embedder(home, name: str, n_texts: int, progress: Callable[[int, str], object] | None = None,
                  loading: Callable[[str], object] | None = None):
    """`name` (minilm | keyword) with the home's embedding cache. `progress(total, label)` makes
    a bar with .update(n)/.close() (the CLI passes a terminal-only one); used from 32 texts."""
    from ..backends.embedders import get_embedder

    if name == "minilm":
        from ..store.embcache import EmbeddingCache

        cache = EmbeddingCache(os.path.join(home.cache_dir, "embeddings.sqlite"))
        bar = progress(n_texts, "embedding") if progress and n_texts >= 32 else None
        emb = get_embedder(name, cache=cache, progress=bar.update if bar else None, loading=loading)
        emb._bar = bar
        engine = _preloaded()
        if engine is not None:
            emb._engine = engine
        return emb
    return get_embedder(name)


_PRELOAD: dict = {}


def preload(home, name: str) -> None:
    """Start building MiniLM's ONNX engine in a background thread when this run will surely need
    it: `name` is minilm, the ONNX export is what runs (setup made it, CTX_EMBED_ENGINE is not
    torch) and the home has no embedding cache yet (a first run: every text is new). It then loads
    while the input is read (behind `ctx import`, for instance) instead of after the whole stream
    was. A later run, with a cache, still loads the model only on a cache miss. `make_embedder`
    takes the engine; a failure there is left for the embedder to meet and report itself."""
    if name != "minilm" or _PRELOAD or os.environ.get("CTX_EMBED_ENGINE") == "torch" or \
            os.path.exists(os.path.join(home.cache_dir, "embeddings.sqlite")):
        return
    from ..backends import onnx_minilm

    if not onnx_minilm.available():
        return
    import threading

    def load():
        try:
            _PRELOAD["engine"] = onnx_minilm.OnnxMiniLM()
        except Exception:  # noqa: BLE001 - the embedder loads it again and reports what fails
            pass
    _PRELOAD["thread"] = threading.Thread(target=load, name="ctx-minilm-preload")
    _PRELOAD["thread"].start()


def _preloaded():
    """The engine `preload` built (waiting for it), once; else None."""
    thread = _PRELOAD.pop("thread", None)
    if thread is None:
        return None
    thread.join()
    return _PRELOAD.pop("engine", None)


def cosine_matrix(home, texts: list[str]):
    """n×n cosine similarities of `texts` with MiniLM (embeddings are normalized; cached)."""
    import numpy as np

    m = np.asarray(make_embedder(home, "minilm", len(texts)).embed(texts))
    return m @ m.T
