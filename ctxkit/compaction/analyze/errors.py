"""Errors: each distinct failure's key line, where it came from, and whether it was cleared. An error
stays open until a later passing run of the same check (or a check that covers it), or a later
successful run of the same command; the files changed in between are its fix, and the agent's words
right after the failure give its cause where they name one."""
from __future__ import annotations

import re

from ..model import DELETED, NOT_THERE_WORDS, CheckRun, Command, ErrorState, Said
from ..registry import entries, language_for
from .code import line_diff
from .prose import cause as said_cause, fix as said_fix
from .changes import Changes
from .checks import BROAD

# a command the shell does not have: the agent's environment, not an error of the work (environment.py says it)
MISSING = re.compile(r"command not found: ([\w.-]+)|(?:^|\s)([\w.-]+): (?:command )?not found|([\w.-]+): No such file or directory$|"
                     r"'([\w.-]+)' is not recognized as|The term '([\w.-]+)' is not recognized", re.M)
# a command that rewrites the code by itself (a formatter, a linter's fixer): `eslint --fix`, `bun run lint:fix`,
# `prettier --write`, `cargo fmt`, `mix format`, `gofmt -w`, `ruff check --fix`, `cargo clippy --fix`
AUTOFIX = re.compile(r"(?:^|[\s:_-])(?:fix|autofix|fix-all|format|fmt|write|apply)(?=$|[\s:_=-])|"
                     r"\b(?:gofmt|goimports|black|isort|prettier|rustfmt)\b.*\s-[wl]?\b|"
                     r"^\s*(?:black|isort|autopep8|prettier)\s")
NUMS = re.compile(r"\b\d+(?:\.\d+)?(?:ms|s)?\b|0x[0-9a-f]+")


def _norm(text: str) -> str:
    return NUMS.sub("#", text.lower())[:160]


def _prog(command: str) -> str:
    words = command.split()
    return " ".join(words[:2])


def _covers(run: CheckRun, source: CheckRun) -> bool:
    if run.kind != source.kind:
        return False
    if run.runner == source.runner:
        return True
    words = run.command.split()
    return bool(words) and words[-1] in BROAD


def missing_tool(cmd: Command) -> str:
    """The program a failed command lacked (`tree: command not found`), or ""."""
    words = cmd.command.split()
    for line in cmd.error_lines[:2] or (cmd.output or "").splitlines()[:2]:
        m = MISSING.search(line)
        if m:
            name = next(g for g in m.groups() if g)
            if name in words or any(w.endswith("/" + name) for w in words):
                return name
    return ""


def open_texts(evs: list) -> list[str]:
    """The texts of the errors `evs` leave open (no later run cleared them), as `states` has
    them, found without the changes (a fix's files, cause and how concern fixed ones only)."""
    found, order = _found(evs)
    return [found[k]["text"] for k in order if found[k]["fixed_at"] < 0]


