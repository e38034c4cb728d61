"""A growing transcript read once: what a hook already parsed is kept, and the next call parses
only the lines appended since.

Claude Code appends to a session's transcript and runs a hook after every turn; parsing the
whole file each time costs seconds on a long session. Per transcript (keyed by its session),
the home keeps where the last read stopped: the byte offset, the file's identity (device and
inode), the line and group counts, and a hash of the last line read; the records parsed so far
are kept in a private cache file (already redacted, as every record ctx reads). The next read
checks that the file is the same one and still starts with what was read (same inode, not
shorter, the same last line at the same place) and parses only what follows, numbering lines
and groups on from where it stopped: the records are exactly those of a full read. Anything
else (a rewritten, truncated or replaced file, a turn cut in the middle, another format) falls
back to a full read, which starts the cache again.

Every read is bounded, whatever the transcript's size: a first read of a transcript longer than
WINDOW starts at the first turn in its last WINDOW bytes (the lines before it are counted, not
parsed, so ids and line numbers are those of a full read), and a reader keeps at most KEEP bytes
of the transcript parsed: past that, the next read starts a new window at the end. A format read
whole every time (Codex, Copilot CLI, Gemini CLI as JSONL) is read from the same window, after
its first line (the session's metadata), a smaller one (ONCE_WINDOW): it is parsed again on
every call. What a hook sees of a huge transcript is its recent
part; the state it folded from earlier windows stays in CONTEXT.md.
"""
from __future__ import annotations

import hashlib
import io
import json
import os

from ..core.groups import GROUP_PREFIX, group_id
from ..io.adapters import detect, open_records
from ..io.jsonl import Source

INCREMENTAL_FORMATS = ("claude-code",)   # formats whose records depend on nothing before the cut
WINDOWED_FORMATS = ("claude-code", "codex", "copilot-cli", "gemini-cli")   # JSONL: a window of lines stands alone
STATE_PREFIX = "read:"
WINDOW = 4 << 20   # a first read of a longer transcript parses only its last WINDOW bytes (from a turn)
KEEP = 12 << 20    # a reader keeps at most this much of the transcript parsed; past it a new window starts
ONCE_WINDOW = 2 << 20   # the window of a format parsed again on every call (nothing kept between calls)
HEAD_MAX = 1 << 20   # the first line kept before a window (a session's metadata) when it is at most this long
_CHUNK = 1 << 20


def _cache_path(home, key: str) -> str:
    return os.path.join(home.cache_dir, "transcripts", hashlib.sha256(key.encode()).hexdigest()[:24] + ".jsonl")


def _last_line(data: bytes) -> bytes:
    """The last complete line of `data` (which ends with a newline)."""
    return data[data.rfind(b"\n", 0, len(data) - 1) + 1:]


def _assistant_id(line: bytes) -> str | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if isinstance(obj, dict) and obj.get("type") == "assistant" and isinstance(obj.get("message"), dict):
        return obj["message"].get("id") if isinstance(obj["message"].get("id"), str) else None
    return None


def _last_assistant_id(data: bytes, tries: int = 50) -> str | None:
    """The message id of the last assistant line of `data` (Claude Code splits one response over
    several lines that share it), looking back a few lines."""
    end = len(data)
    for _ in range(tries):
        if end <= 0:
            return None
        start = data.rfind(b"\n", 0, end - 1) + 1
        line = data[start:end]
        if b'"assistant"' in line:
            return _assistant_id(line)
        end = start
    return None


def _first_assistant_id(data: bytes, tries: int = 50) -> str | None:
    for i, line in enumerate(data.split(b"\n", tries)):
        if i >= tries:
            break
        if b'"assistant"' in line:
            return _assistant_id(line)
    return None


def _starts_with_dequeue(data: bytes) -> bool:
    """The first line is Claude Code taking a prompt off its queue (the prompt then comes as a
    user line, and the enqueue before the cut was read as the prompt already)."""
    first = data.lstrip().split(b"\n", 1)[0]
    if b'"dequeue"' not in first:
        return False
    try:
        obj = json.loads(first)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "queue-operation" and obj.get("operation") == "dequeue"


def _call_ids(records: list[dict]) -> set:
    return {c.get("id") for r in records for c in r.get("tool_calls") or () if isinstance(c, dict)}


def _open_calls(records: list[dict]) -> bool:
    """The last turn has a tool call without its result (or with the placeholder a read that
    ends there gives it): the turn is not over, the next lines may answer it."""
    last = _groups(records)
    tail = [r for r in records if r.get("group") == group_id(last)] if last else []
    answered = {r.get("tool_call_id") for r in tail if r.get("role") == "tool"
                and "missing_result" not in (r.get("flags") or ())}
    return bool(_call_ids(tail) - answered)


