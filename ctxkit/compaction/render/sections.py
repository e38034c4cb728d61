"""The summary's lines, written from the state alone, each with its level (what goes first when the budget
is short) and its place. Section by section: the task, where the work stands, the next step, the work
items, the requests, the steps of the session (what changed in each file, checks, errors and fixes,
choices, commits), the files, the project."""
from __future__ import annotations

import re

from ..model import (CREATED, DELETED, MOVED, NEXT_ANSWER, NEXT_CONTINUE, NEXT_DONE, NEXT_FINISH, NEXT_FIX,
                     NEXT_ITEM, NEXT_ITEM_REST, NEXT_PLAN, NEXT_REQUEST, NEXT_RUN, NEXT_RUNNING, Change, CheckRun,
                     CheckState, Command, Commit, ErrorState, FileChange, Read, Search, State, Step)
from .budget import Piece
from .phrases import check_word, code, command, cut, joined, names, plural, quote, sentence, short_hash
from .task import brief, plan_parts

SECTIONS = ["Task", "Latest request", "Current work", "Next step", "Work items", "User requests", "Project"]


class Writer:
    def __init__(self, st: State):
        self.st = st
        self.pieces: list[Piece] = []
        self.n = 0

    def add(self, section: str, text: str, level: int, group: str = "", done: bool | None = None,
            order: tuple | None = None) -> None:
        if not text:
            return
        self.n += 1
        self.pieces.append(Piece(section, text, level, order or (self.n,), done=done, group=group))

    # -- task and requests ---------------------------------------------------------------------
    def task(self) -> None:
        st = self.st
        text = st.task or (st.requests[0].text if st.requests else "")
        if not text:
            self.add("Task", "No request from the user is in this part of the session.", 0)
            return
        about = ""
        for i in st.items:
            if i.title and not i.item.isdigit() and re.search(rf"(?<![\w.-]){re.escape(i.item)}(?![\w-])", text):
                about = f" ({i.item}: “{cut(i.title, 160)}”)"
                break
        for level, cap in ((0, 300), (2, 700), (3, 1400)):
            self.add("Task", brief(text, cap) + about, level, group="task")
        latest = st.requests[-1] if st.requests else None
        if latest is not None and latest.text != text:
            for level, cap in ((0, 300), (2, 800)):
                self.add("Latest request", brief(latest.text, cap) + ("" if latest.acted else " (not acted on yet)"),
                         level, group="latest")

    def requests(self) -> None:
        reqs = self.st.requests
        if len(reqs) < 2:
            return
        for k, r in enumerate(reqs, 1):
            tag = " (queued while the agent worked)" if r.queued else ""
            g = f"req{k}"
            self.add("User requests", f"{k}. {cut(r.text, 160)}{tag}", 1, group=g)
            self.add("User requests", f"{k}. {brief(r.text, 500)}{tag}", 3, group=g)

    # -- where the work stands -----------------------------------------------------------------
    def current(self) -> None:
        st, cur = self.st, self.st.current
        step = st.steps[cur.step] if 0 <= cur.step < len(st.steps) else None
        if st.outcome == "submitted":
            self.add("Current work", "The work was submitted" + (f": {cut(st.outcome_text, 200)}" if st.outcome_text else "."), 0)
        elif st.outcome == "transferred":
            self.add("Current work", "The conversation was handed to a human agent" +
                     (f": {cut(st.outcome_text, 300)}" if st.outcome_text else "."), 0)
        item = in_progress(st)
        if st.outcome:
            pass
        elif item is not None:
            part = next((p for p in st.items if p.item == item.parent), None)
            self.add("Current work", f"Working on {item_name(item)}, in progress" +
                     (f" (part of {item_name(part)})" if part is not None else "") + ".", 0)
            label = f"task #{item.item}" if item.tracker == "tasks" else item.item
            if item.summary:
                self.add("Current work", f"What {label} asks: {cut(item.summary, 400)}", 1, group="itemsum")
                self.add("Current work", f"What {label} asks: {cut(item.summary, 900)}", 3, group="itemsum")
            if item.done_when:
                self.add("Current work", f"{label} is done when: " + "; ".join(cut(x, 160) for x in item.done_when[:4]) + ".",
                         1, group="dod")
            missing = [p for p in item.files if not any(same_file(f.path, p) for f in st.files)]
            if missing:
                self.add("Current work", f"Files {label} names that no change touched yet: {names(missing, 6)}.", 1)
        elif step is not None and not step.done and step.title:
            self.add("Current work", f"Working on: {cut(step.title, 200)}.", 0)
        elif step is not None and step.done:
            self.add("Current work", f"The last step is finished: {cut(step.title, 160)}"
                     + (f" (committed {code(short_hash(step.commits[-1].hash))})" if step.commits and step.commits[-1].hash else "")
                     + ".", 0)
        self._checks_now()
        if cur.uncommitted:
            paths = [f.path for f in cur.uncommitted]
            label = "Not committed" if st.env.commits or st.env.branch else "Changed"
            self.add("Current work", f"{label}: {plural(len(paths), 'file')}: {names(paths, 6)}.", 0, group="unc")
            self.add("Current work", f"{label}: {plural(len(paths), 'file')}: {names(paths, 40)}.", 2, group="unc")
        elif st.files and st.commits:
            self.add("Current work", "Every change is committed"
                     + (f" (last commit {code(short_hash(st.commits[-1].hash))})" if st.commits[-1].hash else "") + ".", 1)
        if cur.running:
            self.add("Current work", f"Still running when the span ends: {names(cur.running, 3)}.", 0)
        if cur.waiting:
            self.add("Current work", f"The agent asked the user and waits for the answer: {quote(cur.waiting, 300)}", 0)
        last = self._last_action()
        if last:
            self.add("Current work", last, 1)
        if cur.words and not (st.raw_from >= 0 and cur.said_at >= st.raw_from):
            when = "before its last action" if cur.said_before_last else "at the end"
            self.add("Current work", f"The agent's last words ({when}): " + " ".join(quote(w, 240) for w in cur.words[:3]),
                     2)
        if st.env.cwd or st.env.branch:
            where = joined([f"directory {code(st.env.cwd)}" if st.env.cwd else "",
                            f"git branch {code(st.env.branch)}" if st.env.branch else ""])
            self.add("Current work", f"Where: {where}.", 1)

    def _checks_now(self) -> None:
        st = self.st
        latest: dict[str, CheckState] = {}
        for c in st.checks:
            latest[c.kind] = c
        shown = 0
        for kind, c in sorted(latest.items(), key=lambda kv: -kv[1].at):
            if c.kind == "format" and c.passed:
                continue
            self.add("Current work", sentence(check_line(c)), 0 if shown < 2 else 1)
            shown += 1
        if not shown and st.kind == "code" and st.files:
            self.add("Current work", "No test, lint or build ran in this part of the session.", 0)

    def _last_action(self) -> str:
        e = self.st.current.last
        if e is None:
            return ""
        if isinstance(e, CheckRun):
            return ""   # said in the checks line
        if isinstance(e, Change):
            return f"Last action: {'created' if e.action == 'create' else 'edited'} {code(rel(self.st, e.path))}" + \
                ("" if e.ok else " (the tool refused the edit: the file is unchanged)") + "."
        if isinstance(e, Command):
            res = "failed" if e.failed else ("still running" if e.running else "succeeded")
            tail = f": {code(cut(e.error_lines[0], 200))}" if e.failed and e.error_lines else ""
            return f"Last action: ran {command(e.command, 140)} ({res}{tail})."
        if isinstance(e, Commit):
            return f"Last action: committed {code(short_hash(e.hash))} “{cut(e.message.split(chr(10))[0], 120)}”."
        if isinstance(e, Read):
            return f"Last action: read {code(rel(self.st, e.path))}."
        if isinstance(e, Search):
            return f"Last action: searched for {code(cut(e.pattern, 80))}" + (f" in {code(rel(self.st, e.path))}" if e.path else "") + "."
        return ""

    # -- next step -----------------------------------------------------------------------------
    def next_step(self) -> None:
        st, n = self.st, self.st.next
        text = next_text(st)
        then = then_text(st)
        self.add("Next step", text + (f" Then: {then}" if then else ""), 0, group="next")
        if then:
            self.add("Next step", text, 0, group="next")
        if st.related:
            shown = [f"{code(nm)} ({code(rel(st, p))})" for nm, p in st.related[:6]]
            self.add("Next step", "What the session already saw that bears on it: " + ", ".join(shown) + ".", 1)
        for k, x in enumerate(st.related_said[:3]):
            self.add("Next step", f"The agent said earlier: {quote(x, 260)}", 2 if k == 0 else 3)

    # -- work items and plan -------------------------------------------------------------------
    def items(self) -> None:
        st = self.st
        for i in st.items:
            state = {"closed": "done", "in_progress": "in progress", "open": "open"}[i.status]
            base = f"{item_name(i)} — {state}"
            g = f"item{i.item}"
            self.add("Work items", base, 1, group=g, done=i.status == "closed")
            about = i.summary or (i.detail if len(i.detail) < 400 else "")
            if about:
                self.add("Work items", f"{base}: {cut(about, 240)}", 2 if i.status != "closed" else 3, group=g,
                         done=i.status == "closed")
        for k, (text, status) in enumerate(st.plan):
            g = f"plan{k}"
            mark = {"completed": "done", "in_progress": "in progress"}.get(status, "to do")
            self.add("Work items", f"{cut(text, 200)} — {mark}", 1, group=g, done=status == "completed")

    # -- steps ---------------------------------------------------------------------------------
    def steps(self) -> None:
        st = self.st
        shown = [s for s in st.steps if s.files or s.reads or s.errors or s.checks or s.commits or s.decisions]
        total = len(shown)
        for k, s in enumerate(shown, 1):
            name = step_name(k, s, total, st)
            recent = k >= total - 1
            order = (1000 + k,)
            lvl = 1 if recent else 2
            files = [f for f in s.files]
            short = f"{cut(step_title(s, st), 90)} ({step_status(k, s, total)})"
            self.add("Progress", short, 2, order=(k,))
            self.pieces[-1].redundant_with = (f"s{k}head",)
            facts = [file_fact(f) for f in files]
            if files:
                paths = [f.path for f in files]
                self.add(name, f"Changed {names(paths, 10)}.", lvl, group=f"s{k}head", order=order + (1,))
                self.pieces[-1].redundant_with = tuple(f"s{k}f{j}" for j in range(len(files)))
            elif s.reads:
                self.add(name, f"Read {names(s.reads, 8)}; changed nothing.", lvl + 1, group=f"s{k}head",
                         order=order + (1,))
            elif s.commits or s.checks or s.errors:
                self.add(name, "Changed no file.", lvl + 1, group=f"s{k}head", order=order + (1,))
            for j, fact in enumerate(facts):
                if fact:
                    self.add(name, fact, lvl + 1, group=f"s{k}f{j}", order=order + (2, j))
                    more = file_fact(files[j], 20)
                    if more != fact:
                        self.add(name, more, lvl + 3, group=f"s{k}f{j}", order=order + (2, j))
            for j, e in enumerate(s.errors):
                self.add(name, error_line(e, st, detail=False), lvl + 1, group=f"s{k}e{j}", order=order + (3, j))
                self.add(name, error_line(e, st, detail=True), lvl + 2, group=f"s{k}e{j}", order=order + (3, j))
            if s.checks:
                self.add(name, "Checks: " + "; ".join(check_history(c) for c in s.checks) + ".", lvl + 1,
                         order=order + (4,))
            for j, d in enumerate(s.decisions[:3]):
                self.add(name, f"Chose: {cut(d.text, 240)}" + (f" — {cut(d.why, 200)}" if d.why else ""),
                         lvl + 1 if j == 0 else lvl + 2, order=order + (5, j))
            for j, c in enumerate(s.commits):
                msg, _, body = c.message.partition("\n")
                line = f"Committed {code(short_hash(c.hash)) if c.hash else ''} “{cut(msg, 160)}”".replace("  ", " ")
                self.add(name, line + ".", lvl, group=f"s{k}c{j}", order=order + (6, j))
                body = " ".join(x for x in body.split() if x)
                body = re.sub(r"Co-Authored-By:.*$|🤖 Generated with.*$", "", body, flags=re.I).strip()
                if body:
                    self.add(name, f"{line}: {whole_sentences(body, 400)}", lvl + 2, group=f"s{k}c{j}", order=order + (6, j))
            if s.reads and files:
                self.add(name, f"Read: {names(s.reads, 12)}.", lvl + 3, order=order + (8,))
            looked = [w for _, w in s.searches if w and w not in s.reads]
            if looked:
                self.add(name, f"Also looked in {names(list(dict.fromkeys(looked)), 8)}.", lvl + 4, order=order + (9,))
            errs = [x for x in s.tool_errors if not re.search(r"sibling tool call", x[2], re.I)]
            if errs:
                shown = [f"{t} {code(w)}: {cut(x, 100)}" if w else f"{t}: {cut(x, 100)}" for t, w, x in errs[:4]]
                self.add(name, "Tool calls that failed: " + "; ".join(shown) + ".", lvl + 2, order=order + (3, 99))
            if s.report and s.report != st.current.words:
                self.add(name, "The agent's account: " + " ".join(quote(x, 220) for x in s.report[:3]), lvl + 2,
                         order=order + (7,))

    # -- files and project ---------------------------------------------------------------------
    def files(self) -> None:
        st = self.st
        changed = {f.path for f in st.files}
        read = [p for p in st.reads if p not in changed]
        if read:
            self.add("Files", f"Read, not changed: {names(read, 12)}.", 3, group="read")
            self.add("Files", f"Read, not changed: {names(read, 60)}.", 4, group="read")
        deleted = [f.path for f in st.files if f.action == DELETED]
        if deleted:
            self.add("Files", f"Deleted: {names(deleted, 20)}.", 2)

    def project(self) -> None:
        env = self.st.env
        parts = []
        if env.languages:
            parts.append(", ".join(env.languages[:4]))
        if env.check_commands:
            parts.append("checks run: " + names(env.check_commands[:4], 4))
        if env.finish:
            parts.append("before committing the agent ran " + names(env.finish, 4))
        if parts:
            self.add("Project", sentence("; ".join(parts)), 3)


