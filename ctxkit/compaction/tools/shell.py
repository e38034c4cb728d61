"""Plain shell file operations: what `rm`, `mv`, `cp`, `touch`, `mkdir`, `sed -i`, `tee`, a `>` redirect and a
here-document write change, and what `cat`, `head`, `tail`, `sed -n`, `nl`, `less` and PowerShell's
Get-Content read. The last entry: it matches any command, so a command no other entry knows still
yields the files it writes through a redirect."""
from __future__ import annotations

import re

from ..model import CREATE, DELETE, MODIFY, MOVE, NOT_THERE_WORDS, Change, Read

READERS = {"cat", "head", "tail", "less", "more", "bat", "nl", "Get-Content", "gc", "type"}
MISSING = re.compile(NOT_THERE_WORDS + r"|The system cannot find", re.I)
PATHLIKE = re.compile(r"^[\w~./\\:@+-][\w./\\~:@+ -]*$")


def _paths(words) -> list[str]:
    return [w for w in words if not w.startswith("-") and PATHLIKE.match(w) and ("/" in w or "\\" in w or "." in w.lstrip("."))
            and not w.isdigit()]


SILENCED = re.compile(r"(?:2|&)>\s*/dev/null|2>&-|2>\s*\$null|2>\s*nul\b", re.I)
ECHOED = re.compile(r"\b(?:echo|Write-Output|Write-Host)\s+(?:-\w+\s+)?(\"[^\"]*\"|'[^']*'|[^;&|\n]+)")


def _missing(path: str, command, seg) -> bool:
    """The output says the file is not there: a line naming it with a reader's "no such file", or the
    command's only file when it failed with such a line; or the reader's errors went to /dev/null and the
    output has nothing but what the line's `echo`s print (a probe for a file that found none)."""
    out = command.output or ""
    if SILENCED.search(seg.text):
        said = {m.group(1).strip().strip("'\"") for m in ECHOED.finditer(command.command or "")}
        rest = [ln for ln in out.splitlines() if ln.strip() and not any(ln.strip().startswith(x.split("$")[0].strip())
                                                                       for x in said if x.split("$")[0].strip())]
        if not rest:
            return True
    if not MISSING.search(out):
        return False
    name = path.replace("\\", "/")     # the path as written names the line about it (not a namesake elsewhere)
    lines = [ln.replace("\\", "/") for ln in out.splitlines() if MISSING.search(ln)]
    name = re.sub(r"^(?:\./|~/)", "", name)
    if any(re.search(r"(?:^|[\s'\"`:(/])" + re.escape(name) + r"(?:$|[\s'\"`:)])", ln) for ln in lines):
        return True
    return seg.count == 1 and command.failed and len(_paths(seg.argv[1:])) == 1


class Files:
    name = "shell files"
    kind = "file"
    # programs that only look (read, list, find): their "no such file" is an answer, not a failed action
    lookers = READERS | {"ls", "dir", "find", "stat", "test", "file", "wc", "readlink", "realpath", "tree",
                         "Get-ChildItem", "gci", "Test-Path", "Get-Item", "Resolve-Path"}

    def match(self, argv):
        return True

    def read(self, argv, command, seg):
        ev = dict(ts=command.ts)
        at, ok = command.at, not command.failed
        out: list = []
        prog, rest = (argv[0] if argv else ""), list(argv[1:])
        if seg.op_before == "|":
            prog = ""   # a filter reading a pipe reads no file
        if prog == "rm" or prog in ("Remove-Item", "del"):
            out += [Change(at, path=p, action=DELETE, via="shell", ok=ok, **ev) for p in _paths(rest)]
        elif prog in ("mv", "Move-Item") and len(_paths(rest)) == 2:
            src, dst = _paths(rest)
            out.append(Change(at, path=src, action=MOVE, to=dst, via="shell", ok=ok, **ev))
        elif prog in ("cp", "Copy-Item") and len(_paths(rest)) == 2:
            out.append(Change(at, path=_paths(rest)[1], action=CREATE, via="shell", ok=ok, **ev))
        elif prog == "touch":
            out += [Change(at, path=p, action=CREATE, via="shell", ok=ok, **ev) for p in _paths(rest)]
        elif prog == "sed" and any(a == "-i" or a.startswith("-i") for a in rest):
            out += [Change(at, path=p, action=MODIFY, via="shell", ok=ok, **ev) for p in _paths(rest)[-1:]]
        elif prog == "sed" and "-n" in rest and not seg.piped_to:
            out += [Read(at, path=p, text=command.output if seg.count == 1 else "", **ev) for p in _paths(rest)[-1:]
                    if not _missing(p, command, seg)]
        elif prog in READERS and not seg.redirect and not seg.heredoc:
            paths = [p for p in _paths(rest) if not _missing(p, command, seg)]
            out += [Read(at, path=p, text=command.output if seg.count == 1 and len(paths) == 1 else "", **ev)
                    for p in paths]
        elif prog == "tee":
            out += [Change(at, path=p, action=MODIFY if "-a" in rest else CREATE, via="shell", ok=ok, **ev)
                    for p in _paths(rest)]
        if seg.redirect and PATHLIKE.match(seg.redirect):
            out.append(Change(at, path=seg.redirect, action=MODIFY if seg.append else CREATE, via="shell",
                              new=seg.heredoc, ok=ok, **ev))
        return out


ENTRIES = [Files()]
