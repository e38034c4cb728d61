"""Write seed 001's template from distilled facts, filling a token budget (pure).

The budget is a target to fill, not only a cap: sections take turns adding their next-best
bullet until nothing more fits, so sections share the budget by what the span actually has.
Whole bullets only; a bullet that does not fit is skipped, never cut. The Task and the latest
request always come first. Files are written compactly: paths relative to the session's
working directory, grouped by folder, the most-touched first, each with its last action.
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from typing import Callable

from .context_md import SPEC_SECTION as SPEC, Context, Item
from .distill import Distilled, Fact
from .episodes import TEMP_PATH
from .focus import MANIFEST, spec_check
from .hygiene import gate
from .requests import brief, task_brief

Count = Callable[[str], int]

# (section, bullets added per round): Files are cheap and vital, so they move faster
RATES = (("Errors", 1), ("Pending", 2), ("Progress", 1), ("Decisions", 1), ("Constraints", 1),
         ("Files", 4), ("Facts", 2), ("Key entities", 3))
TASK_CAP = 1500   # characters: the first request is kept verbatim up to this
LATEST_CAP = 400


def rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def file_bullets(files: "OrderedDict[str, tuple[str, int]]", cwd: str | None) -> list[Item]:
    """Written files before read ones, grouped by folder (the busiest folder first), the
    most-touched file first in each folder."""
    by_dir: "OrderedDict[str, list[tuple[str, str, int, int]]]" = OrderedDict()
    for order, (path, (action, n)) in enumerate(files.items()):
        p = rel(path, cwd)
        by_dir.setdefault(os.path.dirname(p), []).append((p, action, n, order))

    def dir_key(kv):
        items = kv[1]
        written = sum(1 for _, a, _, _ in items if a != "read")
        return (-written, -sum(n for _, _, n, _ in items), -max(o for *_, o in items))

    out = []
    for _, items in sorted(by_dir.items(), key=dir_key):
        for p, action, n, _ in sorted(items, key=lambda t: (t[1] == "read", -t[2], -t[3])):
            out.append(Item(text=f"`{p}` — {action}"))
    return out


def _facts_items(facts: list[Fact], cap: int = 260) -> list[Item]:
    kept, _ = gate([brief(f.text, cap) for f in facts])
    return [Item(text=t) for t in kept]


def candidates(d: Distilled) -> "OrderedDict[str, list[Item]]":
    """Every bullet the facts support, best first within each section."""
    c: "OrderedDict[str, list[Item]]" = OrderedDict()
    open_errs = [e for e in d.errors if e.status != "resolved"]
    done_errs = [e for e in d.errors if e.status == "resolved"]
    errs = []
    for e in list(reversed(open_errs)) + list(reversed(done_errs)):
        src = f" (from {e.source})" if e.source else ""
        tail = " — resolved" if e.status == "resolved" else ""
        errs.append(Item(text=brief(e.text, 220) + src + tail))
    c["Errors"] = errs
    c["Pending"] = [Item(text=brief(f.text, 200) + (" (in progress)" if f.status == "in_progress" else ""),
                         done=False) for f in d.plan]
    c["Progress"] = [Item(text=brief(f.text, 200)) for f in reversed(d.progress)]
    c["Decisions"] = _facts_items(d.decisions)
    c["Constraints"] = _facts_items(d.constraints, 200)
    c["Files"] = file_bullets(d.files, d.cwd)
    facts = _facts_items(d.findings)
    # no fact repeats a decision
    facts = [f for f in facts if not any(f.text == x.text for x in c["Decisions"])]
    c["Facts"] = facts
    c["Key entities"] = [Item(text=f"`{e.text}`") for e in d.entities]
    return c


BUILD_PATH = re.compile(r"(?:^|/)(?:_build|deps|node_modules|target|dist|\.venv|__pycache__)/")
STEP_NUM = re.compile(r"^Step \d+:\s*")
STALE = re.compile(r"\b(still|yet|not yet|next task|next step|currently|about to|in progress|compiling|waiting|"
                   r"for now|at the moment|remaining|left to do|now|\d+ of \d+|all \d+|tests? pass\w*|"
                   r"fail\w*|warnings?|errors?|complain\w*|reports?|broken|isn.t working)\b", re.I)
SELF_PRAISE = re.compile(r"\b(successfully|perfect|all clear|all done|excellent|great|awesome|everything works|"
                         r"(?:is|are|was|were) (?:now )?(?:done|complete|finished)|done and|pushed|"
                         r"all (?:tests|checks) pass\w*|looks good|clean compile|zero credo)\b", re.I)


def step_heading(ep, story) -> str:
    """`label (outcome)` for one episode (write numbers the steps)."""
    title = story.titles.get(ep.item) if ep.item else None
    if ep.item:
        label = f"{ep.item}" + (f" — {brief(title, 90)}" if title else "")
    elif ep.plan_step:
        label = brief(ep.plan_step, 100)
    elif ep.requests:
        label = "request: " + brief(ep.requests[-1], 90)
    elif ep.commits:
        label = brief(ep.commits[-1][1], 100)
    else:
        label = "work"
    if ep.commits:
        h = ep.commits[-1][0]
        state = f"done, committed {h}" if h else "done, committed"
    elif ep.item and ep.item in ep.closed:
        state = "closed, not committed"
    elif ep.files:
        state = "in progress, not committed"
    else:
        state = "no files changed"
    return f"{label} ({state})"


# detail levels, richest first: (names listed per file, check kinds per step); write() keeps the
# richest whose steps, current work and next step fit the budget whole
LEVELS = ((60, 8), (24, 6), (12, 5), (8, 4), (5, 4), (3, 4))  # a check kind costs a few tokens: kept
# a step's lines that say what it came to: given room before any step's detail
CORE = re.compile(r"^(?:Committed|Closed|Checks[:,]|Plan approved|Changed |Created work items|Error from|In the agent's words|Why, in|"
                  r"The agent's approach)")


IGNORED_PATHS = re.compile(r"ignored by one of your \.gitignore files:?\s*((?:[\w./-]+\s*)+)", re.I)


def ignored_lines(story, focus) -> list[str]:
    """An uncommitted file under a path git ignores, when an earlier step had to force-add there:
    say so before the commit (a plain `git add` fails on it, as it did then)."""
    out = []
    steps = [e for e in story.episodes if e.busy()]
    for n, ep in enumerate(steps, 1):
        for e in ep.errors:
            m = IGNORED_PATHS.search(e.text) if e.resolved else None
            if not m:
                continue
            for ign in m.group(1).split():
                ign = ign.rstrip("/")
                hit = [short for fc in focus.uncommitted
                       if (short := rel(fc.path, story.cwd)) == ign or short.startswith(ign + "/")]
                if hit and ep is not steps[-1]:
                    out.append(f"{', '.join(f'`{h}`' for h in hit)} is under `{ign}`, which git ignores: "
                               f"stage it with `git add -f`, as step {n} did.")
    return _uniq_list(out)[:2]


APPROACH = re.compile(r"\b(?:I'll|I will|the (?:fix|issue|problem|root cause|cause) is|root cause|due to|"
                      r"workaround|instead)\b", re.I)


def approach(ep) -> str:
    """The reason or approach the agent stated right before the step's first edit (a cause, a way
    chosen over another, unhedged), when it stated one: its words, short."""
    from .episodes import reason

    why = reason(ep.said_first)
    ok = why and len(why) >= 30 and re.match(r"[A-Z`\"]", why) and not SELF_PRAISE.search(why) and \
        (REASON.search(why) or APPROACH.search(why))
    return brief(why, 240) if ok else ""


def account(ep) -> str:
    """The agent's own account of a step, quoted: its commit message's body (what it built and why),
    else the reason it gave when closing the work item; without its tallies and self-praise (the
    step's checks give the counts from the records)."""
    commit = [t for src, t in ep.accounts if src.startswith("in the commit")]
    closing = [(src, t) for src, t in ep.accounts if src.startswith("closing")]
    src, text = ("commit message", commit[-1]) if commit else (closing[-1][0], closing[-1][1]) if closing else ("", "")
    if not text:
        return ""
    sents = [x for x in re.split(r"(?<=[.!])\s+", text)
             if x.strip() and not TALLY.search(x) and not SELF_PRAISE.search(x)]
    text = brief(" ".join(sents), 420)
    return f"In the agent's words ({src}): \"{text}\"" if len(text) >= 20 else ""


# a sentence that settles how something is done: a way taken over another, a thing kept or dropped
CHOICE_SENT = re.compile(r"\binstead\b|\brather than\b|\bsettl(?:e|ed|ing) on\b|\bdecid(?:e|ed)\b|\bchose\b|\bopted? for\b|"
                         r"\bgoing with\b|\bthe (?:cleanest|simplest|best|right|safest|correct|proper) (?:approach|way|fix|"
                         r"option|solution|place)\b|\b(?:I(?:'ll| will| should)|let me|we should) (?:just |also )?(?:keep|put|"
                         r"remove|do the same|follow|stick|go with|leave|skip|avoid|drop|move)\b", re.I)
# thinking weighs ways and drops most of them a few lines later: only its conclusions count
SETTLED = re.compile(r"\bsettl(?:ed|ing) on\b|\bI'll go with\b|\bI(?:'ve| have)? decided\b|\bgoing with\b", re.I)
CHOICE_LEAD = re.compile(r"^(?:Now|Let me|Let's|I'll|I will|I need|Good|Great|Perfect|OK|Okay|Wait|Hmm|Actually|So)\b", re.I)
NAMED = re.compile(r"`([^`\n]{2,80})`|\b([\w.-]+/[\w./-]+)")


def _names_in(text: str) -> set:
    """The concrete names a sentence uses: the identifiers a summary remembers (distill.identifiers),
    backticked code and paths (bare: no arity, no arguments)."""
    from .distill import identifiers

    out = set(identifiers(text))
    for m in NAMED.finditer(text):
        x = re.sub(r"/\d+$|\(.*$", "", m.group(1) or m.group(2)).strip(" .,:;")
        if len(x) >= 3:
            out.add(x)
    return out


def _stuck(ep) -> str:
    """What a step left behind, as text to find names in: its files and what changed in them, its
    commands, checks and commits."""
    parts = []
    for fc in ep.files.values():
        parts += [fc.path, fc.fate, " ".join(fc.added + fc.changed + fc.removed), " ".join(fc.values),
                  " ".join(fc.samples[:40]), " ".join(fc.shapes)]
    parts += list(ep.commands) + list(ep.checks) + [m for _, m in ep.commits] + [t for _, t in ep.accounts]
    return "\n".join(parts)


REPORT_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\**`([^`\n]+)`\**\s*(?:\([^)\n]*\)\s*)?(?:—|–|-|:)\s+(.{10,400})$", re.M)


def file_reports(ep, story=None) -> dict:
    """path or file name -> the first sentence the agent wrote about it in a report of the step
    ("- `notify-session-end.sh` — Silent-fail hook script that POSTs …"), without tallies or praise;
    a report written after the step's commit is among the next step's first words."""
    out: dict = {}
    eps = story.episodes if story is not None else [ep]
    k = next((n for n, e in enumerate(eps) if e is ep), 0)
    before = eps[k - 1] if k > 0 else None
    # the words before this step's first edit, after an earlier step's commit, report on that step
    talk = [t for t in ep.talk if not (before is not None and before.commits and (ep.first_edit < 0 or t[0] < ep.first_edit))]
    after = eps[k + 1] if k + 1 < len(eps) else None
    if after is not None and ep.commits:
        talk += [t for t in after.talk if after.first_edit < 0 or t[0] < after.first_edit]
    for _, text, thinking, *_ in talk:
        if thinking:
            continue
        for m in REPORT_LINE.finditer(text):
            first = re.split(r"(?<=[.!])\s+", m.group(2).strip())[0].rstrip(".")
            if len(first) >= 20 and not TALLY.search(first) and not SELF_PRAISE.search(first):
                out[m.group(1).strip()] = brief(first, 160)
    return out


def choices(ep, cap: int = 2) -> list[str]:
    """The choices the agent made in a step and kept, each in its words with the sentence that gives
    its reason: a sentence that settles a way ("Let me put it in `priv/scripts/` instead since that's
    what Elixir apps package.", "I should do the same for `spotter.css`." after "`xterm.css` was
    force-added."), unhedged, naming something the step's changes still have (a way tried and dropped
    names nothing that stayed); of two about the same thing, the later; not the fix of an error
    (told with the error). The latest `cap`, in order."""
    memo = getattr(ep, "_choices", None)
    if memo is not None:
        return memo[:cap]
    from .episodes import _sentences

    fixes = " ".join(t for e in ep.errors for t in e.said)
    stuck = _stuck(ep)
    found: list = []
    for _, text, thinking, acted in ep.talk:
        text = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*[-*+]\s", ln))  # a list is a plan
        sents = _sentences(text)
        for k, x in enumerate(sents):
            done = acted and k == len(sents) - 1  # its message's own calls carried it out, and succeeded
            if not (SETTLED if thinking else CHOICE_SENT).search(x) or x.rstrip().endswith("?") or UNDECIDED.search(x) or \
                    x in fixes or \
                    re.match(r"(?:Or|Wait|Hmm|But|Now I|Now let|Now,)\b", x) or re.search(r"\bor\b[^.]*\bor\b", x):
                continue
            prev = sents[k - 1] if k else ""
            if prev and not REASON.search(x) and not prev.rstrip().endswith(("?", ":")) and \
                    not CHOICE_LEAD.match(prev) and len(prev.split()) >= 4 and not UNDECIDED.search(prev) and \
                    (CONCRETE.search(prev) or done):
                x = prev + " " + x   # the statement it rests on ("`xterm.css` was force-added.")
            elif not REASON.search(x) and not re.search(r"\s[–-]\s|—|: ", x):
                continue  # a choice without a reason is an action, told by the step's changes
            names = _names_in(x)
            if not (done or names and any(n in stuck for n in names)) or SELF_PRAISE.search(x):
                continue  # a way that names nothing the step's changes still have was dropped
            found.append(brief(x, 300))
    kept: list = []
    for x in found:  # of two about the same thing, the later stands
        kept = [y for y in kept if len(_words(x) & _words(y)) < 0.3 * len(_words(x) | _words(y))]
        kept.append(x)
    kept = _uniq_list(kept)
    ep._choices = kept[-cap:] if len(kept) > cap else kept
    return ep._choices[:cap]


def module_names(d: Distilled) -> dict:
    """path -> the name the agent calls the file's module by (`PaneListLive` for `pane_list_live.ex`),
    for the names it used in two or more of its messages: the name a reader meets in the steps."""
    story = d.story
    if story is None:
        return {}
    memo = story.memo.setdefault("aka", {})
    if "map" not in memo:
        paths = {}
        for ep in story.episodes:
            for p in ep.files:
                base = p.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
                paths.setdefault(base, []).append(p)
        out = {}
        for e in d.entities:
            last = e.text.rsplit(".", 1)[-1]
            if not re.match(r"^[A-Z][a-z0-9]+[A-Z]\w*$", last):
                continue  # CamelCase module and class names only
            snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", last).lower()
            for p in paths.get(snake, ()):
                out.setdefault(p, last)
        memo["map"] = out
        story.memo["named"] = {e.text for e in d.entities}  # the names the agent used in two or more messages
    return memo["map"]


def _named(path: str, cwd, aka: dict) -> str:
    return f"`{rel(path, cwd)}`" + (f" (`{aka[path]}`)" if path in aka else "")


def step_items(ep, story, first: bool, task: str, open_now=(), uncommitted=(), level=LEVELS[2],
               aka=None) -> list[Item]:
    """What one episode did, each fact from a tool call or its result. Files already told as
    uncommitted under Current work are named there only (said once)."""
    cwd = story.cwd
    out: list[Item] = []
    prefer = story.memo.get("named", ())
    told = account(ep)
    why = story.whys.get(ep.item) if ep.item and (ep.commits or ep.item in ep.closed) else ""
    if told:
        out.append(Item(text=told))
    if why:  # a step in progress has it under Current work (what the item asks)
        out.append(Item(text=f"Why, in `{ep.item}`'s description: \"{why}\""))
    elif not ep.plans:
        why = approach(ep)
        if why:
            out.append(Item(text=f"The agent's approach, in its words: \"{why}\""))
    for gist in ep.plans:
        out.append(Item(text=f"Plan approved by the user: {gist}"))
    if ep.plan_parts:
        out.append(Item(text="The plan's parts: " + "; ".join(ep.plan_parts)))
    for x in choices(ep):
        out.append(Item(text=f"Decided, in the agent's words: \"{x}\""))
    told = [fc for fc in ep.files.values() if not ep.commits and fc.path in uncommitted]
    if told:
        out.append(Item(text="Changed " + ", ".join(_named(fc.path, cwd, aka or {}) for fc in told) +
                    ": not committed; what changed is under Current work"))
    reported = file_reports(ep, story)
    for fc in ep.files.values():
        if TEMP_PATH.search(fc.path) or fc in told:
            continue
        what = fc.describe(level[0], prefer)
        purpose = ""
        if fc.action == "created" or not what:  # what a new file is for: its own header, else the agent's report
            purpose = f"\"{fc.purpose}\"" if fc.purpose else ""
            said = next((v for k, v in reported.items() if fc.path == k or fc.path.endswith("/" + k)), "")
            if not purpose and said and len(_words(said) - _words(what)) >= 3:
                purpose = f"in the agent's words, \"{said}\""
        out.append(Item(text=f"{_named(fc.path, cwd, aka or {})} {fc.action}" +
                         (f" ({purpose})" if purpose else "") + (f": {what}" if what else "")))
    for c in ep.commands:
        made = ep.generated.get(c)
        out.append(Item(text=f"Ran `{c}`" + (" (it created " + ", ".join(f"`{p}`" for p in made) + ")" if made else "")))
    if ep.created:
        out.append(Item(text="Created work items: " + ", ".join(f"`{i}`" + (f" ({t})" if t else "")
                                                                 for i, t in ep.created)))
    whys: dict = {}  # one reason explains one error: the one it shares the most words with
    for e in ep.errors:
        w = e.why() if e.resolved and e.kind != "tool" else ""
        if w:
            score = len(_words(w) & _words(e.text + " " + e.source))
            if w not in whys or score > whys[w][0]:
                whys[w] = (score, id(e))
    for e in ep.errors:
        if e.kind == "tool":
            continue  # a tool's own complaint (a read too big, an edit that did not match): not the work's
        if e.resolved:
            ch, why = e.change(), e.why()
            why = why if why and whys.get(why, (0, None))[1] == id(e) else ""
            fix = e.remedy()
            fix = fix if fix and not (why and (fix in why or why in fix)) else ""
            if fix and why and _words(fix) <= _words(why):
                fix = ""
            how = e.fix or "resolved"
            for c in e.commands:  # the failing command run again: said once
                if c and f"`{brief(c, 70)}` then passed" in how and f"`{brief(c, 70)}`" in e.source:
                    how = how.replace(f"`{brief(c, 70)}` then passed", "the same command then passed")
            said_how = fix  # the agent's words say what the edits did
            out.append(Item(text=f"Error from {e.source}: {brief(e.text, 160)} → {how}" +
                            (f"; the last edits {ch}" if ch and not said_how else "") +
                            (f". Why, in the agent's words: \"{why}\"" if why else "") +
                            (f"{'' if why else '.'} The fix, as the agent announced it: \"{fix}\"" if fix else "")))
        elif e in open_now or e.kind == "command":
            continue  # told under Current work; a failed look-around command is not the work's error
        else:
            out.append(Item(text=f"Error from {e.source}: {brief(e.text, 160)} (not resolved in this step)"))
    from .episodes import checks_by_kind

    checks = [f"`{brief(cmd, 70)}`: {hist}" for cmd, hist in checks_by_kind(ep.checks.values(), ep.last_edit)]
    if checks:
        k = level[1]
        stale = " (before the last edits; not run since)"
        if all(c.endswith(stale) for c in checks[:k]):  # said once for them all
            out.append(Item(text="Checks, all run before the step's last edits and not since: " +
                            "; ".join(c[:-len(stale)] for c in checks[:k])))
        else:
            out.append(Item(text="Checks: " + "; ".join(checks[:k])))  # the first kinds run: tests, build, lint
    closed = ", ".join(f"`{i}`" for i in ep.closed)
    for j, (h, msg) in enumerate(ep.commits):  # the item closed with the last commit: one line
        last = j == len(ep.commits) - 1
        out.append(Item(text=f"Committed {h + ': ' if h else ''}{msg}" + (f"; closed {closed}" if last and closed else "")))
    if ep.closed and not ep.commits:
        out.append(Item(text="Closed " + closed))
    return out


LANGS = {"ex": "Elixir", "exs": "Elixir", "heex": "HEEx templates", "py": "Python", "js": "JavaScript",
         "mjs": "JavaScript", "ts": "TypeScript", "tsx": "TypeScript/React", "jsx": "JavaScript/React", "rs": "Rust",
         "go": "Go", "rb": "Ruby", "java": "Java", "kt": "Kotlin", "cs": "C#", "c": "C", "cpp": "C++", "css": "CSS",
         "scss": "SCSS", "sql": "SQL", "sh": "shell scripts", "swift": "Swift", "php": "PHP"}
TOOLS = ("mix", "npm", "yarn", "pnpm", "pip", "uv", "poetry", "pytest", "cargo", "go", "bundle", "rake", "make",
         "docker", "bd", "gh", "git")


STDLIB = {"os", "re", "sys", "json", "typing", "collections", "dataclasses", "pathlib", "subprocess", "functools",
          "itertools", "time", "datetime", "logging", "__future__", "abc", "enum", "math", "random", "tempfile",
          "shutil", "io", "asyncio", "unittest", "argparse", "contextlib", "hashlib", "threading", "uuid", "copy",
          "textwrap", "string", "glob", "inspect", "warnings", "traceback", "socket", "signal", "struct", "base64",
          "std", "core", "alloc", "crate", "self", "super", "fs", "path", "util", "http", "url", "events", "child_process"}
EX_USE = re.compile(r"^\s*use\s+([A-Z][\w.]*)(?:,\s*:(\w+))?", re.M)
JS_IMPORT = re.compile(r"""(?:^\s*import\s+(?:[\w*{}\s,$]+\s+from\s+)?|\brequire\(\s*)["']([^"'./][^"']*)["']""", re.M)
PY_IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import\b|import\s+([A-Za-z_]\w*))", re.M)
RS_USE = re.compile(r"^\s*(?:pub\s+)?use\s+([a-z_]\w*)::", re.M)
CHECK_WORDS = re.compile(r"^(?:\S+/)?(\S+)(?:\s+(?!-)([\w.:-]+))?")


def _libraries(path: str, text: str) -> list:
    """The frameworks and libraries a written text uses, by name (`Phoenix LiveView`, `GenServer`,
    `highlight.js`, `fastapi`, `tokio`), from its use/import lines only."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    out = []
    if ext in ("ex", "exs"):
        for mod, kind in EX_USE.findall(text):
            if kind and mod.endswith("Web"):
                out.append("Phoenix LiveView" if kind in ("live_view", "live_component") else f"Phoenix {kind}s")
            elif mod.startswith(("Phoenix.LiveView", "Phoenix.Component")):
                out.append("Phoenix LiveView")
            elif mod.startswith("Ash."):
                out.append("Ash")
            elif mod.startswith("Ecto."):
                out.append("Ecto")
            elif mod.startswith("ExUnit") or mod.endswith(("ConnCase", "DataCase")):
                out.append("ExUnit")
            elif "." not in mod:
                out.append(mod)  # GenServer, Supervisor, DynamicSupervisor, Agent
        if "Phoenix.PubSub." in text:
            out.append("Phoenix.PubSub")
        if re.search(r"\bAsh\.[A-Z]\w*\.", text):
            out.append("Ash")
    elif ext in ("js", "mjs", "cjs", "ts", "tsx", "jsx", "vue", "svelte"):
        for pkg in JS_IMPORT.findall(text):
            name = "/".join(pkg.split("/")[:2]) if pkg.startswith("@") else pkg.split("/")[0]
            if name.split(":")[0] not in STDLIB and not name.startswith("node:"):
                out.append(name)
    elif ext == "py":
        out += [a or b for a, b in PY_IMPORT.findall(text) if (a or b) not in STDLIB]
    elif ext == "rs":
        out += [m for m in RS_USE.findall(text) if m not in STDLIB]
    return out


def project_line(story) -> str:
    """Project: the languages of the files the span changed, with the frameworks and libraries
    their new text uses, the checks the agent ran, and its work-item tracker."""
    memo = story.memo.setdefault("project", {})
    if "line" in memo:
        return memo["line"]
    langs: "OrderedDict[str, list]" = OrderedDict()
    for ep in story.episodes:
        for fc in ep.files.values():
            if TEMP_PATH.search(fc.path) or BUILD_PATH.search(fc.path):
                continue
            name = fc.path.rsplit("/", 1)[-1]
            ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
            lang = LANGS.get(ext)
            if not lang:
                continue
            lang = "Elixir" if lang == "HEEx templates" else lang
            libs = langs.setdefault(lang, [])
            if lang == "Elixir" and re.search(r"_web/live/", fc.path) and "Phoenix LiveView" not in libs:
                libs.append("Phoenix LiveView")  # where a Phoenix app keeps its LiveViews
            new = [n[7:] for n in fc.added if n.startswith("import ")]  # what the span brought in first
            for t in new + list(story.texts.get(fc.path, ())[:20]):
                got = _libraries(fc.path, f'import "{t}"') if t in new else _libraries(fc.path, t)
                libs += [x for x in got if x not in libs]
    checks, tools = [], []
    for ep in story.episodes:
        from .episodes import checks_by_kind

        for cmd, _ in checks_by_kind(ep.checks.values()):
            m = CHECK_WORDS.match(cmd.split("&&")[-1].strip())
            if m:
                c = " ".join(x for x in m.groups() if x)
                if c not in checks:
                    checks.append(c)
        if ep.item and "`bd`" not in tools:
            tools.append("`bd`")
    parts = [lang + (f" ({', '.join(libs[:4 if lang == 'JavaScript' else 8])})" if libs else "")
             for lang, libs in langs.items()]
    line = ""
    if checks or any(libs for libs in langs.values()) or len(parts) > 1:  # a bare language alone says little
        line = "; ".join(([", ".join(parts)] if parts else []) +
                         ([f"checks run: {', '.join(f'`{c}`' for c in checks[:6])}"] if checks else []) +
                         ([f"work items tracked with {tools[0]}"] if tools else []))
    memo["line"] = line
    return line


def _uniq_list(items) -> list:
    return list(OrderedDict.fromkeys(items))


def _words(text: str) -> set:
    return set(re.findall(r"[a-z0-9_]{3,}", text.lower()))


# a sentence that points back at something it does not name cannot stand alone
ANAPHOR = re.compile(r"^(?:In step \d+[^:]*:\s*)?(?:It|This|That|These|They|Both|Those|Its|Their|Here|There|"
                     r"Which|Such)(?:'s|’s)?\b")
# a sentence names something concrete: a path, a backticked name, CamelCase or snake_case, a number, a quote
CONCRETE = re.compile(r"`[^`]+`|\b[\w.-]+/[\w./-]+|\b[A-Z][a-z0-9]+[A-Z]\w*|\b[a-z0-9]+_[a-z0-9_]+\b|\d|"
                      r"\"[^\"]{2,}\"|\b\w+\.(?:py|ex|exs|js|ts|tsx|css|json|md|rs|go|rb|java|ya?ml|toml|sh)\b")