def _found(evs: list) -> tuple[dict[str, dict], list[str]]:
    """Each error of `evs` by its normalized text, and their order; `fixed_at` -1 when none cleared it."""
    found: dict[str, dict] = {}
    order: list[str] = []
    covered_cmds: set[int] = {e.at for e in evs if isinstance(e, CheckRun)}

    def add(text: str, source: str, at: int, kind: str, origin) -> None:
        k = _norm(text)
        if k in found:
            f = found[k]
            f["repeats"] += 1
            f["at"], f["origin"], f["fixed_at"] = at, origin, -1
            return
        found[k] = {"text": text, "source": source, "at": at, "kind": kind, "origin": origin, "repeats": 1,
                    "fixed_at": -1}
        order.append(k)

    for e in evs:
        if isinstance(e, CheckRun):
            if e.passed is False:
                lines = list(e.errors[:10])
                fails = list(dict.fromkeys(e.failures))
                if fails and not all(any(f in x for x in lines) for f in fails[:5]):
                    shown = ", ".join(fails[:5]) + (f" (+{len(fails) - 5} more)" if len(fails) > 5 else "")
                    lines.insert(0, f"failing: {shown}")
                if not lines and e.summary:
                    lines = [e.summary]
                for line in lines[:10]:
                    add(line, e.command, e.at, e.kind, e)
            elif e.passed:
                for f in found.values():
                    if f["fixed_at"] < 0 and isinstance(f["origin"], CheckRun) and f["at"] < e.at and _covers(e, f["origin"]):
                        f["fixed_at"] = e.at
        elif isinstance(e, Command):
            if e.failed and e.at not in covered_cmds and e.error_lines and not missing_tool(e):
                add(e.error_lines[0], e.command, e.at, "", e)    # a failed command is one error: its key line
            elif not e.failed and not e.running:
                for f in found.values():
                    if f["fixed_at"] < 0 and isinstance(f["origin"], Command) and f["at"] < e.at and \
                            _prog(f["origin"].command) == _prog(e.command):
                        f["fixed_at"] = e.at
    return found, order


def states(evs: list, changes: Changes) -> list[ErrorState]:
    found, order = _found(evs)
    saids = [e for e in evs if isinstance(e, Said)]
    out = []
    used: set[str] = set()      # a cause or fix sentence is said of one error only
    for k in order:
        f = found[k]
        end = f["fixed_at"] if f["fixed_at"] >= 0 else None
        window = changes.files(f["at"], end) if end is not None else []
        fix_files = tuple(x.path for x in window)
        cause = fix = ""
        inside = [s for s in saids if s.at >= f["at"] and (end is None or s.at < end)]
        after = inside[:3] + [s for s in inside[3:][-3:]]     # what it said first, and last before the fix held
        for s in after:
            c, x = said_cause(s.text), said_fix(s.text)
            if c and c not in used and not cause and _about(c, f["text"]):
                cause = c
            if x and x not in used and not fix and any(n in x for n in _error_names(f["text"])):
                fix = x
        used.update(t for t in (cause, fix) if t)
        siblings = [g["text"] for g in found.values() if g["origin"] is f["origin"]]
        where, how = _fix_of(f["text"], f["at"], end, changes, siblings)
        silenced = _silenced(f["text"], f["at"], end, changes) if end is not None else ""
        fixed_by = _fixer(evs, f["at"], end) if end is not None and not fix_files else ""
        if not fixed_by and not fix_files and end is not None and isinstance(f["origin"], Command):
            fixed_by = _retried_with(evs, f["origin"].command, end)
        if how and silenced and silenced.rstrip(" …") not in how[0][1]:
            silenced = ""       # a change naming what the error names is its fix
        out.append(ErrorState(text=f["text"], source=f["source"], at=f["at"], kind=f["kind"], fixed_at=f["fixed_at"],
                              fix_files=fix_files, cause=cause, fix=fix, repeats=f["repeats"], fix_change=where,
                              fix_how=how, silenced=silenced, fixed_by=fixed_by,
                              fix_deleted=bool(window) and all(x.action == DELETED for x in window),
                              probe=f["fixed_at"] < 0 and _probe(f["origin"], f["text"])))
    return out


NOT_THERE = re.compile(NOT_THERE_WORDS + r"|(?<!command )not found", re.I)


def _probe(origin, text: str) -> bool:
    """A command that only looks (reads, lists, finds) and was told that what it looked for is not there."""
    if not isinstance(origin, Command) or isinstance(origin, CheckRun) or not NOT_THERE.search(text):
        return False
    looks = set().union(*(getattr(t, "lookers", set()) for t in entries("tools")))
    progs = [w.split()[0].rsplit("/", 1)[-1] for w in re.split(r"\s*(?:&&|\|\||;|\|)\s*", origin.command) if w.strip()]
    progs = [p for p in progs if p not in ("cd", "echo", "true", "Write-Output", "Write-Host", "Select-Object",
                                           "Sort-Object", "head", "tail")] or progs
    acts = re.search(r"\s-(?:delete|exec|execdir|ok)\b", origin.command)     # `find … -delete` acts
    return bool(progs) and all(p in looks for p in progs) and not acts


