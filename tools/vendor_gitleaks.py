"""Vendor gitleaks' rule set into ctxkit, from a clone of https://github.com/gitleaks/gitleaks:

    python tools/vendor_gitleaks.py /path/to/gitleaks v8.30.1

writes, from the tag given:
- ctxkit/rules/gitleaks/gitleaks.toml   the rule set, byte for byte (config/gitleaks.toml)
- ctxkit/rules/gitleaks/LICENSE         gitleaks' licence (MIT), byte for byte
- ctxkit/rules/gitleaks/gitleaks.json   the same rules as JSON (what ctx loads: no TOML parser needed,
                                        and faster to read on every run), with where they came from
- tests/fixtures/gitleaks_examples.json each rule's documented examples: the true and false positives
                                        its generator (cmd/generate/config/rules/*.go) validates it
                                        with, where they are Go string literals or built from them
                                        (`fmt.Sprintf`, `secrets.NewSecret(regex)`: a secret drawn
                                        from its regex by a random generator seeded with the rule's
                                        id, so each run writes the same file); a
                                        `utils.GenerateSampleSecrets(identifier, secret)` is kept as
                                        {identifier, secret}, to be written in each of `sample_forms`
Then update the version in ctxkit/rules/gitleaks/README.md, run the tests, and look at what
`bench/bench_redact.py` says changed on the corpus.
"""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxkit.core.gitleaks import translate  # noqa: E402

# utils.GenerateSampleSecrets' forms ({i}: identifier, {I}: upper-cased, {s}: the secret), as of v8.30
SAMPLE_FORMS = [
    "{i}Token=\"{s}\"", "{i}Token = \"{s}\"", "{i}Token={s}", "{i}Token = {s}",
    "{\n    \"{i}_token\": \"{s}\"\n}", "{\"config.ini\": \"{I}_TOKEN={s}\\nBACKUP_ENABLED=true\"}",
    "<{i}Token>\n    {s}\n</{i}Token>", "{i}_token: {s}", "{i}_token: '{s}'", "{i}_token: \"{s}\"",
    "string {i}Token = \"{s}\";", "var {i}Token string = \"{s}\"", "{i}Token := \"{s}\"", "{i}Token := `{s}`",
    "String {i}Token = \"{s}\";", "var {i}Token = \"{s}\"", "${i}Token .= \"{s}\"", "{i}Token = '{s}'",
    "{i}Token = \"{s}\"", "System.setProperty(\"{I}_TOKEN\", \"{s}\")", "  \"{i}Token\" => \"{s}\"",
    "{i}_TOKEN = \"{s}\"", "{i}_TOKEN := \"{s}\"", "{i}_TOKEN ::= \"{s}\"", "{i}_TOKEN :::= \"{s}\"",
    "{i}_TOKEN ?= \"{s}\"",
]
HELPERS = {"Numeric": "[0-9]{%s}", "Hex": "[a-f0-9]{%s}", "AlphaNumeric": "[a-z0-9]{%s}",
           "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}", "AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
           "AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}"}


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


# ---- a small reader of Go expressions: string literals, +, calls, composite literals ----

TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|`[^`]*`|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_.]*|\.\.\.|:=|[0-9]+|.',
                   re.S)


def tokens(src: str) -> list[str]:
    return [t for t in TOKEN.findall(src) if t.strip() and not t.startswith(("//", "/*"))]


def go_string(tok: str) -> str | None:
    if tok.startswith("`"):
        return tok[1:-1]
    if tok.startswith('"'):
        try:
            return json.loads(re.sub(r"\\x([0-9a-fA-F]{2})", r"\\u00\1", tok))
        except ValueError:
            return None
    return None


class Unknown(Exception):
    pass


