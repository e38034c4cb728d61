"""Redaction: secrets become typed placeholders with a short hash before ctx persists or
sends anything (`[REDACTED:aws-access-key#3f2a]`). The same secret always gets the same
placeholder, so a redacted transcript still says "the same key again".

Detection is ctx's own patterns for the forms people actually paste (assignments in .env,
shell, YAML, INI, JSON and code, with or without quotes, JSON-escaped quotes too: to a name that
says secret, password, token... (`secret_key_base`, Django's `SECRET_KEY`), or to a name that only
sometimes holds one (`AZURE_STORAGE_KEY`, a Joken `default_signer`) when the value is a random-looking
key (`high_entropy`); a generated key alone on its line (`lone_key`); command-line
`--password=` / `mysql -p…`; URL passwords, empty user included; bearer and basic
authorization; whole JWTs; provider tokens: AWS, GitHub, GitLab, Hugging Face, OpenAI,
Anthropic, Slack, Google, Stripe; private-key blocks; a bare AWS secret key, confirmed by
detect-secrets' Shannon-entropy check) plus Yelp's detect-secrets keyword-free plugins for the
rest, and the user's `redact_patterns`.

Every pattern is linear on any input: quantifiers are bounded or anchored on a literal, and
detect-secrets (whose patterns are not) only ever sees bounded windows around a marker.
Candidate values are confirmed in Python (placeholders, variable references, type names and
identifiers are not secrets), which keeps false positives on real transcripts at zero.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Iterable

PLUGINS = ("ArtifactoryDetector", "AzureStorageKeyDetector", "MailchimpDetector", "NpmDetector", "PypiTokenDetector",
           "SendGridDetector", "SquareOAuthDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
           "IbmCloudIamDetector", "CloudantDetector", "SoftlayerDetector")
# detect-secrets runs only on windows around these (its regexes are not bounded)
DS_MARKERS = re.compile(r"AccountKey=|npm_|_authToken|pypi-|SG\.|sq0[a-z]{3}-|\d:AA|-us\d|[Aa]rtifactory|AKC|"
                        r"[Cc]loudant|[Ss]oftlayer|AC[a-z0-9]{32}|SK[a-z0-9]{32}")
DS_WINDOW = (256, 1024)  # characters before / after a marker that detect-secrets sees

_V = r"[^\s\"'`\\,;(){}\[\]<>|&]"  # one character of an unquoted value
KEYWORD = (r"(?:passw(?:or)?d|passphrase|(?<=[_-])pwd|(?<=[_-])pass|secret|token|api[_-]?key|"
           r"access[_-]?key|private[_-]?key|auth[_-]?key|credentials?|client[_-]?secret)")
# names that hold a secret only sometimes (`AZURE_STORAGE_KEY`, `signing_key`, `storageKey`, Joken's
# `default_signer`; but also `cache_key`, `sort_key`): their value must look random (`high_entropy`)
WEAK_KEYWORD = r"(?:(?<=[_-])key|(?-i:(?<=[a-z])Key)|signer)"
ASSIGN = re.compile(
    r"(?i)(?P<key>(?:" + KEYWORD + r"|(?P<weak>" + WEAK_KEYWORD + r"))(?:[_-]?(?:key|base|value|id)){0,2})"
    r"(?P<kq>\\?[\"'])?"
    r"(?P<sep>[ \t]{0,4}(?:[:=]|:=|=>)[ \t]{0,4})"
    r"(?:(?P<q>\\?[\"'])(?P<qv>[^\s\"'\\]{1,512})\\?[\"']|(?P<uv>" + _V + r"{1,512}))")
CLI_FLAG = re.compile(r"(?i)(?<![\w-])--(?:password|passwd|pass|token|secret|api-key|apikey|auth-token|access-token|"
                      r"client-secret)(?:=|[ \t]{1,4})\\?[\"']?(" + _V + r"{1,512})")
MYSQL = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b")
MYSQL_P = re.compile(r"[ \t]-p([^\s\"'`\\]{1,256})")  # searched in the 300 characters after the command
AUTH = re.compile(r"(?i)\b(?:bearer|authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?:basic|token|digest)?)"
                  r"[ \t]{1,4}([A-Za-z0-9._~+/-]{12,4096}=*)")
# a line that is one token and nothing else: what `mix phx.gen.secret`, `rails secret` or
# `openssl rand -base64 32` print (`lone_key` confirms it)
LONE_TOKEN = re.compile(r"\n[ \t]{0,16}([A-Za-z0-9+/_-]{32,4096}={0,2})[ \t]{0,16}(?=\r?\n|\r?\Z)")  # on "\n" + text
AWS_BARE = re.compile(r"(?<![A-Za-z0-9/+=_-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])")  # not inside base64url
# each own pattern runs only when its literal is in the text (a C-speed `in` each)
GATES = {"private-key": ("PRIVATE KEY",), "jwt": ("eyJ",), "anthropic-key": ("sk-ant-",), "openai-key": ("sk-",),
         "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
         "gitlab-token": ("glpat-", "gldt-", "glrt-", "glptt-", "gloas-", "glcbt-", "glimt-", "glft-", "glsoat-",
                          "glagent-"), "hf-token": ("hf_", "api_org_"),
         "aws-access-key": ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"), "url-password": ("://",),
         "slack-token": ("xox",), "google-api-key": ("AIza",), "stripe-key": ("k_live_", "k_test_")}
KEY_HINT = re.compile(r"pass|pwd|secret|token|key|credential|signer")  # run on the lower-cased text
_HINT_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "signer")  # KEY_HINT's words: a C-speed `in` each first
DS_LITERALS = ("AccountKey=", "npm_", "_authToken", "pypi-", "SG.", "sq0", ":AA", "-us", "rtifactory", "AKC",
               "loudant", "oftlayer", "AC", "SK")
OWN = [
    ("private-key", re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----.*?"
                               r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----|\Z)", re.S), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]+)?"), 0),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"), 0),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
    ("github-token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"), 0),
    ("gitlab-token", re.compile(r"\bgl(?:pat|dt|rt|ptt|oas|cbt|imt|ft|soat|agent)-[A-Za-z0-9_-]{20,}"), 0),
    ("hf-token", re.compile(r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}"), 0),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"), 0),
    # a password already masked as *** (a DSN shown by ctx itself) is left as it is
    ("url-password", re.compile(r"(?<=://)[^\s/:@'\"]{0,256}:((?!\*{1,16}@)[^\s/@'\"]{1,512})(?=@)"), 1),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
]
_OWN_GATED = [(kind, rx, g, GATES[kind]) for kind, rx, g in OWN]
# what `spans` needs before any pattern can match: an own pattern's gate, a detect-secrets
# literal, a CLI flag's "--", a mysql command; in the lower-cased text, a keyword an
# assignment (KEY_HINT) or an Authorization header needs
_ANY_LITERAL = tuple(sorted({*(lit for lits in GATES.values() for lit in lits), *DS_LITERALS, "--", "mysql",
                             "mariadb"}))
_ANY_KEYWORD = ("pass", "pwd", "secret", "token", "key", "credential", "signer", "bearer", "authorization")
NOT_SECRET = frozenset("""str string bytes bool boolean int integer number float double object any none null nil
true false undefined optional required list dict array text char varchar uuid hidden redacted env string[] secret
password passwd token tokens key value values example sample placeholder changeme your_password yourpassword
test dummy fake foo bar baz xxx xxxx empty unset default mask masked set present missing ok yes no on off
na n/a tbd todo fixme here see below above same new old string| secretstr sensitive omitted private public""".split())
REFERENCE = re.compile(r"[$%]|^[\[<]|\{\{|\{%|^\*+$|^x{3,}$|^\.{3}|^/|^~/|^\.\.?/|^REDACTED|^\[REDACTED")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*")
ENV_NAME = re.compile(r"(?<![A-Z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
SNAKE_WORDS = re.compile(r"(?<![a-z_.-])[a-z]+(?:[_.-][a-z]+)+")
CAMEL_TYPE = re.compile(r"(?:[A-Z][a-z]+)+")
SIGIL_REF = re.compile(r"\$[{(]|%\(|\{\{|\{%")  # ${VAR}, $(cmd), %(name)s, {{ var }}
HEX = re.compile(r"[0-9a-fA-F]+")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_WORD_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
KEY_SYMBOL = re.compile(r"[!@#$%^&*()=+]")
BASE64ISH = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


_ENTROPY: list = []


def entropy(s: str) -> float:
    """Shannon entropy per character (detect-secrets' measure)."""
    if not _ENTROPY:
        try:
            from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

            _ENTROPY.append(Base64HighEntropyString().calculate_shannon_entropy)
        except ImportError:  # the same formula
            _ENTROPY.append(lambda t: -sum(c / len(t) * math.log2(c / len(t)) for c in map(t.count, set(t)))
                            if t else 0.0)
    return _ENTROPY[0](s)


def _classes(v: str) -> int:
    return sum((any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v),
                any(not c.isalnum() for c in v)))


