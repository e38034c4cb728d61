"""What compaction's speed-ups must not change: each faster path answers exactly as the plain one
did (the same picks, the same order, the same redactions), and a value read from a cache is never
shared with a caller that may change it. Speed itself is measured in bench/bench_compact.py."""
import json
import random

import pytest

from conftest import CORPUS, CORPUS_FILES
from ctxkit.core import distill as D
from ctxkit.core import episodes as E
from ctxkit.core.artifacts import _args
from ctxkit.core.redact import Redactor


def _mmr_plain(cands, k, lam=0.7):
    """MMR as first written: every candidate against every choice, each round."""
    if not cands:
        return []
    top = max(c.weight for c in cands) or 1.0
    bags = [D._bag(c.text) for c in cands]
    chosen, left = [], set(range(len(cands)))
    while left and len(chosen) < k:
        best, best_s = None, -1e9
        for i in left:
            sim = max((len(bags[i] & bags[j]) / (len(bags[i] | bags[j]) or 1) for j in chosen), default=0.0)
            if sim >= 0.6:
                continue
            s = lam * cands[i].weight / top - (1 - lam) * sim
            if s > best_s:
                best, best_s = i, s
        if best is None:
            break
        chosen.append(best)
        left.discard(best)
    return [cands[i] for i in chosen]


def test_mmr_picks_what_the_quadratic_version_picked_in_the_same_order():
    rnd = random.Random(7)
    words = "cache token budget span record group chunk error commit test file edit plan step focus".split()
    for trial in range(40):
        cands = [D.Fact("finding", " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 9))),
                        weight=rnd.choice([0.5, 1.0, 1.0, 1.5, rnd.random() * 3]))
                 for _ in range(rnd.randint(1, 120))]
        for k in (1, 5, 15, 40):
            assert [id(c) for c in D.mmr(cands, k)] == [id(c) for c in _mmr_plain(cands, k)], (trial, k)


def _identifiers_plain(text):
    import re

    text = re.sub(r"https?://\S+", " ", text)
    found = set()
    for tok in D.RAW_TOKEN.findall(text):
        t = tok.strip(".:,;-?!")
        if not t or len(t) < 3 or "/" in t:
            continue
        t = t.lstrip(":")
        for i, rx in enumerate(D.IDENT_RX):
            if rx.match(t):
                if i == 2 and t.rsplit(".", 1)[-1].lower() in D.FILE_EXT:
                    break
                if i == 3 and not re.search(r"\d", t):
                    break
                found.add(t)
                break
    return found


def test_identifiers_are_the_same_and_in_the_same_order_when_tokens_repeat():
    texts = ["Call `parse_args` then FooBar.baz; see https://x.io/a_b_c and v1.2.3, ticket-12, README.md",
             "parse_args again :: ::snake_case? camelCase! a.b config.json spotter-a0y.2 ab_",
             "parse_args FooBar.baz camelCase"]
    for t in texts + texts:  # the second time every token's verdict comes from the cache
        got = D.identifiers(t)
        assert got == _identifiers_plain(t)
        assert list(got) == list(_identifiers_plain(t))  # the iteration order reaches Counter ties


def test_arguments_parsed_once_answer_like_a_fresh_parse():
    call = {"id": "c1", "function": {"name": "Edit", "arguments": json.dumps({"file_path": "a.py", "n": 1})}}
    assert _args(call) == {"file_path": "a.py", "n": 1}
    assert _args(call) is _args(dict(call))  # the same text: parsed once
    assert _args({"function": {"arguments": "[1, 2]"}}) == "[1, 2]"  # not an object: the text itself
    assert _args({"function": {"arguments": "{not json"}}) == "{not json"
    assert _args({"function": {"arguments": ""}}) == {}
    assert _args({"function": {"arguments": {"k": 1}}}) == {"k": 1}


def test_a_cached_definitions_list_is_the_callers_own():
    code = "def alpha(x):\n    return x\n\nclass Beta:\n    pass\n"
    first = E.definitions(code, "m.py")
    assert first == ["alpha", "Beta"]
    first.append("mutated")
    assert E.definitions(code, "m.py") == ["alpha", "Beta"]
    assert E.definitions(code, "m.css") != first  # the path is part of the question
    values = E.key_values("MAX_ITEMS = 10\n", "lib/m.py")
    values.clear()
    assert E.key_values("MAX_ITEMS = 10\n", "lib/m.py") == ["MAX_ITEMS = 10"]
    assert E.key_values("MAX_ITEMS = 10\n", "tests/test_m.py") == []


def _records(name):
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source

    return list(open_records(Source(str(CORPUS / name))))


def _facts(d):
    return {k: repr(getattr(d, k)) for k in ("requests", "plan", "progress", "errors", "decisions", "constraints",
                                              "findings", "entities", "files", "cwd")}


@pytest.mark.parametrize("name", [n for n in CORPUS_FILES if n.startswith("claude-code") and "session" in n][:2])
def test_distill_read_twice_gives_the_same_facts_and_neither_reader_sees_the_others_changes(name):
    recs = _records(name)
    span = recs[: len(recs) * 3 // 4]
    D._LAST.clear()
    alone = _facts(D.distill(list(span), recs, story=False))   # nothing to reuse: distilled afresh
    D._LAST.clear()
    first = D.distill(span, recs)                                 # stores its facts
    second = D.distill(list(span), recs, story=False)            # the same records: reused
    assert _facts(second) == alone
    first.requests.append(D.Fact("request", "changed by the first reader"))
    first.decisions.clear()
    assert _facts(second) == alone
    third = D.distill(list(span), recs, story=False)              # reused once only: afresh again
    assert _facts(third) == alone and third is not second
    other = D.distill(span[:-1], recs, story=False)               # other records: never the stored facts
    assert other is not second


def test_a_bare_aws_secret_after_an_earlier_40_character_run_is_still_redacted():
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # 40 characters, the documented example form
    text = "x" * 40 + " and the key " + key + " here"
    for r in (Redactor(), Redactor(extra_patterns=[r"zzz-never"])):
        out = r.text(text)
        assert key not in out and "[REDACTED:aws-secret-key#" in out
        assert out.startswith("x" * 40)
    assert Redactor().text("short text, no secret") == "short text, no secret"


def test_answers_by_content_are_remembered_within_bounds_only():
    calls = []

    def defs(text, path):
        calls.append(text)
        return [text[:3]]

    cached = E._by_content(defs, max_text=10, max_chars=25)
    assert cached("abcdef", "p") == ["abc"] and cached("abcdef", "p") == ["abc"]
    assert calls == ["abcdef"]                      # asked twice, computed once
    cached("x" * 11, "p"), cached("x" * 11, "p")    # over max_text: never held
    assert len(calls) == 3
    for t in ("0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"):
        cached(t, ""), cached(t, "")
    assert calls.count("klmnopqrst") == 2           # past max_chars in all: computed, not held
    assert cached("abcdef", "q") == ["abc"] and calls.count("abcdef") == 2  # the path is part of the key
