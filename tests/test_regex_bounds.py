"""No regex without a bound: every pattern ctx runs on untrusted text finishes on long runs of any
one character class (before, the relevance `CODE` pattern took 50 s on a 200 KB token), and the
rewritten patterns still find what they found. Speed itself is measured in bench/bench_regex.py."""
import importlib
import pkgutil
import re

from hypothesis import given, settings, strategies as st

import ctxkit
from ctxkit.core import score
from ctxkit.core.redact import Redactor


def _patterns() -> dict[str, re.Pattern]:
    out = {}
    for m in pkgutil.walk_packages(ctxkit.__path__, "ctxkit."):
        if any(x in m.name for x in ("onnx", "summarizers", "docgen", "__main__")):
            continue
        try:
            mod = importlib.import_module(m.name)
        except Exception:
            continue
        for k, v in vars(mod).items():
            items = v if isinstance(v, (list, tuple)) else [v]
            for i, x in enumerate(items):
                for y in (x if isinstance(x, tuple) else (x,)):
                    if isinstance(y, re.Pattern):
                        out[f"{m.name}.{k}[{i}]"] = y
    return out


PATTERNS = _patterns()
NAMES = sorted(PATTERNS)
UNITS = ["a", "A", "0", " ", ".", "/", "-", "_", "`", "=", ":", "\n", "\\", '"', "#", "*", "(", "[", "a.", "a ",
         "a-", "a/", "aA0/+", "AAAA", "eyJ", "- ", "0 ", "password=", "://", "mysql ", "\t"]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(name=st.sampled_from(NAMES), unit=st.sampled_from(UNITS), tail=st.sampled_from(["", "!", "\n", ".py", "()"]))
def test_every_pattern_finishes_on_a_long_run_of_one_character_class(name, unit, tail):
    text = unit * (20_000 // len(unit)) + tail
    for _ in PATTERNS[name].finditer(text):
        pass


@settings(max_examples=40, deadline=None, derandomize=True)
@given(unit=st.sampled_from(UNITS), n=st.integers(50_000, 200_000))
def test_redaction_and_relevance_features_finish_on_a_long_token(unit, n):
    text = unit * (n // len(unit))
    Redactor().text(text)
    score.record_importance({"role": "assistant", "content": text})


OLD_CODE = re.compile(r"```|`[^`\n]+`|\b[\w./-]+\.(?:py|js|ts|tsx|rs|go|java|rb|ex|exs|c|h|cpp|md|json|ya?ml|toml|sh)\b|"
                      r"\bdef \w+|\bclass \w+|\bfunction \w+|\w+\(\)")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["a", "b_", "/", ".", "-", " ", "py", "json", "md", ".py", "()", "(", ")", "def ",
                                 "class ", "function ", "`", "\n", "x.sh", "README.md", "src/a.rs", "-.py"]),
                max_size=12))
def test_code_pattern_finds_what_it_found(parts):
    text = "".join(parts)
    if re.search(r"(?<![\w/-])[./-]*\.(?:py|js|ts|tsx|rs|go|java|rb|ex|exs|c|h|cpp|md|json|ya?ml|toml|sh)\b", text) \
            and not OLD_CODE.search(text):
        return  # a bare `.py` with no name before it: neither is a file name worth the signal
    assert bool(score.CODE.search(text)) == bool(OLD_CODE.search(text)), text