def random_looking(v: str) -> bool:
    """Mixes letters with digits or symbols (or cases): a password or a token, not a word."""
    return _classes(v) >= 2 and not IDENT.fullmatch(v) or _classes(v) >= 3


def plausible(value: str, key: str, *, quoted: bool, strict: bool) -> bool:
    """Is `value`, assigned to `key`, a secret (not a reference, a type, a name)?"""
    v = value.strip()
    low = v.lower()
    if len(v) < 3 or low in NOT_SECRET or _reference(v) or low == key.lower():
        return False
    if v.isdigit() and len(v) < 6:
        return False
    if ENV_NAME.fullmatch(v) or SNAKE_WORDS.fullmatch(v):
        return False  # the name of an env var or a field, not its value
    if strict:  # unquoted in code: only what looks random
        return random_looking(v) and not (IDENT.fullmatch(v) and "." in v)
    if not quoted and (CAMEL_TYPE.fullmatch(v) and len(v) < 16 or (IDENT.fullmatch(v) and "." in v)):
        return False  # `token: Token`, `password: self.password`
    return len(v) >= 4


def _reference(v: str) -> bool:
    """A variable, a template, a path: not a value. A `$` or `%` inside a long random value
    (Django's `SECRET_KEY = 'django-insecure-k2#x9$w@…'`) does not make it one."""
    if not REFERENCE.search(v):
        return False
    return bool(v[0] in "$%" or SIGIL_REF.search(v) or REFERENCE.search(v.replace("$", "").replace("%", ""))
                or not high_entropy(v))


