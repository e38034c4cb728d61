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
        return emb
    return get_embedder(name)


def cosine_matrix(home, texts: list[str]):
    """n×n cosine similarities of `texts` with MiniLM (embeddings are normalized; cached)."""
    import numpy as np

    m = np.asarray(make_embedder(home, "minilm", len(texts)).embed(texts))
    return m @ m.T