def _autofix(command: str) -> bool:
    """The command rewrites code by itself (its words, not a quoted message: `git commit -m "fix"` is not)."""
    bare = re.sub(r"\"[^\"]*\"|'[^']*'", " ", command)
    return not re.match(r"\s*git\s", bare) and bool(AUTOFIX.search(bare))


def _fixer(evs: list, at: int, end: int) -> str:
    """The last command between a failure and the run that cleared it that rewrote the code by itself."""
    for e in reversed(evs):
        if isinstance(e, (Command, CheckRun)) and at < e.at < end and _autofix(e.command) and \
                not getattr(e, "failed", False) and getattr(e, "passed", True) is not False:
            return e.command
    return ""


def _retried_with(evs: list, failed: str, end: int) -> str:
    """The run that cleared a failed command when it is the same command given a flag it lacked (`git add -f`,
    `git push -u origin b`): that flag was the fix."""
    clearing = next((e for e in evs if isinstance(e, Command) and e.at == end), None)
    if clearing is None:
        return ""
    first = re.split(r"&&|\|\||;|\|", clearing.command, maxsplit=1)[0]     # the run itself, not what it chains
    had = {w for w in re.split(r"&&|\|\||;|\|", failed, maxsplit=1)[0].split() if w.startswith("-")}
    new = [w for w in first.split() if w.startswith("-") and w not in had]
    return first.strip() if new else ""


WORDS = re.compile(r"[A-Za-z_][\w.]{3,}")


def _about(sentence: str, error: str) -> bool:
    """The sentence names something of the error (a word of four or more letters they share)."""
    common = {"error", "errors", "test", "tests", "failed", "failing", "this", "that", "with", "from", "file"}
    a = {w.lower()[:6] for w in WORDS.findall(sentence) if w.lower() not in common}     # `aliases`, `aliased`: one
    b = {w.lower()[:6] for w in WORDS.findall(error) if w.lower() not in common}
    return bool(a & b)


FILE_IN = re.compile(r"([\w./-]+\.[A-Za-z]{1,6})(?::(\d+))?")
NAMES = re.compile(r"`([^`]{2,60})`|'([^']{2,60})'|\"([^\"]{2,60})\"|\b([A-Za-z_][A-Za-z0-9_]*[A-Z_][A-Za-z0-9_]*|[a-z]+[A-Z]\w*)\b")


def _error_names(text: str) -> set[str]:
    """The names an error line quotes or spells in code style (not its path)."""
    out = set()
    for m in NAMES.finditer(text):
        v = next(g for g in m.groups() if g)
        if "/" not in v and not re.fullmatch(r"[\w.-]+\.[a-z]{1,6}", v) and len(v) >= 3:
            out.add(v)
    return out