def _pathlike(v: str) -> bool:
    if v.startswith("/") or v.endswith("/") or "//" in v:
        return True
    return any(p.isalpha() and (p.islower() or p.isupper() or p.istitle() or len(p) <= 3) for p in v.split("/") if p)


def _piece_len(v: str) -> float:
    """The mean length of `v`'s words and numbers (`getHTTPResponse2`: get, HTTP, Response, 2):
    about 2 in a random key, 3 or more in a name."""
    return len(v) / max(1, len(_WORD_PARTS.findall(v)))


def high_entropy(v: str) -> bool:
    """A random-looking key (base64, hex or mixed symbols), not a word, a path, a UUID or a git SHA:
    what a name that only sometimes holds a secret (`…_KEY`, `signer`) must hold to be redacted."""
    n = len(v)
    if n < 20 or n > 4096 or not v.isprintable() or " " in v:
        return False
    if HEX.fullmatch(v):
        return n >= 32 and n != 40 and entropy(v) >= 3.0  # 40: a git SHA
    if UUID.fullmatch(v) or _pathlike(v) and "+" not in v:
        return False
    if _piece_len(v) >= 3:
        return False  # words and numbers (`monochromatic2025MAY24-pnpmTest`), however long
    if BASE64ISH.fullmatch(v):
        return _classes(re.sub(r"[^A-Za-z0-9]", "", v)) == 3 and entropy(v) >= min(4.0, math.log2(n) - 0.6)
    # other symbols: a Django-style key (`k2#x9$w@p!3m^a8&v*…`), not a dated file name
    return _classes(v) >= 3 and n >= 24 and bool(KEY_SYMBOL.search(v)) and entropy(v) >= 4.0