class Reader:
    def __init__(self, toks: list[str], rng: random.Random):
        self.t, self.i, self.rng = toks, 0, rng

    def peek(self, k: int = 0) -> str:
        return self.t[self.i + k] if self.i + k < len(self.t) else ""

    def take(self) -> str:
        self.i += 1
        return self.t[self.i - 1]

    def skip_balanced(self) -> None:
        depth = 0
        while self.i < len(self.t):
            t = self.take()
            if t in "([{":
                depth += 1
            elif t in ")]}":
                depth -= 1
                if depth <= 0:
                    return

    def args(self) -> list:
        """The arguments of a call (after its name): each a value, or Unknown."""
        assert self.take() == "("
        out = []
        while self.peek() != ")":
            start = self.i
            try:
                out.append(self.expr())
            except Unknown:
                self.i = start
                self.skip_expr()
                out.append(Unknown)
            if self.peek() == "...":
                self.take()
            if self.peek() == ",":
                self.take()
        self.take()
        return out

    def skip_expr(self) -> None:
        while self.peek() not in (",", ")", "}", ""):
            if self.peek() in "([{":
                self.skip_balanced()
            else:
                self.take()

    def expr(self):
        """A string, a list of strings, or raises Unknown."""
        v = self.term()
        while self.peek() == "+":
            self.take()
            w = self.term()
            if not (isinstance(v, str) and isinstance(w, str)):
                raise Unknown
            v += w
        return v

    def term(self):
        t = self.take()
        s = go_string(t)
        if s is not None:
            return s
        if t == "[" and self.peek() == "]":  # []string{...}
            self.take()
            self.take()
            return self.items()
        if t == "append" and self.peek() == "(":
            got = self.args()
            return [x for a in got[1:] for x in (a if isinstance(a, list) else [a]) if isinstance(x, (str, dict))]
        if t == "utils.GenerateSampleSecrets" and self.peek() == "(":
            a = self.args()
            if len(a) == 2 and all(isinstance(x, str) for x in a):
                return [{"identifier": a[0], "secret": a[1]}]  # each of SAMPLE_FORMS
            raise Unknown
        if t == "utils.GenerateSampleSecret" and self.peek() == "(":
            a = self.args()
            if len(a) == 2 and all(isinstance(x, str) for x in a):
                return f'{a[0]}_api_token = "{a[1]}"'
            raise Unknown
        if t == "secrets.NewSecret" and self.peek() == "(":
            a = self.args()
            if len(a) == 1 and isinstance(a[0], str):
                return generate(a[0], self.rng)
            raise Unknown
        if t.startswith("utils.") and t[6:] in HELPERS and self.peek() == "(":
            a = self.args()
            if len(a) == 1 and isinstance(a[0], str):
                return HELPERS[t[6:]] % a[0]
            raise Unknown
        if t == "utils.Hex8_4_4_4_12" and self.peek() == "(":
            self.args()
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if t == "fmt.Sprintf" and self.peek() == "(":
            a = self.args()
            if not a or not all(isinstance(x, str) for x in a):
                raise Unknown
            parts = a[0].split("%s")
            if len(parts) != len(a) or "%" in a[0].replace("%s", ""):
                raise Unknown
            return "".join(p + (a[k + 1] if k + 1 < len(a) else "") for k, p in enumerate(parts))
        if t == "(":
            v = self.expr()
            if self.take() != ")":
                raise Unknown
            return v
        if self.peek() == "(":
            self.args()
        raise Unknown

    def items(self) -> list[str]:
        assert self.take() == "{"
        out: list[str] = []
        while self.peek() not in ("}", ""):
            start = self.i
            try:
                v = self.expr()
                out += v if isinstance(v, list) else [v]
            except Unknown:
                self.i = start
                self.skip_expr()
            if self.peek() == ",":
                self.take()
        self.take()
        return out


