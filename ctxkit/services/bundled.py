"""Files the package carries beside its code: the man pages and the examples (agent settings,
the crontab, the demo transcript). In a wheel they are package data (ctxkit/man, ctxkit/examples);
in a checkout those two are links to the repository's man/ and examples/, so one path serves both."""
from __future__ import annotations

import os
import shutil
import tempfile

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAN_SECTION = "man1"


def folder(name: str) -> str:
    from ..errors import CtxError

    path = os.path.join(PKG, name)
    if not os.path.isdir(path):
        raise CtxError(f"{path}: this installation of ctx has no {name} folder",
                       hint="reinstall ctx from its wheel (pip, pipx or uv tool install ctxkit-cli)")
    return os.path.realpath(path)


def man_pages() -> list[str]:
    d = folder("man")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".1") and f.startswith("ctx"))


def man_page(command: str | None) -> str:
    """The page of `ctx COMMAND` (`ctx` alone for None): "cold-storage", "ctx-compact" and "compact" all work."""
    from ..errors import UsageProblem

    name = "ctx" if not command or command == "ctx" else \
        (command if command.startswith("ctx-") else "ctx-" + command.replace(" ", "-"))
    path = os.path.join(folder("man"), name + ".1")
    if not os.path.isfile(path) or os.sep in name:
        known = ", ".join(os.path.basename(p)[4:-2] for p in man_pages() if os.path.basename(p) != "ctx.1")
        raise UsageProblem(f"no man page for {command!r} (pages: {known})")
    return path


def man_dir(prefix: str) -> str:
    return os.path.join(os.path.abspath(os.path.expanduser(prefix)), "share", "man", MAN_SECTION)


def install_man(prefix: str) -> tuple[str, list[str]]:
    """Copy every page into PREFIX/share/man/man1 (each file replaced whole, readable by all, as
    man pages are). Returns the folder and the files written."""
    dest = man_dir(prefix)
    os.makedirs(dest, exist_ok=True)
    written = []
    for src in man_pages():
        target = os.path.join(dest, os.path.basename(src))
        fd, tmp = tempfile.mkstemp(prefix=".ctx-man.", dir=dest)
        try:
            with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
                shutil.copyfileobj(inp, out)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        written.append(target)
    return dest, written


def uninstall_man(prefix: str) -> tuple[str, list[str]]:
    """Remove from PREFIX/share/man/man1 the pages this ctx ships (nothing else)."""
    dest = man_dir(prefix)
    removed = []
    for src in man_pages():
        target = os.path.join(dest, os.path.basename(src))
        if os.path.isfile(target) and not os.path.islink(target):
            os.unlink(target)
            removed.append(target)
    return dest, removed


def on_manpath(prefix: str, path_env: str | None) -> bool:
    """man-db finds PREFIX/share/man when PREFIX/bin is on PATH."""
    bin_dir = os.path.join(os.path.abspath(os.path.expanduser(prefix)), "bin")
    return any(os.path.abspath(p) == bin_dir for p in (path_env or "").split(os.pathsep) if p)


def examples() -> list[dict]:
    """Every bundled example: name (its path under examples/), bytes, path."""
    d = folder("examples")
    rows = []
    for root, dirs, files in os.walk(d):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            p = os.path.join(root, f)
            rows.append({"name": os.path.relpath(p, d).replace(os.sep, "/"), "bytes": os.path.getsize(p), "path": p})
    return rows


def example(name: str) -> str:
    from ..errors import UsageProblem

    found = {r["name"]: r["path"] for r in examples()}
    if name not in found:
        raise UsageProblem(f"no example named {name!r} (`ctx examples` lists them)")
    return found[name]
