"""Files changed, what changed in each, and which commit holds each change.

Paths are made relative to the work's root (the session's directory, or the folder a worktree holds)
once, here. A change is committed by the first later commit that holds it: the files the commit
names or prints, the files staged before it, or every change so far for `commit -a` / `add -A`, or a
commit whose file count matches everything uncommitted."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..model import (CREATE, CREATED, DELETE, DELETED, MODIFIED, MOVE, MOVED, Branch, Change, Command, Commit, FileChange,
                     Place, Read, Stage, TreeStatus)
from .code import (SHAPES, bodies, constants, definitions, doc_of, edit_facts, imports, is_code, is_terse, line_diff, members,
                   gone_names, messages, new_names, short_bodies, strip_numbers, tables, tests_added)
from .outline import outline
from .params import params_of
from .paths import DISCARD, Paths, inside, is_temp, same as _same, up as _up
from .prose import edit_intent

SHORT = 80


@dataclass
class _Acc:
    path: str
    action: str
    first_at: int
    last_at: int
    added: list = field(default_factory=list)
    changed: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    replaced: list = field(default_factory=list)
    lines: int = 0
    edits: int = 0
    commit: str = ""
    committed_at: int = -1
    moved_to: str = ""
    names: list = field(default_factory=list)
    lines_out: list = field(default_factory=list)
    lines_in: list = field(default_factory=list)
    intents: list = field(default_factory=list)
    tests: list = field(default_factory=list)
    docs: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    constants: list = field(default_factory=list)
    moved_from: str = ""
    code: dict = field(default_factory=dict)
    imports: list = field(default_factory=list)
    inner: bool = False     # an edit changed what the file defines, not only the module around it
    members: dict = field(default_factory=dict)     # a changed type -> ([members gained], [members lost])
    frames: set = field(default_factory=set)        # changed names that hold other definitions (a module, a class)
    frame: str = ""                                 # … the one that names the file's code (`App.Live`)
    revised: list = field(default_factory=list)     # definitions of a created file that later edits changed
    revised_why: str = ""                           # … what the agent said the first such edit was for
    messages: list = field(default_factory=list)    # what its new code sends and takes (topics, messages, events)
    brought: dict = field(default_factory=dict)     # a changed function -> the names its edits brought into it
    outline: dict = field(default_factory=dict)     # a new or changed function -> what its comments say it does
    gone: list = field(default_factory=list)        # functions its edits took out of use
    base: str = ""                                  # the file's text before the stretch's first change, when known
    made: bool = False                              # the stretch created it (a later delete undoes that)


CONTAINERS = {"module", "class", "namespace", "impl", "struct", "interface", "trait", "object"}   # what holds definitions
TERSE = 4      # definitions told of an edit of a file whose definitions are many and alike (style rules)
FRAMES = {"module", "namespace", "impl"}    # what only holds them: its change is the change of what it holds


def _short_pair(old: str, new: str) -> tuple[str, str] | None:
    """A one-line edit worth quoting whole: both sides one short line."""
    o, n = old.strip(), new.strip()
    if not o and not n or "\n" in o or "\n" in n:
        return None
    if len(o) > SHORT or len(n) > SHORT or o == n:
        return None
    return o, n


def _add(lst: list, names) -> None:
    for n in names:
        if n not in lst:
            lst.append(n)


class Changes:
    """Every change event folded per file, with its commit."""

    def __init__(self, evs: list, paths: Paths):
        self.paths = paths
        self.events: list[tuple[Change, str]] = []   # (event, relative path) of the changes that took effect
        self.commit_of: dict[int, Commit] = {}       # id(change event) -> the commit that holds it
        self.clean: set[int] = set()                 # id(change event) a later `git status` no longer listed
        self.tree: TreeStatus | None = None          # the last `git status` read whole
        self.first_tree: TreeStatus | None = None    # … and one from before the session's first change
        text: dict[str, str] = {}                    # path -> the file's text as last read or written, edits applied
        self.before: dict[int, str] = {}             # id(change) -> the file's text just before it
        self.text = text                             # path -> the file's last known text
        self._files: dict = {}
        self._facts: dict = {}                       # id(change) -> what the edit did (computed once)
        self.partial: set[str] = set()               # paths whose known text is a part read from a line on
        self.whole: set[int] = set()                 # id(change) whose text before it is the whole file
        for e in evs:
            if isinstance(e, Read) and e.text:
                p = paths.rel(e.path)
                if not e.offset:
                    text[p] = strip_numbers(e.text)
                    self.partial.discard(p)
                elif p not in text or p in self.partial:    # a part of the file: the whole, when known, stays
                    text[p] = strip_numbers(e.text)
                    self.partial.add(p)
            elif isinstance(e, Change) and e.ok and e.path and not is_temp(e.path):
                p = paths.rel(e.path)
                self.events.append((e, p))
                if p in text:
                    self.before[id(e)] = text[p]
                    if p not in self.partial:
                        self.whole.add(id(e))       # the text before it is the whole file
                if e.via == "write" and e.new:
                    text[p] = e.new
                    self.partial.discard(p)
                elif p in text and e.old and e.old in text[p]:
                    text[p] = text[p].replace(e.old, e.new, 1)
                elif e.action in (DELETE, MOVE):
                    text.pop(p, None)
        self._commits(evs)

    def _commits(self, evs: list) -> None:
        pending: list[tuple[Change, str]] = []
        staged: set[str] = set()
        staged_all = discarded = False
        home = here = branch = ""
        index = {id(e): k for k, (e, _) in enumerate(self.events)}
        for e in evs:
            if isinstance(e, Change) and id(e) in index:
                pending.append(self.events[index[id(e)]])
            elif isinstance(e, Stage):
                staged_all = staged_all or e.all
                staged.update(self.paths.rel(p) for p in e.paths)
            elif isinstance(e, Commit) and e.ok:
                named = {self.paths.rel(p) for p in e.files} | staged
                files = {p for _, p in pending}
                if e.all_changes or staged_all or not named or e.count and e.count >= len(files):
                    held = list(pending)
                else:
                    held = [(c, p) for c, p in pending if any(_same(p, n) for n in named)]
                for c, _ in held:
                    self.commit_of[id(c)] = e
                pending = [x for x in pending if x not in held]
                staged, staged_all = set(), False
                self.tree = None        # what the tree held besides may be in the commit too
            elif isinstance(e, Place):
                home = home or e.cwd
                here, branch = e.cwd or here, e.branch or branch
            elif isinstance(e, Branch):
                branch = e.name
            elif isinstance(e, Command) and DISCARD.search(e.command) and not e.failed:
                discarded = True        # changes thrown away or put aside: a clean tree then is not a commit
            elif isinstance(e, TreeStatus) and self._ours(e, e.where or here, home, branch):
                if not e.scope and not any(x for x, _ in self.events if x.at < e.at):
                    self.first_tree = e             # the tree before the session changed anything
                self.tree = e if not e.scope else self.tree
                if discarded:
                    discarded = False
                    continue
                # the tree as git saw it: a file it does not list holds no change (committed where the span
                # does not show it); only files inside the pathspecs it was given
                gone = [(c, p) for c, p in pending if inside(p)      # a file outside this tree is not in its status
                        and (not e.scope or any(_same(p, self.paths.rel(s)) for s in e.scope))
                        and not any(_same(p, _up(self.paths.rel(n))) for n in e.changed)]
                self.clean.update(id(c) for c, _ in gone)
                pending = [x for x in pending if x not in gone]

    def _ours(self, e: TreeStatus, where: str, home: str, branch: str) -> bool:
        """The status is of the tree the session works in: run at its root or where the session started
        (not `cd ../other && git status`, not another repository), on the branch the session is on."""
        if where and where != self.paths.root and self.paths.rel(where) not in (".", ""):
            return False        # run elsewhere (another checkout, a subdirectory that may be a repository of its own)
        return not (e.branch and branch and e.branch != branch)

    def files(self, start: int = 0, end: int | None = None) -> list[FileChange]:
        """The net change of each file over events with start <= at < end, in order of first change. A move
        carries the file's facts to its new path."""
        key = (start, end)
        if key in self._files:
            return self._files[key]
        acc: dict[str, _Acc] = {}
        notes = Counter(e.note for e, _ in self.events if e.note)
        for e, p in self.events:
            if e.at < start or end is not None and e.at >= end:
                continue
            a = acc.get(p)
            action = {CREATE: CREATED, DELETE: DELETED, MOVE: MOVED}.get(e.action, MODIFIED)
            if a is None:
                a = acc[p] = _Acc(p, action, e.at, e.at, base=self.before.get(id(e), ""), made=action == CREATED)
            else:
                if action == DELETED:
                    a.action = DELETED
                elif a.action == DELETED and action == CREATED:
                    a.action = MODIFIED
                elif a.action != CREATED:
                    a.action = MODIFIED if action == CREATED else action
                a.last_at = e.at
            a.edits += 1
            intent = edit_intent(e.note) if e.note else ""
            if intent and not _speaks_of(intent, p, e, notes[e.note]):
                intent = ""
            if intent and intent not in a.intents and len(a.intents) < 4 and (a.action != CREATED or a.edits == 1):
                a.intents.append(intent)      # a created file is described by what it was created for
            elif intent and a.action == CREATED and a.edits > 1 and not a.revised_why and intent not in a.intents:
                a.revised_why = intent        # … and its later edits by what the first of them was for
            if e.action == MOVE:
                dst = self.paths.rel(e.to)
                moved = acc.pop(p)
                moved.moved_from, moved.path = p, dst
                moved.action = CREATED if moved.action == CREATED else MOVED
                acc[dst] = moved
                continue
            if e.via == "write" and (e.action == CREATE or a.action == CREATED):
                defs = definitions(p, e.new)
                own = [d for d in defs if d.kind != "method"]
                top = own if len(own) > 3 else own + [d for d in defs if d.kind == "method"]   # a type and its methods
                if is_terse(p):
                    top = top[:TERSE]
                _add(a.added, [d.name for d in top])
                a.lines = len(e.new.splitlines()) if e.new else 0     # a closing newline ends the last line
                for d in top[:12]:
                    a.params[d.name] = params_of(p, e.new, d)
                    doc = doc_of(e.new, d.line)
                    if doc and all(n != d.name for n, _ in a.docs):
                        a.docs.append((d.name, doc))
                a.tests += tests_added(p, self.before.get(id(e), ""), e.new)
                _add(a.constants, constants(e.new))
                a.code.update(short_bodies(p, e.new, [d.name for d in top[:12]]))
                a.outline.update((n, (o, v)) for n, o, v in outline(p, e.new, [d.name for d in top[:12] if
                                                                                   d.name not in a.tests and
                                                                                   d.kind not in CONTAINERS | SHAPES]))
                _add(a.messages, messages(p, e.new) + tables(e.new))
            elif e.new or e.old:
                now, was = imports(p, e.new), imports(p, e.old)
                whole = self.before.get(id(e), "")     # the file before the edit: a module it named is not new
                _add(a.imports, [m for m in now if m not in was and m not in whole])
                a.imports = [m for m in a.imports if m in now or m not in was]   # taken out again: gone
                facts = self._facts.get(id(e))
                if facts is None:
                    facts = self._facts[id(e)] = edit_facts(p, e.old, e.new, self.before.get(id(e), ""))
                added, changed, removed, _ = facts
                if changed:     # the module around other changes is framing, not news
                    shapes = {d.name: d.kind for d in definitions(p, facts[3] or e.new)}
                    a.frames.update(n for n in changed if shapes.get(n) in FRAMES)
                if a.action == CREATED:     # an edit of a file this stretch created: what it revised
                    _add(a.revised, [n for n in changed if n in a.added and n not in a.frames])
                if is_terse(p):
                    added, changed = added[:TERSE], changed[:TERSE]
                _add(a.added, added)
                _add(a.changed, [n for n in changed if n not in a.added])
                _add(a.removed, [n for n in removed if n not in a.added])
                a.tests += tests_added(p, whole if e.via == "write" else e.old, e.new)   # a rewrite: against the file
                a.code.update(short_bodies(p, e.new, added + changed))   # the latest text of each
                prior = "" if a.action == CREATED else a.base or e.old     # comments it had before the stretch
                kinds_now = {d.name: d.kind for d in definitions(p, facts[3] or e.new)} if added or changed else {}
                asked = [n for n in added + changed if n not in a.frames and kinds_now.get(n) not in CONTAINERS | SHAPES]
                told = {n: (o, v) for n, o, v in outline(p, facts[3] or e.new, asked, prior)}
                for n in asked:     # the latest text of each; a created file's rewritten function: its new comments
                    if n in told:
                        a.outline[n] = told[n]
                    elif a.action == CREATED and facts[3] is not None:
                        a.outline.pop(n, None)
                if id(e) in self.whole and e.old and e.old in whole:   # what the edit took out of use
                    _add(a.gone, gone_names(e.old, e.new, whole.replace(e.old, e.new, 1)))
                a.gone = [x for x in a.gone if x not in (e.new or "")]
                had = messages(p, e.old)
                _add(a.messages, [m for m in messages(p, e.new) if m not in had] + tables(e.new, e.old))
                old_consts = dict(constants(e.old))
                _add(a.constants, [c for c in constants(e.new) if old_consts.get(c[0]) != c[1]])
                for d in definitions(p, e.new):
                    if d.name in added:
                        a.params[d.name] = params_of(p, e.new, d)
                    if d.name in added and all(n != d.name for n, _ in a.docs):
                        doc = doc_of(e.new, d.line)
                        if doc:
                            a.docs.append((d.name, doc))
                pair = _short_pair(e.old, e.new)
                kinds = {d.name: d.kind for d in definitions(p, facts[3] or e.new)} if changed and not (added or removed) else {}
                own = len(changed) == 1 and kinds.get(changed[0]) in SHAPES and \
                    any(d.name == changed[0] for d in definitions(p, e.new))      # a type's own edit: its members
                if own:
                    _members_into(a, changed[0], *members(e.old, e.new))
                elif changed and facts[3] and whole:    # types an edit changed inside: from the file before and after
                    shapes = {d.name for d in definitions(p, facts[3]) if d.kind in SHAPES}
                    was, now = bodies(p, whole), bodies(p, facts[3])
                    for t in [t for t in changed if t in shapes and t in was and t in now and t not in a.frames]:
                        _members_into(a, t, *members(was[t][2], now[t][2]))
                if len(changed) == 1 and not (added or removed) and kinds.get(changed[0]) not in FRAMES | SHAPES:
                    fresh = [x for x in new_names(e.old, e.new) if x not in a.added and x != changed[0]][:6]   # what its edit
                    if fresh:                                                              # brought into it:
                        came = [ln for ln in line_diff(e.old, e.new, 6, 120)[1] if any(x in ln for x in fresh)][:3]
                        rest = [x for x in fresh if not any(x in ln for ln in came)]    # the lines that hold them,
                        _add(a.brought.setdefault(changed[0], []), came + rest)        # the names no short line holds
                outer = bool(kinds) and all(kinds.get(n) in CONTAINERS for n in changed)   # only the module around it
                if (added or changed or removed) and not outer:
                    a.inner = True
                if pair and len(a.replaced) < 3:
                    a.replaced.append(pair)
                elif not (added or changed or removed) or outer:
                    _add(a.names, new_names(e.old, e.new))
                    if len(a.lines_out) + len(a.lines_in) < 10:
                        gone, came = line_diff(e.old, e.new)
                        _add(a.lines_out, gone)
                        _add(a.lines_in, came)
            c = self.commit_of.get(id(e))
            a.commit, a.committed_at = (c.hash or "(no hash)", c.at) if c else ("", -1)
        for a in acc.values():
            a.intents = [x for x in a.intents if not self._stale(x, a.path)]
        for a in acc.values():
            news = [n for n in a.added + a.changed if n not in a.frames]
            if news:        # "changed `App.Live`" says nothing beside what changed in it: it names the file
                a.frame = next((n for n in a.changed if n in a.frames), "")
                a.changed = [n for n in a.changed if n not in a.frames]
        out = [FileChange(path=a.path, action=a.action, added=tuple(a.added), changed=tuple(a.changed),
                          removed=tuple(n for n in a.removed if n not in a.added), replaced=tuple(a.replaced),
                          lines=a.lines, edits=a.edits, first_at=a.first_at, last_at=a.last_at, commit=a.commit,
                          committed_at=a.committed_at, moved_to=a.moved_to, names=tuple(a.names[:12]),
                          lines_out=tuple(a.lines_out[:8]) if not a.inner else (),
                          lines_in=tuple(a.lines_in[:8]) if not a.inner else (),
                          intents=tuple(a.intents), tests=tuple(a.tests), docs=tuple(a.docs[:12]),
                          params=tuple((n, x) for n, x in a.params.items() if x and n in a.added),
                          constants=tuple(a.constants[:10]),
                          moved_from=a.moved_from, imports=tuple(a.imports),
                          members=tuple((n, tuple(g), tuple(x)) for n, (g, x) in a.members.items() if g or x),
                          frame=a.frame, revised=tuple(a.revised), revised_why=a.revised_why,
                          undone=a.made and a.action == DELETED, messages=tuple(a.messages[:8]),
                          gone=tuple(x for x in a.gone if x not in a.removed),
                          brought=tuple((n, tuple(x[:6])) for n, x in a.brought.items() if n in a.changed),
                          code=tuple((n, c) for n, c in a.code.items() if n not in a.tests and n not in a.removed)[:8],
                          outline=tuple((n, o, v) for n, (o, v) in a.outline.items()
                                        if n not in a.tests and n not in a.removed)[:8])
               for a in acc.values()]
        self._files[key] = out
        return out

    def _stale(self, intent: str, path: str) -> bool:
        """The words name code an edit put into the file and a later one took out again: they describe a
        state the file no longer has ("use `Registry` in `load/1`" after the alias was removed)."""
        now = self.text.get(path)
        if now is None:
            return False
        for a, b in CODE_NAME.findall(intent):
            name = a or b
            if len(name) > 3 and name not in now and any(p == path and name in (e.new or "") for e, p in self.events):
                return True
        return False

    def uncommitted(self) -> list[FileChange]:
        """Files whose last change no commit holds, with what changed since the change before it was committed."""
        last: dict[str, bool] = {}
        for e, p in self.events:
            last[p] = id(e) in self.commit_of or id(e) in self.clean
        paths = {p for p, held in last.items() if not held and inside(p)}
        if not paths:
            return []
        first = min(e.at for e, p in self.events if p in paths and id(e) not in self.commit_of and id(e) not in self.clean)
        return [f for f in self.files(first) if f.path in paths and not f.undone]    # made and removed again: no change

    def others(self) -> tuple[str, ...]:
        """What the last whole `git status` listed as changed that no change of the session made (work from
        before the session, or of another hand): a commit of "everything" would take it too."""
        if self.tree is None or self.first_tree is None:
            return ()       # only what was there before the session began (a formatter's changes are its own)
        mine = {p for _, p in self.events}
        before = {self.paths.rel(x) for x in self.first_tree.changed}
        return tuple(n for n in (self.paths.rel(x) for x in self.tree.changed)
                     if n in before and not any(_same(p, _up(n)) for p in mine))

    def left_alike(self, paths) -> list[tuple[str, str, str, str, int]]:
        """Places an insertion was not repeated at: an edit put lines between two neighbouring lines (a
        `<th>Status</th>` between `<th>Session</th>` and `<th>Branch</th>`) and the file as it now stands still
        has that pair of neighbours elsewhere, untouched (a second table): (path, first inserted line, the line
        before, the line after, how many such places). Only for `paths` (work still open)."""
        import difflib      # only here: not on every command's import path

        out = []
        now_of: dict[str, list[str]] = {}
        for e, p in self.events:
            if p not in paths or e.via == "write" or not e.old or not e.new or p not in self.text:
                continue
            old, new = e.old.split("\n"), e.new.split("\n")
            now = now_of.get(p)
            if now is None:
                now = now_of[p] = [ln.strip() for ln in self.text[p].split("\n")]
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
                if tag != "insert" or not 0 < i1 < len(old) or j2 - j1 > 5:
                    continue
                before, after = old[i1 - 1].strip(), old[i1].strip()
                if not (_telling(before) and _telling(after)):
                    continue
                first = next((x.strip() for x in new[j1:j2] if x.strip()), "")
                places = [k for k in range(len(now) - 1) if now[k] == before and now[k + 1] == after]
                done = next((k for k in range(len(now) - 1) if now[k] == before and now[k + 1] == first), None)
                if places and first and done is not None and all(o[1] != first for o in out):
                    out.append((p, first, before, _where(now, done, places[0]), len(places)))
        return out[:3]

    def edited_after(self, at: int, code_only: bool = True) -> list[str]:
        out = []
        for e, p in self.events:
            if e.at > at and (not code_only or is_code(p)) and p not in out:
                out.append(p)
        return out


