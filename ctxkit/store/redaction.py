"""The redactor in force for this process, from the home's config (`redact`, `redact_patterns`).

Set once by the CLI when it opens the home; library use without a CLI gets the default
(redaction on). Every persisting or sending path asks `active()`.
"""
from __future__ import annotations

from ..core.redact import Redactor

_current: "Redactor | bool | None" = None


def configure(home) -> None:
    global _current
    cfg = home.config
    _current = Redactor(cfg.get("redact_patterns") or ()) if cfg.get("redact") else False


def active() -> Redactor | None:
    global _current
    if _current is None:
        _current = Redactor()
    return _current or None


def text(s: str) -> str:
    r = active()
    return r.text(s) if r else s


def value(v):
    r = active()
    return r.value(v) if r else v


def record(rec: dict) -> dict:
    """A copy of `rec` with its secrets redacted (the caller's record is left as it was)."""
    import json

    r = active()
    return r.record(json.loads(json.dumps(rec))) if r else rec
