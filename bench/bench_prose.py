"""What a model summarizer's prose is worth: for each Claude Code session of the corpus that holds
a /compact, the extractive summary of the span Claude summarized (at --budget tokens, about Claude's),
then the model's answer for each Current work / Next step / Step section and whether the check
kept it (and why not). Prints one JSON line per session, and with -v each answer.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_prose.py [-v] [--timeout S]             # llama (SmolLM2)
    PYTHONPATH=$PWD .venv/bin/python bench/bench_prose.py --openai http://127.0.0.1:8080/v1 --model NAME

Not part of run_all (a model run takes minutes on a shared CPU)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT))


def spans():
    """(name, the records before Claude's /compact as JSONL) per session."""
    for p in sorted(CORPUS.glob("claude-code_*_session.jsonl")):
        out = subprocess.run([sys.executable, "-m", "ctxkit", "import", str(p)], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout
        recs = [json.loads(x) for x in out.splitlines() if x.strip()]
        cut = next((i for i, r in enumerate(recs) if r.get("kind") == "summary"), None)
        if cut is None:
            continue
        yield p.name, "".join(json.dumps(r) + "\n" for r in recs[:cut])


def extractive_summary(span: str, budget: int) -> str:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, PYTHONPATH=str(ROOT), CTX_HOME=home, CTX_WORKSPACE=os.path.join(home, "ws"),
                   CTX_SUMMARY_TARGET_TOKENS=str(budget))
        out = subprocess.run([sys.executable, "-m", "ctxkit", "compact", "--force", "--budget", str(budget)],
                             input=span, capture_output=True, text=True, env=env, check=True).stdout
    recs = [json.loads(x) for x in out.splitlines() if x.strip()]
    return next(r["content"] for r in recs if r.get("kind") == "summary")


class Recording:
    """The model, with every answer kept for the report."""

    def __init__(self, model):
        self.model, self.answers = model, None

    def answer_each(self, prompts, timeout_s):
        self.answers = self.model.answer_each(prompts, timeout_s)
        return self.answers


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", action="store_true", help="print each section's answer")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--openai", metavar="BASE_URL")
    ap.add_argument("--model", default="")
    ap.add_argument("--gguf")
    ap.add_argument("--session", default="", help="only sessions whose file name contains this")
    ap.add_argument("--budget", type=int, default=3200, help="the summary's tokens (about Claude's /compact)")
    a = ap.parse_args(argv)
    from ctxkit.backends.summarizers import IsolatedLlama, OpenAISummarizer
    from ctxkit.backends.tokenizers import get_tokenizer
    from ctxkit.core import context_md as C
    from ctxkit.services.prose import prose_sections, rewrite

    tok = get_tokenizer()
    for name, span in spans():
        if a.session not in name:
            continue
        budget = a.budget
        body = extractive_summary(span, budget).split("---\n", 1)[1].split("\n## After this summary")[0]
        ctx = C.parse(body)
        before = {n: [i.text for i in ctx.sections[n]] for n in prose_sections(ctx)}
        model = Recording(OpenAISummarizer(a.openai, a.model, os.environ.get("OPENAI_API_KEY")) if a.openai
                          else IsolatedLlama(a.gguf))
        t0 = time.monotonic()
        run = rewrite(ctx, model, a.timeout, tok.count)
        secs = time.monotonic() - t0
        tokens_before = sum(tok.count(C.Item(text=t).render() + "\n") for v in before.values() for t in v)
        tokens_after = sum(tok.count(i.render() + "\n") for n in before for i in ctx.sections[n])
        print(json.dumps({"bench": "prose", "session": name, "model": a.model or ("openai" if a.openai else "llama"),
                          "sections": len(before), "kept_as_prose": len(run.rewritten),
                          "fell_back": dict(run.fell_back), "error": run.error, "seconds": round(secs, 1),
                          "completion_tokens": run.completion_tokens,
                          "section_tokens_before": tokens_before, "section_tokens_after": tokens_after}))
        if a.v and model.answers is not None:
            for n, text in zip(run.asked, model.answers.texts):
                verdict = "KEPT" if n in run.rewritten else "fell back: " + dict(run.fell_back).get(n, "")
                print(f"--- {n[:70]} [{verdict}]\n{(text or '(no answer)').strip()[:600]}\n", file=sys.stderr)


if __name__ == "__main__":
    main()