# an idea weighed, not a choice made: alternatives still open
UNDECIDED = re.compile(r"\b(?:either|or use|or try|or maybe|maybe|perhaps|might|could|different approach)\b", re.I)
REASON = re.compile(r"\b(?:because|since|so that|instead of|rather than|otherwise|to avoid|which means)\b", re.I)


# a count the agent wrote in its own words ("14 tests covering …", "7 new tests"): the steps give the
# counts from the records themselves, and the agent's own tallies are often wrong
TALLY = re.compile(r"\b\d{1,5}\s+(?:new\s+|more\s+)?(?:tests?|test blocks|test cases|specs?|doctests?|failures?|errors?|warnings?)\b",
                   re.I)


# an explanation the agent gives without evidence: a "known bug", a "false positive", a guess at the cause
BELIEF = re.compile(r"\b(?:(?:a |the )?known (?:bug|issue|conflict|limitation|problem|quirk)|false positive|"
                    r"(?:compiler|elixir|python|library|upstream) (?:bug|issue)|is a bug in|flaky|"
                    r"probably|likely because|must be (?:a|the|because)|i (?:think|believe|suspect))\b", re.I)


def stands_alone(text: str) -> bool:
    """A fact or decision a reader can use without the conversation around it."""
    return not ANAPHOR.match(text.strip()) and bool(CONCRETE.search(text)) and not UNDECIDED.search(text)


