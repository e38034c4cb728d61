"""`ctx hook install AGENT` / `ctx hook uninstall AGENT`: ctx's hooks merged into an agent's own
settings, and taken out again.

Install only inserts text (core/textedit): the user's bytes stay where they were, a user's own
hooks are never touched, and running it twice changes nothing. What it inserted is remembered
in $CTX_HOME/hooks-installed.json as spans of the file it wrote (never the user's text: a
settings file may hold a key); uninstall deletes exactly those spans when the file is as install
left it, which gives the earlier file back byte for byte (a file install created is removed).
When the file changed since, uninstall takes out the groups that run ctx by absolute path, which
is what install writes, and leaves everything else.

The command written is the absolute path of the `ctx` being run, so a hook works whatever PATH
the agent gives it.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass, field

from ..core import textedit
from ..errors import CtxError, InputError, UsageProblem
from .agents import Agent

LEDGER = "hooks-installed.json"
SCOPES = ("project", "user")


@dataclass
class Change:
    """One file's change: its text before and after (None: no file), the spans install inserted
    (in `after`), and what the user should know."""
    path: str
    before: str | None
    after: str | None
    spans: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    created: bool = False       # install creates the file (uninstall removes it)
    created_dir: bool = False   # … and its folder

    @property
    def changed(self) -> bool:
        return self.before != self.after


# ---- the command the hooks run ----

def ctx_command(argv0: str | None = None, executable: str | None = None) -> str:
    """The absolute path of the `ctx` being run (symbolic links resolved), shell-quoted; when ctx
    runs as `python -m ctxkit`, the `ctx` beside that Python (its venv's bin), else that Python
    with `-m ctxkit`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = executable or sys.executable
    if argv0 and os.path.basename(argv0) == "ctx":
        p = os.path.realpath(os.path.abspath(argv0))
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return shlex.quote(p)
    beside = os.path.join(os.path.dirname(os.path.abspath(executable)), "ctx")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return shlex.quote(beside)
    return f"{shlex.quote(os.path.abspath(executable))} -m ctxkit"


# a command run detached from the agent (its own process group, the payload on its stdin): for a
# hook the agent kills at exit before ctx could start (Copilot CLI's SessionEnd, 1.5 s budget)
DETACHED = ("set -m; ", " <&0 &")


def detached(command: str) -> str:
    return f"{DETACHED[0]}{command}{DETACHED[1]}"


def hook_argv(command: str) -> list[str] | None:
    """The words after the program of a command that runs ctx (`... hook AGENT EVENT`, also
    detached), or None when the command is not ctx's."""
    if command.startswith(DETACHED[0]) and command.endswith(DETACHED[1]):
        command = command[len(DETACHED[0]):-len(DETACHED[1])]
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 4 and os.path.basename(words[0]) == "ctx":
        rest = words[1:]
    elif len(words) >= 6 and words[1:3] == ["-m", "ctxkit"]:
        rest = words[3:]
    else:
        return None
    return rest if rest[0] == "hook" else None


def installed_by_ctx(command: str, agent: str) -> bool:
    """A command `ctx hook install` writes: ctx by absolute path, `hook AGENT EVENT`."""
    rest = hook_argv(command)
    if command.startswith(DETACHED[0]) and command.endswith(DETACHED[1]):
        command = command[len(DETACHED[0]):-len(DETACHED[1])]
    return rest is not None and len(rest) >= 2 and rest[1] == agent and os.path.isabs(shlex.split(command)[0])


def _commands(group) -> list[str]:
    """The commands of one hook group, whatever the agent calls the field."""
    if not isinstance(group, dict):
        return []
    hooks = group.get("hooks") if isinstance(group.get("hooks"), list) else [group]
    out = []
    for h in hooks:
        if isinstance(h, dict):
            out += [h[k] for k in ("command", "bash") if isinstance(h.get(k), str)]
    return out


def ours(group, agent: str) -> bool:
    cmds = _commands(group)
    return bool(cmds) and all(installed_by_ctx(c, agent) for c in cmds)


def runs_ctx_event(group, agent: str, event: str) -> bool:
    """The group already runs `ctx hook AGENT EVENT` (by any path, the user's own included)."""
    for c in _commands(group):
        rest = hook_argv(c)
        if rest is not None and len(rest) >= 3 and rest[1] == agent and rest[2].lower() == event.lower():
            return True
    return False


# ---- where ----

def project_root(cwd: str) -> str:
    from ..sources.workspace import project_root as root

    return root(cwd)


def settings_path(agent: Agent, scope: str, cwd: str) -> str:
    if agent.install is None:
        raise UsageProblem(f"ctx cannot install hooks for {agent.name} yet")
    return os.path.abspath(os.path.expanduser(agent.install.paths(scope, project_root(cwd))))


def _read(path: str) -> str | None:
    p = os.path.realpath(path)
    if not os.path.exists(p):
        return None
    if not os.path.isfile(p):
        raise InputError(path, None, "not a regular file")
    try:
        with open(p, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(path, None, f"cannot read it ({e.strerror})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text; ctx leaves it as it is") from None


def _check_json(path: str, text: str) -> dict:
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InputError(path, getattr(e, "lineno", None), f"not valid JSON ({e.msg}); fix it first, "
                                                           "ctx will not rewrite it") from None
    if not isinstance(doc, dict):
        raise InputError(path, None, "its top level is not a JSON object")
    return doc


def _events_object(doc: dict, path: tuple[str, ...]) -> dict:
    cur = doc
    for k in path:
        cur = cur.get(k) if isinstance(cur, dict) else None
    return cur if isinstance(cur, dict) else {}


# ---- install ----

def add_hooks(agent: Agent, path: str, command: str, base: str | None) -> tuple[str | None, list, list]:
    """BASE (the file's text, None when there is none) with ctx's hooks merged in (insertions
    only): (text, inserted spans, notes)."""
    spec = agent.install
    text = base if base is not None and base.strip() else "{\n}\n"
    doc = _check_json(path, text)
    events = _events_object(doc, spec.events_at)
    adds, notes = [], []
    for h in spec.hooks:
        group = spec.group(h, f"{command} hook {agent.name} {h.event}")
        have = events.get(h.event) if isinstance(events.get(h.event), list) else []
        if any(g == group for g in have):
            continue   # installed already: nothing to do
        if any(runs_ctx_event(g, agent.name, h.event) for g in have):
            notes.append(f"{h.event}: kept the ctx hook already there")
            continue
        adds.append((spec.events_at, h.event, group))
    if not adds:
        return base, [], notes
    try:
        after, spans = textedit.append_all(text, adds)
    except textedit.EditError as e:
        raise InputError(path, None, f"cannot merge ctx's hooks into it: {e}") from None
    if base is None:   # the whole file is ctx's
        spans = [(0, len(after))]
    elif not base.strip():
        after, spans = base + after, [(len(base), len(base) + len(after))]
    return after, spans, notes


def _plan_file(path: str, add, ledger: dict) -> Change:
    """One file's install: from the text before ctx's earlier install when the file is as that
    install left it (so a second install changes nothing, and a new command replaces the old)."""
    before = _read(path)
    base, created = before, before is None
    created_dir = created and not os.path.isdir(os.path.dirname(os.path.realpath(path)))
    entry = ledger.get(path)
    if before is not None and entry and entry.get("sha256") == _sha(before):
        base = textedit.delete_spans(before, [tuple(x) for x in entry.get("spans", [])])
        if entry.get("created") and not base:
            base, created, created_dir = None, True, bool(entry.get("created_dir"))
    after, spans, notes = add(base)
    if after == before:
        return Change(path, before, before, notes=notes)
    return Change(path, before, after, spans=[list(x) for x in spans], notes=notes, created=created,
                  created_dir=created_dir)


def plan_install(agent: Agent, scope: str, cwd: str, home, command: str | None = None) -> list[Change]:
    if scope not in SCOPES:
        raise UsageProblem(f"unknown scope {scope!r}: use --project or --user")
    command = command or ctx_command()
    ledger = read_ledger(home)
    path = settings_path(agent, scope, cwd)
    changes = [_plan_file(path, lambda base: add_hooks(agent, path, command, base), ledger)]
    if agent.install.extra is not None:
        for extra_path, add, _remove in agent.install.extra(scope, project_root(cwd)):
            p = os.path.abspath(os.path.expanduser(extra_path))
            changes.append(_plan_file(p, add, ledger))
    return changes


# ---- uninstall ----

def plan_uninstall(agent: Agent, scope: str, cwd: str, home) -> list[Change]:
    if scope not in SCOPES:
        raise UsageProblem(f"unknown scope {scope!r}: use --project or --user")
    ledger = read_ledger(home)
    path = settings_path(agent, scope, cwd)
    files = [(path, None)]
    if agent.install.extra is not None:
        files += [(os.path.abspath(os.path.expanduser(p)), remove)
                  for p, _add, remove in agent.install.extra(scope, project_root(cwd))]
    out = []
    for p, remove in files:
        before = _read(p)
        if before is None:
            out.append(Change(p, None, None))
            continue
        entry = ledger.get(p)
        if entry and entry.get("sha256") == _sha(before):   # as install left it: undo exactly
            after = textedit.delete_spans(before, [tuple(s) for s in entry.get("spans", [])])
            gone = bool(entry.get("created")) and not after
            out.append(Change(p, before, None if gone else after, created_dir=gone and bool(entry.get("created_dir"))))
            continue
        if remove is not None:
            out.append(Change(p, before, remove(before)))
            continue
        _check_json(p, before)
        after, n = textedit.remove_elements(before, agent.install.events_at, lambda g: ours(g, agent.name))
        out.append(Change(p, before, after, notes=[] if n else ["no hook installed by ctx found"]))
    return out


# ---- writing ----

def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_ledger(home) -> dict:
    from ..store.atomic import load_json

    return load_json(os.path.join(home.path, LEDGER), "hook install ledger", default={}, derived=True)


def apply(changes: list[Change], home, agent: Agent, scope: str, installing: bool) -> None:
    """Write the changes (each file atomically, checked unchanged since it was read) and record
    what install inserted, under the ledger's lock."""
    from ..store.atomic import atomic_write, locked

    lp = os.path.join(home.path, LEDGER)
    with locked(lp):
        ledger = read_ledger(home)
        for c in changes:
            if not c.changed:
                continue
            if _read(c.path) != c.before:
                raise CtxError(f"{c.path}: changed while ctx was merging its hooks; nothing written there",
                               hint="run the command again")
            target = os.path.realpath(c.path)   # a settings file that is a link (dotfiles) stays one
            if c.after is None:
                os.unlink(target)
                if c.created_dir:
                    _remove_empty_dir(os.path.dirname(target))
            else:
                _makedirs(os.path.dirname(target))
                mode = None if os.path.exists(target) else (0o666 & ~_umask())
                atomic_write(target, c.after.encode("utf-8"), mode)
            if installing:
                ledger[c.path] = {"agent": agent.name, "scope": scope, "sha256": _sha(c.after), "spans": c.spans,
                                  "created": c.created, "created_dir": c.created_dir}
            else:
                ledger.pop(c.path, None)
        atomic_write(lp, json.dumps(ledger, indent=1, sort_keys=True) + "\n")


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _makedirs(d: str) -> None:
    os.makedirs(d, mode=0o777 & ~_umask(), exist_ok=True)


def _remove_empty_dir(d: str) -> None:
    """The settings folder install created (.codex/, .claude/) goes when uninstall empties it."""
    try:
        if not os.listdir(d):
            os.rmdir(d)
    except OSError:
        pass


def write_plugin(directory: str, dry_run: bool = False) -> list[str]:
    """Write Claude Code's plugin marketplace for this ctx into DIRECTORY (its files, which run
    this ctx by absolute path); the paths written (or that would be)."""
    from .. import __version__
    from ..store.atomic import atomic_write
    from .agents.claude_code import plugin_files

    out = []
    for rel, text in plugin_files(ctx_command(), __version__).items():
        p = os.path.join(os.path.abspath(os.path.expanduser(directory)), rel)
        out.append(p)
        if not dry_run:
            _makedirs(os.path.dirname(p))
            atomic_write(p, text.encode("utf-8"), None if os.path.exists(p) else 0o666 & ~_umask())
    return out


def example_files(command: str = "ctx") -> dict[str, str]:
    """What the installer writes into a project with no settings yet, for every agent it can
    install (examples/AGENT/…, checked by the tests), and Claude Code's plugin marketplace."""
    from .. import __version__
    from . import agents
    from .agents.claude_code import plugin_files

    out = {}
    for name in agents.available():
        agent = agents.get(name)
        if agent.install is None:
            continue
        path = agent.install.paths("project", "/project")
        out[f"{name}/{os.path.basename(path)}"] = add_hooks(agent, path, command, None)[0]
        for extra_path, add, _remove in (agent.install.extra("project", "/project") if agent.install.extra else []):
            out[f"{name}/{os.path.basename(extra_path)}"] = add(None)[0]
    for rel, text in plugin_files(command, __version__).items():
        out[f"claude-code/plugin/{rel}"] = text
    return out


def diff(changes: list[Change]) -> str:
    """A unified diff of the changes (the --dry-run output)."""
    out = []
    for c in changes:
        if not c.changed:
            continue
        a = (c.before or "").splitlines(keepends=True)
        b = (c.after or "").splitlines(keepends=True)
        out += difflib.unified_diff(a, b, fromfile=c.path if c.before is not None else "/dev/null",
                                    tofile=c.path if c.after is not None else "/dev/null")
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)
