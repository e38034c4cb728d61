"""The redactor in force for this process, from the home's config (`redact`, `redact_patterns`).

Set once by the CLI when it opens the home; library use without a CLI gets the default
(redaction on). Every persisting or sending path asks `active()`.
"""
from __future__ import annotations

from ..core.redact import Redactor, strings_of

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
    r = active()
    return r.record(rec) if r else rec


def names(found, group: list[dict]) -> tuple:
    """The names a stub or a shrink note lists (`found`), none of them a secret of the chunk
    (`group`) or a piece of one: a name redaction would change, or one found inside a value
    redaction hides in the chunk (`django-insecure-ks2sj-6k0h8_jbt9_`), is left out."""
    r = active()
    if not r or not found:
        return tuple(found)
    hidden: list[str] | None = None
    out = []
    for n in found:
        if r.text(n) != n:
            continue
        if hidden is None:
            hidden = [s[a:b] for s in strings_of(group) for a, b, _ in r.spans(s)]
        if not any(n in h or h in n for h in hidden):
            out.append(n)
    return tuple(out)


def output(obj):
    """What ctx prints or writes: a record (or any JSON value) with its secrets redacted."""
    r = active()
    if not r:
        return obj
    return r.record(obj) if isinstance(obj, dict) else r.value(obj)


def persisted(path: str, data):
    """The text of a file ctx is about to write under CTX_HOME or the workspace, redacted: JSON
    and JSONL value by value (the file stays valid), anything else as text. One pass guards
    every write (`atomic_write`), so what ctx derives (entities, facts, titles, CONTEXT.md
    bullets, state) cannot carry a secret even when the code that made it forgot."""
    r = active()
    if not r or not isinstance(data, str) or not data:
        return data
    import json

    if path.endswith(".jsonl"):
        lines = []
        for line in data.split("\n"):
            try:
                v = json.loads(line) if line.strip() else None
            except (ValueError, RecursionError):
                lines.append(r.text(line))
                continue
            if v is None:
                lines.append(line)
                continue
            red = output(v)
            lines.append(line if red == v else json.dumps(red, ensure_ascii=False))
        return "\n".join(lines)
    if path.endswith(".json"):
        try:
            v = json.loads(data)
        except (ValueError, RecursionError):
            return r.text(data)
        red = output(v)
        return data if red == v else json.dumps(red, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    return r.text(data)
