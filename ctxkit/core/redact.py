"""Redaction: secrets become typed placeholders with a short hash before ctx persists or
sends anything (`[REDACTED:aws-access-key#3f2a]`). The same secret always gets the same
placeholder, so a redacted transcript still says "the same key again".

Detection is Yelp's detect-secrets (its keyword-specific plugins; the entropy plugins are left
out: they take commit ids and content hashes for secrets) plus patterns it lacks (Anthropic
and OpenAI project keys, URL passwords, private-key blocks) and the user's `redact_patterns`.
A cheap prefilter keeps the cost near zero on lines that cannot hold a secret.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Iterable

PLUGINS = ("AWSKeyDetector", "ArtifactoryDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
           "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector",
           "MailchimpDetector", "NpmDetector", "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector",
           "SendGridDetector", "SlackDetector", "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector",
           "TwilioKeyDetector", "IbmCloudIamDetector", "CloudantDetector", "SoftlayerDetector")
OWN = [
    ("private-key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
                               re.S)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github-token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("aws-secret-key", re.compile(r"(?i)(?<=aws_secret_access_key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40,})")),
    ("url-password", re.compile(r"(?<=://)[^\s/:@'\"]+:([^\s/@'\"]{3,})(?=@)")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("secret-assignment", re.compile(r"(?i)\b(?:api[_-]?key|secret(?:[_-]?key)?|password|passwd|access[_-]?token|"
                                     r"auth[_-]?token)\b[\"']?\s*[:=]\s*[\"']([^\"'\s]{8,})[\"']")),
]
# Plain substrings that every secret format ctx looks for contains (a C-speed `in` test each):
# text without any of them is returned as is. Coding transcripts are full of words such as
# "token" or "task-", so the markers are the formats' own prefixes, and a hit is confirmed below.
MARKERS = ("AKIA", "ASIA", "PRIVATE KEY", "sk-", "sk_live", "rk_live", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
           "github_pat", "glpat-", "xox", "hooks.slack.com", "AIza", "eyJ", "npm_", "_authToken", "pypi-", "SG.",
           "AccountKey=", "sq0", "@", "=", ":")
PREFILTER = re.compile(r"\bAKIA|\bASIA|PRIVATE KEY|\bsk-[A-Za-z0-9]|sk_live|rk_live|\bgh[pousr]_|github_pat|glpat-|"
                       r"://[^\s/@]+:[^\s/@]+@|\bxox[abposr]-|hooks\.slack\.com|\bAIza|\beyJ[A-Za-z0-9_-]{8,}\.|"
                       r"\bnpm_|_authToken|\bpypi-|\bSG\.|AccountKey=|\bsq0[a-z]{3}-|\bAC[a-z0-9]{32}\b|"
                       r"\bSK[a-z0-9]{32}\b|\d{8,10}:AA")
ASSIGNMENT = re.compile(r"(?i)(?:api[_-]?key|secret|passw|token)\w*[\"']?\s*[:=]")
ASSIGNMENT_WORDS = ("key", "secret", "passw", "token", "KEY", "SECRET", "PASSW", "TOKEN", "Key", "Secret", "Passw",
                    "Token")


def may_hold_secret(text: str) -> bool:
    """Cheap: could `text` hold a secret ctx would redact? (False is certain.)"""
    if not any(m in text for m in MARKERS[:-3]) and not (("@" in text and "://" in text)):
        if not (("=" in text or ":" in text) and any(w in text for w in ASSIGNMENT_WORDS)):
            return False
    return bool(PREFILTER.search(text) or ASSIGNMENT.search(text))
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+#[0-9a-f]{4}\]")


def placeholder(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}#{hashlib.sha256(secret.encode('utf-8', 'surrogatepass')).hexdigest()[:4]}]"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "secret"


class Redactor:
    def __init__(self, extra_patterns: Iterable[str] = (), use_detect_secrets: bool = True):
        self.extra = [re.compile(p) for p in extra_patterns]
        self.use_ds = use_detect_secrets
        self._scan = None

    def _ds_spans(self, line: str) -> list[tuple[int, int, str]]:
        if not self.use_ds:
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
            for s in scan_line(line):
                val = s.secret_value or ""
                if len(val) < 6 or s.type == "Private Key":
                    continue  # a bare prefix ('ghp') or a key header: the own patterns take these whole
                k = line.find(val)
                if k >= 0:
                    out.append((k, k + len(val), _slug(s.type)))
        return out

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = []
        for kind, rx in OWN:
            for m in rx.finditer(text):
                g = 1 if rx.groups and m.group(1) and kind in ("url-password", "aws-secret-key", "secret-assignment") \
                    else 0
                found.append((m.start(g), m.end(g), kind))
        for rx in self.extra:
            for m in rx.finditer(text):
                found.append((m.start(), m.end(), "custom"))
        pos = 0
        for line in text.split("\n"):
            if PREFILTER.search(line):
                found += [(a + pos, b + pos, k) for a, b, k in self._ds_spans(line)]
            pos += len(line) + 1
        return found

    def text(self, text: str) -> str:
        if not text or (not self.extra and not may_hold_secret(text)):
            return text
        spans = sorted(self.spans(text), key=lambda s: (s[0], -s[1]))
        if not spans:
            return text
        out, last = [], 0
        for a, b, kind in spans:
            if a < last or a >= b:
                continue  # inside a span already replaced
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

    def record(self, rec: dict) -> dict:
        """A ctx record with its content, tool-call arguments and meta redacted."""
        if not isinstance(rec, dict):
            return rec
        for key in ("content", "meta"):
            if key in rec:
                rec[key] = self.value(rec[key])
        calls = rec.get("tool_calls")
        if isinstance(calls, list):
            for c in calls:
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    redacted = self.text(fn["arguments"])
                    if redacted != fn["arguments"]:
                        try:  # keep the arguments valid JSON
                            fn["arguments"] = json.dumps(self.value(json.loads(fn["arguments"])), ensure_ascii=False)
                        except (ValueError, TypeError):
                            fn["arguments"] = redacted
        return rec
