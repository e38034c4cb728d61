"""What each step, file, check and error says, in words: the lines the sections are made of."""
from __future__ import annotations

import re

from ..model import CREATED, DELETED, MOVED, NEXT_DONE, CheckState, ErrorState, FileChange, State, Step
from .phrases import bare_commands, check_word, code, command, cut, joined, names, phrase, plural, quote, sentence, short_hash
from .task import brief


def same_file(a: str, b: str) -> bool:
    """Two paths for one file, or for files of the same name (a spec naming the file another folder holds)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a) or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]


def rel(st: State, path: str) -> str:
    root = st.env.cwd.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    return path


def in_progress(st: State):
    """The work item in progress (the innermost: never an epic whose child is in progress)."""
    parents = {i.parent for i in st.items if i.parent}
    return next((i for i in reversed(st.items) if i.status == "in_progress" and i.item not in parents), None)


def ended(st: State) -> bool:
    """The work asked for is over: nothing is left but the user's next request (or it was submitted)."""
    return st.next.kind == NEXT_DONE


def item_name(i) -> str:
    if i.tracker == "tasks":
        label = f"task #{i.item}"
    elif i.tracker == "github":
        label = f"issue {i.item}"
    else:
        label = i.item
    return f"{label} “{cut(i.title, 160)}”" if i.title else label


def step_status(k: int, s: Step, total: int, ended: bool = False) -> str:
    """`ended`: the session's work is over (the next step is to wait for the user, or it was submitted), so
    its last step is done too."""
    busy = s.files or s.commits or s.checks
    status = "done" if s.done or ended and k == total else ("in progress" if k == total else "left unfinished" if busy else
                                    "no file changed" if s.errors else "read only")
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
    if s.source == "request" and title == st.task and not (s.files or s.commits):
        return "reading before the work (the task above)"
    if title:
        return brief(title, 110)
    ran = bare_commands([re.sub(r"\s+2>&1\b|\s*\|.*$", "", e.source) for e in s.errors if e.source]
                        + [c.command for c in s.checks])
    return f"ran {names(ran, 2)}" if ran else "work"     # a stretch with no request of its own: what it ran


def step_name(k: int, s: Step, total: int, st: State) -> str:
    return f"Step {k}: {step_title(s, st)} ({step_status(k, s, total, ended(st))})"


KIND_NAME = {"test": "Tests", "lint": "Lint", "typecheck": "Type check", "build": "Build", "format": "Format check"}


def check_line(c: CheckState) -> str:
    runs = f" (runs {command(c.script, 80)})" if c.script and c.script.split()[:2] != c.command.split()[:2] else ""
    s = f"{KIND_NAME.get(c.kind, 'Check')}: {command(c.command, 110)}{runs} {check_word(c.passed)}"
    if c.summary and c.summary != "no output":
        s += f" ({cut(c.summary, 120)})"
    if c.passed is False and c.failures:
        s += f"; failing: {names(list(dict.fromkeys(c.failures)), 6)}"
    elif c.passed is False and c.errors and c.errors[0].strip() != (c.summary or "").strip():
        s += f": {code(cut(c.errors[0], 200))}"
    if c.passed is False and not c.failures and c.truncated:
        s += "; the output was cut by a filter before the failures, so which ones failed is not in it"
    if c.edited_after:
        s += f", before the last edits (not run since; changed after it: {names(c.edited_after, 3)})"
    else:
        s += ", after the last edit"
    return s


def check_history(c: CheckState) -> str:
    """A check's runs in a step, told briefly: "passed", "failed twice, then passed"."""
    hist = [h for h in c.history if h is not None]
    summary = f" ({cut(c.summary, 80)})" if c.summary and c.summary != "no output" and c.passed else ""
    if len(hist) > 1 and not all(h == hist[-1] for h in hist):
        fails = sum(1 for h in hist[:-1] if h is False)
        times = {1: "once", 2: "twice"}.get(fails, f"{fails} times")
        return f"{code(c.runner)} failed {times}, then {check_word(hist[-1])}{summary}"
    return f"{code(c.runner)} {check_word(c.passed)}{summary}"


GETTER = re.compile(r"^(?:returns|gets)\s+(?:\S+\s+){0,3}\S+$", re.I)     # "returns the agent type identifier": no more than
                                                                       # its name says