def _fix_of(text: str, at: int, end: int | None, changes: Changes, siblings=()) -> tuple[str, tuple]:
    """The file an error line names, and what the change to it after the error that touches a name the
    error names did (its short replacement); the file alone when no change can be matched. A name the other
    errors of the same run also name counts for less (`OpenClawAgent` in every line says little)."""
    names = _error_names(text)
    spread = {n: max(1, sum(1 for t in siblings if n in t)) for n in names}
    for m in FILE_IN.finditer(text):
        name = m.group(1)
        cands = [(e, p) for e, p in changes.events if e.at > at and (end is None or e.at <= end) and
                 (p == name or p.endswith("/" + name) or name.endswith("/" + p))]
        if not cands:
            continue
        path = cands[0][1]
        best, score = None, 0.0
        diffs = []
        for e, p in cands:
            gone, came = line_diff(e.old, e.new, 50, 400)
            diffs.append((e, p, gone, came, "\n".join(gone + came)))
        has = {n: sum(1 for d in diffs if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", d[4])) for n in names}
        for e, p, gone, came, diff in diffs:   # the change whose changed lines name most of the error's rarest names
            hits = sum(1.0 / (has[n] * spread[n]) for n in names
                       if has[n] and re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", diff))
            if hits > score:
                best, score = (e, p, gone, came), hits
        if best is None or score <= 0.5:
            return path, ()
        e, p, gone, came = best
        o, n = (e.old or "").strip(), (e.new or "").strip()
        if o and n and "\n" not in o and "\n" not in n and len(o) <= 100 and len(n) <= 100:
            return p, ((o, n),)

        def telling(lines):   # the changed lines that name what the error names, code before comments
            short = [x.strip() for x in lines if len(x.strip()) <= 100]
            named = [x for x in short if any(nm in x for nm in names)]
            return sorted(named or short, key=lambda x: x.startswith(("//", "#", "/*", "*", "--")))[:1]
        short_gone, short_came = telling(gone), telling(came)
        return p, ((short_gone[0] if short_gone else "", short_came[0] if short_came else ""),) \
            if short_gone or short_came else ()
    return "", ()


def _silenced(text: str, at: int, end: int, changes: Changes) -> str:
    """The line an edit added to the file the error names, between the error and the run that cleared it,
    that silences a check in that file's language (`//nolint:unparam`, `# noqa: E501`,
    `# credo:disable-for-next-line`): the error was silenced, not fixed. The directive must name the error's
    rule, or name no rule at all (a bare `# noqa`)."""
    words = {w.lower() for w in WORD.findall(text)}
    for m in FILE_IN.finditer(text):
        name = m.group(1)
        pat = getattr(language_for(name), "suppress", None)
        if pat is None:
            continue
        bare, other = [], []
        for e, p in changes.events:
            if not (at < e.at <= end and (p == name or p.endswith("/" + name) or name.endswith("/" + p))):
                continue
            for x in line_diff(e.old, e.new, 50, 400)[1]:
                d = pat.search(x)
                if not d:
                    continue
                head = re.split(r"\s(?://|#|--|-)\s", x[d.start():], maxsplit=1)[0]   # the reason after it aside
                rules = {w.lower() for w in WORD.findall(head)} - {w.lower() for w in WORD.findall(d.group(0))} - DIRECTIVE
                if rules & words:
                    return cut_line(x.strip())
                if not rules:
                    bare.append(x.strip())
                elif not RULE_ID.search(text) and _stems(head) & _stems(text):
                    other.append(x.strip())     # `AliasUsage` for "… could be aliased …": a message naming no rule (Credo's)
        if bare:
            return cut_line(bare[0])
        if other:
            return cut_line(other[0])
    return ""


def _stems(text: str) -> set[str]:
    """The words of `text` (CamelCase and dotted names split) cut to their first five letters."""
    words = re.findall(r"[A-Z]?[a-z]{4,}", re.sub(r"[._:/-]", " ", text))
    return {w.lower()[:5] for w in words} - {"check", "disab", "credo", "next", "line", "rubocop", "nolin", "ignor"}


RULE_ID = re.compile(r"[(\[][\w./-]+[)\]]\s*$|\b[A-Z]{1,4}\d{3,4}\b")   # `(revive)`, `[E501]`, `G306`: the line names its rule


WORD = re.compile(r"[A-Za-z][\w-]{2,}")
DIRECTIVE = {"next", "line", "for", "file", "disable", "enable", "ignore", "disable-next-line", "disable-line",
             "disable-for-next-line", "disable-for-this-file", "for-next-line", "for-this-file", "next-line"}


def cut_line(s: str, n: int = 100) -> str:
    return s if len(s) <= n else s[:n].rstrip() + " …"