PLACE = ("cwd", "branch")   # meta keys an adapter notes only when they change (working directory, git branch)


def _cwds(records: list[dict]) -> dict:
    """The working directory and git branch each session last recorded (the adapter notes them
    only when they change): (session, key) -> value."""
    out = {}
    for r in records:
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        for k in PLACE:
            if meta.get(k):
                out[(r.get("session"), k)] = meta[k]
    return out


def _parse(path: str, text: str, fmt: str, lines_before: int, ignored: dict | None) -> list[dict]:
    # blank lines before the new text: line numbers (and the ids derived from them) run on
    src = Source(path, stream=io.StringIO("\n" * lines_before + text))
    return list(open_records(src, fmt, ignored=ignored))


def _groups(records: list[dict]) -> int:
    n = 0
    for r in records:
        g = r.get("group")
        if isinstance(g, str) and g.startswith(GROUP_PREFIX + "-"):
            try:
                n = max(n, int(g[len(GROUP_PREFIX) + 1:]))
            except ValueError:
                pass
    return n


def read(home, path: str, key: str, ignored: dict | None = None) -> tuple[list[dict], str]:
    """(the transcript's records, how they were read: "cached", "appended", "full" or "window").

    `key` names the transcript's reader (the session): its state is in hooks-state.json."""
    from ..store.atomic import locked, makedirs

    from ..store.hook_state import read_state

    cache = _cache_path(home, key)
    makedirs(os.path.dirname(cache))
    with locked(cache):
        st = os.stat(path)
        state = read_state(home).get(STATE_PREFIX + key)
        with open(path, "rb") as f:
            if _resumable(state, path, st, f, cache) and st.st_size - int(state.get("start") or 0) <= KEEP:
                f.seek(state["offset"])
                new = _complete(f.read(st.st_size - state["offset"]), ignored)
                if new is None:  # a last line complete but not ended: read as it is, keep nothing
                    return once(path, f, st.st_size, INCREMENTAL_FORMATS[0], ignored)
                records = _load_cache(cache, state["cache_bytes"])
                if not new:
                    _merge_ignored(ignored, state)
                    return records, "cached"
                appended = _append(path, new, state, records, ignored)
                if appended is not None:
                    _save(home, key, cache, path, st, state, records, appended, new)
                    return records + appended, "appended"
                del records
            if state is not None:
                forget(home, key)
            fmt = format_of(path)
            if fmt not in INCREMENTAL_FORMATS:  # parsed from its window every time, nothing kept
                return once(path, f, st.st_size, fmt, ignored)
            start, before = window_start(f, st.st_size, fmt)
            f.seek(start)
            data = f.read(st.st_size - start)
        data = _complete(data, ignored)
        if data is None:  # a last line complete but not ended: read as it is, keep nothing
            with open(path, "rb") as f:
                return once(path, f, st.st_size, fmt, ignored)
        mine: dict = {}
        records = _parse(path, data.decode("utf-8-sig" if not start else "utf-8", "surrogateescape"),
                         INCREMENTAL_FORMATS[0], before, mine)
        for k, v in mine.items():
            if ignored is not None:
                ignored[k] = ignored.get(k, 0) + v
        _save(home, key, cache, path, st, None, [], records, data, fmt=INCREMENTAL_FORMATS[0], ignored=mine,
              start=start, lines_before=before)
        return records, ("window" if start else "full")


def format_of(path: str) -> str:
    """The transcript's format, sniffed from its first lines (a line past HEAD_MAX is not read whole)."""
    src = Source(path)
    src.max_chars = HEAD_MAX   # a first line past it is not a transcript line to sniff whole
    try:
        return detect(src)
    finally:
        src.close()


def _is_turn_start(line: bytes, fmt: str) -> bool:
    """A line where a turn starts (the user types a prompt): a window starts there, so no tool
    call is cut from its result. Only Claude Code's lines are told apart; in other formats any
    line starts a window (their adapters mark a result whose call is before it)."""
    if fmt != "claude-code":
        return True
    if b'"user"' not in line:
        return False
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    msg = obj.get("message") if isinstance(obj, dict) and obj.get("type") == "user" else None
    c = msg.get("content") if isinstance(msg, dict) else None
    return isinstance(c, str) or (isinstance(c, list) and bool(c) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c))