def file_fact(f: FileChange, n: int = 10) -> str:
    """What changed in one file: what the agent did it for (its own words), the definitions it gained (with
    what their doc comments say), changed or lost, the constants it sets, the tests it added, short edits."""
    p = code(f.path)
    why = "; ".join(cut(x.rstrip("."), 280 if " — why: " in x else 160) for x in f.intents[:2 if n <= 10 else 4])
    width = 80 if n <= 10 else 120
    docs = {k: phrase(_doc(k, v), width) for k, v in f.docs}     # words that stand alone, never cut mid-phrase
    shown = [a for a in f.added[:n] if not f.tests or a not in f.tests]
    told = [a for a in shown if docs.get(a) and not GETTER.match(docs[a])][:6 if n <= 10 else n]
    sig = {a: x for a, x in f.params if a in shown[:6] or a in told}   # with their parameters: how they are called
    defs = [f"{code(a + sig.get(a, ''))} ({docs[a]})" if a in told else code(a + sig.get(a, "")) for a in shown]
    more = f" and {len(f.added) - n} more" if len(f.added) > n else ""
    tail = []
    if f.tests:
        shown_tests, left = _tests(list(f.tests), 160 if n <= 10 else 500)
        tail.append(f"{plural(len(f.tests), 'test')} added ({shown_tests}"
                    + (f" and {left} more" if left else "") + ")"    # all counted, and a count the agent gave otherwise
                    + (f", as its edits show (the agent said {f.tests_said})" if f.tests_said else ""))
    if f.messages:
        tail.append("; ".join(f.messages[:4 if n <= 10 else 8]))
    if f.constants:
        tail.append("sets " + ", ".join(code(f"{k} {v}" if not v.startswith("=") else f"{k}{v}") for k, v in f.constants[:5]))
    if f.action == CREATED:
        what = f" ({plural(f.lines, 'line')}" + (f", moved here from {code(f.moved_from)}" if f.moved_from else "") + ")" \
            if f.lines or f.moved_from else ""
        base = re.escape(f.path.rsplit("/", 1)[-1])
        why = re.sub(rf"^(?:create|creating|write|writing|add)\s+(?:the\s+|a\s+|new\s+)*`?{base}`?(?:\s+file)?\s*", "",
                     why, flags=re.I) if why else ""      # "Create the hooks.go file with …" says "with …" only
        head = f"Created {p}{what}" + ((f" {why}" if re.match(r"(?:with|for|that|to|as)\b", why) else f": {why}")
                                       if len(why.split()) >= 3 else "")
        why = why if len(why.split()) >= 3 else ""
        body = [f"defines {', '.join(defs)}{more}"] if defs and not f.tests else []
        later = ([f"revised {names(list(f.revised), 4)}"] if f.revised else []) + \
            ([f"now uses {names(list(f.imports), 4)}"] if f.imports else [])
        if later:       # edits after it was written (a lint fix, a review): told, not folded into "defines"
            first = re.split(r"\s+and\s+(?=(?:create|add|write|update|run|then|make|move|also)\b)|[;.]\s", f.revised_why)[0]
            why_later = f" (to {first[0].lower()}{first[1:].rstrip('.')})" \
                if first and first.split(" ", 1)[0].lower() in FIX_VERBS else ""   # its first purpose: the one for this file
            tail.append("then " + " and ".join(later) + why_later)
        rest = "; ".join(body + tail)
        if why and rest:
            rest = rest[0].upper() + rest[1:]       # "… handlers. Defines `a` …": a sentence of its own
        return sentence(head + (". " if why else ": ") + rest) if rest else sentence(head)
    if f.action == DELETED:
        return f"Created, then deleted {p}" + (f": {why}" if why else "") + "." if f.undone else f"Deleted {p}."
    if f.action == MOVED:
        return sentence(f"Moved {code(f.moved_from)} to {p}" + (f": {why}" if why else ""))
    parts = []
    if f.added and not f.tests and defs:
        parts.append(f"added {', '.join(defs)}{more}")
    set_here = {k for k, _ in f.constants}
    changed = [t for t in f.changed if t not in set_here]     # a constant's new value is told with its value
    if changed:
        told = dict((t, (g, x)) for t, g, x in f.members)
        k = 8 if n <= 10 else 12     # a type's members are short: most of them

        into = dict(f.brought)

        def shape(t: str) -> str:
            g, x = told.get(t, ((), ()))
            said = ([f"gained {names(list(g), k)}"] if g else []) + ([f"lost {names(list(x), k)}"] if x else [])
            if not said and into.get(t) and (n > 10 or len(changed) == 1 and len(into[t]) <= 3 and not f.tests):
                said = [f"now with {names(list(into[t]), 4)}"]     # what the edit brought into it
            return code(t) + (f" ({'; '.join(said)})" if said else "")
        shown = [shape(t) for t in changed[:n]]
        parts.append("changed " + ", ".join(shown) + (f" and {len(changed) - n} more" if len(changed) > n else ""))
    if f.removed:
        parts.append(f"removed {names(f.removed, n)}")
    if f.replaced:
        parts.append("replaced " + joined([f"{code(o)} with {code(x)}" if o else f"added {code(x)}"
                                           for o, x in f.replaced[:2]]))
    if not (f.added or f.removed or f.replaced or f.tests) and (not f.changed or f.lines_in or f.lines_out):
        k = 3 if n <= 10 else 8
        if f.lines_out:
            parts.append("removed the line" + ("s " if len(f.lines_out) > 1 else " ") + names(f.lines_out, k))
        if f.lines_in:
            parts.append("added the line" + ("s " if len(f.lines_in) > 1 else " ") + names(f.lines_in, k))
        elif f.names:
            parts.append(f"brought in {names(f.names, min(n, 8))}")
    if f.gone:
        parts.append(f"no longer uses {names(list(f.gone), 4)}")
    brought = [m for m in f.imports if not any(m in x for x in f.lines_in)]   # not told twice
    if brought:
        parts.append(f"now uses {names(brought, 4)}")
    parts += tail
    if not parts and not why:
        return ""
    head = f"Edited {p}" + (f" ({code(f.frame)})" if f.frame else "") + (f": {why}" if why else "")
    if not parts:
        return sentence(head)
    return sentence(head + (". " + parts[0][0].upper() + parts[0][1:] if why else ": " + parts[0]) +
                    ("; " + "; ".join(parts[1:]) if parts[1:] else ""))