def _clean_facts(items: list[Item], said: str = "") -> list[Item]:
    """Facts and decisions that can stand as current and alone: no status words that go stale,
    no self-praise, no sentence that only points back, nothing already said above; the ones
    that give a reason first."""
    kept = [i for i in items if not STALE.search(i.text) and not SELF_PRAISE.search(i.text)
            and not TALLY.search(i.text) and i.text not in said and stands_alone(i.text)]
    return sorted(kept, key=lambda i: not REASON.search(i.text))


def write(d: Distilled, budget: int, count: Count, every_file: bool = False) -> Context:
    """The summary filled from `d` within `budget` tokens (as counted by `count`): the request,
    where the work stands and what comes next first, then the session as steps in order, then
    open errors, files, pending items, decisions and facts while the budget lasts. A capped
    section says how many of its items were left out. Detail is budget-adaptive: the steps are
    written at the richest level (LEVELS) at which they, Current work and Next step fit whole."""
    if every_file:
        return _write(d, budget, count, True, LEVELS[0])[0]
    ctx = None
    for level in LEVELS:
        ctx, lost = _write(d, budget, count, False, level)
        if not lost:
            break
    return ctx


def standing(story, focus, latest: str = "", cap: int = LEVELS[2][0], more: bool = False) -> "OrderedDict[str, list]":
    """Where the work stands, section by section, as the summary says it first: Current work, Next
    step (a git-ignored path to force-add before the commit), then what this kind of session needs
    (core.kinds: the plan part by part, the findings so far, what was looked at); `more` adds those
    kinds' later lines (the summary puts them after the files). The model summarizers read the same."""
    from .focus import current_work_lines, next_step_lines

    out: "OrderedDict[str, list]" = OrderedDict()
    out["Current work"] = current_work_lines(story, focus, latest, cap)
    nxt = next_step_lines(story, focus, latest)
    at = next((k for k, x in enumerate(nxt) if x.startswith(("After that", "Still open after that"))), len(nxt))
    out["Next step"] = nxt[:at] + ignored_lines(story, focus) + nxt[at:]  # before the commit, not after the next item
    for name, lines, later in focus.kind:  # what this kind of session needs, best first
        out.setdefault(name, []).extend(list(lines) + (list(later) if more else []))
    if more:
        out[SPEC] = spec_check(story, focus)
    return OrderedDict((k, v) for k, v in out.items() if v)


