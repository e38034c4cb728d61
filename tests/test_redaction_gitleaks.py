"""The vendored gitleaks rule set (ctxkit/rules/gitleaks/): what ctx loads is the TOML as released, with its
licence and version; every rule's Go regex translates to one Python compiles; every rule finds each
true positive its generator documents and none of its documented false positives, the way gitleaks
itself validates it (tests/fixtures/gitleaks_examples.json, made by tools/vendor_gitleaks.py); and a
window around a keyword never cuts a secret short."""
import json
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import FIXTURES
from ctxkit.core import redact, secret_shapes
from ctxkit.core.gitleaks import Keywords, RuleSet, Window, compile_go, translate
from ctxkit.core.redact import Redactor

VENDORED = Path(redact.RULES_JSON).parent
CONFIG = json.loads((VENDORED / "gitleaks.json").read_text(encoding="utf-8"))
EXAMPLES = json.loads((FIXTURES / "gitleaks_examples.json").read_text(encoding="utf-8"))
RULES = RuleSet(CONFIG)  # gitleaks' rules alone, without ctx's own
KEYWORDS = Keywords(RULES.keywords)
# rules that need a file path (never run on text), and the few whose generator gives no example a
# reader can take out of its Go source (built from variables, or "validate TODO" upstream)
PATH_RULES = {"freemius-secret-key", "hashicorp-tf-password", "kubernetes-secret-yaml", "nuget-config-password",
              "pkcs12-file"}
NO_EXAMPLE = {"authress-service-client-access-key", "dropbox-long-lived-api-token", "dropbox-short-lived-api-token",
              "jwt-base64", "telegram-bot-api-token"}


def _texts(example) -> list[str]:
    if isinstance(example, str):
        return [example]
    i, s = example["identifier"], example["secret"]
    return [f.replace("{i}", i).replace("{I}", i.upper()).replace("{s}", s) for f in EXAMPLES["sample_forms"]]


def _finds(rule_id: str, text: str) -> list:
    return [f for f in RULES.finds(text, KEYWORDS.find(text.lower())) if f[2] == rule_id]


def test_the_vendored_rules_are_the_released_toml_with_licence_and_version():
    source = CONFIG["vendored"]
    assert source["tag"] == "v8.30.1" and re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert source["license"] == "MIT" and "MIT License" in (VENDORED / "LICENSE").read_text()
    readme = (VENDORED / "README.md").read_text()
    assert source["tag"] in readme and source["commit"] in readme
    assert EXAMPLES["vendored"] == source
    tomllib = pytest.importorskip("tomllib")
    toml = tomllib.loads((VENDORED / "gitleaks.toml").read_text(encoding="utf-8"))
    assert {k: v for k, v in CONFIG.items() if k != "vendored"} == toml  # the JSON is the TOML, nothing else
    assert len(toml["rules"]) == 222