def generate(go_regex: str, rng: random.Random) -> str:
    """A string `go_regex` matches, characters drawn at random (as gitleaks' `secrets.NewSecret`)."""
    try:
        from re import _parser as sre_parse
        from re import _constants as C
    except ImportError:  # Python 3.10
        import sre_constants as C  # type: ignore
        import sre_parse  # type: ignore

    def chars(items) -> list[str]:
        pool: list[str] = []
        negate = False
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                pool.append(chr(av))
            elif op is C.RANGE:
                pool += [chr(c) for c in range(av[0], av[1] + 1)]
            elif op is C.CATEGORY:
                pool += {C.CATEGORY_DIGIT: list("0123456789"),
                         C.CATEGORY_WORD: list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
                         C.CATEGORY_SPACE: [" "]}.get(av, ["x"])
        if negate:
            pool = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" if c not in pool]
        return pool

    def emit(seq) -> str:
        out = []
        for op, av in seq:
            if op is C.LITERAL:
                out.append(chr(av))
            elif op is C.NOT_LITERAL:
                out.append("x" if chr(av) != "x" else "y")
            elif op is C.ANY:
                out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
            elif op is C.IN:
                out.append(rng.choice(chars(av)))
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
                lo, hi, sub = av
                hi = lo + 8 if hi is C.MAXREPEAT else hi
                out += [emit(sub) for _ in range(rng.randint(lo, max(lo, hi)))]
            elif op is C.SUBPATTERN:
                out.append(emit(av[-1]))
            elif op is C.BRANCH:
                out.append(emit(av[1][0]))
            elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
                pass
            else:
                raise Unknown
        return "".join(out)

    return emit(sre_parse.parse(translate(go_regex)))


def examples(repo: str, ref: str) -> dict:
    """rule id -> {"tps": [...], "fps": [...]} from the rule generators' Go sources."""
    out: dict[str, dict] = {}
    names = git(repo, "ls-tree", "--name-only", f"{ref}:cmd/generate/config/rules").decode().split()
    for name in sorted(n for n in names if n.endswith(".go") and not n.endswith("_test.go")):
        src = git(repo, "show", f"{ref}:cmd/generate/config/rules/{name}").decode()
        for body in re.split(r"\nfunc ", src)[1:]:
            m = re.search(r'RuleID:\s*"([^"]+)"', body)
            if not m:
                continue
            rid = m.group(1)
            rng = random.Random(rid)
            got = out.setdefault(rid, {"tps": [], "fps": []})
            toks = tokens(body)
            for k, t in enumerate(toks):
                if t in ("tps", "fps") and toks[k + 1:k + 2] in (["="], [":="]):
                    r = Reader(toks, rng)
                    r.i = k + 2
                    try:
                        v = r.expr()
                    except (Unknown, AssertionError, IndexError):
                        continue
                    got[t] += [x for x in (v if isinstance(v, list) else [v]) if isinstance(x, (str, dict))]
    return out


def main() -> None:
    repo, ref = sys.argv[1], sys.argv[2]
    commit = git(repo, "rev-parse", f"{ref}^{{commit}}").decode().strip()
    toml = git(repo, "show", f"{ref}:config/gitleaks.toml")
    dest = ROOT / "ctxkit" / "rules" / "gitleaks"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "gitleaks.toml").write_bytes(toml)
    (dest / "LICENSE").write_bytes(git(repo, "show", f"{ref}:LICENSE"))
    import tomllib

    config = tomllib.loads(toml.decode())
    source = {"repository": "https://github.com/gitleaks/gitleaks", "tag": ref, "commit": commit,
              "path": "config/gitleaks.toml", "license": "MIT"}
    (dest / "gitleaks.json").write_text(json.dumps({"vendored": source, **config}, indent=1, ensure_ascii=False)
                                        + "\n")
    ex = examples(repo, ref)
    (ROOT / "tests" / "fixtures" / "gitleaks_examples.json").write_text(
        json.dumps({"vendored": source, "sample_forms": SAMPLE_FORMS, "rules": ex}, indent=1, ensure_ascii=False)
        + "\n")
    ids = [r["id"] for r in config["rules"]]
    print(json.dumps({"commit": commit, "rules": len(ids),
                      "with_examples": sum(1 for i in ids if ex.get(i, {}).get("tps")),
                      "without": [i for i in ids if not ex.get(i, {}).get("tps")]}))


if __name__ == "__main__":
    main()
