"""Atomic writes (temp file + fsync + rename) and advisory file locks."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
from typing import Iterator


def named(err: OSError, path: str) -> OSError:
    """`err` naming `path` (a write's error: "No space left on device" says which file), as the
    one-line error ctx prints for an OSError gives it."""
    if getattr(err, "filename", None) or not err.errno:
        return err
    return type(err)(err.errno, err.strerror or str(err), path)


def fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700
_ROOTS: set[str] = set()  # CTX_HOME folders: nothing below them may be a symbolic link
# ... except the home's workspace itself, which users point at their agent's folder on purpose
# (what is inside it is still checked)
LINK_OK = frozenset({"workspace"})


def guard_root(root: str) -> None:
    """Declare `root` (a CTX_HOME) contained: ctx writes and reads below it through no link."""
    _ROOTS.add(os.path.abspath(root))


def no_links(path: str) -> str:
    """`path`, when no folder or file between its CTX_HOME and it is a symbolic link (a link
    planted there would send ctx's writes, reads and deletes outside the home); else an error
    naming the link. Paths outside every home (a configured log_path) are not checked."""
    p = os.path.abspath(path)
    for root in _ROOTS:
        if p.startswith(root + os.sep):
            cur = root
            for k, part in enumerate(p[len(root) + 1:].split(os.sep)):
                cur = os.path.join(cur, part)
                if os.path.islink(cur) and not (k == 0 and part in LINK_OK):
                    from ..errors import InputError

                    raise InputError(cur, None, "refused: a symbolic link inside CTX_HOME "
                                                "(ctx never follows one out of its home)",
                                     hint="remove the link (ctx recreates the folder); to keep logs or "
                                          "cold storage elsewhere, set log_path or cold_storage_path")
    return path


def makedirs(d: str) -> None:
    """Folders ctx creates are private (0700), every one of them (os.makedirs gives the mode to
    the last folder only); existing ones are left as they are."""
    d = os.path.abspath(no_links(d))
    missing = []
    while not os.path.isdir(d):
        missing.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for m in reversed(missing):
        try:
            os.mkdir(m, PRIVATE_DIR)
        except FileExistsError:
            if not os.path.isdir(m):
                raise
            continue
        os.chmod(m, PRIVATE_DIR)  # whatever the umask


def open_checked(path: str, mode: str = "r", **kw):
    """The one opener for a file ctx reads under CTX_HOME or the workspace: no folder between
    the home and it and not the file itself may be a symbolic link (O_NOFOLLOW), and it must be
    a regular file. Errors name the file."""
    from ..errors import InputError

    no_links(path)
    if os.path.islink(path):
        raise InputError(path, None, "refused: a symbolic link (ctx never reads its state through one)",
                         hint="replace the link by the file itself")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror}") from None
    import stat

    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(path, None, "not a regular file")
    return os.fdopen(fd, mode, **kw)


NOT_UTF8 = "not UTF-8 text"


def read_text(path: str) -> str:
    """A text file ctx keeps (CONTEXT.md, MEMORY.md, an identity file), through `open_checked`;
    bytes that are not UTF-8 are an error naming the file and line, never an internal error."""
    from ..errors import InputError

    with open_checked(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, raw.count(b"\n", 0, e.start) + 1, NOT_UTF8,
                         hint="re-save the file as UTF-8") from None


_KIND = {dict: "object", list: "array", str: "string"}


def load_json(path: str, what: str, *, expect: type = dict, default=None, derived: bool = False):
    """The one checked loader for a JSON file ctx keeps (session index, hook and maintain state,
    caches, a chunk file): read through `open_checked` (no links, a regular file), UTF-8, parsed
    with `io.jsonl.loads` (NaN, nesting too deep, a 5,000-digit number refused) and of the type
    `expect`. A missing file is `default`. Damage is one InputError naming the file and the
    line ("damaged WHAT: …"); for a `derived` file (a cache or a state ctx rebuilds as it goes),
    `default` instead, and the next write replaces the damaged file."""
    from ..errors import InputError
    from ..io.jsonl import loads

    if not os.path.lexists(path):
        return default
    try:
        text = read_text(path)  # a link or a folder in its place is refused as such, derived or not
    except FileNotFoundError:
        return default
    except InputError as e:
        if e.reason != NOT_UTF8:
            raise
        text, damage = None, e
    try:
        if text is None:
            raise damage
        data = loads(text, path)
        if not isinstance(data, expect):
            raise InputError(path, 1, f"expected a JSON {_KIND.get(expect, expect.__name__)}, "
                                      f"got {type(data).__name__}")
    except InputError as e:
        if derived:
            return default
        raise InputError(path, e.line, f"damaged {what}: {e.reason}",
                         hint="fix or delete the file by hand; ctx leaves it as it is") from None
    return data


def atomic_write(path: str, data: str | bytes, mode: int | None = None, *, redacted: bool = False) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never half. A new
    file is private (0600); a replaced file keeps its mode. Text is redacted on the way (one
    pass guards every write ctx makes) unless the caller did it already (`redacted=True`)."""
    with atomic_writer(path, mode, redacted=redacted) as write:
        write(data)


@contextlib.contextmanager
def atomic_writer(path: str, mode: int | None = None, *, redacted: bool = False) -> Iterator:
    """`atomic_write` for what comes in pieces (a file written as it streams): `write(piece)`
    in the `with`; the file is replaced when it ends, and left as it was when it raises. Text is
    redacted piece by piece (whole lines: what ctx redacts never spans one) unless `redacted`."""
    d = os.path.dirname(os.path.abspath(path))
    makedirs(d)
    no_links(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            def write(data: str | bytes) -> None:
                if not redacted and isinstance(data, str):
                    from . import redaction

                    data = redaction.persisted(path, data)
                # a lone surrogate becomes its escape (`\\ud83d`: exact inside JSON), never a crash
                f.write(data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)

            yield write
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        else:
            os.chmod(tmp, PRIVATE_FILE)
        os.replace(tmp, path)
        fsync_dir(d)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise named(e, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def clean_stale_tmp(directory: str, older_than_s: float = 3600.0, recursive: bool = False) -> int:
    """Remove the temp files of atomic writes that a kill left behind (`.NAME.*.tmp`, older
    than an hour, so a write in progress elsewhere is never touched)."""
    import time

    n = 0
    if not os.path.isdir(directory):
        return 0
    walker = os.walk(directory) if recursive else [(directory, [], os.listdir(directory))]
    for root, _, files in walker:
        for f in files:
            if f.startswith(".") and f.endswith(".tmp"):
                p = os.path.join(root, f)
                try:
                    if not os.path.islink(p) and time.time() - os.path.getmtime(p) > older_than_s:
                        os.unlink(p)
                        n += 1
                except OSError:
                    pass
    return n


@contextlib.contextmanager
def locked(path: str, shared: bool = False) -> Iterator[None]:
    """Hold an advisory lock on `path + '.lock'` (blocking). The lock file goes when the last
    holder lets go (none is left behind per chunk): a holder that finds, once it holds the lock,
    that the file it locked is no longer the one at the path takes the new one. A reader
    (`shared`) on a read-only file system, where no writer can be, reads without one."""
    lock_path = no_links(path + ".lock")
    fd = _lock(lock_path, shared)
    try:
        yield
    finally:
        if fd is not None:
            _unlock(lock_path, fd, shared)


def _lock(lock_path: str, shared: bool) -> int | None:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    while True:
        try:
            if not shared:
                makedirs(os.path.dirname(os.path.abspath(lock_path)))
            fd = os.open(lock_path, flags, PRIVATE_FILE)
        except OSError as e:
            if not shared or e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT):
                raise named(e, lock_path) from None
            try:   # a read-only home: an existing lock file is still honoured, else none is needed
                fd = os.open(lock_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except FileNotFoundError:
                if os.path.isdir(os.path.dirname(os.path.abspath(lock_path))) and \
                        os.access(os.path.dirname(os.path.abspath(lock_path)), os.W_OK):
                    raise named(e, lock_path) from None
                return None
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            same = os.fstat(fd).st_ino == os.stat(lock_path, follow_symlinks=False).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)   # the holder before removed it: lock the file at the path now


def _unlock(lock_path: str, fd: int, shared: bool) -> None:
    try:
        # the last holder removes the file: a writer always; a reader when no one else holds it
        if not shared or _try_exclusive(fd):
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_ino == os.stat(lock_path, follow_symlinks=False).st_ino:
                    os.unlink(lock_path)
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _try_exclusive(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def append_line(path: str, line: str) -> None:
    """Append one line durably under the file's lock (O_APPEND + fsync)."""
    makedirs(os.path.dirname(os.path.abspath(path)))
    no_links(path)
    with locked(path):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), PRIVATE_FILE)
        try:
            os.write(fd, (line.rstrip("\n") + "\n").encode("utf-8", "backslashreplace"))
            os.fsync(fd)
        except OSError as e:
            raise named(e, path) from None
        finally:
            os.close(fd)
