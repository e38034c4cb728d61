"""A gitleaks rule set run in Python: the rules of a gitleaks config (its `config/gitleaks.toml`, read as
a dict), their Go RE2 regexes translated to Python's `re`, each rule run only where one of its keywords
is, as gitleaks does, and its findings filtered the way gitleaks filters them (secret group, Shannon
entropy, the global and the rule's allowlists and stopwords).

What differs from gitleaks, and why:
- a rule is run on a window around each of its keywords, not on the whole text: Python's regexes
  backtrack where RE2 does not, so a window bounds the cost of a pattern on any input (`Window`);
- the leading `[\\w.-]{0,50}?` of a semi-generic rule (`twitter…_token = …`) is left out of the search
  (it only widens the match to the whole identifier, which is rebuilt for an allowlist that reads the match);
- rules that need a file path (`path = …`: `.tf`, `.php`, `nuget.config`, `.p12`) do not run: ctx sees
  text, not files; gitleaks' decoding passes (base64, hex, percent) are not run either.

Pure: the caller hands the config in (`ctxkit/rules/gitleaks/` holds the vendored one) and text to scan.
"""
from __future__ import annotations

import math
import re
import sys
from collections import Counter
from typing import Iterable

# Go's POSIX classes inside brackets (`[[:alnum:]]`) as Python ranges
POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
         "xdigit": "0-9A-Fa-f", "space": r"\t\n\v\f\r ", "word": r"\w", "punct": r"!-/:-@\[-`{-~",
         "blank": r" \t", "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~", "ascii": r"\x00-\x7f"}
_FLAGS = re.compile(r"\(\?([imsU-]+)\)")
_OPEN_REPEAT = re.compile(r"\{(\d+),\}")
# the identifier before a semi-generic rule's keyword (`utils.GenerateSemiGenericRegex`)
_IDENT_PREFIX = re.compile(r"^(\(\?i\))?\[\\w\.-\]\{0,(\d+)\}\?")


def translate(go: str, cap: int | None = None) -> str:
    """A Go RE2 regex as a Python `re` regex of the same meaning (compiled with re.ASCII, as Go's
    `\\w`, `\\d`, `\\s` and `\\b` are ASCII): a flag group past the start (`p8e-(?i)[a-z0-9]{32}`)
    applies to the end of its group, as in Go, and so is scoped (`(?i:…)`), closed and reopened around
    each `|` of that group; POSIX classes become ranges; `\\z` is `\\Z`; a `[`, or a doubled `-&~|`,
    inside a class is escaped (the second of the pair: Python would read a set operation into it).
    With `cap`, an unbounded repeat (`*`, `+`, `{n,}`) repeats at most `cap` times: RE2 never
    backtracks, Python does, and a cap keeps a failing match from rereading a long run for every
    place it starts."""
    out: list[str] = []
    scopes: list[list[str]] = [[]]  # per open group: the flag groups opened in it, still open
    i, n = 0, len(go)
    in_class = False
    while i < n:
        c = go[i]
        if c == "\\":
            e = go[i:i + 2]
            out.append(r"\Z" if e == r"\z" else e)
            i += 2
            continue
        if in_class:
            if go.startswith("[:", i) and go.find(":]", i) > 0:
                j = go.find(":]", i)
                name = go[i + 2:j]
                if name in POSIX:
                    out.append(POSIX[name])
                    i = j + 2
                    continue
            if c == "]":
                in_class = False
            elif c == "[":
                out.append("\\")
            elif c in "-&~|" and go[i + 1:i + 2] == c:  # `--`: Python would read a set operation
                out.append(c + "\\" + c)
                i += 2
                continue
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if go[i:i + 1] == "^":
                out.append("^")
                i += 1
            if go[i:i + 1] == "]":  # a `]` first in a class is a literal
                out.append(r"\]")
                i += 1
            continue
        if c == "(":
            m = _FLAGS.match(go, i)
            if m and i > 0:
                out.append(f"(?{m.group(1)}:")
                scopes[-1].append(m.group(1))
                i = m.end()
                continue
            scopes.append([])
            out.append(c)
            i += 1
            continue
        if c == ")" and len(scopes) > 1:
            out.append(")" * len(scopes.pop()) + ")")
            i += 1
            continue
        if c == "|" and scopes[-1]:
            out.append(")" * len(scopes[-1]) + "|" + "".join(f"(?{f}:" for f in scopes[-1]))
            i += 1
            continue
        if cap and c in "*+":
            out.append(f"{{{0 if c == '*' else 1},{cap}}}")
            i += 1
            continue
        if cap and c == "{":
            m = _OPEN_REPEAT.match(go, i)
            if m:
                out.append(f"{{{m.group(1)},{max(cap, int(m.group(1)))}}}")
                i = m.end()
                continue
        out.append(c)
        i += 1
    out.append(")" * len(scopes[0]))
    return "".join(out)


