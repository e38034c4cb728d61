"""The summary's lines, written from the state alone, each with its level (what goes first when the budget
is short) and its place. Section by section: the task, where the work stands, the next step, the work
items, the requests, the steps of the session (what changed in each file, checks, errors and fixes,
choices, commits), the files, the project."""
from __future__ import annotations

import re
from dataclasses import replace

from ..model import CREATED, DELETED, Change, CheckRun, CheckState, Command, Commit, Read, Search, State
from .budget import Piece
from .phrases import (bare_commands, code, command, cut, joined, names, plural, quote, unlabelled, sentence, short_hash,
                      whole_sentences)
from .facts import (check_history, check_line, ended, error_line, grouped, file_fact, in_progress, item_name, rel, same_file,
                    step_name)
from .next import already_parts, next_text, then_text
from .task import brief, plan_outline, plan_part

BINDING = re.compile(r"decision|constraint|requirement", re.I)     # a plan's part that binds the work
SECTIONS = ["Task", "Latest request", "Current work", "Next step", "Plan", "Work items", "User requests", "Project"]


class Writer:
    def __init__(self, st: State, full: bool = True):
        self.st = st
        self.full = full        # a whole CONTEXT.md: every file on its own line; a summary lists them short
        self.changed = {f.path for f in st.files}
        self.pieces: list[Piece] = []
        self.n = 0

    def add(self, section: str, text: str, level: int, group: str = "", done: bool | None = None,
            order: tuple | None = None, rank: tuple = ()) -> None:
        if not text:
            return
        self.n += 1
        self.pieces.append(Piece(section, text, level, order or (self.n,), done=done, group=group, rank=rank))

    # -- task and requests ---------------------------------------------------------------------
    def task(self) -> None:
        st = self.st
        text = st.task or (st.requests[0].text if st.requests else "")
        if not text:
            self.add("Task", "None: no user request found in this part of the session.", 0)
            return
        about = ""
        for i in st.items:
            if i.title and not i.item.isdigit() and re.search(rf"(?<![\w.-]){re.escape(i.item)}(?![\w-])", text):
                about = f" ({i.item}: “{cut(i.title, 160)}”)"
                break
        outline = plan_outline(text) if len(text) > 400 else None
        if outline:     # a pasted plan: its head as the task, each part on a line of its own
            head, parts = outline
            self.add("Task", cut(head, 500) + about, 0, group="task")
            now = self._files_now()
            for k, (h, short, long, role) in enumerate(parts):
                first = {"note": 3, "check": 2}.get(role, 2)   # what the steps rest on, after the steps …
                if role == "note" and BINDING.search(h):
                    first = 2       # … but the decisions and constraints the user set bind them: with the steps
                if role == "step" and any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", h + long) for n in now):
                    first, long = 0, plan_part(text, h, 1200) or long    # the part the work in progress carries out:
                                                                               # told at length first
                self.add("Plan", cut(h, 160) + short, first, group=f"plan-part{k}", order=(k,))
                if long != short:
                    self.add("Plan", cut(h, 160) + long, first + (1 if role in ("check", "note") else 2),
                             group=f"plan-part{k}", order=(k,))
        else:
            req = next((r for r in st.requests if r.text == text), None)
            via = f" (asked through {code('/' + req.command.lstrip('/'))})" if req is not None and req.command and \
                req.command.lstrip("/") not in text[:200] else ""    # a skill's arguments: the skill says what to do
            for level, cap in ((0, 300), (2, 700), (3, 1400)):
                self.add("Task", brief(text, cap) + via + about, level, group="task")
        latest = st.requests[-1] if st.requests else None
        if latest is not None and latest.text != text:
            for level, cap in ((0, 300), (2, 800)):
                self.add("Latest request", brief(latest.text, cap) + ("" if latest.acted else " (not acted on yet)"),
                         level, group="latest")

    def _files_now(self) -> set[str]:
        """The names of the files the work in progress changes or its item names."""
        st = self.st
        step = st.steps[st.current.step] if 0 <= st.current.step < len(st.steps) else None
        paths = [f.path for f in step.files] if step is not None and not step.done else []
        item = in_progress(st)
        paths += list(item.files) if item is not None else []
        return {p.rsplit("/", 1)[-1] for p in paths if "." in p.rsplit("/", 1)[-1]}

    def requests(self) -> None:
        reqs = self.st.requests
        if len(reqs) < 2:
            return
        task = self.st.task or reqs[0].text
        if len(reqs) == 2 and reqs[0].text == task and reqs[1].text != task:
            return      # the task and the latest request, each told above: nothing to list
        told: list[str] = []
        for k, r in enumerate(reqs, 1):
            same = " ".join(r.text.split())[:300]
            if same in told:
                continue        # the same request sent again (a retry, a re-send): told once
            told.append(same)
            tag = " (queued while the agent worked)" if r.queued else ""
            g = f"req{k}"
            if r.text == task and len(r.text) > 160:
                self.add("User requests", f"{k}. The task above.", 1, group=g)
                continue
            if k == len(reqs) and r.text != task and len(r.text) > 160:     # told whole under Latest request
                self.add("User requests", f"{k}. The latest request above{tag}.", 1, group=g)
                continue
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
                self.add("Current work", f"{label} is done when: " + "; ".join(cut(x, 160).rstrip(".;") for x in item.done_when[:4]) + ".",
                         1, group="dod")
            missing = [p for p in item.files if not any(same_file(f.path, p) for f in st.files)]
            if missing:
                self.add("Current work", f"Files {label} names that no change touched yet: {names(missing, 6)}.", 1)
        elif step is not None and not step.done and step.title:
            latest = st.requests[-1] if st.requests else None
            if latest is not None and not latest.acted and step.title == latest.text and len(st.requests) > 1:
                self.add("Current work", "The latest request above is not started yet; the work before it is "
                         "finished.", 0)
            elif ended(st):
                self.add("Current work", f"The last step is finished: {cut(step.title, 200)}.", 0)
            else:
                self.add("Current work", f"Working on: {cut(step.title, 200)}.", 0)
        elif step is not None and step.done:
            last = step.commits[-1] if step.commits else None
            if last is not None and last.hash and step.title == last.message.split("\n", 1)[0]:
                self.add("Current work", f"The last step is finished and committed ({code(short_hash(last.hash))}).", 0)
            else:
                self.add("Current work", f"The last step is finished: {cut(step.title, 160)}"
                         + (f" (committed {code(short_hash(last.hash))})" if last is not None and last.hash else "")
                         + ".", 0)
        self._checks_now()
        if cur.uncommitted:
            paths = [f.path for f in cur.uncommitted]
            label = "Not committed" if st.env.commits or st.env.branch else "Changed"
            every = {f.path for f in st.files}
            if len(paths) > 6 and every <= set(paths) and not st.commits:   # the steps name them all
                self.add("Current work", f"{label}: all {plural(len(paths), 'file')} the steps below changed; "
                         "nothing was committed in this session.", 0, group="unc")
            else:
                self.add("Current work", f"{label}: {plural(len(paths), 'file')}: {names(paths, 6)}.", 0, group="unc")
                self.add("Current work", f"{label}: {plural(len(paths), 'file')}: {names(paths, 40)}.", 2, group="unc")
            for p, first, before, mark, n in cur.left_alike:     # a change made at one of like places, not the rest
                there = f"the like place under {code(cut(mark, 80))}" if mark and n == 1 else \
                    ("the other like place" if n == 1 else f"{n} other like places")
                self.add("Current work", f"Not done everywhere yet: in {code(rel(st, p))} an edit added "
                         f"{code(cut(first, 80))} after {code(cut(before, 60))}, but not at {there}.", 1)
        elif st.files and cur.tree_clean and any(not f.commit and not f.undone for f in st.files):   # clean by git's word
            last = next((c.hash for c in reversed(st.commits) if c.hash), "")
            self.add("Current work", "Nothing the session changed is left uncommitted: the last `git status` showed none "
                     "of its files" + (f" (last commit seen: {code(short_hash(last))})" if last else "") + ".", 1)
        elif st.files and st.commits:
            self.add("Current work", "Every change the session made is committed"
                     + (f" (last commit {code(short_hash(st.commits[-1].hash))})" if st.commits[-1].hash else "") + ".", 1)
        if cur.others:
            self.add("Current work", "Other changes in the working tree, not made by this session (the last `git status`; "
                     f"kept out of its commits): {plural(len(cur.others), 'path')}: {names(cur.others, 8)}.", 1)
        if cur.running:
            self.add("Current work", f"Still running when the span ends: {names(cur.running, 3)}.", 0)
        if cur.waiting:
            self.add("Current work", f"The agent asked the user and waits for the answer: {quote(cur.waiting, 300)}", 0)
        last = self._last_action()
        if last:
            self.add("Current work", last, 1)
        if cur.words and not (st.raw_from >= 0 and cur.said_at >= st.raw_from) and st.kind not in ("explore", "research"):
            when = "before its last action" if cur.said_before_last else "at the end"
            for k, w in enumerate(cur.words[:3]):     # each point whole, on its own line; who said it, once
                self.add("Current work", (f"The agent's last words ({when}): " if k == 0 else "") +
                         quote(w if k == 0 else unlabelled(w, cur.words[k - 1]), 380), 2)
        if st.env.cwd or st.env.branch:
            where = joined([f"directory {code(st.env.cwd)}" if st.env.cwd else "",
                            f"git branch {code(st.env.branch)}" if st.env.branch else ""])
            lacks = f"; the shell has no {names(st.env.lacks, 4)}" if st.env.lacks else ""
            now = st.env.ran_in.rstrip("/")
            if now and st.env.cwd and now != st.env.cwd.rstrip("/") and not now.startswith(st.env.cwd.rstrip("/") + "/"):
                lacks += f"; its last commands ran in {code(now)}"
            self.add("Current work", f"Where: {where}{lacks}.", 1)

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
            res = "no result recorded: how it went is not known" if e.no_result else \
                "failed" if e.failed else ("still running" if e.running else "succeeded")
            tail = f": {code(cut(e.error_lines[0], 200))}" if e.failed and e.error_lines else ""
            return f"Last action: ran {command(e.command, 140)} ({res}{tail})."
        if isinstance(e, Commit):
            return "Last action: the commit of the last step." if e.hash else "Last action: a commit."
        if isinstance(e, Read):
            return f"Last action: read {code(rel(self.st, e.path))}."
        if isinstance(e, Search):
            found = self.st.current.found
            where = f" in {code(rel(self.st, e.path))}" if e.path and not found.startswith(("only in", "in ")) else ""
            return f"Last action: searched for {code(cut(e.pattern, 80))}{where}" + (f"; found {found}" if found else "") + "."
        return ""

    # -- next step -----------------------------------------------------------------------------
    def next_step(self) -> None:
        st = self.st
        text = next_text(st)
        then = then_text(st)
        self.add("Next step", text + (f" Then: {then}" if then else ""), 0, group="next")
        if then:
            self.add("Next step", text, 0, group="next")
        reach = already_parts(st)[1]     # the next step tells how the code reaches it: the rest after it
        if st.related:
            shown = [f"{code(nm)} ({code(rel(st, p))})" for nm, p in st.related[:6]]
            self.add("Next step", "What the session already saw that bears on it: " + ", ".join(shown) + ".",
                     4 if reach else 1)
        if st.related_notes:
            where: dict[tuple[str, str], list[str]] = {}
            for p, w, n, calls in st.related_notes:     # each comment with the calls of the code it heads
                where.setdefault((p, w), []).append(quote(n, 200) + (f" (then {names(list(calls), 2)})" if calls else ""))
            for k, ((p, w), said) in enumerate(where.items()):
                head = f"What the code does about it now (its comments), in {code(rel(st, p))}" + (f" ({code(w)})" if w else "")
                self.add("Next step", f"{head}: {said[0]}", 1 if k < 2 else 2, group=f"note{k}")
                self.add("Next step", f"{head}: " + " ".join(said), 2, group=f"note{k}")
        if st.related_calls:
            deeper = 3 if reach else 0     # the next step tells the gist: the whole graph after
            for n, level in ((2, 1 + deeper), (len(st.related_calls), 2 + deeper)):
                by_path: dict[str, list[str]] = {}
                for c, p, callees, by in st.related_calls[:n]:
                    by_path.setdefault(rel(st, p), []).append(f"{code(c)} calls {names(list(callees), 5)}" +
                                                              (f" and is called by {names(list(by), 6)}" if by else ""))
                told = "; ".join(f"in {code(p)}, " + "; ".join(xs) for p, xs in by_path.items())
                self.add("Next step", f"How that code connects: {told}.", level, group="calls")
        kept = [x for at, x in st.related_said if not 0 <= st.raw_from <= at     # the raw tail says it itself,
                and not any(x in w for w in st.current.words[:3])]                # the last words are told above
        for k, x in enumerate(kept[:3]):
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
            told = i.status == "closed" and any(s.item == i.item for s in st.steps)    # a step tells its work at length
            if i.status == "closed" and i.closed_how:     # what was done says more than what was asked
                self.add("Work items", f"{base}: {whole_sentences(i.closed_how, 260)}", 3 if told else 2, group=g, done=True)
            elif about:
                self.add("Work items", f"{base}: {whole_sentences(about, 240)}", 2 if i.status != "closed" else
                         4 if told else 3, group=g, done=i.status == "closed")
        for k, (text, status) in enumerate(st.plan):
            g = f"plan{k}"
            mark = {"completed": "done", "in_progress": "in progress"}.get(status, "to do")
            self.add("Work items", f"{cut(text, 200)} — {mark}", 1, group=g, done=status == "completed")

    # -- steps ---------------------------------------------------------------------------------
    def steps(self) -> None:
        st = self.st
        shown = [s for s in st.steps if s.files or s.reads or s.errors or s.checks or s.commits or s.decisions
                 or s.findings]
        total = len(shown)
        for k, s in enumerate(shown, 1):
            name = step_name(k, s, total, st)
            recent = k >= total - 1
            order = (1000 + k,)
            lvl = 1 if recent else 2
            files = [f for f in s.files if not (st.plan_text and f.path.lower().endswith((".md", ".markdown"))
                                                 and f.path.startswith(("/", "~")))]   # the plan file: told as the plan
            said: set[str] = set()      # words sent with one edit of several files are told once, at the first
            for j, f in enumerate(files):
                files[j] = replace(f, intents=tuple(x for x in f.intents if x not in said))
                said.update(f.intents)
            facts = [file_fact(f) for f in files]
            if files:
                paths = [f.path for f in files]
                self.add(name, f"Files changed: {names(paths, 10)}.", lvl, group=f"s{k}head", order=order + (1,))
                self.pieces[-1].parts = tuple((f"s{k}f{j}", pth) for j, pth in enumerate(paths))
                self.pieces[-1].frame = lambda left: f"Other files changed: {names(left, 10)}."
            elif s.reads:
                self.add(name, f"Read {names(s.reads, 8)}; changed nothing.", lvl + 1, group=f"s{k}head",
                         order=order + (1,))

            weight = sorted(range(len(files)), key=lambda j: -(len(files[j].added) + len(files[j].changed) +
                                                                len(files[j].removed) + files[j].lines // 40))
            for j, fact in enumerate(facts):    # each step's two biggest changes in their place; the others take turns
                pos = weight.index(j)
                turn = order + (2, j) if pos < 2 else (1000 + total + pos, k)
                if fact:
                    bare = file_fact(replace(files[j], intents=(), docs=(), messages=(), constants=(), revised=(),
                                             imports=(), params=()), 5)
                    if bare and len(bare) < len(fact):      # in its place, its names only; at its turn, the rest
                        self.add(name, bare, lvl + 1, group=f"s{k}f{j}", order=order + (2, j))
                    self.add(name, fact, lvl + 1, group=f"s{k}f{j}", order=order + (2, j), rank=turn)
                    more = file_fact(files[j], 20)
                    if more != fact:
                        self.add(name, more, lvl + 3, group=f"s{k}f{j}", order=order + (2, j), rank=turn)
                for i, (what, said, vals) in enumerate(files[j].outline[:4]):   # what it does, in its author's words
                    vals = [v for v in vals if not re.fullmatch(r"[\w.:/-]*", v.strip())]   # phrases, commands,
                                                                                     # placeholders: not keys
                    uses = f" It holds {', '.join(code(v) for v in vals)}." if vals else ""
                    self.add(name, f"What {code(what)} does, in its own comments: " +
                             " → ".join(cut(x.rstrip("."), 140) for x in said[:8]) + "." + uses, lvl + 1,
                             group=f"s{k}o{j}.{i}", order=order + (2, j, 0, i))
                for i, (what, text) in enumerate(files[j].code[:4]):   # what the new code does: its own text
                    verb = "reads" if files[j].action == CREATED else "now reads"     # new code was not changed
                    self.add(name, f"{code(what)} {verb}: {code(text)}", lvl + (2 if k == total and not s.done else 4),
                             group=f"s{k}c{j}.{i}", order=order + (2, j, i + 1))
            prev = ""
            for j, (e, more, others) in enumerate(grouped(s.errors)):
                deep = 0 if recent else -1     # an older step's errors and fixes before what its files gained
                again = e.source == prev and j > 0
                self.add(name, error_line(e, st, False, more, again, others), lvl + 1 + deep, group=f"s{k}e{j}", order=order + (3, j))
                self.add(name, error_line(e, st, True, more, again, others), lvl + 2 + deep, group=f"s{k}e{j}", order=order + (3, j))
                prev = e.source
            if s.checks:
                self.add(name, "Checks: " + "; ".join(check_history(c) for c in s.checks) + ".", lvl + 1,
                         order=order + (4,))
            for j, d in enumerate(s.decisions):     # the first told first; the rest as the budget allows
                self.add(name, f"Chose: {cut(d.text, 240)}" + (f" — {cut(d.why, 200)}" if d.why else ""),
                         lvl + (1 if j == 0 else 2 if j < 3 else 4), order=order + (5, j))
            for j, x in enumerate([x for x in s.findings if not any(x in p for p in s.report)]):   # a point of its
                self.add(name, f"Found: {quote(x, 260)}", lvl + (1 if j == 0 else 2 if j < 4 else 4),  # account tells it
                         order=order + (5, 10 + j))
            for j, c in enumerate(s.commits):
                msg, _, body = c.message.partition("\n")
                line = f"Committed {code(short_hash(c.hash)) if c.hash else ''} “{cut(msg, 160)}”".replace("  ", " ")
                made = [p for p in dict.fromkeys(rel(st, x) for x in c.files)    # files a command made (a generator)
                        if p not in self.changed and "/" in p and "." in p.rsplit("/", 1)[-1]]
                if made:
                    line += f", with {names(made, 1)}, which no edit in the session wrote"
                self.add(name, line + ".", lvl, group=f"s{k}c{j}", order=order + (6, j))
                body = " ".join(x for x in body.split() if x)
                body = re.sub(r"Co-Authored-By:.*$|🤖 Generated with.*$", "", body, flags=re.I).strip()
                if body:
                    self.add(name, f"{line}: {whole_sentences(body, 400)}", lvl + 2, group=f"s{k}c{j}", order=order + (6, j))
            if st.plan_text and (s.start <= st.plan_at <= s.end or k == 1 and st.plan_at < s.start) \
                    and " ".join(st.plan_text.split())[:200] not in " ".join((st.task or "").split()):
                where = f" ({code(st.plan_path)})" if st.plan_path else ""     # the file it can be read again from
                for cap, extra in ((500, 1), (1600, 3)):    # the plan the user approved: what the work followed
                    self.add(name, f"The plan the user approved{where}: " + approved(st.plan_text, cap, extra > 1),
                             lvl + extra, group=f"s{k}plan", order=order + (0,))
            step_reads = [p for p in s.reads if p in self.changed]    # the others are in Files, once
            if step_reads and files:
                self.add(name, f"Read: {names(step_reads, 12)}.", lvl + 3, order=order + (8,))
            looked = [w for _, w in s.searches if w and w not in s.reads]
            if looked:
                self.add(name, f"Searched in {names(list(dict.fromkeys(looked)), 8)}.", lvl + 4, order=order + (9,))
            errs = [x for x in s.tool_errors if not re.search(r"sibling tool call", x[2], re.I)]
            if errs:
                said = [(t, w, cut(x, 100).rstrip(".")) for t, w, x in errs[:4]]    # one full stop, at the end
                shown = [f"{t} {code(w)}: {x}" if w else f"{t}: {x}" for t, w, x in said]
                self.add(name, "Tool calls that failed: " + "; ".join(shown) + ".", lvl + 2, order=order + (3, 99))
            if s.missing:       # what is not there is worth knowing (the agent need not look again), as the tool said it
                said = [f"{code(p)} ({cut(x, 110).rstrip('.')}" + (f"; found {code(i)} instead" if i else "") + ")"
                        for p, x, i in s.missing[:4]]
                self.add(name, f"Looked for, not there: {', '.join(said)}.", lvl + 2, order=order + (3, 98))
            words = st.current.words
            same = bool(words) and bool(s.report) and s.report[0] in words   # the report is the agent's last words …
            raw = same and 0 <= st.raw_from <= st.current.said_at      # … which the raw records after the summary hold
            told = [] if raw else [x for x in s.report if x not in words[:3]   # Current work tells the first three,
                                   and not any(x in f for f in s.findings)]    # Found: the ones it found whole
            for j, x in enumerate(told[:16]):     # each point on its line; the last report at length
                self.add(name, ("The agent's account: " if j == 0 else "") +
                         quote(x if j == 0 else unlabelled(x, told[j - 1]), 380), lvl + (2 if j < 3 or k == total else 4),
                         order=order + (7, j))
            if len(told) > 16:
                self.add(name, f"… and {len(told) - 16} more points of its account.", lvl + 4, order=order + (7, 99))

    # -- files and project ---------------------------------------------------------------------
    def files(self) -> None:
        """Every file, one `path` — action line (CONTEXT.md's grammar): the files only read come before the
        budget's last lines, the changed ones (already told in their steps) last."""
        st = self.st
        read = [p for p in st.reads if p not in self.changed]
        if not self.full:
            told = {p for s in st.steps if not s.files for p in s.reads[:8]}   # a reading step names its first 8
            read = [p for p in read if p not in told]
            if read:
                self.add("Files", f"Read, not changed: {names(read, 12)}.", 2, group="read", order=(1999,))
                self.add("Files", f"Read, not changed: {names(read, 60)}.", 4, group="read", order=(1999,))
            return
        for k, p in enumerate(read):
            self.add("Files", f"{code(p)} — read", 4, group=f"read{k}", order=(2000, 0, k))
        if read:    # the same, short, for a summary the budget holds tight
            self.add("Files", f"Read, not changed: {names(read, 60)}.", 3, order=(1999,))
            self.pieces[-1].parts = tuple((f"read{k}", code(p)) for k, p in enumerate(read))
            self.pieces[-1].frame = lambda left: f"Read, not changed: {', '.join(left)}."
        for k, f in enumerate(st.files):
            self.add("Files", f"{code(f.path)} — {f.action}", 5 if f.action != DELETED else 2, order=(2000, 1, k))

    def project(self) -> None:
        env = self.st.env
        parts = []
        if env.languages:
            parts.append(", ".join(env.languages[:4]))
        if env.check_commands:
            parts.append("checks run: " + names(bare_commands(env.check_commands), 4))
        if env.finish:
            parts.append("before committing the agent ran " + names(bare_commands(env.finish), 4))
        if parts:
            self.add("Project", sentence("; ".join(parts)), 3)


BACKGROUND = re.compile(r"^(?:context|background|overview|problem|summary)\b", re.I)


def approved(text: str, cap: int, long: bool) -> str:
    """An approved plan on one line within about `cap` characters: its head (title, first context sentence),
    then its parts (each with what it says, briefly or at length) while they fit, whole parts only."""
    outline = plan_outline(text)
    if outline is None:
        return brief(text, cap)
    head, parts = outline
    out = cut(head, 400)
    told = []
    for h, short, more, _ in parts:
        if BACKGROUND.match(h) or not (more if long else short):
            continue        # the head already tells it, or the part says nothing more than its name
        part = h + (more if long else short)
        if len(out) + len("; ".join(told + [part])) + 14 > cap:
            if told:
                break
            part = cut(part, max(cap - len(out) - 14, 80))
        told.append(part)
    return out + (". Its parts: " + "; ".join(told) if told else "")