def window_start(f, size: int, fmt: str, window: int | None = None) -> tuple[int, int]:
    """(byte offset, lines before it) where a bounded read of the open file `f` of `size` bytes
    starts: 0 for a file within `window`; else the first turn in its last `window` bytes (the
    first whole line there when no turn starts in it). The lines before it are counted in
    bounded pieces, never held."""
    window = WINDOW if window is None else window
    if size <= window:
        return 0, 0
    f.seek(size - window - 1)
    _skip_line(f)   # the rest of the line the window cuts (or the newline just before it)
    pos = first = f.tell()
    start = None
    while pos < size:
        line = f.readline(window + 1)
        if not line.endswith(b"\n"):
            break   # a line longer than the window, or the last one, not finished
        if _is_turn_start(line, fmt):
            start = pos
            break
        pos += len(line)
    start = first if start is None else start
    f.seek(0)
    before, left = 0, start
    while left > 0:
        chunk = f.read(min(_CHUNK, left))
        if not chunk:
            break
        before += chunk.count(b"\n")
        left -= len(chunk)
    return start, before


def _skip_line(f) -> None:
    """Read past the rest of the current line in bounded pieces."""
    while True:
        piece = f.readline(_CHUNK)
        if not piece or piece.endswith(b"\n"):
            return


def once(path: str, f, size: int, fmt: str, ignored: dict | None, window: int | None = None) -> tuple[list[dict], str]:
    """The records of a transcript read once, nothing kept: whole when it is within `window`
    (ONCE_WINDOW) or is not JSONL, else its first line (the session's metadata) and its last
    `window` bytes (from a turn), at their own line numbers."""
    window = ONCE_WINDOW if window is None else window
    f.seek(0)
    head = f.readline(HEAD_MAX + 1)
    if len(head) > HEAD_MAX or not head.endswith(b"\n"):
        head = b""   # no metadata line to keep (or a JSON document: not windowed)
    if size <= window or fmt not in WINDOWED_FORMATS or not head:
        src = Source(path)
        return _noted(list(open_records(src, fmt, ignored=ignored)), src, ignored), "full"
    start, before = window_start(f, size, fmt, window)
    f.seek(start)
    tail = f.read(size - start)
    lead = max(0, before - (1 if head else 0))
    text = head.decode("utf-8-sig", "surrogateescape") + "\n" * lead + tail.decode("utf-8", "surrogateescape")
    del tail
    src = Source(path, stream=io.StringIO(text))
    del text
    return _noted(list(open_records(src, fmt, ignored=ignored)), src, ignored), "window"


def _noted(records: list[dict], src: Source, ignored: dict | None) -> list[dict]:
    """The records; a half-written last line the reader passed over is counted in `ignored`."""
    if ignored is not None and any("half-written" in n for n in src.notes):
        ignored[HALF_WRITTEN] = 1
    return records


HALF_WRITTEN = "half-written last line"   # the key `ignored` counts it under (a hook says so on stderr)


def _complete(data: bytes, ignored: dict | None = None) -> bytes | None:
    """`data` up to its last newline: a last line the writer has not finished is left for the
    next read (counted in `ignored`). None when that last line is whole JSON without its newline
    (a file written that way is read as it is, not kept)."""
    cut = data.rfind(b"\n") + 1
    rest = data[cut:]
    if rest.strip():
        try:
            json.loads(rest)
            return None
        except ValueError:
            if ignored is not None:
                ignored[HALF_WRITTEN] = 1
    return data[:cut]


def _resumable(state, path: str, st, f, cache: str) -> bool:
    """The file is the one read last time, grown or not, with the same last line at the same place."""
    if not isinstance(state, dict) or state.get("path") != os.path.abspath(path):
        return False
    try:
        off, n = int(state["offset"]), int(state["last_len"])
        if (st.st_dev, st.st_ino) != tuple(state["file"]) or st.st_size < off or off < n or \
                os.path.getsize(cache) < int(state["cache_bytes"]):
            return False
    except (KeyError, TypeError, ValueError, OSError):
        return False
    f.seek(off - n)
    return hashlib.sha256(f.read(n)).hexdigest() == state.get("last_sha")


def _load_cache(cache: str, size: int) -> list[dict]:
    with open(cache, "rb") as c:
        data = c.read(size)
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _merge_ignored(ignored: dict | None, state: dict) -> None:
    if ignored is not None:
        for k, v in (state.get("ignored") or {}).items():
            ignored[k] = ignored.get(k, 0) + v


