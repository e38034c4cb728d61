"""What a value assigned to a secret's name, or found alone, looks like: a secret (random-looking, a
password, a key) or not (a reference, a type, an identifier, a path, a hash, a UUID). The judgements
behind ctx's own redaction rules (`redact.py`, `secret_shapes.py`); pure functions of a string."""
from __future__ import annotations

import math
import re
import string

NOT_SECRET = frozenset("""str string bytes bool boolean int integer number float double object any none null nil
true false undefined optional required list dict array text char varchar uuid hidden redacted env string[] secret
password passwd token tokens key value values example sample placeholder changeme your_password yourpassword
test dummy fake foo bar baz xxx xxxx empty unset default mask masked set present missing ok yes no on off
na n/a tbd todo fixme here see below above same new old string| secretstr sensitive omitted private public""".split())
REFERENCE = re.compile(r"[$%]|^[\[<]|\{\{|\{%|^\*+$|^x{3,}$|^\.{3}|^/|^~/|^\.\.?/|^REDACTED|^\[REDACTED")
MASKED = re.compile(r"\*{4,}|\u2022{3,}|(?i:x{8,})")  # a value shown masked (`gho_****…`, `••••`): no secret left
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*")
ENV_NAME = re.compile(r"(?<![A-Z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
SNAKE_WORDS = re.compile(r"(?<![a-z_.-])[a-z]+(?:[_.-][a-z]+)+")
CAMEL_TYPE = re.compile(r"(?:[A-Z][a-z]+)+")
SIGIL_REF = re.compile(r"\$[{(]|%\(|\{\{|\{%")  # ${VAR}, $(cmd), %(name)s, {{ var }}
HEX = re.compile(r"[0-9a-fA-F]+")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
WORD_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
KEY_SYMBOL = re.compile(r"[!@#$%^&*()=+]")
BASE64ISH = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
CSS_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3,4}){1,2}")
CODE_WORD = re.compile(r"[a-z]+(?:8|16|32|64|128|256|384|512)|v?\d+(?:\.\d+)+[a-z]*|[a-z]{1,5}\d{1,2}|[a-z]+")


ENTROPY_FN: list = []


# detect-secrets' Base64HighEntropyString charset, in its order (the sum runs in this order)
_DS_CHARSET = string.ascii_letters + string.digits + "+/" + "\\-_" + "="


def _ds_entropy(data: str) -> float:
    """detect-secrets' `calculate_shannon_entropy` of Base64HighEntropyString, the same sum in the
    same order (so the very same float), without importing detect-secrets (0.1 s, and it loads
    requests): only the characters of its charset count."""
    if not data:
        return 0
    out = 0.0
    n = len(data)
    for x in _DS_CHARSET:
        p_x = float(data.count(x)) / n
        if p_x > 0:
            out += - p_x * math.log(p_x, 2)
    return out


def entropy(s: str) -> float:
    """Shannon entropy per character (detect-secrets' measure, when it is installed)."""
    if not ENTROPY_FN:
        import importlib.util

        if importlib.util.find_spec("detect_secrets") is not None:
            ENTROPY_FN.append(_ds_entropy)
        else:  # the same formula over every character
            ENTROPY_FN.append(lambda t: -sum(c / len(t) * math.log2(c / len(t)) for c in map(t.count, set(t)))
                              if t else 0.0)
    return ENTROPY_FN[0](s)


def classes(v: str) -> int:
    return sum((any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v),
                any(not c.isalnum() for c in v)))


def random_looking(v: str) -> bool:
    """Mixes letters with digits or symbols (or cases): a password or a token, not a word. Hex of 16
    or more that mixes letters and digits is one whatever its first character (`f9e8…` as `9f8e…`)."""
    return classes(v) >= 2 and not IDENT.fullmatch(v) or classes(v) >= 3 or mixed_hex(v)


def mixed_hex(v: str) -> bool:
    return len(v) >= 16 and bool(HEX.fullmatch(v)) and not v.isdigit() and not v.isalpha()