def same_file(a: str, b: str) -> bool:
    """Two paths for one file, or for files of the same name (a spec naming the file another folder holds)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a) or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]


def rel(st: State, path: str) -> str:
    root = st.env.cwd.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    return path


def whole_sentences(text: str, n: int) -> str:
    """As many whole sentences (or list items) of `text` as fit in `n` characters."""
    parts = re.split(r"(?<=[.!?])\s+|\s+(?=- )", " ".join(text.split()))
    out = ""
    for p in parts:
        if len(out) + len(p) + 1 > n:
            break
        out = f"{out} {p}".strip()
    return out or cut(text, n)


def in_progress(st: State):
    """The work item in progress (the innermost: never an epic whose child is in progress)."""
    parents = {i.parent for i in st.items if i.parent}
    return next((i for i in reversed(st.items) if i.status == "in_progress" and i.item not in parents), None)


def item_name(i) -> str:
    if i.tracker == "tasks":
        label = f"task #{i.item}"
    elif i.tracker == "github":
        label = f"issue {i.item}"
    else:
        label = i.item
    return f"{label} “{cut(i.title, 160)}”" if i.title else label


def step_status(k: int, s: Step, total: int) -> str:
    busy = s.files or s.commits or s.checks
    status = "done" if s.done else ("in progress" if k == total else "left unfinished" if busy else "read only")
    if s.commits and s.commits[-1].hash:
        status += f", committed {short_hash(s.commits[-1].hash)}"
    elif s.files and not s.commits and any(not f.commit for f in s.files):
        status += ", not committed" if s.done or k == total else ""
    return status


def step_title(s: Step, st: State) -> str:
    title = s.title
    if s.source == "item" and s.item:
        it = next((i for i in st.items if i.item == s.item), None)
        title = item_name(it) if it else s.title
    return brief(title, 110) if title else "work"


def step_name(k: int, s: Step, total: int, st: State) -> str:
    return f"Step {k}: {step_title(s, st)} ({step_status(k, s, total)})"


KIND_NAME = {"test": "Tests", "lint": "Lint", "typecheck": "Type check", "build": "Build", "format": "Format check"}


def check_line(c: CheckState) -> str:
    s = f"{KIND_NAME.get(c.kind, 'Check')}: {command(c.command, 110)} {check_word(c.passed)}"
    if c.summary and c.summary != "no output":
        s += f" ({cut(c.summary, 120)})"
    if c.passed is False and c.failures:
        s += f"; failing: {names(c.failures, 6)}"
    elif c.passed is False and c.errors:
        s += f": {code(cut(c.errors[0], 200))}"
    if c.passed is False and not c.failures and c.truncated:
        s += "; the output was cut by a filter before the failures, so which ones failed is not in it"
    if c.edited_after:
        s += f", before the last edits (not run since; changed after it: {names(c.edited_after, 3)})"
    else:
        s += ", after the last edit"
    return s


def check_history(c: CheckState) -> str:
    hist = [h for h in c.history if h is not None]
    runs = ""
    if len(hist) > 1:
        runs = " → ".join(check_word(h) for h in hist[-4:])
        return f"{code(c.runner)} {runs}"
    return f"{code(c.runner)} {check_word(c.passed)}" + (f" ({cut(c.summary, 80)})" if c.summary and c.summary != "no output" else "")


def file_fact(f: FileChange, n: int = 10) -> str:
    """What changed in one file: what it is for (the agent's words), the definitions it gained, changed or
    lost (with their doc comments), the tests it added, its short replacements."""
    p = code(f.path)
    why = "; ".join(cut(x, 160) for x in f.intents[:2 if n <= 10 else 4])
    docs = {k: _doc(k, v) for k, v in f.docs}
    width = 60 if n <= 10 else 110
    defs = [f"{code(a)} ({cut(docs[a], width)})" if docs.get(a) and (n > 10 or k < 6) else code(a)
            for k, a in enumerate(f.added[:n])]
    more = f" and {len(f.added) - n} more" if len(f.added) > n else ""
    tests = f"; {plural(len(f.tests), 'test')}: {names(f.tests, 6 if n <= 10 else 12)}" if f.tests else ""
    if f.constants:
        tests += "; sets " + ", ".join(code(f"{k} {v}" if not v.startswith("=") else f"{k}{v}") for k, v in f.constants[:6])
    if f.action == CREATED:
        what = f" ({plural(f.lines, 'line')})" if f.lines else ""
        moved = f", moved here from {code(f.moved_from)}" if f.moved_from else ""
        body = f": defines {', '.join(defs)}{more}" if defs and not f.tests else ""
        return sentence(f"Created {p}{what}{moved}" + (f" — {why}" if why else "") + body + tests)
    if f.action == DELETED:
        return f"Deleted {p}."
    if f.action == MOVED:
        return sentence(f"Moved {code(f.moved_from)} to {p}" + (f" — {why}" if why else ""))
    parts = []
    if f.added and not f.tests:
        parts.append(f"added {', '.join(defs)}{more}")
    if f.changed:
        parts.append(f"changed {names(f.changed, n)}")
    if f.removed:
        parts.append(f"removed {names(f.removed, n)}")
    if f.replaced:
        parts.append("replaced " + joined([f"{code(o)} with {code(x)}" if o else f"added {code(x)}"
                                           for o, x in f.replaced[:2]]))
    if not (f.added or f.changed or f.removed or f.replaced):
        if f.lines_out:
            parts.append("removed the line" + ("s " if len(f.lines_out) > 1 else " ") + names(f.lines_out, 3))
        if f.lines_in:
            parts.append("added the line" + ("s " if len(f.lines_in) > 1 else " ") + names(f.lines_in, 3))
        elif f.names:
            parts.append(f"brought in {names(f.names, min(n, 8))}")
    if not parts and not why and not tests:
        return ""
    head = f"Edited {p}" + (f" — {why}" if why else "")
    return sentence(head + (": " + "; ".join(parts) if parts else "") + tests)


def _doc(name: str, doc: str) -> str:
    """A doc comment without the name it starts with ("isX checks …" -> "checks …") and lint directives."""
    d = doc.strip()
    if re.match(r"^(?:nolint|eslint|noqa|type:|pylint|@ts-)", d, re.I):
        return ""
    base = name.split("/")[0].split(".")[-1]
    if d.startswith(base + " "):
        d = d[len(base) + 1:]
    return d.rstrip(".")


def error_line(e: ErrorState, st: State, detail: bool) -> str:
    src = command(e.source, 70)
    text = e.text
    m = re.match(r"^(\S+/)([^/\s:]+:\d+)", text)
    if m:
        text = text[len(m.group(1)):]   # `dir/file.go:12:3: …` -> `file.go:12:3: …`: the fix names the path
    s = f"Error from {src}: {code(cut(text, 220))}"
    if e.repeats > 1:
        s += f" ({e.repeats} times)"
    if e.fixed_at >= 0:
        if e.fix_how:
            o, x = e.fix_how[0]
            how = f"{code(o)} → {code(x)}" if o and x else (f"removed {code(o)}" if o else f"added {code(x)}")
            fixed = f"fixed in {code(rel(st, e.fix_change))} ({how})"
        elif e.fix_change:
            fixed = f"fixed by editing {code(rel(st, e.fix_change))}"
        elif e.fix_files:
            fixed = f"fixed by editing {names([rel(st, p) for p in e.fix_files], 3)}"
        else:
            fixed = "cleared"
        s += f" → {fixed}; the next run {'passed' if e.kind else 'succeeded'}"
    else:
        s += " → still open"
    if detail and e.cause:
        s += f". Why: {quote(e.cause, 240)}"
    elif detail and e.fix:
        s += f". Fix: {quote(e.fix, 240)}"
    return sentence(s)


def next_text(st: State) -> str:
    n = st.next
    if n.kind == NEXT_REQUEST:
        return f"Do what the user asked last; the agent has not started on it: {quote(n.target, 500)}"
    if n.kind == NEXT_ANSWER:
        return f"Wait for the user's answer to the agent's question ({quote(n.target, 240)}), then go on as they say."
    if n.kind == NEXT_RUNNING:
        return f"Read the result of {command(n.target)}, which was still running, and act on it."
    if n.kind == NEXT_FIX:
        check = next((c for c in reversed(st.checks) if c.command == n.target), None)
        kind = {"test": "failing tests", "lint": "lint errors", "typecheck": "type errors", "build": "build errors",
                "format": "formatting"}.get(n.title, "failures")
        if check is not None and not check.failures and check.truncated and check.passed is False:
            return (f"Find and fix the {kind}: {command(n.target)} ended in {code(cut(check.summary or 'a failure', 140))}, "
                    f"but its output was cut by a filter before the failing ones; run it again without the filter to "
                    f"see them, fix them, and run it until it passes.")
        what = names([d for d in n.detail], 6) if n.detail else "the failures"
        return f"Fix the {kind} of {command(n.target)} ({what}), then run it again until it passes."
    if n.kind == NEXT_RUN:
        cmds = [n.target] + [d for d in n.detail if " " in d and not d.startswith(("cmd/", "src/"))][:2]
        files = [d for d in n.detail if d not in cmds]
        return (f"Run {names(cmds, 3)} again: code changed since {'they' if len(cmds) > 1 else 'it'} last ran"
                + (f" ({names(files, 4)})" if files else "") + ".")
    if n.kind == NEXT_ITEM_REST:
        it = next((i for i in st.items if i.item == n.target), None)
        label = item_name(it) if it else n.target
        rest = f" What is left of its plan: {names(n.detail, 6)}." if n.detail else ""
        return f"Finish {label}, in progress.{rest}"
    if n.kind == NEXT_PLAN:
        return f"Carry on with the plan step {quote(n.target, 240)}."
    if n.kind == NEXT_FINISH:
        how = f"run {names(n.detail, 3)}, then " if n.detail else ""
        return f"Finish the uncommitted work ({n.target}) as this project does: {how}commit it."
    if n.kind == NEXT_ITEM:
        it = next((i for i in st.items if i.item == n.target), None)
        return f"Start the next open work item: {item_name(it) if it else n.target}."
    if n.kind == NEXT_CONTINUE:
        return f"Go on as the agent said it would: {quote(n.target, 300)}"
    if st.outcome == "submitted":
        return "Nothing: the work was submitted."
    if st.outcome == "transferred":
        return "Nothing for the agent: the conversation is with a human agent now."
    return "The work asked for is done: wait for the user's next request."


def then_text(st: State) -> str:
    """The open work after the next step: finishing the item in progress the way the earlier ones were
    finished, then the next open item or plan step."""
    n = st.next
    if n.kind in (NEXT_ITEM, NEXT_PLAN, NEXT_ANSWER, NEXT_DONE, NEXT_CONTINUE, NEXT_REQUEST):
        return ""
    parts = []
    current = in_progress(st)
    if current is not None and n.kind in (NEXT_FIX, NEXT_RUN, NEXT_RUNNING):
        missing = [p for p in current.files if not any(same_file(f.path, p) for f in st.files)]
        if missing:
            parts.append(f"finish {current.item}: it names files no change touched yet ({names(missing, 4)})")
    if current is not None and n.kind in (NEXT_FIX, NEXT_RUN, NEXT_RUNNING, NEXT_ITEM_REST):
        how = []
        if st.env.closes_items:
            how.append(f"close {current.item}")
        if st.env.commits:
            forced = [p for p in st.env.forced if any(f.path == p for f in st.current.uncommitted)]
            how.append("commit" + (f" (stage {names(forced, 2)} with `git add -f`: git ignores it)" if forced else ""))
        if st.env.pushes:
            how.append("push")
        if how:
            parts.append(f"{joined(how)} as the earlier items were")
    elif n.kind in (NEXT_FIX, NEXT_RUN) and st.current.uncommitted and st.env.commits:
        parts.append("commit the work, as the project does")
    parents = {i.parent for i in st.items if i.parent}
    nxt = next((i for i in st.items if i.status == "open" and i.item not in parents), None)
    if nxt is not None and (n.kind != NEXT_ITEM_REST or nxt.item != n.target):
        how = ""
        if nxt.summary or nxt.detail:
            steps = plan_parts(nxt.detail)
            how = f" ({names(steps, 3)})" if steps else f" ({cut(nxt.summary or nxt.detail, 160)})"
        parts.append(f"the next open item, {item_name(nxt)}{how}")
    else:
        step = next((t for t, s in st.plan if s == "pending"), None)
        if step and n.kind != NEXT_PLAN:
            parts.append(f"the next plan step, {quote(step, 200)}")
    return sentence("; then ".join(parts)) if parts else ""