def _append(path: str, new: bytes, state: dict, old: list[dict], ignored: dict | None) -> list[dict] | None:
    """The records of the appended lines, numbered on; None when they cannot stand alone (a turn
    cut in the middle): then the caller reads the whole file."""
    if state.get("open_calls"):
        return None
    last = state.get("last_assistant")
    if last and _first_assistant_id(new) == last:
        return None  # one response split over the cut
    if _starts_with_dequeue(new):
        return None  # a prompt queued before the cut arrives after it: one record of it, as a full read makes
    mine: dict = {}
    try:
        recs = _parse(path, new.decode("utf-8", "surrogateescape"), state["format"], int(state["lines"]), mine)
    except Exception:  # noqa: BLE001 - the full read reports the problem with its line
        return None
    calls = _call_ids(recs)
    if any((r.get("role") == "tool" and r.get("tool_call_id") not in calls) or
           "orphan_result" in (r.get("flags") or ()) for r in recs):
        return None  # a result whose call is before the cut
    if calls & _call_ids(old):
        return None  # a call id used again: a full read tells the two apart
    cwd = _cwds(old)
    for r in recs:  # the adapter notes the working directory when it changes, not again after the cut
        meta = r.get("meta")
        sess = r.get("session")
        for k in PLACE:
            if isinstance(meta, dict) and meta.get(k):
                if cwd.get((sess, k)) == meta[k]:
                    del meta[k]
                    if not meta:
                        del r["meta"]
                        break
                else:
                    cwd[(sess, k)] = meta[k]
    n = int(state.get("groups") or 0)
    for r in recs:
        g = r.get("group")
        if isinstance(g, str) and g.startswith(GROUP_PREFIX + "-"):
            r["group"] = group_id(n + int(g[len(GROUP_PREFIX) + 1:]))
    _merge_ignored(ignored, state)
    for k, v in mine.items():
        if ignored is not None:
            ignored[k] = ignored.get(k, 0) + v
        state.setdefault("ignored", {})[k] = state.get("ignored", {}).get(k, 0) + v
    return recs


def _save(home, key: str, cache: str, path: str, st, state: dict | None, old: list[dict], new: list[dict],
          read_bytes: bytes, fmt: str | None = None, ignored: dict | None = None, start: int = 0,
          lines_before: int = 0) -> None:
    """The cache holds every record read so far; the state says where the file was cut."""
    from ..store.atomic import atomic_write, fsync_dir

    from ..store.hook_state import update_state

    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new).encode("utf-8", "surrogateescape")
    if state is None:
        atomic_write(cache, body, redacted=True)
        _prune(os.path.dirname(cache))
        base = {"format": fmt, "lines": lines_before, "groups": 0, "cache_bytes": 0, "ignored": ignored or {},
                "start": start}
        offset = start + len(read_bytes)
    else:
        base = state
        with open(cache, "r+b") as c:  # drop what a crashed run appended past the recorded size
            c.truncate(int(state["cache_bytes"]))
            c.seek(0, os.SEEK_END)
            c.write(body)
            c.flush()
            os.fsync(c.fileno())
        fsync_dir(os.path.dirname(cache))
        offset = int(state["offset"]) + len(read_bytes)
    every = old + new
    last = _last_line(read_bytes)
    update_state(home, STATE_PREFIX + key, {
        "path": os.path.abspath(path), "file": [st.st_dev, st.st_ino], "format": base["format"],
        "offset": offset, "last_len": len(last), "last_sha": hashlib.sha256(last).hexdigest(),
        "lines": int(base["lines"]) + read_bytes.count(b"\n"), "groups": _groups(new) or int(base["groups"]),
        "cache_bytes": int(base["cache_bytes"]) + len(body), "open_calls": _open_calls(every),
        "last_assistant": _last_assistant_id(read_bytes) or base.get("last_assistant"),
        "ignored": base.get("ignored") or {}, "start": int(base.get("start") or 0)})


STALE_S = 14 * 86400   # a cache untouched this long belongs to a session that ended without SessionEnd


def _prune(directory: str) -> None:
    """Caches of sessions not read for STALE_S go (their next read, if any, is a full one)."""
    import time

    limit = time.time() - STALE_S
    try:
        for e in os.scandir(directory):
            if e.name.endswith(".jsonl") and e.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(e.path)
    except OSError:
        pass


def forget(home, key: str) -> None:
    """The reader's cache and state go (at session end, or when the cache cannot be used)."""
    from ..store.hook_state import update_state

    try:
        os.unlink(_cache_path(home, key))
    except OSError:
        pass
    update_state(home, STATE_PREFIX + key, None)