def password_like(v: str) -> bool:
    """A password as people choose them (`hunter2x`, `S3cret!`, `Tr0ub4dor`): letters with digits or
    symbols, six characters or more, not a name in code (`user_2`, `md5`, `base64`, `self.pw2`)."""
    if len(v) < 6 or len(v) > 128 or not any(c.isalpha() for c in v) or v.lower() in NOT_SECRET:
        return False
    if not any(c.isdigit() or not c.isalnum() for c in v) or MASKED.search(v) or CSS_COLOR.fullmatch(v):
        return False
    if IDENT.fullmatch(v) and ("_" in v or "." in v or "::" in v or "->" in v):
        return False  # snake_case, dotted or scoped names
    if CODE_WORD.fullmatch(v.lower()):
        return False  # base64, sha256, utf8, a version, arg2
    return not reference(v)


def plausible(value: str, key: str, *, quoted: bool, strict: bool) -> bool:
    """Is `value`, assigned to `key`, a secret (not a reference, a type, a name)?"""
    v = value.strip()
    low = v.lower()
    if len(v) < 3 or low in NOT_SECRET or reference(v) or low == key.lower() or MASKED.search(v):
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


def reference(v: str) -> bool:
    """A variable, a template, a path: not a value. A `$` or `%` inside a long random value
    (Django's `SECRET_KEY = 'django-insecure-k2#x9$w@…'`) does not make it one."""
    if not REFERENCE.search(v):
        return False
    return bool(v[0] in "$%" or SIGIL_REF.search(v) or REFERENCE.search(v.replace("$", "").replace("%", ""))
                or not high_entropy(v))


def pathlike(v: str) -> bool:
    if v.startswith("/") or v.endswith("/") or "//" in v:
        return True
    return any(p.isalpha() and (p.islower() or p.isupper() or p.istitle() or len(p) <= 3) for p in v.split("/") if p)


def piece_len(v: str) -> float:
    """The mean length of `v`'s words and numbers (`getHTTPResponse2`: get, HTTP, Response, 2):
    about 2 in a random key, 3 or more in a name."""
    return len(v) / max(1, len(WORD_PARTS.findall(v)))


def high_entropy(v: str) -> bool:
    """A random-looking key (base64, hex or mixed symbols), not a word, a path, a UUID or a git SHA:
    what a name that only sometimes holds a secret (`…_KEY`, `signer`) must hold to be redacted."""
    n = len(v)
    if n < 20 or n > 4096 or not v.isprintable() or " " in v:
        return False
    if HEX.fullmatch(v):
        return n >= 32 and n != 40 and entropy(v) >= 3.0  # 40: a git SHA
    if UUID.fullmatch(v) or pathlike(v) and "+" not in v:
        return False
    if piece_len(v) >= 3:
        return False  # words and numbers (`monochromatic2025MAY24-pnpmTest`), however long
    if BASE64ISH.fullmatch(v):
        return classes(re.sub(r"[^A-Za-z0-9]", "", v)) == 3 and entropy(v) >= min(4.0, math.log2(n) - 0.6)
    # other symbols: a Django-style key (`k2#x9$w@p!3m^a8&v*…`), not a dated file name
    return classes(v) >= 3 and n >= 24 and bool(KEY_SYMBOL.search(v)) and entropy(v) >= 4.0


def lone_key(v: str) -> bool:
    """A token alone on its line that is a generated key: random-looking base64 (`high_entropy`), or
    hex of 64 characters or more (shorter hex alone on a line is a hash or an object name)."""
    return high_entropy(v) and (len(v) >= 64 or not HEX.fullmatch(v))


def at_line_end(text: str, end: int) -> bool:
    rest = text[end:end + 64]
    stripped = rest.lstrip(" \t")
    return not stripped or stripped[0] in "\r\n" or (len(rest) == 64 and not stripped.strip())


def aws_bare(v: str) -> bool:
    if not (any(c.islower() for c in v) and any(c.isupper() for c in v) and any(c.isdigit() for c in v)):
        return False
    if pathlike(v):
        return False
    return entropy(v) >= 4.0
