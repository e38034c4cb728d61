"""Input lines already read clean: a warm rescoring skips parsing, validating, sanitizing and
redacting a ctx JSONL line whose exact bytes an earlier run of the same session read, found
valid and found redaction left unchanged.

`LineMemo` keeps, per line (by a hash of its bytes), what later stages need without the record:
its kind, its group and its line as ctx prints it (kept only when that differs from the input
line). A known line is read as a `Seen` record that carries just that; anything unknown goes the
full way and, when it qualifies, is learned. Lines qualify when their record needs nothing from
the lines around it: an event, or a record with its own group (a record without one is grouped
by its neighbours). Score fields and score events never qualify (a rescoring drops and remakes
them).

The table lives beside the signal cache (store.signalcache, `.lines`), one file per session (the
first record's), tagged with the same fingerprint of the code and the redaction settings: a
changed redaction config reads as empty, and every line goes the full way again. Each run keeps
only the lines it read, so the file never grows past the session.
"""
from __future__ import annotations

import hashlib

SCORE_FIELDS = ("score", "score_parts")


class Seen(dict):
    """A record known clean, read without parsing: only `kind` and `group` as keys, and `line`,
    the record as ctx prints it. Only a consumer that asked for a memo gets one."""

    __slots__ = ("line",)


def is_seen(rec) -> bool:
    return type(rec) is Seen


class LineMemo:
    """The known lines of one session. `cache_dir` None: learns nothing, knows nothing."""

    def __init__(self, cache_dir: str | None, fingerprint: str, skip_event_type: str | None = None):
        self.cache_dir = cache_dir
        self.fp = fingerprint
        self.skip_event_type = skip_event_type  # events of this meta type never qualify
        self.path: str | None = None
        self.known: dict = {}
        self.used: dict = {}       # what this run read or learned: what the next run may skip
        self.hits = 0
        self.reading = False       # set by the reader of ctx JSONL lines (other formats: nothing to know)
        self._key: bytes | None = None
        self._pending = None       # (the parsed object of the last unknown line, may it be learned)

    def begin(self, session) -> None:
        """Load the table of `session` (the stream's first record's), once."""
        if self.path is not None or self.cache_dir is None or not self.reading:
            return
        from ..store import signalcache

        self.path = signalcache.lines_path_for(self.cache_dir, session)
        self.known = signalcache.load(self.path, self.fp)

    def seen(self, line: str) -> Seen | None:
        """The record of a line known clean, else None (then `note` the parsed object)."""
        line = line[:-1] if line.endswith("\n") else line   # a file's last line, once another follows, is the same
        key = hashlib.blake2b(line.encode("utf-8"), digest_size=16).digest()
        e = self.known.get(key)
        if e is None:
            self._key = key
            return None
        self.used[key] = e
        self.hits += 1
        kind, group, canon = e
        rec = Seen(kind=kind, group=group)
        rec.line = canon if canon is not None else line
        return rec

    def note(self, obj, line: str) -> None:
        """The parsed object of the last unknown line, before grouping touches it."""
        ok = isinstance(obj, dict) and (obj.get("kind") == "event" or
                                        (isinstance(obj.get("group"), str) and bool(obj["group"])))
        self._pending = (obj, self._key, line[:-1] if line.endswith("\n") else line) if ok else None

    def learn(self, obj, final: dict) -> None:
        """`final` is what the full way made of `obj` (valid, sanitized) and redaction left it
        unchanged: remember its line when `obj` is the last unknown line's and qualifies."""
        p = self._pending
        self._pending = None
        if p is None or p[0] is not obj or p[1] is None or any(k in final for k in SCORE_FIELDS):
            return
        meta = final.get("meta")
        if final.get("kind") == "event" and isinstance(meta, dict) and meta.get("type") == self.skip_event_type:
            return
        from .jsonl import dumps

        canon = dumps(final)
        self.used[p[1]] = (final.get("kind"), final.get("group"), None if canon == p[2] else canon)

    def save(self) -> None:
        """Keep what this run read (atomic, under the file's lock); a failure only costs speed."""
        if self.path is None or self.used.keys() == self.known.keys():
            return
        from ..store import signalcache

        try:
            signalcache.save(self.path, self.fp, self.used)
        except OSError:
            pass