def compile_go(go: str) -> re.Pattern:
    return re.compile(translate(go), re.ASCII)


def shannon(s: str) -> float:
    """Shannon entropy in bits per character (gitleaks' `shannonEntropy`)."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


class Allowlist:
    """One allowlist: regexes on the secret (or the match, or the line) and stopwords in the secret;
    either is enough, or all that are set (`condition = "AND"`). Paths and commits: never (no file here)."""
    __slots__ = ("target", "sources", "_regexes", "stopwords", "all")

    def __init__(self, spec: dict):
        self.target = spec.get("regexTarget") or "secret"
        self.sources = list(spec.get("regexes") or ())
        self._regexes = None
        self.stopwords = [w.lower() for w in spec.get("stopwords") or ()]
        self.all = str(spec.get("condition") or "OR").upper() == "AND"

    @property
    def regexes(self) -> list[re.Pattern]:
        if self._regexes is None:  # compiled when a finding first needs them
            self._regexes = [compile_go(x) for x in self.sources]
        return self._regexes

    @property
    def usable(self) -> bool:
        return bool(self.sources or self.stopwords)

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = match if self.target == "match" else line if self.target == "line" else secret
        by_regex = any(rx.search(target) for rx in self.regexes)
        low = secret.lower()
        by_word = any(w in low for w in self.stopwords)
        if self.all:
            checks = ([by_regex] if self.sources else []) + ([by_word] if self.stopwords else [])
            return bool(checks) and all(checks)
        return by_regex or by_word


class Rule:
    """One rule. Beside gitleaks' fields, a rule of ctx's own may say `python` (its regex is Python's,
    not translated; the global allowlist does not apply), `whole` (the secret is the whole match, not
    its first group); any rule may carry a `check(secret, match)` that must hold too."""
    __slots__ = ("id", "go", "keywords", "entropy", "group", "allowlists", "ident", "_rx", "before", "after",
                 "python", "whole", "check", "to_end")

    def __init__(self, spec: dict, check=None):
        self.id = spec["id"]
        self.go = spec["regex"]
        self.keywords = tuple(k.lower() for k in spec.get("keywords") or ())
        self.entropy = float(spec.get("entropy") or 0.0)
        self.group = int(spec.get("secretGroup") or 0)
        self.allowlists = [a for a in map(Allowlist, spec.get("allowlists") or ()) if a.usable]
        self.python = bool(spec.get("python"))
        self.whole = bool(spec.get("whole"))
        self.to_end = bool(spec.get("to_end"))  # its match may run to the end of the text (an unended key block)
        self.check = check
        self._rx = None
        self.ident = 0

    @property
    def rx(self) -> re.Pattern:
        """The rule's regex, compiled on first use (most rules never run on a given text)."""
        if self._rx is None:
            py = self.go if self.python else translate(self.go, cap=Window.REACH)
            m = None if self.python else _IDENT_PREFIX.match(py)
            if m:  # searched from the keyword on; the identifier before it is rebuilt when needed
                self.ident = int(m.group(2))
                py = (m.group(1) or "") + py[m.end():]
            self._rx = re.compile(py, 0 if self.python else re.ASCII)
            hi = _width(self._rx)[1]
            self.before = min(hi, Window.REACH) + self.ident
            self.after = min(hi, Window.REACH)
        return self._rx


def _width(rx: re.Pattern) -> tuple[int, int]:
    """The least and the most characters a match can span (the most: a large number when unbounded)."""
    import importlib

    # the standard library's own regex parser (re._parser since 3.11, sre_parse before it)
    sre_parse = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
    lo, hi = sre_parse.parse(rx.pattern, rx.flags).getwidth()
    return lo, hi


class Window:
    """How far around a keyword a rule looks: as far as its longest match, at most REACH characters
    (a private key block, a curl command over several lines), and on to the end of the token it stops in."""
    REACH = 4096
    SEPARATORS = re.compile(r"[\s\"'`,;<>(){}\[\]]")