def test_every_vendored_regex_translates_to_one_python_compiles_without_warning():
    regexes = [r["regex"] for r in CONFIG["rules"] if "regex" in r]
    regexes += [x for r in CONFIG["rules"] for a in r.get("allowlists", ()) for x in a.get("regexes", ())]
    regexes += CONFIG["allowlist"]["regexes"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a nested set or a bad escape would only warn
        for go in regexes:
            compile_go(go)
    assert len(RULES.rules) == 222 - len(PATH_RULES)


@pytest.mark.parametrize("go, py", [
    (r"\b(p8e-(?i)[a-z0-9]{32})(?:x)", r"\b(p8e-(?i:[a-z0-9]{32}))(?:x)"),  # a flag to the end of its group
    ("a(?i)b|c", "a(?i:b)|(?i:c)"),                                         # ... across the group's `|`
    ("(?i)abc", "(?i)abc"),                                                  # at the start: as it is
    (r"pat[[:alnum:]]{14}\.", r"pat[a-zA-Z0-9]{14}\."),                      # POSIX class
    (r"(?:[^\w-]|\z)", r"(?:[^\w-]|\Z)"),                                    # end of text
    (r"[\w=~@.+/-]", r"[\w=~@.+/-]"), ("[+--]", r"[+-\-]"), ("[x&&y]", r"[x&\&y]"), ("[[x]", r"[\[x]"),
    (r"x(?-i:acc)[_-]", r"x(?-i:acc)[_-]"),
])
def test_go_regex_translation(go, py):
    assert translate(go) == py


def test_translated_flags_keep_go_meaning():
    rx = compile_go(r"\b(LTAI(?i)[a-z0-9]{20})(?:[\x60'\"\s;]|$)")
    assert rx.search("LTAI5tAbCdEfGhIjKlMnOpQr ")  # case-insensitive after the flag
    assert not rx.search("ltai5tAbCdEfGhIjKlMnOpQr ")  # not before it
    assert compile_go("a(?i)b|c").fullmatch("C") and not compile_go("a(?i)b|c").fullmatch("AB")


@pytest.mark.parametrize("rule", sorted(r.id for r in RULES.rules))
def test_every_rule_finds_its_documented_examples_and_none_of_its_false_positives(rule):
    ex = EXAMPLES["rules"].get(rule) or {"tps": [], "fps": []}
    if rule in NO_EXAMPLE:
        assert not ex["tps"]
        pytest.skip("its generator documents no example a reader can take out")
    assert ex["tps"], "no documented example"
    missed = [t for e in ex["tps"] for t in _texts(e) if not _finds(rule, t)]
    assert missed == []
    wrong = [t for e in ex["fps"] for t in _texts(e) if _finds(rule, t)]
    assert wrong == []
    first = _texts(ex["tps"][0])[0]
    assert Redactor().text(first) != first  # and the whole redactor hides it


def test_the_examples_cover_every_rule_that_runs():
    assert set(EXAMPLES["rules"]) >= {r.id for r in RULES.rules} - NO_EXAMPLE
    assert {r["id"] for r in CONFIG["rules"] if r.get("path")} == PATH_RULES


def test_a_window_never_cuts_a_secret_short():
    # a keyword far into a long one-line text; the window's end would fall inside the token
    token = "dop_v1_" + "3f9a8c7e6d5b4a39" * 4
    pad = "x" * 100_000
    for text in (pad + " " + token + " tail", pad + " " + token, "a " + token + "b" * (Window.REACH * 3)):
        spans = [(a, b) for a, b, k in Redactor().spans(text) if k == "digitalocean-pat"]
        if text.endswith("b" * 10):  # the token runs on: no DigitalOcean token ends there (its regex needs an end)
            assert spans == []
        else:
            assert [text[a:b] for a, b in spans] == [token]
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["MIIEpAIBAAKCAQEA7x" * 4] * 200)  # no END line
    red = Redactor().text("cat id_rsa\n" + key)
    assert "MIIE" not in red and red.startswith("cat id_rsa\n[REDACTED:private-key#")


def test_own_rules_are_python_and_checked():
    ids = {r["id"] for r in secret_shapes.RULES}
    assert set(secret_shapes.CHECKS) - {"generic-api-key"} <= ids
    for r in secret_shapes.RULES:
        re.compile(r["regex"])
        assert r["keywords"] == [k.lower() for k in r["keywords"]], r["id"]


ALL = RuleSet(CONFIG, own=secret_shapes.RULES, checks=secret_shapes.CHECKS)
UNITS = ["a", "A", "0", " ", ".", "/", "-", "_", "=", ":", "\n", "\\", '"', "aA0/+", "a/", "key=", "token ", "s.",
         "curl -H x ", "\n-----BEGIN PRIVATE KEY-----", "password is ", "machine x login y "]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(rule=st.sampled_from(sorted(range(len(ALL.rules)))), unit=st.sampled_from(UNITS),
       tail=st.sampled_from(["", "!", "\n", "'", "=="]))
def test_every_rule_finishes_on_its_keyword_and_a_long_run_of_one_character_class(rule, unit, tail):
    r = ALL.rules[rule]
    text = (r.keywords[0] if r.keywords else "") + " " + unit * (20_000 // len(unit)) + tail
    ALL.finds(text, Keywords(r.keywords).find(text.lower()))  # as a window sees it
    for _ in r.rx.finditer(text):  # and over the whole text
        pass
