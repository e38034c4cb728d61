"""git: commits (message, hash, files from the output), staging, pushes, branches and worktrees, and the
file operations `git rm` / `git mv` make."""
from __future__ import annotations

import re

from ..model import DELETE, MOVE, Branch, Change, Commit, Push, Stage, TreeStatus

COMMIT_LINE = re.compile(r"^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
MODE_LINE = re.compile(r"^ (?:create|delete) mode \d+ (.+)$", re.M)
RENAME_LINE = re.compile(r"^ rename (.+) \(\d+%\)$", re.M)
PUSHED = re.compile(r"^\s+(?:[0-9a-f]+\.\.[0-9a-f]+|\* \[new branch\]|\+ [0-9a-f]+\.\.\.[0-9a-f]+)\s+(\S+)\s+->\s+(\S+)", re.M)
CHANGED = re.compile(r"^ (\d+) files? changed", re.M)
# `git status`, long form: the section heads and the entries under them; short form: `XY path`
STATUS_MARK = re.compile(r"^(?:On branch |HEAD detached |Not currently on any branch|nothing to commit|nothing added to "
                         r"commit|no changes added to commit|Changes to be committed:|Changes not staged for commit:|"
                         r"Untracked files:|Unmerged paths:)", re.M)
STATUS_SECTION = re.compile(r"^(?:Changes to be committed|Changes not staged for commit|Untracked files|Unmerged paths|"
                            r"Ignored files):\s*$")
STATUS_ENTRY = re.compile(r"^\s+(?:(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added|"
                          r"both deleted|added by us|added by them|deleted by us|deleted by them):\s+)?(.+?)"
                          r"(?: \((?:modified content|new commits|untracked content)[^)]*\))?$")
SHORT_ENTRY = re.compile(r"^(?=.?[MADRCUT?!])[ MADRCUT?!]{2} (.+)$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CUT = re.compile(r"\[\d+ lines? truncated\]|\(truncated\)|output truncated|lines truncated|omitted \d+ of \d+ lines|"
                 r"Observation truncated", re.I)     # a client cut the output
BRANCH = re.compile(r"^(?:On branch (\S+)|## (?:No commits yet on )?(\S+?)(?:\.\.\.|\s|$))", re.M)
NOTHING = re.compile(r"nothing to commit|no changes added to commit|nothing added to commit", re.I)


def _opt(argv, *names) -> str:
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if n.startswith("--") and a.startswith(n + "="):
                return a[len(n) + 1:]
            if not n.startswith("--") and a.startswith(n) and len(a) > len(n) and n in ("-m",):
                return a[len(n):]
    return ""


def _git_args(argv):
    """argv after `git` and its global options (-C DIR, -c k=v, --no-pager…)."""
    w = list(argv[1:])
    while w and w[0].startswith("-"):
        flag = w.pop(0)
        if flag in ("-C", "-c", "--git-dir", "--work-tree") and w:
            w.pop(0)
    return w


def _status(rest, out, seg, command, ev) -> list:
    """The paths `git status` listed as changed, when its whole output is there to read: not piped into a
    filter, not failed, not `-uno` (which hides new files), and read as a status (a clean short status
    prints nothing, which says nothing here)."""
    out = ANSI.sub("", out)
    if seg.piped_to or seg.redirect or command.failed or command.running or not out.strip() or CUT.search(out) or \
            any(a in ("-uno", "--untracked-files=no", "-z") for a in rest) or _opt(rest, "--untracked-files") == "no":
        return []
    pathspec = tuple(a for a in rest[rest.index("--") + 1:] if a) if "--" in rest else \
        tuple(a for a in rest if not a.startswith("-"))
    short = any(a in ("--short", "--porcelain") or a.startswith("--porcelain=") or re.fullmatch(r"-[a-zA-Z]*s[a-zA-Z]*", a)
                for a in rest)
    changed: list[str] = []
    if short:
        for line in out.splitlines():
            if not line.strip() or line.startswith("## "):
                continue
            m = SHORT_ENTRY.match(line)
            if not m:
                return []       # not a short status after all (another command's output): no reading
            changed.append(_unquote(m.group(1).split(" -> ")[-1]))
    else:
        if not STATUS_MARK.search(out):
            return []
        section = False
        for line in out.splitlines():
            if STATUS_SECTION.match(line):
                section = True
            elif not line.strip() or not line[:1].isspace():
                section = False if line.strip() else section
            elif section and not line.strip().startswith("(use "):
                m = STATUS_ENTRY.match(line)
                if m:
                    changed.append(_unquote(m.group(1).split(" -> ")[-1]))
        if not changed and re.search(r"^(?:Changes to be committed|Changes not staged|Untracked files|Unmerged paths):",
                                     out, re.M):
            return []       # sections with no entry read: a layout not known here, no reading
    branch = BRANCH.search(out)
    return [TreeStatus(command.at, changed=tuple(changed), scope=pathspec, where=seg.cwd or command.cwd,
                       branch=branch.group(1) or branch.group(2) if branch else "", **ev)]


def _unquote(path: str) -> str:
    """A path as git prints it: in double quotes with C escapes (`"caf\\303\\251.md"`) when it has odd bytes."""
    path = path.strip()
    if not (len(path) > 1 and path[0] == path[-1] == '"'):
        return path
    raw = path[1:-1].encode("latin-1", "backslashreplace")
    try:
        return raw.decode("unicode_escape").encode("latin-1").decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return path[1:-1]


class Git:
    name = "git"
    kind = "vcs"

    def match(self, argv):
        return bool(argv) and argv[0] == "git"

    def read(self, argv, command, seg):
        args = _git_args(argv)
        if not args:
            return []
        sub, rest = args[0], args[1:]
        out = command.output or ""
        ev = dict(ts=command.ts)
        at = command.at
        if sub == "commit":
            msgs = []
            for i, a in enumerate(rest):
                if a in ("-m", "--message") and i + 1 < len(rest):
                    msgs.append(rest[i + 1])
                elif a.startswith("-m") and len(a) > 2 and not a.startswith("--"):
                    msgs.append(a[2:])
                elif a.startswith("--message="):
                    msgs.append(a[10:])
                elif re.fullmatch(r"-[a-zA-Z]*m", a) and i + 1 < len(rest):
                    msgs.append(rest[i + 1])
            message = "\n\n".join(msgs)
            if seg.heredoc and (not message or message.startswith("$(")):
                message = seg.heredoc
            m = COMMIT_LINE.search(out)
            files = tuple(MODE_LINE.findall(out))
            ok = bool(m) or not (command.failed or NOTHING.search(out))
            if NOTHING.search(out) and not m:
                ok = False
            if not message and m:
                message = m.group(3)
            all_ = any(re.fullmatch(r"-[a-zA-Z]*a[a-zA-Z]*", a) for a in rest) or "--all" in rest
            skip = set(msgs) | {_opt(rest, "-F", "--file", "--author", "--date", "-C", "-c", "--fixup")}
            paths = tuple(a for a in rest if not a.startswith("-") and a not in skip)
            n = CHANGED.search(out)
            return [Commit(at, message=message.strip(), hash=m.group(2) if m else "", files=files + paths,
                           all_changes=all_, ok=ok and not command.running, amend="--amend" in rest,
                           count=int(n.group(1)) if n else 0, **ev)]
        if sub == "add":
            paths = tuple(a for a in rest if not a.startswith("-"))
            all_ = "-A" in rest or "--all" in rest or "." in paths or "-u" in rest or "--update" in rest
            force = "-f" in rest or "--force" in rest
            return [Stage(at, paths=paths, all=all_, force=force, **ev)] if not command.failed else []
        if sub == "status":     # of this tree only: not `git -C elsewhere`, `--git-dir`, `--work-tree`
            elsewhere = any(a in ("-C", "--git-dir", "--work-tree") or a.startswith(("--git-dir=", "--work-tree="))
                            for a in argv[1:argv.index("status")] if "status" in argv)
            return [] if elsewhere else _status(rest, out, seg, command, ev)
        if sub == "push":
            words = [a for a in rest if not a.startswith("-")]
            m = PUSHED.search(out)
            ok = not command.failed and not re.search(r"^(?:error|fatal|! \[rejected\])", out, re.M)
            return [Push(at, remote=words[0] if words else "", branch=(m.group(2) if m else words[1] if len(words) > 1 else ""),
                         ok=ok, **ev)]
        if sub in ("checkout", "switch"):
            new = _opt(rest, "-b", "-B", "-c", "-C", "--create")
            if new:
                return [Branch(at, name=new, created=True, **ev)] if not command.failed else []
            words = [a for a in rest if not a.startswith("-")]
            if sub == "switch" and words or sub == "checkout" and len(words) == 1 and "--" not in rest and \
                    not re.search(r"\.\w{1,6}$", words[0]):
                return [Branch(at, name=words[0], **ev)] if not command.failed else []
            return []
        if sub == "worktree" and rest[:1] == ["add"]:
            new = _opt(rest, "-b", "-B")
            return [Branch(at, name=new, created=True, **ev)] if new and not command.failed else []
        if sub == "rm":
            return [Change(at, path=p, action=DELETE, via="shell", ok=not command.failed, **ev)
                    for p in rest if not p.startswith("-")]
        if sub == "mv":
            words = [p for p in rest if not p.startswith("-")]
            if len(words) == 2:
                return [Change(at, path=words[0], action=MOVE, to=words[1], via="shell", ok=not command.failed, **ev)]
        return []


ENTRIES = [Git()]