def _tests(tests: list[str], cap: int) -> tuple[str, int]:
    """Test names within about `cap` characters, the cases of one subject together (`TestInstallHooks_Fresh`,
    `TestInstallHooks_Force` read `TestInstallHooks` (Fresh, Force)), and how many are left untold."""
    groups: dict[str, list[str]] = {}
    for t in tests:
        head, sep, case = t.partition("_") if " " not in t else (t, "", "")
        groups.setdefault(head, [])
        if sep and case:
            groups[head].append(case)
    out, told = [], 0
    for head, cases in groups.items():
        n = len(cases) + (1 if head in tests else 0)
        part = code(head) + (f" ({', '.join(cases)})" if cases else "")
        if out and len(", ".join(out + [part])) > cap:
            break
        out.append(part)
        told += max(n, 1)
    return ", ".join(out), len(tests) - told


FIX_VERBS = {"fix", "address", "resolve", "clean", "silence", "satisfy", "handle", "simplify", "use", "replace",
             "remove", "rename", "update", "make", "avoid", "support"}     # an edit's purpose that reads after "to"


def _doc(name: str, doc: str) -> str:
    """A doc comment without the name it starts with ("isX checks …" -> "checks …") and lint directives."""
    d = doc.strip()
    if re.match(r"^(?:nolint|eslint|noqa|type:|pylint|@ts-)", d, re.I):
        return ""
    base = name.split("/")[0].split(".")[-1]
    if d.startswith(base + " "):
        d = d[len(base) + 1:]
        d = re.sub(r"^(?:is|are)\s+(?=(?:a|an|the|one|our)\s)", "", d)   # "X is the JSON sent …" -> "the JSON sent …"
    return d.rstrip(".")


LOCATED = re.compile(r"[\w./-]+\.\w{1,6}:\d+")     # an error line that names a file and line says its own thing


RULE = re.compile(r"\((\w[\w-]*)\)\s*$")     # a linter's rule at the end of its line: `(unparam)`


def _alike(f: ErrorState, e: ErrorState) -> bool:
    """Two lines of one run, the same linter rule, silenced by the same directive."""
    a, b = RULE.search(f.text), RULE.search(e.text)
    return bool(a and b and a.group(1) == b.group(1) and f.source == e.source and f.silenced and e.silenced
                and f.silenced.split()[0] == e.silenced.split()[0])


