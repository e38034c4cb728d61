"""A PostgreSQL connection string, safe to print."""
from __future__ import annotations

import re

_PASSWORD_URL = re.compile(r"(?P<pre>[a-z][a-z0-9+.-]*://[^/@:\s]*:)[^@\s]*(?=@)", re.I)
_PASSWORD_KV = re.compile(r"(?P<pre>\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.I)


def redact_dsn(text: str) -> str:
    """A DSN (or any message quoting one) with its password replaced by ***."""
    text = _PASSWORD_URL.sub(lambda m: m.group("pre") + "***", text or "")
    return _PASSWORD_KV.sub(lambda m: m.group("pre") + "***", text)