class RuleSet:
    """The rules of one gitleaks config (less those in `skip`), and rules of ctx's own (`own`, in the same
    shape), with `checks` by rule id. `finds(text, hits)` takes where each keyword is in the lower-cased
    text (`hits`: keyword -> start offsets), as one Aho-Corasick pass (`Keywords`) finds them."""

    def __init__(self, config: dict, skip: Iterable[str] = (), own: Iterable[dict] = (), checks: dict | None = None):
        skip = set(skip)
        glob = config.get("allowlist") or {}
        allow = [glob] + list(config.get("allowlists") or ())
        self.allowlists = [a for a in (Allowlist(dict(x, paths=None)) for x in allow) if a.usable]
        checks = checks or {}
        self.rules = [Rule(r, checks.get(r["id"])) for r in config.get("rules") or ()
                      if r.get("regex") and not r.get("path") and r["id"] not in skip]
        self.rules += [Rule(r, checks.get(r["id"])) for r in own]
        self.by_keyword: dict[str, list[Rule]] = {}
        self.always = [r for r in self.rules if not r.keywords]
        for r in self.rules:
            for k in r.keywords:
                self.by_keyword.setdefault(k, []).append(r)

    @property
    def keywords(self) -> set[str]:
        return set(self.by_keyword)

    def finds(self, text: str, hits: dict[str, list[int]]) -> list[tuple[int, int, str]]:
        """(start, end, rule id) of each secret the rules find in `text`."""
        todo: dict[int, tuple[Rule, list[int]]] = {}
        for kw, where in hits.items():
            for r in self.by_keyword.get(kw, ()):
                got = todo.get(id(r))
                if got is None:
                    todo[id(r)] = (r, list(where))
                else:
                    got[1].extend(where)
        out: list[tuple[int, int, str]] = []
        n = len(text)
        for r in self.always:
            out += self._run(r, text, [(0, n)])
        for r, where in todo.values():
            r.rx  # noqa: B018 (compiles the rule, which sets its reach)
            klen = max(map(len, r.keywords))
            spans: list[list[int]] = []
            looked, sep = -1, -1  # the last search for a separator: from where, what it found
            for p in sorted(where):
                a, b = max(0, p - r.before), n if r.to_end else min(n, p + klen + r.after)
                if b < n:  # end on a separator, never inside a token (the window's end reads as the text's)
                    if not looked <= b <= sep:  # none lies between `looked` and `sep`: the same answer
                        m = Window.SEPARATORS.search(text, b)
                        looked, sep = b, m.start() if m else n
                    b = sep
                if spans and a <= spans[-1][1]:
                    spans[-1][1] = max(spans[-1][1], b)
                else:
                    spans.append([a, b])
            out += self._run(r, text, spans)
        return out

    def _run(self, r: Rule, text: str, spans) -> list[tuple[int, int, str]]:
        out = []
        last = 0
        for a, b in spans:
            for m in r.rx.finditer(text, max(a, last), b):
                last = m.end()
                found = self._secret(r, text, m)
                if found:
                    out.append(found)
        return out

    def _secret(self, r: Rule, text: str, m: re.Match):
        start, end = m.start(), m.end()
        match = m.group(0)
        stripped = match.strip("\n")
        if stripped != match:
            start += len(match) - len(match.lstrip("\n"))
            match = stripped
            end = start + len(match)
        secret, s0, s1 = match, start, end
        if m.re.groups and not r.whole:
            if r.group:
                if m.group(r.group) is None:
                    return None
                secret, (s0, s1) = m.group(r.group), m.span(r.group)
            else:
                for k in range(1, m.re.groups + 1):
                    g = m.group(k)
                    if g:
                        secret, (s0, s1) = g, m.span(k)
                        break
        if not secret or r.entropy and shannon(secret) <= r.entropy:
            return None
        if r.ident:  # the identifier the search left out: `[\w.-]{0,N}?` before the match
            k = start
            while k > 0 and start - k < r.ident and (text[k - 1].isascii() and (text[k - 1].isalnum()
                                                                               or text[k - 1] in "_.-")):
                k -= 1
            match = text[k:end]
        if r.check and not r.check(secret, match):
            return None
        line = None
        for a in (*(() if r.python else self.allowlists), *r.allowlists):
            if a.target == "line" and line is None:
                line = text[text.rfind("\n", 0, start) + 1:(text.find("\n", end) + 1 or len(text) + 1) - 1]
            if a.allows(secret, match, line or ""):
                return None
        return s0, s1, r.id


class Keywords:
    """Where each of a set of lower-case words is in a lower-cased text, all in one Aho-Corasick pass
    (pyahocorasick, as gitleaks prefilters its rules): word -> start offsets, overlaps included."""

    def __init__(self, words: Iterable[str]):
        import ahocorasick

        self.words = sorted({w for w in words if w})
        self._auto = ahocorasick.Automaton()
        for w in self.words:
            self._auto.add_word(w, (w, len(w) - 1))
        if self.words:
            self._auto.make_automaton()

    def find(self, low: str) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        if not self.words:
            return out
        for end, (w, k) in self._auto.iter(low):
            got = out.get(w)
            if got is None:
                out[w] = [end - k]
            else:
                got.append(end - k)
        return out
