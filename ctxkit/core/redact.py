"""Redaction: secrets become typed placeholders with a short hash before ctx persists or
sends anything (`[REDACTED:aws-access-key#3f2a]`). The same secret always gets the same
placeholder, so a redacted transcript still says "the same key again".

Detection runs three rule sets: gitleaks' (vendored in ctxkit/rules/gitleaks/, run by `gitleaks.py`:
provider tokens of some 150 services, curl credentials, its generic keyword-and-entropy rule), ctx's
own in the same shape (`secret_shapes.py`: provider tokens gitleaks lacks, credential files, command
lines, a password in prose or a file name), and the patterns here: assignments in .env, shell, YAML,
INI, JSON, URLs, headers and code, with or without quotes, JSON-escaped quotes too, of any case, to a
name that says secret, password, token... (`secret_key_base`, Django's `SECRET_KEY`), or to a name that
only sometimes holds one (`AZURE_STORAGE_KEY`, a Joken `default_signer`) when the value is a
random-looking key (`high_entropy`); a generated key alone on its line (`lone_key`); command-line
`--password=` / `mysql -p…`; bearer and basic authorization; a bare AWS secret key, confirmed by
detect-secrets' Shannon-entropy check; plus Yelp's detect-secrets keyword-free plugins for the rest,
and the user's `redact_patterns`. One Aho-Corasick pass over the lower-cased text finds every keyword
any rule needs; a text without one costs that pass and little more.

Every pattern is linear on any input, or runs on a bounded window: quantifiers are bounded or anchored
on a literal, a vendored rule runs only around its keyword with its repeats capped, and detect-secrets
(whose patterns are not bounded) only ever sees bounded windows around a marker. Candidate values are
confirmed in Python (placeholders, masked values, variable references, type names and identifiers are
not secrets; `secret_values.py`), which keeps false positives on real transcripts at zero. Keys of
JSON objects and record ids are redacted like values.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Iterable

from . import secret_shapes
from .gitleaks import Keywords, RuleSet
from .secret_values import (
    HEX, REFERENCE, at_line_end, aws_bare, entropy, high_entropy, lone_key, password_like, piece_len,
    plausible, random_looking, reference,
)

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
KEY_HINT_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "signer")  # what an assignment's name holds
DS_LITERALS = ("AccountKey=", "npm_", "_authToken", "pypi-", "SG.", "sq0", ":AA", "-us", "rtifactory", "AKC",
               "loudant", "oftlayer", "AC", "SK")
# a name whose value is a password as people choose them (`password=hunter2x`), not only a random key
PASSWORD_NAME = re.compile(r"(?i)passw(?:or)?d|passphrase|pwd|(?<![a-z])pass(?![a-z])")
RULES_JSON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules", "gitleaks",
                          "gitleaks.json")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ENGINE: list = []


def engine() -> tuple[RuleSet, Keywords]:
    """The vendored gitleaks rules with ctx's own (`secret_shapes`), and one keyword index for them and
    for every word the rest of the redactor needs first: loaded once per process, compiled rule by rule
    as texts need them."""
    if not _ENGINE:
        with open(RULES_JSON, encoding="utf-8") as f:  # package data, not a state file of the home
            config = json.loads(f.read())
        rules = RuleSet(config, own=secret_shapes.RULES, checks=secret_shapes.CHECKS)
        words = rules.keywords | set(KEY_HINT_WORDS) | {"bearer", "authorization", "mysql", "mariadb"}
        _ENGINE.append((rules, Keywords(words)))
    return _ENGINE[0]


PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+#[0-9a-f]{4}\]")


def placeholder(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}#{hashlib.sha256(secret.encode('utf-8', 'surrogatepass')).hexdigest()[:4]}]"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "secret"


def strings_of(v):
    """Every string of a JSON value, however deep, the keys of its objects included."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, str):
                yield k
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
        self._keys: dict[str, str] = {}
        self._seen: dict = {}   # texts already looked at in this process (`text`): key -> None (clean) or the result

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

    def _assignments(self, text: str, hits: dict):
        """ASSIGN's matches, run only on windows around a name's keyword."""
        where = sorted(p for w in KEY_HINT_WORDS for p in hits.get(w, ()))
        windows: list[list[int]] = []
        for p in where:
            a, b = max(0, p - 16), p + 1100
            if windows and a <= windows[-1][1]:
                windows[-1][1] = b
            else:
                windows.append([a, b])
        last = 0
        for a, b in windows:
            for m in ASSIGN.finditer(text, max(a, last), min(b, len(text))):
                last = m.end()
                yield m

    def _assigned(self, text: str, m: re.Match) -> bool:
        """Is the value of ASSIGN's match `m` a secret?"""
        key, quoted = m.group("key"), m.group("q") is not None
        g = "qv" if quoted else "uv"
        val = m.group(g)
        sep = m.group("sep")
        if m.group("weak"):  # `…_KEY`, `signer`: only a random-looking value
            return high_entropy(val) and not reference(val)
        if quoted:
            return plausible(val, key, quoted=True, strict=False)
        # unquoted, lower-case: a password as people choose them counts where the name says password,
        # unless the value is code (`password=get_pw()`, `password=cfg.pw`)
        after = text[m.end(g):m.end(g) + 1]
        pw = "=" in sep and PASSWORD_NAME.search(key) is not None and password_like(val) and \
            (not after or after not in "(.[")
        if sep == "=" and m.group("kq") is None:  # KEY=value: .env, shell, a keyword argument
            upper = key.isupper() or text[max(0, m.start() - 1):m.start()].isupper()
            return plausible(val, key, quoted=upper, strict=not upper) or pw
        # `key: value` / `key = value`: YAML, INI, headers; the value ends the line, or looks random
        return at_line_end(text, m.end(g)) and \
            plausible(val, key, quoted=False, strict="=" in sep and m.group("kq") is None) or \
            len(val) >= 8 and entropy(val) >= 3.0 and plausible(val, key, quoted=False, strict=True) or pw

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
        if len(low) != len(text):  # a few characters lower-case to two: keep offsets, lower ASCII only
            low = text.translate(_ASCII_LOWER)
        rules, keywords = engine()
        hits = keywords.find(low)  # every keyword of every rule below, in one pass
        # a bare AWS secret needs 40 characters; its first match, once searched, is where its scan resumes
        aws = AWS_BARE.search(text) if len(text) >= 40 else None
        if hits:
            found += rules.finds(text, hits)
            for m in self._assignments(text, hits):
                if self._assigned(text, m):
                    g = "qv" if m.group("q") is not None else "uv"
                    found.append((m.start(g), m.end(g), "secret-assignment"))
        # every flag CLI_FLAG knows names pass, token, secret or key
        cli = "--" in text and ("pass" in hits or "token" in hits or "secret" in hits or "key" in hits)
        for m in (CLI_FLAG.finditer(text) if cli else ()):
            if plausible(m.group(1), "password", quoted=True, strict=False):
                found.append((m.start(1), m.end(1), "cli-password"))
        covered = 0
        for c in (MYSQL.finditer(text) if "mysql" in hits or "mariadb" in hits else ()):
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
        for m in (AUTH.finditer(text) if "bearer" in hits or "authorization" in hits else ()):
            v = m.group(1)
            if random_looking(v) or entropy(v) >= 3.5 and len(v) >= 20:
                found.append((m.start(1), m.end(1), "auth-token"))
        for m in (AWS_BARE.finditer(text, aws.start()) if aws is not None else ()):
            if aws_bare(m.group(0)):
                found.append((m.start(), m.end(), "aws-secret-key"))
        for rx in self.extra:
            for m in rx.finditer(text):
                found.append((m.start(), m.end(), "custom"))
        found += self._ds_spans(text)
        return [s for s in found if s[0] < s[1]]

    MEMO_SHORT = 256            # a text this long or shorter keys the memo itself; a longer one by its digest
    MEMO_ENTRIES = 1 << 17      # the memo is emptied when it holds this many texts

    def text(self, text: str, lone: bool = False) -> str:
        """`text` with its secrets replaced by placeholders. A text this redactor has looked at
        before in this process (a transcript repeats tool outputs, file reads and ids; a record
        is redacted when read and again when written) is not scanned again: its result is
        remembered by the text itself (short) or its BLAKE2b digest (long), with `lone`."""
        if not text:
            return text
        if len(text) <= self.MEMO_SHORT:
            key = (text, lone)
        else:
            key = (len(text), lone, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
        seen = self._seen
        if key in seen:
            got = seen[key]
            return text if got is None else got
        out = self._text(text, lone)
        if len(seen) >= self.MEMO_ENTRIES:
            seen.clear()
        seen[key] = None if out == text else out
        return out

    def _text(self, text: str, lone: bool) -> str:
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
            return {self.key(k): self.value(x) for k, x in v.items()}
        return v

    def key(self, k):
        """An object's key, redacted like a value (a secret used as a session id keys the session index).
        Keys repeat (field names): each distinct short one is looked at once."""
        if not isinstance(k, str):
            return k
        got = self._keys.get(k)
        if got is None:
            got = self.text(k)
            if len(k) <= 256 and len(self._keys) < 8192:
                self._keys[k] = got
        return got

    STRUCTURAL = frozenset({"v", "kind", "ts", "role", "tokens", "score", "flags"})
    # ids are redacted like any key (a secret used as a session id is kept nowhere): the same id always
    # gets the same placeholder, so records still pair up; an ordinary id comes back as it was
    IDS = frozenset({"id", "session", "tool_call_id", "group"})

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
                continue
            if key in self.IDS:
                out[key] = self.key(v)
                continue
            key = self.key(key)
            if key == "tool_calls" and isinstance(v, list):
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
    return piece_len(part) < 2.5


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
