"""ctx's own secret rules beside gitleaks': written as gitleaks rules (id, regex, keywords, secret group)
and run by the same engine (`gitleaks.RuleSet`: one keyword pass, a window around each keyword), their
regexes in Python's syntax (`"python": True`), each finding confirmed by a check of its value (`CHECKS`).

They cover what the vendored rule set does not: provider tokens it lacks or reads too narrowly (Stripe
webhook secrets, Google OAuth client secrets and access tokens, Vault tokens of any length, Azure SAS
signatures), credential files (kubeconfig `client-key-data`, `.netrc`, `.pgpass`, npm's `_auth`, docker's
`"auth"`), command lines (`sshpass -p`, `docker login -p`, `redis-cli -a`), a password in prose ("the
password is …") and in a file name (`password-S3cret9.txt`); and the provider tokens ctx caught before
it vendored gitleaks (kept, with their placeholder kinds).
"""
from __future__ import annotations

import re

from .secret_values import (
    HEX, MASKED, NOT_SECRET, classes, entropy, high_entropy, password_like, piece_len, plausible, reference,
)

# an unquoted command-line value: up to a blank, a quote or a shell operator
_ARG = r"[\"']?([^\s\"'`|;&<>]{1,256})"
_CMD_END = r"[^\n|;&]{0,200}?"  # the rest of the same command, lazily

RULES: list[dict] = [
    # ---- provider tokens (ctx's own since before gitleaks; kinds kept) ----
    {"id": "private-key", "keywords": ["private key"], "regex":
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY"
        r"( BLOCK)?-----|\Z)", "whole": True, "to_end": True},
    {"id": "jwt", "keywords": ["eyj"], "regex": r"\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]+)?",
     "whole": True},
    {"id": "anthropic-key", "keywords": ["sk-ant-"], "regex": r"\bsk-ant-[A-Za-z0-9_-]{16,}", "whole": True},
    {"id": "openai-key", "keywords": ["sk-"], "regex": r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
     "whole": True},
    {"id": "github-token", "keywords": ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
     "regex": r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}", "whole": True},
    {"id": "gitlab-token", "keywords": ["glpat-", "gldt-", "glrt-", "glptt-", "gloas-", "glcbt-", "glimt-", "glft-",
                                        "glsoat-", "glagent-"],
     "regex": r"\bgl(?:pat|dt|rt|ptt|oas|cbt|imt|ft|soat|agent)-[A-Za-z0-9_-]{20,}", "whole": True},
    {"id": "hf-token", "keywords": ["hf_", "api_org_"], "regex": r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}", "whole": True},
    {"id": "aws-access-key", "keywords": ["akia", "asia", "agpa", "aida", "aroa", "anpa"],
     "regex": r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b", "whole": True},
    # a password already masked as *** (a DSN shown by ctx itself) is left as it is
    {"id": "url-password", "keywords": ["://"],
     "regex": r"(?<=://)[^\s/:@'\"]{0,256}:((?!\*{1,16}@)[^\s/@'\"]{1,512})(?=@)"},
    {"id": "slack-token", "keywords": ["xox"], "regex": r"\bxox[abposre]-[A-Za-z0-9-]{10,}", "whole": True},
    {"id": "google-api-key", "keywords": ["aiza"], "regex": r"\bAIza[0-9A-Za-z_-]{35}\b", "whole": True},
    {"id": "stripe-key", "keywords": ["k_live_", "k_test_"], "regex": r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
     "whole": True},
    # ---- provider tokens the vendored rules lack or read too narrowly ----
    {"id": "stripe-webhook-secret", "keywords": ["whsec_"], "regex": r"\bwhsec_[A-Za-z0-9+/]{24,256}={0,2}",
     "whole": True},
    {"id": "google-oauth-client-secret", "keywords": ["gocspx-"], "regex": r"\bGOCSPX-[A-Za-z0-9_-]{20,64}",
     "whole": True},
    {"id": "google-oauth-token", "keywords": ["ya29."], "regex": r"\bya29\.[A-Za-z0-9_-]{20,2048}", "whole": True},
    {"id": "vault-token", "keywords": ["hvs.", "hvb.", "hvr."], "regex": r"\bhv[sbr]\.[A-Za-z0-9_-]{20,512}",
     "whole": True},
    {"id": "azure-sas-signature", "keywords": ["sig="],
     "regex": r"(?<![A-Za-z0-9_])(?i:sig)=([A-Za-z0-9%+/=]{16,512})"},
    # ---- credential files ----
    {"id": "kubeconfig-key", "keywords": ["client-key-data"],
     "regex": r"client-key-data\\?[\"']?[ \t]{0,4}[:=][ \t]{0,4}\\?[\"']?([A-Za-z0-9+/=]{20,})"},
    {"id": "npm-auth", "keywords": ["_auth", "_password"],
     "regex": r"(?<![\w-])_(?:auth|password)[ \t]{0,4}=[ \t]{0,4}[\"']?([A-Za-z0-9+/=]{8,2048})"},
    {"id": "docker-auth", "keywords": ["\"auth\"", "\\\"auth\\\""],
     "regex": r"\\?\"auth\\?\"[ \t]{0,4}:[ \t]{0,4}\\?\"([A-Za-z0-9+/=]{8,2048})"},
    {"id": "netrc-password", "keywords": ["machine", "default"],
     "regex": r"\b(?:machine[ \t]{1,16}[^\s]{1,256}|default)(?:\s{1,64}(?:login|account)[ \t]{1,16}[^\s]{1,256})"
              r"{1,2}\s{1,64}password[ \t]{1,16}([^\s]{1,512})"},
    {"id": "pgpass-password", "keywords": [":5432:", ":5433:", ":5434:", ":6432:", ":*:"],
     "regex": r"(?m)^[ \t]{0,16}(?:\*|[A-Za-z0-9][A-Za-z0-9.-]{0,253}):(?:\d{1,5}|\*):[\w.*@$-]{1,128}:"
              r"[\w.*@$-]{1,128}:((?:[^\s:\\]|\\.){3,256})[ \t]{0,16}\r?$"},
    # ---- command lines ----
    {"id": "cli-password", "keywords": ["sshpass"], "regex": r"\bsshpass\b" + _CMD_END + r"[ \t]-p[ \t]{0,4}" + _ARG},
    {"id": "cli-password", "keywords": ["login"],
     "regex": r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)\b" + _CMD_END + r"\blogin\b" + _CMD_END
              + r"[ \t](?:-p|--password)(?:[ \t]{1,4}|=)" + _ARG},
    {"id": "cli-password", "keywords": ["redis-cli"], "regex": r"\bredis-cli\b" + _CMD_END + r"[ \t]-a[ \t]{1,4}" + _ARG},
    # ---- a password in prose, in a file name ----
    {"id": "password-in-prose", "keywords": ["password", "passwd", "passphrase", "passcode"],
     "regex": r"(?i)\b(?:password|passwd|passphrase|passcode)\b(?:[ \t]{1,4}(?:for|of|on)[ \t]{1,4}[^\s]{1,64})?"
              r"[ \t]{1,4}(?:is|was|are|becomes|(?:set|changed|reset)[ \t]{1,4}to|to)[ \t]{1,4}"
              r"[\"'`\u201c\u2018]?([^\s\"'`\u201d\u2019]{3,128})"},
    {"id": "password-in-file-name", "keywords": ["pass", "pwd", "pw", "secret", "token", "key"],
     "regex": r"(?i)(?<![A-Za-z0-9])(?:passw(?:or)?d|passwd|pwd|pw|pass|secret|token|api[_-]?key)[_-]"
              r"([A-Za-z0-9!@#$%^&*+~]{6,64})(?=\.[A-Za-z0-9]{1,8}(?![A-Za-z0-9])|[/\\\"'`\s]|$)"},
]
for _r in RULES:
    _r["python"] = True