def _where(lines: list[str], done: int, other: int) -> str:
    """The line that tells the untouched place from the changed one: walking up from both, the first line
    above the other place that differs from its counterpart (`<table class="hidden-table">` over `<table>`)."""
    for j in range(1, 12):
        if other - j < 0 or done - j < 0:
            break
        mine, theirs = lines[other - j], lines[done - j]
        if mine != theirs and _telling(mine):
            return mine
    return ""


def _telling(line: str) -> bool:
    """A line that says something of its own (not `}`, `end`, `</div>`, a blank): worth finding again."""
    return len(line) >= 8 and not re.fullmatch(r"[\W_]*(?:end|else|do|</?\w+>)?[\W_]*", line)


CODE_NAME = re.compile(r"`([^`\s]+)`|\b([A-Za-z_]\w*[a-z][A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[a-z]+_[a-z_0-9]+)\b")
LINE_CITE = re.compile(r"\blines?\s+\d+|:\d+\b|\bL\d+\b")


def _members_into(a: _Acc, t: str, gained: list[str], lost: list[str]) -> None:
    """Fold one edit's member changes of type `t` into the file's: gained then lost again is neither."""
    had = a.members.setdefault(t, ([], []))
    _add(had[0], [x for x in gained if x not in had[1]])
    had[1][:] = [x for x in had[1] if x not in gained]
    _add(had[1], [x for x in lost if x not in had[0]])
    had[0][:] = [x for x in had[0] if x not in lost]


def _speaks_of(intent: str, path: str, e: Change, edits: int) -> bool:
    """Whether the words sent with an edit are about this file: they name the file or code the edit touches,
    or, naming no code, the turn made this one edit. Words naming only code the edit does not touch are
    about another file; words citing line numbers are never kept (they go stale)."""
    if LINE_CITE.search(intent):
        return False
    base = path.rsplit("/", 1)[-1]
    stem = base.split(".", 1)[0]
    low = intent.lower()
    if base.lower() in low or len(stem) > 3 and stem.lower() in low:
        return True
    body = (e.new or "") + "\n" + (e.old or "")
    named = [a or b for a, b in re.findall(r"`([^`]+)`|\b([A-Za-z_][\w.]*[A-Z_][\w.]*)\b", intent)]
    named = [w for w in named if len(w) > 3]
    if named:
        return any(w in body for w in named)
    return edits <= 1