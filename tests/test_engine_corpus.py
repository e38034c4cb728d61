"""The engine on every corpus transcript (every agent, project and language there is), cut at 40, 60 and 80 %
and whole: the state holds no contradiction (the self-check), the summary stays within its budget and fills it
when the span has the content, and it carries no narration, self-praise or half line."""
import re

import pytest

from conftest import CORPUS_FILES, corpus
from ctxkit.backends.tokenizers import get_tokenizer
from ctxkit.compaction import compact_span
from ctxkit.io.adapters import open_records
from ctxkit.io.jsonl import Source

CUTS = (0.4, 0.6, 0.8, 1.0)
NARRATION = re.compile(r"^(?:“)?(?:let me|let's (?:check|look|see|read)|i see\b|now i|okay\b|perfect!|great!|excellent!)", re.I)
TOK = get_tokenizer("cl100k_base")


def _records(name):
    return [r for r in open_records(Source(corpus(name)), skip_invalid=True) if r.get("kind") != "event"]


@pytest.fixture(scope="module")
def loaded():
    return {}


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_the_state_never_contradicts_itself_at_any_cut(name, loaded):
    recs = loaded.setdefault(name, _records(name))
    for cut in CUTS:
        span = recs[: int(len(recs) * cut)]
        s = compact_span(span, 2500, TOK.count)
        assert s.violations == (), (cut, s.violations)


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_the_summary_keeps_its_budget_fills_it_and_reads_cleanly(name, loaded):
    recs = loaded.setdefault(name, _records(name))
    for budget in (300, 3000):
        r = compact_span(recs, budget, TOK.count).rendered
        assert r.tokens <= budget
        for section, items in r.sections:
            lines = [ln.text for ln in items]
            for text in lines:
                assert "\n" not in text and "<system-reminder>" not in text and "<thinking>" not in text.lower()
                assert not NARRATION.match(text), text
            assert len(lines) == len(set(lines)), f"a line is written twice in {section}"
    everything = compact_span(recs, 60000, TOK.count).rendered.tokens
    if everything > 3000:   # the span has more to say than 3,000 tokens hold: they are used
        assert compact_span(recs, 3000, TOK.count).rendered.tokens >= 0.85 * 3000
