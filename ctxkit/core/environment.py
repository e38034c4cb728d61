"""Where the work happens, as the span shows it (pure): the working directory, the git branch and
whether it has an upstream, the shell, the commands the span found missing, and the files that were
already changed before the agent's first edit (they stay out of its commit unless meant).

A successor that continues in the wrong directory, pushes a branch with no upstream the plain way,
runs `bash` where there is none or commits a file the user had changed before the session wastes
its first actions; each fact here is read from the records (the source's own fields, `git` output,
a failed command's own message), never guessed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

COMMIT_OUT = re.compile(r"^\[([\w./-]+)(?: \(root-commit\))? [0-9a-f]{7,40}\] ", re.M)
ON_BRANCH = re.compile(r"^On branch (\S+)", re.M)
SWITCHED = re.compile(r"^Switched to (?:a new )?branch '([^']+)'", re.M)
TRACKING = re.compile(r"^Your branch (?:is up to date with|is ahead of|is behind|and) '([^']+)'", re.M)
SHORT_TRACKING = re.compile(r"^## ([\w./-]+?)(?:\.\.\.(\S+))?(?: \[|$)", re.M)
NO_UPSTREAM = re.compile(r"has no upstream branch|no upstream configured|--set-upstream", re.I)
SET_UPSTREAM = re.compile(r"\bgit\s+push\b[^\n]*\s(?:-u|--set-upstream)\b")
UPSTREAM_SET = re.compile(r"set up to track|tracking remote branch", re.I)
# a command the shell does not have: bash's, zsh's, sh's and PowerShell's own words for it
NOT_FOUND = [re.compile(r"(?m)^(?:[\w/.-]+: )?(?:line \d+: )?([\w.+-]+): (?:command )?not found\s*$"),
             re.compile(r"(?m)^(?:zsh|sh|bash|fish): command not found: ([\w.+-]+)\s*$"),
             re.compile(r"The term '([\w.+-]+)' is not recognized as the name of a cmdlet")]
SHELL_TAG = re.compile(r"<shell>\s*([\w.-]+)\s*</shell>")
CWD_TAG = re.compile(r"<cwd>\s*([^<\n]+?)\s*</cwd>")
STATUS_LONG = re.compile(r"(?m)^\s*(?:modified|deleted|new file|renamed|typechange):\s+(.+?)\s*$")
STATUS_SHORT = re.compile(r"(?m)^\s?[MADRCU?]{1,2}\s+(\S.*?)\s*$")
EDIT_NAMES = {"edit", "write", "multiedit", "notebookedit", "apply_patch", "create", "insert", "str_replace_editor",
              "str_replace_based_edit_tool", "write_file", "replace"}


@dataclass
class Place:
    cwd: str | None = None
    branch: str | None = None
    upstream: str | None = None        # the tracked branch, "" when the span shows there is none
    shell: str | None = None
    missing: list = field(default_factory=list)   # commands the shell did not have
    before: list = field(default_factory=list)    # files changed before the agent's first edit, never edited by it
    left_out: list = field(default_factory=list)  # shown changed, never edited by the agent, never staged by it
    staged_too: list = field(default_factory=list)  # never edited by the agent but staged with its commits


def _text(r) -> str:
    return r.get("content") if isinstance(r, dict) and isinstance(r.get("content"), str) else ""


def read(span: Sequence[dict]) -> Place:
    from .kinds import _calls, _command

    p = Place()
    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    for r in span:
        meta = r.get("meta") if isinstance(r, dict) and isinstance(r.get("meta"), dict) else {}
        if isinstance(meta.get("cwd"), str) and meta["cwd"]:
            p.cwd = meta["cwd"]
        if isinstance(meta.get("branch"), str) and meta["branch"] and meta["branch"] != "HEAD":
            p.branch = meta["branch"]
        if r.get("role") in ("user", "system"):
            t = _text(r)
            if "<environment_context>" in t:
                m, s = CWD_TAG.search(t), SHELL_TAG.search(t)
                p.cwd = m.group(1) if m else p.cwd
                p.shell = s.group(1) if s else p.shell
    edited: set = set()
    status_seen = False
    shown: list = []     # (file, when) for every file a `git status` showed changed (tracked)
    staged: set = set()  # every file a `git add` named ("*": everything)
    last_add = -1
    for step, (_, name, args, res) in enumerate(_calls(msgs)):
        cmd = _command(args)
        out = _text(res)
        if name.lower() in EDIT_NAMES or re.match(r"^(?:edit|create|insert)\b", cmd):
            for k in ("file_path", "path", "filename"):
                if isinstance(args.get(k), str):
                    edited.add(args[k])
            if not status_seen:
                status_seen = True  # an edit before any status: what a later status shows may be the agent's
            continue
        if res is None or not cmd:
            continue
        failed = "error" in (res.get("flags") or ())
        for rx in NOT_FOUND:
            for m in rx.finditer(out):
                word = m.group(1)
                if cmd.split()[0].split("/")[-1] == word or re.search(rf"(?:^|[\s;&|(]){re.escape(word)}\b", cmd):
                    if word not in p.missing:
                        p.missing.append(word)
        if re.search(r"\bgit\b", cmd):
            for rx in (COMMIT_OUT, ON_BRANCH, SWITCHED):
                m = None
                for m in rx.finditer(out):
                    pass
                if m and m.group(1) != "HEAD":
                    p.branch = m.group(1)
            m = TRACKING.search(out)
            if m:
                p.upstream = m.group(1)
            m = SHORT_TRACKING.search(out) if re.search(r"\bgit\s+status\b.*(?:-sb|-bs|--branch)", cmd) else None
            if m:
                p.branch = m.group(1)
                p.upstream = m.group(2) or p.upstream
            if re.search(r"\bgit\s+push\b", cmd):
                if failed and NO_UPSTREAM.search(out):
                    p.upstream = ""
                elif not failed and (SET_UPSTREAM.search(cmd) or UPSTREAM_SET.search(out)):
                    p.upstream = p.upstream or "set"
            if re.search(r"\bgit\s+status\b", cmd) and not failed:
                short = "--short" in cmd or "--porcelain" in cmd or "-s" in cmd.split() or "-sb" in cmd.split()
                rx = STATUS_SHORT if short else STATUS_LONG
                listed = [m.group(1).split(" -> ")[-1] for m in rx.finditer(out)
                          if not m.group(0).lstrip().startswith(("##", "??"))]
                shown.extend((x, step) for x in listed if x not in {f for f, _ in shown})
                if not status_seen:
                    status_seen = True
                    p.before = listed
            for m in re.finditer(r"\bgit\s+add\s+([^;&|]+)", cmd):
                if not failed:
                    staged.update(w for w in m.group(1).split() if not w.startswith("-"))
                    last_add = step
                    if re.search(r"(?:^|\s)(?:-A|--all|\.)(?:\s|$)", m.group(1)):
                        staged.add("*")
            if re.search(r"\bgit\s+commit\b[^\n]*\s-\w*a", cmd) and not failed:
                staged.add("*")
    # a file the agent edited later is its own work, not a change it found
    mine = lambda f: any(e == f or e.endswith("/" + f) for e in edited)  # noqa: E731
    p.before = [f for f in p.before if not mine(f)]
    if "*" not in staged:  # a file the agent staged files after seeing, and did not stage, it left out
        p.left_out = [f for f, at in shown if not mine(f) and f not in staged and at < last_add]
        p.staged_too = [f for f, _ in shown if not mine(f) and f in staged]
        p.before = [f for f in p.before if f not in p.left_out]
    return p


def lines(p: Place, pending_commit: bool = False, cwd_said: bool = False) -> list[str]:
    """Current work lines: where the work happens, and what the span found about it (the working
    directory left out when another section says it)."""
    out = []
    bits = []
    if p.cwd and not cwd_said:
        bits.append(f"working directory `{p.cwd}`")
    if p.branch:
        up = ""
        if p.upstream == "":
            up = f" (it has no upstream: push with `git push --set-upstream origin {p.branch}`)"
        elif p.upstream and p.upstream != "set":
            up = f" (tracking `{p.upstream}`)"
        bits.append(f"git branch `{p.branch}`" + up)
    if p.shell:
        bits.append(f"shell {p.shell}")
    if bits:
        out.append("Where the work happens: " + ", ".join(bits) + ".")
    if p.missing:
        out.append("Not available in this shell (the span tried them): " + ", ".join(f"`{c}`" for c in p.missing) +
                   "; use what the shell has instead.")
    if p.left_out and pending_commit:
        out.append("Changed outside the agent's edits and left out of its commits so far (`git status` showed them): " +
                   ", ".join(f"`{f}`" for f in p.left_out[:6]) + "; keep them out unless they are meant to go in.")
    if p.staged_too and pending_commit:
        out.append("Staged with the agent's earlier commits though it never edited them (commands change them): " +
                   ", ".join(f"`{f}`" for f in p.staged_too[:6]) + "; stage them with the rest again.")
    if p.before and pending_commit:
        out.append("Already changed before the agent's first edit (the first `git status` showed them; the agent "
                   "never edited them): " + ", ".join(f"`{f}`" for f in p.before[:6]) +
                   (" …" if len(p.before) > 6 else "") + "; leave them out of the commit unless they are meant to be in it.")
    return out