def grouped(errors) -> list[tuple[ErrorState, int, tuple[ErrorState, ...]]]:
    """The errors, each with how many more lines of the same failed run shared its fate (one run's
    several lines that one fix cleared are one error) and those lines: [(error, more, the others)]."""
    out: list[tuple[ErrorState, int, tuple]] = []
    for e in errors:
        same_rule = next((k for k, (f, _, _) in enumerate(out) if _alike(f, e)), None)
        if same_rule is not None:     # the same check's rule silenced the same way: one line, "and N more like it"
            f, n, o = out[same_rule]
            out[same_rule] = (f, n + 1, o)
            continue
        if out:
            f, n, o = out[-1]
            if (f.at, f.source, f.fixed_at, f.fix_files, f.fixed_by) == (e.at, e.source, e.fixed_at, e.fix_files, e.fixed_by) \
                    and not (f.fix_how or e.fix_how or f.silenced or e.silenced or e.cause) \
                    and not (LOCATED.search(f.text) or LOCATED.search(e.text) or e.text.startswith("failing:")):
                out[-1] = (f, n + 1, o + (e,))
                continue
        out.append((e, 0, ()))
    return out


IN_FILE = re.compile(r"^(\S+\.\w+)\s+(\S.*)$")     # `src/db.ts format: Formatter would have printed …`


def _one_message(errors) -> tuple[str, list[str]] | None:
    """(the message, the files) when a run's first error lines say one thing of several files."""
    first = IN_FILE.match(errors[0].text) if errors else None
    ms = [m for m in (IN_FILE.match(e.text) for e in errors) if m and first and m.group(2) == first.group(2)]
    return (first.group(2), [m.group(1) for m in ms]) if len(ms) > 1 else None


def error_line(e: ErrorState, st: State, detail: bool, more: int = 0, again: bool = False, others: tuple = ()) -> str:
    """One error and what became of it; `again`: the line before came from the same command (named once);
    `others`: the lines of the same run told with it."""
    src = command(e.source, 70)
    text = e.text
    one = _one_message((e,) + others)
    m = re.match(r"^(\S+/)([^/\s:]+:\d+)", text)
    if m:
        text = text[len(m.group(1)):]   # `dir/file.go:12:3: …` -> `file.go:12:3: …`: the fix names the path
    if e.probe and e.fixed_at < 0:      # a look that found nothing: an answer, not a problem left open
        return f"Looked for with {src}, not there: {code(cut(text, 220))}"
    said = code(cut(text, 220))
    if one:     # one message of several files: the message once, the files named; another message of the run after it
        other = next((x for x in others if not (IN_FILE.match(x.text) and IN_FILE.match(x.text).group(2) == one[0])), None)
        said, more = f"{code(cut(one[0], 160))} in {names([rel(st, p) for p in one[1]], 4)}", more - len(one[1]) + 1
        if other is not None:
            said, more = f"{said}; also {code(cut(other.text, 160))}", more - 1
    s = f"{'Same command, another error' if again else f'Error from {src}'}: {said}"
    named = re.match(r"^([^/\s:]+):\d+", text)      # the file the error names: its fix is "there"

    def where(path: str) -> str:
        p = rel(st, path)
        return "there" if named and p.rsplit("/", 1)[-1] == named.group(1) else f"in {code(p)}"
    if more:
        s += f" (and {more} more like it)" if e.silenced else f" (and {more} more line{'s' if more > 1 else ''} of the same run)"
    if e.repeats > 1:
        s += f" ({e.repeats} times)"
    if e.fixed_at >= 0:
        if e.silenced:
            fixed = f"silenced, not fixed: {code(e.silenced)} added" + (f" {where(e.fix_change)}" if e.fix_change else "")
        elif e.fix_how:
            o, x = e.fix_how[0]
            how = f"{code(o)} → {code(x)}" if o and x else (f"removed {code(o)}" if o else f"added {code(x)}")
            fixed = f"fixed {where(e.fix_change)} ({how})"
        elif e.fix_change:
            fixed = "fixed by an edit there" if where(e.fix_change) == "there" else \
                f"fixed by {'deleting' if e.fix_deleted else 'editing'} {code(rel(st, e.fix_change))}"
        elif e.fix_files:
            fixed = f"fixed by {'deleting' if e.fix_deleted else 'editing'} {names([rel(st, p) for p in e.fix_files], 3)}"
        elif e.fixed_by:
            fixed = f"fixed by running {command(e.fixed_by, 70)}"
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