def _write(d: Distilled, budget: int, count: Count, every_file: bool, level) -> tuple[Context, bool]:
    """write() at one detail level: the summary, and whether a step, Current work or Next step
    line was left out."""
    ctx = Context()
    task_cap = max(160, min(TASK_CAP, budget))
    ctx.task = task_brief(d.task, task_cap) if d.task else ""
    if d.latest and task_brief(d.latest, task_cap) != ctx.task and " ".join(d.latest.split()) not in " ".join(d.task.split()):
        ctx.latest = brief(d.latest, max(120, min(LATEST_CAP, budget // 2)))
    if not ctx.task:
        ctx.task = "(no user request found in this span)"
    used = count(f"## Task\n{ctx.task}\n") + (count(f"## Latest request\n{ctx.latest}\n") if ctx.latest else 0)
    chosen: "OrderedDict[str, list[Item]]" = OrderedDict()
    left_out: dict[str, int] = {}

    def add(name: str, item: Item) -> bool:
        nonlocal used
        cost = count(item.render() + "\n") + (0 if chosen.get(name) else count(f"## {name}\n\n"))
        if used + cost > budget:
            left_out[name] = left_out.get(name, 0) + 1
            return False
        chosen.setdefault(name, []).append(item)
        used += cost
        return True

    story, focus = d.story, d.focus
    if story is not None and focus is not None:
        for name, lines in standing(story, focus, d.latest, level[0]).items():
            for line in lines:
                add(name, Item(text=line))
        chosen.setdefault(SPEC, [])  # its place, after Next step; filled last (spec_check), when room is left
    if story is not None:
        from .focus import work_item_lines

        stepped = {}  # an item a step is named for: its title is in that step's heading, said once
        for n, e in enumerate([e for e in story.episodes if e.busy()], 1):
            if e.item and story.titles.get(e.item):
                stepped.setdefault(e.item, n)
        lines, by_state = [], OrderedDict()  # the items steps are named for: one line, by where they stand
        for line in work_item_lines(story):
            m = re.match(r"^`([^`]+)` — (.*): ([^:]*)$", line)
            if m and m.group(1) in stepped and m.group(1) != story.parent and \
                    m.group(2) == brief(story.titles[m.group(1)], 110):
                state = re.sub(r"^closed, committed \w+$", "closed and committed", m.group(3))
                by_state.setdefault(state, []).append(m.group(1))
                if len(by_state) == 1 and len(by_state[state]) == 1:
                    lines.append(None)  # where the line goes
                continue
            lines.append(line)
        if by_state:
            def steps_of(ids):
                ns = [stepped[i] for i in ids]
                return f"step {ns[0]}" if len(ns) == 1 else (f"steps {ns[0]}–{ns[-1]}" if ns == list(range(ns[0], ns[-1] + 1))
                                                              else "steps " + ", ".join(map(str, ns)))
            joined = "; ".join(", ".join(f"`{i}`" for i in ids) + f": {st} ({steps_of(ids)})" for st, ids in by_state.items())
            lines = [joined if x is None else x for x in lines]
        for line in lines:
            add("Work items", Item(text=line))
    reqs = []
    for f in d.requests:
        key = " ".join(re.findall(r"\w+", brief(f.text, 300).lower()))
        if not any(key == " ".join(re.findall(r"\w+", brief(r, 300).lower())) for r in reqs):
            reqs.append(f.text)
    answers = story.answers if story is not None else []
    shown = {" ".join(re.findall(r"\w+", x.lower())) for x in (ctx.task, ctx.latest, d.latest or "") if x}
    said_above = all(" ".join(re.findall(r"\w+", brief(r, 300).lower())) in shown or
                     " ".join(re.findall(r"\w+", r.lower())) in shown for r in reqs)
    if (len(reqs) > 1 or (reqs and answers)) and not (said_above and not answers):
        for k, r in enumerate(reqs, 1):
            add("User requests", Item(text=f"{k}. {brief(r, 300)}"))
    for q, a in answers:  # the user's choices, asked by the agent: decisions that stand
        add("User requests", Item(text=f"Answered \"{q}\": {a}"))
    if story is not None and not every_file:
        proj = project_line(story)
        if proj:
            add("Project", Item(text=proj))
    steps = [e for e in (story.episodes if story is not None else []) if e.busy()]
    # the steps of an earlier summary come first; a step that continues the last of them merges with it
    units: list[list] = []   # [label, episode or None, items carried from an earlier summary]
    for name, items in d.prior_steps:
        units.append([STEP_NUM.sub("", name), None, list(items)])
    for ep in steps:
        label = step_heading(ep, story)
        if ep is steps[-1] and focus is not None and getattr(focus.outcome, "kind", None) == "submitted":
            label = label.replace("(in progress, not committed)", "(submitted)")  # SWE-agent submits, never commits
        if units and units[-1][1] is None and (
                units[-1][0].rsplit(" (", 1)[0] == label.rsplit(" (", 1)[0] or
                (units[-1][0].endswith("(in progress, not committed)") and not ep.item and not ep.requests)):
            if not ep.item and not ep.requests:  # the same work, continued: keep its name
                label = units[-1][0].rsplit(" (", 1)[0] + " (" + label.rsplit(" (", 1)[-1]
            units[-1][0], units[-1][1] = label, ep
            continue
        units.append([label, ep, []])
    # every step's heading first (the order of events), then their details, newest first
    heads = {}
    for n, u in enumerate(units, 1):
        name = f"Step {n}: {u[0]}"
        cost = count(f"## {name}\n\n")
        if used + cost <= budget:
            heads[n] = name
            chosen[name] = []
            used += cost
    # the decisions and findings whose records belong to a step go under it ("Decided:", "Found:"),
    # or nowhere when the step already says them; only the rest stay in Decisions / Facts
    notes: dict = {}
    folded: set = set()
    if story is not None and not every_file:  # CONTEXT.md keeps seed 001's Decisions and Facts sections
        for label, facts in (("Decided", d.decisions), ("Noted", d.findings)):
            for f in facts:
                kept = _clean_facts(_facts_items([f]))
                ep = next((story.step_of.get(x) for x in f.refs if story.step_of.get(x)), None)
                if kept and ep is not None and ep.busy():
                    # a cause the agent asserted without proof in the records is its belief, not a fact
                    said = "The agent's belief (not verified in the span)" if BELIEF.search(kept[0].text) else label
                    notes.setdefault(ep.index, []).append((said, kept[0].text))
                    folded.add(kept[0].text)
    # every step's core lines (what it came to) first, newest first, then the details, then what
    # was decided and found; each step's lines keep their order
    per_step = {}
    for n in range(len(units), 0, -1):
        name = heads.get(n)
        if name is None:
            continue
        label, ep, carried = units[n - 1]
        items = list(carried)
        if ep is not None:
            items += step_items(ep, story, ep is steps[0], d.task, focus.open_errors if focus else (),
                                {fc.path for fc in focus.uncommitted} if focus and "Current work" in chosen else (),
                                level, module_names(d))  # (module_names also fills story.memo["named"])
            told = _words(" ".join(it.text for it in items))
            for label, text in notes.get(ep.index, ()):
                if len(_words(text) - told) >= 3:  # says something the step does not
                    items.append(Item(text=f"{label}: {text}"))
                    told |= _words(text)
        per_step[name] = items

    def rank(it: Item) -> int:
        return 0 if CORE.match(it.text) else 2 if it.text.startswith(("Decided: ", "Noted: ")) else 1
    short = False  # a step's core or detail line did not fit (its notes may be left out)
    for r in (0, 1):  # the notes (rank 2) come after the index of names and the files read
        for name, items in per_step.items():
            for it in items:
                if rank(it) == r and not add(name, it):
                    short = True
    cands = candidates(d)
    # errors: only those still open (resolved ones are told in their step, with their fix)
    open_errs = [e for e in d.errors if e.status != "resolved"]
    told = {e.text for ep in steps for e in ep.errors if e.kind != "tool" and (e.resolved or e.kind != "command")}
    told |= {e.text for e in (focus.open_errors if focus else ())}
    # a tool's own complaint (an edit the editor rejected, a read too big) is not the work's error
    told |= {e.text for ep in steps for e in ep.errors if e.kind == "tool"}
    # nor is a look-around command that failed (a probe, a path that is not there), in any episode
    told |= {e.text for ep in (story.episodes if story is not None else ()) for e in ep.errors
             if e.kind == "command" and not e.resolved}
    for e in reversed(open_errs):
        if any(e.text.startswith(t[:60]) or t.startswith(e.text[:60]) for t in told):
            continue
        src = f" (from {e.source})" if e.source else ""
        add("Errors", Item(text=brief(e.text, 200) + src))
    # files: changed ones are in their steps; here every path once, changed first
    changed = [it for it in cands["Files"] if not it.text.endswith(("— read", "— searched"))]
    read = [it for it in cands["Files"] if it.text.endswith(("— read", "— searched"))]
    shown = "" if every_file else "\n".join(it.text for its in chosen.values() for it in its)
    for it in changed:
        p = it.text.strip("`").split("`")[0]
        if f"`{p}`" in shown:
            continue  # its step or Current work already says what changed in it
        if not TEMP_PATH.search(p) and not BUILD_PATH.search(p):
            add("Files", it)
    said_now = "\n".join(it.text for its in chosen.values() for it in its)
    pending = [it for it in cands["Pending"] if not (focus is not None and focus.plan_step and
                                                     it.text.endswith("(in progress)"))
               and it.text.replace(" (in progress)", "") not in said_now]
    for it in pending:
        add("Pending", it)
    done_errs = []
    for e in reversed([e for e in d.errors if e.status == "resolved"]):
        if any(e.text.startswith(t[:60]) or t.startswith(e.text[:60]) for t in told):
            continue
        src = f" (from {e.source})" if e.source else ""
        done_errs.append(Item(text=brief(e.text, 200) + src + " — resolved later"))
    said = "\n".join(it.text for its in chosen.values() for it in its)
    decisions = [it for it in _clean_facts(cands["Decisions"], said) if it.text not in folded]
    if story is not None:  # a decision says which step it was taken in
        where = {}
        for f in d.decisions:
            ep = next((story.step_of.get(x) for x in f.refs if story.step_of.get(x)), None)
            if ep is not None and ep.busy():
                where[brief(f.text, 260)] = ep
        shown = {e.index: n for n, e in enumerate(steps, 1)}
        for it in decisions:
            ep = where.get(it.text)
            if ep is not None and ep.index in shown:
                it.text = f"In step {shown[ep.index]}" + (f" (`{ep.item}`)" if ep.item else "") + f": {it.text}"
    rest = [("Errors", done_errs), ("Decisions", decisions),
            ("Facts", [it for it in _clean_facts(cands["Facts"], said) if it.text not in folded]),
            ("Constraints", [] if "User requests" in chosen else [c for c in cands["Constraints"] if c.text not in said])]
    if every_file:  # CONTEXT.md keeps the artifact trail one path a line (`path` — action)
        for it in read:
            add("Files", it)
        read = []
    paths = [p for p in (it.text.split("`")[1] for it in read if "`" in it.text)
             if not TEMP_PATH.search(p) and not BUILD_PATH.search(p)]
    # a folder searched or listed is not a file read (`lib`, `config` beside `config/dev.exs`)
    searched = {it.text.split("`")[1] for it in read if "`" in it.text and it.text.endswith("— searched")}
    paths = [p for p in paths if not any(q.startswith(p.rstrip("/") + "/") for q in paths + list(d.files))
             and not (p in searched and "." not in p.rsplit("/", 1)[-1])
             and not (story is not None and story.installs and MANIFEST.search(p))]  # an install changed it
    if paths:
        line = Item(text="Read, not changed: " + ", ".join(f"`{p}`" for p in paths[:30]))
        if not add("Files", line) and len(paths) > 8:  # the files read, whole, are not worth a poorer step
            add("Files", Item(text=f"Read, not changed (8 of {len(paths)}): " +
                              ", ".join(f"`{p}`" for p in paths[:8])))
    for name, items in per_step.items():
        for it in items:
            if rank(it) == 2:
                add(name, it)
        order = {id(it): k for k, it in enumerate(items)}
        chosen[name].sort(key=lambda it: order.get(id(it), len(order)))
    for name, _, more in (focus.kind if focus is not None else ()):
        for line in more:  # the rest of what this kind of session has, after the files
            add(name, Item(text=line))
    if story is not None and focus is not None and not every_file:
        for line in spec_check(story, focus):
            add(SPEC, Item(text=line))
    pos = {n: 0 for n, _ in rest}
    progress = True
    while progress:
        progress = False
        for name, items in rest:
            if pos[name] < len(items):
                it = items[pos[name]]
                pos[name] += 1
                add(name, it)
                progress = True
    for name, n in left_out.items():
        # what the user asked for and what was decided is never cut silently; a step's detail lines are
        # (a count of them tells a successor nothing it can act on)
        if name not in COUNTED:
            continue
        if name in chosen and chosen[name] and n:
            note = Item(text=f"({n} more not shown: over the summary's token budget)")
            while used + count(note.render() + "\n") > budget and len(chosen[name]) > 1:
                used -= count(chosen[name].pop().render() + "\n")  # room for the count of what is left out
                n += 1
                note = Item(text=f"({n} more not shown: over the summary's token budget)")
            # still no room: the count goes in before the last detail lines of the least urgent sections
            spare = [k for k in reversed(chosen) if k not in COUNTED and k not in ("Current work", "Next step")]
            for k in spare:
                while used + count(note.render() + "\n") > budget and len(chosen[k]) > 1:
                    used -= count(chosen[k].pop().render() + "\n")
            if used + count(note.render() + "\n") <= budget:
                chosen[name].append(note)
                used += count(note.render() + "\n")
    for name, items in chosen.items():
        if items or name.startswith("Step "):
            ctx.sections[name] = items
    lost = short or any(n in ("Current work", "Next step", "Work items") for n in left_out)
    return ctx, lost


COUNTED = ("Pending", "Decisions", "Constraints", "User requests", "Errors", "Work items")


def everything(d: Distilled) -> Context:
    """The template with every bullet the facts support (the CONTEXT.md on disk keeps all)."""
    return write(d, budget=10 ** 9, count=lambda s: 0, every_file=True)