def lone_key(v: str) -> bool:
    """A token alone on its line that is a generated key: random-looking base64 (`high_entropy`), or
    hex of 64 characters or more (shorter hex alone on a line is a hash or an object name)."""
    return high_entropy(v) and (len(v) >= 64 or not HEX.fullmatch(v))


def _at_line_end(text: str, end: int) -> bool:
    rest = text[end:end + 64]
    stripped = rest.lstrip(" \t")
    return not stripped or stripped[0] in "\r\n" or (len(rest) == 64 and not stripped.strip())


def _aws_bare(v: str) -> bool:
    if not (any(c.islower() for c in v) and any(c.isupper() for c in v) and any(c.isdigit() for c in v)):
        return False
    if _pathlike(v):
        return False
    return entropy(v) >= 4.0


PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+#[0-9a-f]{4}\]")


def placeholder(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}#{hashlib.sha256(secret.encode('utf-8', 'surrogatepass')).hexdigest()[:4]}]"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "secret"


def strings_of(v):
    """Every string of a JSON value, however deep."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings_of(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from strings_of(x)


def may_hold_secret(text: str) -> bool:
    """Could `text` hold a secret ctx would redact? (False is certain.)"""
    return bool(Redactor(use_detect_secrets=True).spans(text))


class Redactor:
    def __init__(self, extra_patterns: Iterable[str] = (), use_detect_secrets: bool = True):
        self.extra = [re.compile(p) for p in extra_patterns]
        self.use_ds = use_detect_secrets
        self._scan = None

    def _ds_spans(self, text: str) -> list[tuple[int, int, str]]:
        if not self.use_ds:
            return []
        for lit in DS_LITERALS:  # a plain loop: this runs on every string ctx prints
            if lit in text:
                break
        else:
            return []
        windows: list[list[int]] = []
        before, after = DS_WINDOW
        for m in DS_MARKERS.finditer(text):
            a = max(0, m.start() - before, text.rfind("\n", 0, m.start()) + 1)
            nl = text.find("\n", m.end(), m.end() + after)
            b = min(len(text), m.end() + after) if nl < 0 else nl
            if windows and a <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], b)
            else:
                windows.append([a, b])
        if not windows:
            return []
        if self._scan is None:
            try:
                from detect_secrets.core.scan import scan_line
                from detect_secrets.settings import transient_settings
            except ImportError:  # the own patterns still run
                self.use_ds = False
                return []
            self._scan = (scan_line, transient_settings)
        scan_line, transient_settings = self._scan
        out = []
        with transient_settings({"plugins_used": [{"name": n} for n in PLUGINS]}):
            for a, b in windows:
                line = text[a:b]
                for s in scan_line(line):
                    val = s.secret_value or ""
                    if len(val) < 6 or s.type == "Private Key":
                        continue  # a bare prefix ('ghp') or a key header: the own patterns take these whole
                    k = line.find(val)
                    if k >= 0:
                        out.append((a + k, a + k + len(val), _slug(s.type)))
        return out

    def _assignments(self, text: str, low: str):
        """ASSIGN's matches, run only on windows around a keyword (found in the lower-cased text)."""
        windows: list[list[int]] = []
        if not any(w in low for w in _HINT_WORDS):
            return
        for m in KEY_HINT.finditer(low):
            a, b = max(0, m.start() - 16), m.end() + 1100
            if windows and a <= windows[-1][1]:
                windows[-1][1] = b
            else:
                windows.append([a, b])
        last = 0
        for a, b in windows:
            for m in ASSIGN.finditer(text, max(a, last), min(b, len(text))):
                last = m.end()
                yield m

    def spans(self, text: str, lone: bool = False) -> list[tuple[int, int, str]]:
        """Where the secrets of `text` are, with their kind. A line that is one generated key is
        one in a text of several lines, or in any text when `lone` (a tool's output): a string
        that is one token by itself is more often an id, a signature or encrypted reasoning."""
        found: list[tuple[int, int, str]] = []
        if (lone or "\n" in text) and len(text) >= 32:
            for m in LONE_TOKEN.finditer("\n" + text):  # a literal first: searched at C speed
                if lone_key(m.group(1)):
                    found.append((m.start(1) - 1, m.end(1) - 1, "generated-key"))
        low = text.lower()
        if len(low) != len(text):  # a few characters lower-case to two: find keywords by the slow path
            low = re.sub(r"(?i)pass|pwd|secret|token|key|credential|signer", lambda m: m.group(0).lower(), text)
        # a bare AWS secret needs 40 characters; its first match, once searched, is where its scan resumes
        aws = AWS_BARE.search(text) if len(text) >= 40 else None
        if not self.extra and aws is None:
            for lit in _ANY_LITERAL:
                if lit in text:
                    break
            else:
                for word in _ANY_KEYWORD:
                    if word in low:
                        break
                else:
                    return found  # no pattern below can match: each needs one of these
        for kind, rx, g, lits in _OWN_GATED:
            for lit in lits:
                if lit in text:
                    break
            else:
                continue
            for m in rx.finditer(text):
                if m.group(g):
                    found.append((m.start(g), m.end(g), kind))
        for m in self._assignments(text, low):
            key, quoted = m.group("key"), m.group("q") is not None
            g = "qv" if quoted else "uv"
            val = m.group(g)
            sep = m.group("sep")
            if m.group("weak"):  # `…_KEY`, `signer`: only a random-looking value
                ok = high_entropy(val) and not _reference(val)
            elif quoted:
                ok = plausible(val, key, quoted=True, strict=False)
            elif sep == "=" and m.group("kq") is None:  # KEY=value: .env, shell, a keyword argument
                upper = key.isupper() or text[max(0, m.start() - 1):m.start()].isupper()
                ok = plausible(val, key, quoted=upper, strict=not upper)
            else:  # `key: value` / `key = value`: YAML, INI, headers; the value ends the line, or looks random
                ok = _at_line_end(text, m.end(g)) and \
                    plausible(val, key, quoted=False, strict="=" in sep and m.group("kq") is None) or \
                    len(val) >= 8 and entropy(val) >= 3.0 and plausible(val, key, quoted=False, strict=True)
            if ok:
                found.append((m.start(g), m.end(g), "secret-assignment"))
        # every flag CLI_FLAG knows names pass, token, secret or key (lower-cased in `low` either way)
        cli = "--" in text and ("pass" in low or "token" in low or "secret" in low or "key" in low)
        for m in (CLI_FLAG.finditer(text) if cli else ()):
            if plausible(m.group(1), "password", quoted=True, strict=False):
                found.append((m.start(1), m.end(1), "cli-password"))
        covered = 0
        for c in (MYSQL.finditer(text) if "mysql" in text or "mariadb" in text else ()):
            if c.start() < covered:
                continue
            nl = text.find("\n", c.end(), c.end() + 300)
            covered = nl if nl >= 0 else min(len(text), c.end() + 300)
            stop = min([covered] + [k for k in (text.find(x, c.end(), covered) for x in "|;&") if k >= 0])
            m = MYSQL_P.search(text, c.end(), stop)
            if m is None:
                continue
            if len(m.group(1)) >= 3 and not REFERENCE.search(m.group(1)):
                found.append((m.start(1), m.end(1), "cli-password"))
        for m in (AUTH.finditer(text) if "bearer" in low or "authorization" in low else ()):
            v = m.group(1)
            if random_looking(v) or entropy(v) >= 3.5 and len(v) >= 20:
                found.append((m.start(1), m.end(1), "auth-token"))
        for m in (AWS_BARE.finditer(text, aws.start()) if aws is not None else ()):
            if _aws_bare(m.group(0)):
                found.append((m.start(), m.end(), "aws-secret-key"))
        for rx in self.extra:
            for m in rx.finditer(text):
                found.append((m.start(), m.end(), "custom"))
        found += self._ds_spans(text)
        return [s for s in found if s[0] < s[1]]

    def text(self, text: str, lone: bool = False) -> str:
        if not text:
            return text
        merged: list[list] = []
        for a, b, kind in sorted(self.spans(text, lone), key=lambda s: (s[0], -s[1])):
            if merged and a < merged[-1][1]:  # overlapping finds: one placeholder over both
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b, kind])
        if not merged:
            return text
        out, last = [], 0
        for a, b, kind in merged:
            if PLACEHOLDER.fullmatch(text[a:b]):
                continue
            out.append(text[last:a])
            out.append(placeholder(kind, text[a:b]))
            last = b
        out.append(text[last:])
        return "".join(out)

    def value(self, v):
        """Any JSON value, strings redacted wherever they are."""
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v

    STRUCTURAL = frozenset({"v", "kind", "id", "session", "ts", "role", "tool_call_id", "group", "tokens", "score",
                            "flags"})

    def arguments(self, args):
        """Tool-call arguments: a JSON string is redacted value by value (so escaped quotes
        do not hide a secret) and stays valid JSON; any other string as text."""
        if not isinstance(args, str):
            return self.value(args)
        try:
            parsed = json.loads(args)
        except (ValueError, TypeError, RecursionError):
            return self.text(args)
        red = self.value(parsed)
        if red == parsed:
            return self.text(args) if isinstance(parsed, (int, float)) else args
        return json.dumps(red, ensure_ascii=False)

    def record(self, rec: dict) -> dict:
        """A copy of a ctx record with every free-text field (content, tool-call arguments,
        meta, ...) redacted; the caller's record is left as it was."""
        if not isinstance(rec, dict):
            return rec
        out = {}
        for key, v in rec.items():
            if key in self.STRUCTURAL:
                out[key] = v
            elif key == "tool_calls" and isinstance(v, list):
                calls = []
                for c in v:
                    if isinstance(c, dict):
                        c = dict(c)
                        fn = c.get("function")
                        if isinstance(fn, dict) and "arguments" in fn:
                            c["function"] = dict(fn, arguments=self.arguments(fn["arguments"]))
                        if "input" in c:
                            c["input"] = self.value(c["input"])
                    calls.append(c)
                out[key] = calls
            elif key == "content" and isinstance(v, str) and rec.get("role") == "tool":
                out[key] = self.text(v, lone=True)  # an output that is one generated key
            else:
                out[key] = self.value(v)
        return out



def _random_fragment(part: str) -> bool:
    """A piece of a key (`u1QXlca4XEZKb1o3HL`, `Ty8JyUCDc`), not a word: both cases and a digit,
    cut into pieces of two characters or less on average (`base64ToUint8Array` averages 3)."""
    if HEX.fullmatch(part):
        return len(part) > 40
    if len(part) < 8 or not (any(c.isdigit() for c in part) and part != part.lower() and part != part.upper()):
        return False
    return _piece_len(part) < 2.5


def nameable(term: str) -> bool:
    """Can `term` be listed as a name an agent would recognise (a path, an identifier)? Not when
    redaction would hide it, nor when it looks random (a key, a fragment of one, a path made of
    them: `u1QXlca4XEZKb1o3HL/aUlznI1qstCNAQ6yme`)."""
    if high_entropy(term):
        return False
    parts = [p for p in term.split("/") if p]
    randoms = sum(any(_random_fragment(f) for f in re.split(r"[+=.:_-]", p) if f) for p in parts)
    if randoms * 2 > len(parts) or randoms and len(parts) == 1:
        return False  # a path keeps a random file name among folders an agent knows (`tool-results/toolu_01….txt`)
    return not Redactor().spans(term)