def _prose(v: str, _match: str = "") -> bool:
    core = v.rstrip(".,;:!?)\u2026")
    return password_like(core) and (any(c.isdigit() for c in core) or classes(core) >= 3)


def _file_name(v: str, _match: str = "") -> bool:
    return password_like(v) and (v != v.lower() and v != v.upper() or not v.isalnum() or piece_len(v) < 3)


def _cli(v: str, _match: str = "") -> bool:
    return not v.startswith("-") and not reference(v) and plausible(v, "password", quoted=True, strict=False)


def _sas(v: str, _match: str = "") -> bool:
    return "%" in v or entropy(v) >= 3.5


def _base64_secret(v: str, _match: str = "") -> bool:
    return not reference(v) and (high_entropy(v) or len(v) >= 8 and classes(v) >= 2 and entropy(v) >= 2.5)


def _file_password(v: str, _match: str = "") -> bool:
    return not reference(v) and v.lower() not in ("*", "password", "passwd", "secret", "changeme")


def _netrc(v: str, match: str = "") -> bool:
    """A .netrc entry: its machine is a host name (`api.heroku.com`, `localhost`, `10.0.0.7`, `default`),
    or its password looks like one; not prose that says "machine learning login page password reset"."""
    host = (match.split() + ["", ""])[1] if match.startswith("machine") else "default"
    hostlike = host == "default" or host == "localhost" or any(c in host for c in ".:") or any(c.isdigit() for c in host)
    return _file_password(v) and (hostlike or password_like(v))


_STRONG_NAME = re.compile(r"(?i)passw(?:or)?d|secret|token|credential|creds|auth|(?-i:[Aa]pi|API)")


def _generic(v: str, match: str = "") -> bool:
    """gitleaks' generic-api-key, confirmed as ctx confirms an assignment: under a name that only says
    `key` or `access` (`cache_key`, `primary_key`, `access_id`), only a random-looking key counts (not a
    git SHA, a UUID, a path, words and numbers); under any name, no reference, type or masked value."""
    name = re.split(r"[=:>|,?]", match, maxsplit=1)[0]
    if MASKED.search(v) or reference(v) or v.lower() in NOT_SECRET:
        return False
    return bool(_STRONG_NAME.search(name)) or high_entropy(v)


# a finding's value must also pass its rule's check: a reference (`$PASSWORD`), a word, a flag is no secret
CHECKS = {"password-in-prose": _prose, "password-in-file-name": _file_name, "cli-password": _cli,
          "azure-sas-signature": _sas, "npm-auth": _base64_secret, "docker-auth": _base64_secret,
          "netrc-password": _netrc, "pgpass-password": _file_password,
          "kubeconfig-key": lambda v, _m="": len(v) >= 20 and not HEX.fullmatch(v), "generic-api-key": _generic}
