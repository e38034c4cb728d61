"""Where the work stands at the end of a span, and what comes next (pure, deterministic).

From the span's episodes (core.episodes): the work item or plan step in progress, the files
changed since the last commit (uncommitted work) and what changed in them, the checks run
since the last edit, the errors still open, the agent's last words, how the previous items
were finished (the check, close and commit commands they ended with) and the items still open.
Compaction writes it as Current work / Next step; relevance scoring can use the same facts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from .episodes import TEMP_PATH, Episode, Story, build, carry_errors, short_path
from .episodes import PLAN_CALLS, _claims, _closes, plan_steps  # noqa: F401 (PLAN_CALLS, plan_steps: this module's definition of current work)
from .requests import brief

FINISH = re.compile(r"^(?:mix (?:test|credo|compile|format)|pytest|npm (?:run )?(?:test|build|lint)|cargo (?:test|build|clippy)|"
                    r"go (?:test|build|vet)|ruff|mypy|tsc|eslint|make)\b")


MANIFEST = re.compile(r"(?:^|/)(?:package(?:-lock)?\.json|yarn\.lock|pnpm-lock\.yaml|mix\.(?:exs|lock)|Cargo\.(?:toml|lock)|"
                      r"pyproject\.toml|requirements[\w.-]*\.txt|go\.(?:mod|sum)|Gemfile(?:\.lock)?|poetry\.lock|uv\.lock)$")


# what an install command writes, by its tool: the manifest and its lock file
INSTALL_FILES = (("npm ", ("package.json", "package-lock.json")), ("yarn ", ("package.json", "yarn.lock")),
                 ("pnpm ", ("package.json", "pnpm-lock.yaml")), ("cargo add", ("Cargo.toml", "Cargo.lock")),
                 ("mix deps.get", ("mix.lock",)), ("poetry add", ("pyproject.toml", "poetry.lock")),
                 ("uv add", ("pyproject.toml", "uv.lock")), ("bundle add", ("Gemfile", "Gemfile.lock")),
                 ("go get", ("go.mod", "go.sum")))


def install_writes(cmd: str, story: Story) -> str:
    """The manifest files an install command changes (`npm install x` → `assets/package.json` and
    `assets/package-lock.json` when the span knew the manifest there), as backticked paths; "" for
    any other command."""
    names = next((n for tool, n in INSTALL_FILES if cmd.startswith(tool)), ())
    if not names:
        return ""
    seen = [short_path(p, story.cwd) for p in story.paths_seen if p.rsplit("/", 1)[-1] == names[0]]
    base = seen[-1].rsplit("/", 1)[0] + "/" if seen and "/" in seen[-1] else ""
    return " and ".join(f"`{base}{n}`" for n in names)


@dataclass
class Focus:
    item: str | None = None
    item_title: str | None = None
    plan_step: str | None = None
    uncommitted: list = field(default_factory=list)     # FileChange, since the last commit
    commands: list = field(default_factory=list)        # notable commands since the last commit
    checks_after_edit: list = field(default_factory=list)  # (command, history, ok) run after the last edit
    edited_after_checks: bool = False
    open_errors: list = field(default_factory=list)
    last_words: str = ""
    last_doc: list = field(default_factory=list)        # the headings of a document the last message held
    asked: bool = False                                 # the span ends on the agent's question to the user
    ends_on_user: bool = False                          # the span ends on the user's request
    words_stale: bool = False                           # the agent's last words came before the latest request
    finish_pattern: list = field(default_factory=list)  # how the previous item was finished
    finish_note: str = ""                               # what failed in finishing it, and what was done instead
    finished_item: str | None = None
    next_items: list = field(default_factory=list)      # (id, title) still open
    plan_pending: list = field(default_factory=list)
    committed: bool = False                             # the last episode ended in a commit
    searches: list = field(default_factory=list)        # conclusions of the searches after the last edit
    acts_after_words: list = field(default_factory=list)  # the calls made with or after the agent's last words
    place: object = None                                # core.environment.Place: where the work happens
    skill: object = None                                # core.guidance.Skill: the command / skill the work runs under
    policy: list = field(default_factory=list)          # the system prompt's rules the latest request touches
    item_rules: list = field(default_factory=list)      # the item in progress: its explicit constraints
    item_plan: list = field(default_factory=list)       # (part, sub-points, done?) of the plan the agent stated for it
    acts_since_request: list = field(default_factory=list)  # the calls made after the latest request
    rejected_whys: list = field(default_factory=list)   # each refused edit attempt's reason, in order
    rejected_fix: tuple = ("", "")                      # (the edit to make instead, why), when the tool's preview shows it
    half_applied: list = field(default_factory=list)    # core.blockers.half_applied: removed names still in use
    closes_parent: str | None = None                    # the epic whose last open child is in progress
    outcome: object = None                              # core.outcome.Outcome: the session is finished
    kind: list = field(default_factory=list)            # core.kinds: (section, lines) this kind of session needs
    unfinished: str | None = None                       # the last call, when it has no recorded result
    rejected: tuple | None = None                       # (attempts, edit, file, why): the last edit(s) refused
    shape: str = "coding"                               # core.kinds.shape: swe | service | explore | aider | coding
    unchecked: tuple | None = None                      # (file, last run) a SWE-agent edit not run since
    failed_action: str = ""                             # a dialogue's last action, failed, not answered yet
    background: list = field(default_factory=list)      # (command, output file): still running at the cut
    dirty: list = field(default_factory=list)           # what the last `git status` after the last commit showed
    plan: object = None                                 # PlanState: the plan presented last, and its fate
    research: list = field(default_factory=list)        # the web lookups and delegated tasks, as sources

    @property
    def half_done(self) -> bool:
        return bool(self.uncommitted)


DOC_MIN_CHARS = 600   # a last message this long with headings is a document (a draft, a plan), not a remark


def _document(text: str) -> tuple[str, list[str]]:
    """A long message with headings: the words before its first heading, and its headings
    (("", []) for any other message)."""
    heads = re.findall(r"(?m)^#{1,4}\s+(.+?)\s*#*$", text or "")
    if len(text or "") < DOC_MIN_CHARS or len(heads) < 2:
        return "", []
    from .shorten import unemphasize

    return re.split(r"(?m)^#", text, maxsplit=1)[0], [unemphasize(h) for h in heads]


def _last_sentences(text: str, n: int = 2) -> str:
    lead, heads = _document(text)
    if heads:  # its last lines are the document's, not the agent's state
        text = lead
    text = re.sub(r"```.*?```", " ", text or "", flags=re.S)
    # a table row or a rule is not a sentence: the last words are the agent's prose
    text = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*(?:\||[-=*_]{3,}\s*$)", ln))
    # inline code is one word: a `// AI! …` inside backticks ends no sentence
    codes: list[str] = []
    text = re.sub(r"`[^`\n]+`", lambda m: codes.append(m.group(0)) or f"\x00{len(codes) - 1}\x00", text)
    sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 3]
    while len(sents) > 1 and sents[-1].rstrip("*_ ").endswith(":"):
        sents.pop()  # "Here is the block:" introduces code, it says nothing of where the work stands
    sents = [re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], x) for x in sents]
    # whole sentences, newest last, while they fit; one too long alone is cut at a word
    picked: list[str] = []
    for x in reversed(sents[-n:]):
        if picked and len(" ".join([x] + picked)) > 320:
            break
        picked.insert(0, x)
    said = " ".join(picked)
    # an interjection ("Perfect!", "Great.") is the agent's mood, not where the work stands
    said = re.sub(r"^(?:(?:perfect|great|excellent|good|awesome|nice|okay|ok|alright)[!.,]\s+)+", "", said, flags=re.I)
    return brief(said, 320)


# the agent's words that announce what it does next
INTENT = re.compile(r"\b(?:let me|let's|let us|i'll|i will|i’ll|i'm going to|i am going to|next,? i|now i|i need to|"
                    r"we need to|we should|i’m (?:doing|checking|going)|i'm (?:doing|checking)|then i)\b", re.I)
# the agent's last message asks the user something and waits
ASKS = re.compile(r"\?\s*$|\b(?:please (?:confirm|provide|let me know|choose|select)|let me know|would you like)\b", re.I)


# What "current work" means, one definition for compaction (Current work / Next step, from the
# span's episodes) and for relevance scoring (core.working_set.FocusTracker, streaming): the
# plan step in progress, the work item claimed and not closed, the agent's last words.

def step_in_progress(plan) -> str | None:
    """The plan step in progress: the first one the latest plan marks so."""
    return next((s for s, st in plan if st == "in_progress"), None)


def items_claimed(cmd: str) -> list[str]:
    """The work items a command puts in progress (`bd update ID --status in_progress`)."""
    return _claims(cmd)


def items_closed(cmd: str) -> list[str]:
    """The work items a command closes (`bd close ID…`, `bd update ID --status closed`)."""
    return _closes(cmd)


def last_words(text: str) -> str:
    """The agent's last words: the last sentences of its newest text (code, table rows left out)."""
    return _last_sentences(text)


def open_errors(span: Sequence[dict]) -> list[str]:
    """The errors a span leaves open, as Current work says them: a failed check or git step
    (tests, linters, a compile, a commit) not resolved since, after the last commit. Relevance
    scoring keeps the terms they name in play (core.working_set)."""
    story = build(span)
    return [e.text for e in current(story, story.cwd).open_errors]


def current(story: Story, cwd: str | None = None) -> Focus:
    f = Focus()
    eps: list[Episode] = story.episodes
    f.last_words = last_words(story.last_text)
    f.last_doc = _document(story.last_text)[1]
    if not eps:
        return f
    last = eps[-1]
    f.item = last.item if last.item and story.item_status.get(last.item) != "closed" else None
    f.item_title = story.titles.get(f.item) if f.item else None
    f.plan_step = step_in_progress(story.plan)
    f.plan_pending = [s for s, st in story.plan if st == "pending"]
    f.committed = bool(last.commits) and last.last_edit < _commit_index(story)
    # uncommitted: files changed in episodes after the last one that committed
    tail = []
    for e in reversed(eps):
        if e.commits:
            break
        tail.insert(0, e)
    seen: dict = {}
    for e in tail:
        for fc in e.files.values():
            if TEMP_PATH.search(fc.path) or (fc.action == "created" and fc.fate == "later deleted"):
                continue  # a scratch file made and removed again is no uncommitted work
            if fc.path in seen:  # one line a file, whatever the steps that touched it
                prev = seen[fc.path]
                for attr in ("added", "changed", "removed"):
                    getattr(prev, attr).extend(x for x in getattr(fc, attr) if x not in getattr(prev, attr))
                prev.shapes.extend(x for x in fc.shapes if x not in prev.shapes)
                prev.private |= fc.private
                prev.defaults.update(fc.defaults)
                prev.tests_added += fc.tests_added
                prev.plus += fc.plus
                prev.minus += fc.minus
                prev.texts.extend(fc.texts)
                continue
            from dataclasses import replace

            seen[fc.path] = replace(fc, added=list(fc.added), changed=list(fc.changed), removed=list(fc.removed),
                                    shapes=list(fc.shapes), private=set(fc.private), defaults=dict(fc.defaults),
                                    texts=list(fc.texts))
            f.uncommitted.append(seen[fc.path])
        f.commands += e.commands
    if last.last_edit >= 0:
        f.checks_after_edit = [(c.command, c.history(), c.ok) for c in last.checks.values() if c.last_index > last.last_edit]
        f.edited_after_checks = any(c.last_index < last.last_edit for c in last.checks.values())
    carry_errors(story)
    for e in (tail or [last]):  # errors of committed steps are history, not where the work stands
        # a failed check or git step blocks the work; a failed look-around command does not
        f.open_errors += [x for x in e.errors if not x.resolved and x.kind in ("check", "git")]
    f.last_words = last_words(story.last_text)
    for e in reversed(eps[:-1] if not last.commits else eps):
        if e.commits:
            pattern, fams = [], set()
            for c in sorted(e.checks.values(), key=lambda c: len(c.command)):  # the plainest form of each
                m = FINISH.match(c.command)
                if m and m.group(0) not in fams:
                    fams.add(m.group(0))
                    pattern.append((c.last_index, c.command))
            pattern = [_generic(c) for _, c in sorted(pattern)]
            cur_item = f.item or "<item>"
            pattern += [f"bd close {cur_item}" for _ in e.closed[:1]]
            pattern.append("git commit")
            if e.pushed:
                pattern.append("git push")
            f.finish_pattern = pattern
            f.finished_item = e.item
            break
    done = {i for i, st in story.item_status.items() if st == "closed"}
    f.next_items = [(i, story.titles.get(i, "")) for i, d in story.listed
                    if not d and i not in done and i != f.item and i != last.item]
    if not f.next_items and not f.item:  # items the span created and nobody started: the work to come
        made = [(i, t) for e in eps for i, t in e.created if story.item_status.get(i) not in ("closed", "in_progress")]
        ids = [i for i, _ in made]
        f.next_items = [(i, t or story.titles.get(i, "")) for i, t in made
                        if not any(o.startswith(i + ".") for o in ids)]  # an epic is done through its children
    # the item in progress is the last open child of its epic: finishing it closes the epic too
    if f.item and story.parent and not f.next_items and story.parent not in done and \
            any(i == f.item for i, _ in story.listed) and "bd close" in " ".join(f.finish_pattern):
        k = next(n for n, c in enumerate(f.finish_pattern) if c.startswith("bd close"))
        f.finish_pattern.insert(k + 1, f"bd close {story.parent}")
        f.closes_parent = story.parent
    return f


def _generic(cmd: str) -> str:
    """A check command without the previous item's file arguments (`mix test <files>`)."""
    words = cmd.split()
    kept = [w for w in words if not ("/" in w or re.search(r"\.\w{1,5}$", w))]
    return " ".join(kept) + (" <files>" if len(kept) < len(words) else "")


def _commit_index(story: Story) -> int:
    return story.last_commit_index


def for_span(span: Sequence[dict]) -> tuple[Story, Focus]:
    story = build(span)
    f = current(story, story.cwd)
    f.searches = last_searches(span, story.cwd)
    from .outcome import detect, unfinished_call

    f.outcome = detect(span, story)
    f.unfinished = unfinished_call(span)
    from .kinds import read

    f.kind = read(span, story)
    f.rejected = rejected_edit(span, story.cwd)
    if f.rejected is not None:
        f.rejected_whys, f.rejected_fix = rejected_detail(span)
    from .blockers import half_applied

    f.half_applied = half_applied(span)
    f.background = background_runs(span)
    from .outcome import dirty_after_commit

    f.dirty = dirty_after_commit(span)
    tail = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)
            and r.get("role") in ("assistant", "tool", "user")]
    if tail and tail[-1].get("role") == "assistant" and not tail[-1].get("tool_calls"):
        last = tail[-1].get("content") if isinstance(tail[-1].get("content"), str) else ""
        f.asked = bool(ASKS.search(" ".join(last.split()[-60:])))
    from .requests import request_text

    f.ends_on_user = bool(tail) and bool(request_text(tail[-1]))
    said = max((k for k, r in enumerate(tail) if r.get("role") == "assistant" and isinstance(r.get("content"), str)
                and r["content"].strip()), default=-1)
    asked_at = max((k for k, r in enumerate(tail) if request_text(r)), default=-1)
    f.words_stale = asked_at > said  # the user spoke after the agent's last words
    spoke = max((k for k, r in enumerate(tail) if r.get("role") == "assistant" and isinstance(r.get("content"), str)
                 and r["content"].strip() and "thinking" not in (r.get("flags") or ())), default=-1)
    f.acts_after_words = acts_after(tail[spoke:]) if spoke >= 0 else []
    f.acts_since_request = acts_after(tail[asked_at + 1:]) if asked_at >= 0 else []
    from . import environment

    f.place = environment.read(span)
    f.plan = plan_state(span, story.cwd)
    if f.plan is not None and (f.plan.acted or f.outcome is not None):
        f.plan = None  # carried out (or over): the steps tell it
    if f.plan is not None and f.plan.details:
        f.kind.append(("The plan, part by part", f.plan.details, []))
    from .kinds import shape

    f.shape = shape([r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)])
    if f.outcome is None and f.shape == "service":
        f.failed_action = failed_action(span)
    if f.rejected is None and not f.uncommitted and f.outcome is None and f.shape == "swe":
        f.unchecked = unchecked_edit(span)
    from . import guidance

    f.skill = guidance.skill_in_force(span)
    if f.outcome is None and f.shape == "coding":  # the other kinds have their own sections
        from .requests import last_request

        looked = looked_at(span, story.cwd, enquiry=f.plan_step or last_request(span) or "",
                           skill_at=f.skill.at if f.skill is not None else -1)
        if looked:
            f.kind.append(("Found since the last change", looked, []))
    if f.outcome is None and f.shape == "service":
        f.policy = guidance.policy_lines(span)
    if f.item:
        f.item_rules = guidance.item_constraints(span, f.item)
    if f.uncommitted:
        f.item_plan = plan_left(span, story, f)
    if f.finish_pattern:
        f.finish_note = skill_failed_before_commit(span)
    known = set(story.titles) | set(story.item_status) | {i for i, _ in story.listed} | \
        {i for e in story.episodes for i, _ in e.created}
    f.research = research_lines(span, known=known)
    if f.research:
        f.kind.append(("Sources", [], f.research))  # after the files: where the findings came from
    return story, f


def plan_left(span: Sequence[dict], story: Story, f: Focus) -> list[tuple[str, list, bool | None]]:
    """The numbered plan the agent stated for the work in progress before its first edit, each part
    with whether the uncommitted changes already cover the files it names (None: it names none);
    [] when it stated none, or when every part it names files for is covered."""
    from .guidance import stated_plan

    last = story.episodes[-1]
    recs = [r for r in span if isinstance(r, dict)]
    start = last.start
    if f.item:  # the plan for the item comes after its claim
        start = max([start] + [k for k, r in enumerate(recs) for c in r.get("tool_calls") or ()
                               if f.item in items_claimed(str(_call_args(c)[1].get("command") or ""))])
    first = next((k for k in range(start, len(recs)) for c in recs[k].get("tool_calls") or ()
                  if _call_args(c)[0] in EDITS), -1)
    plan = stated_plan(recs, start, first)
    changed = {short_path(fc.path, story.cwd).rsplit("/", 1)[-1] for fc in f.uncommitted}
    out = []
    for part, subs in plan:
        names = {n.rsplit("/", 1)[-1] for n in re.findall(r"`([\w./-]+\.\w{1,6})`", part)}
        out.append((part, subs, bool(names & changed) if names else None))
    return out if any(done is False for _, _, done in out) else []


def skill_failed_before_commit(span: Sequence[dict]) -> str:
    """A skill for finishing work (a commit skill) that failed, after which the agent committed by
    hand: "the `x:commit` skill failed (its error), so the commit was made with `git commit`"; ""
    when the span shows none. The successor would try the skill again and fail the same way."""
    from .kinds import _calls, _command, _failed, _text

    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    failed, said = "", ""
    for _, name, args, res in _calls(msgs):
        skill = str(args.get("skill") or args.get("command") or "") if name == "Skill" else ""
        if skill and re.search(r"commit|push|ship|finish", skill, re.I) and res is not None and _failed(res):
            lines = [ln.strip() for ln in _text(res).splitlines() if ln.strip()]
            failed = skill
            why = next((ln for ln in lines if re.match(r"^(?:fatal|error)\b", ln, re.I)), lines[0] if lines else "")
            failed = f"the `{skill}` skill failed (`{brief(why, 110)}`)"
        elif failed and re.search(r"\bgit\s+commit\b", _command(args)) and res is not None and not _failed(res):
            said, failed = failed + ", so the commit was made with `git add <files> && git commit` directly", ""
    return said


def acts_after(recs: Sequence[dict]) -> list[str]:
    """The calls in these records, each in a few words (`Write plan.md`, `` `mix test` ``, `ExitPlanMode`):
    what the agent did after (or with) its last words."""
    out = []
    for r in recs:
        for c in r.get("tool_calls") or ():
            name, args = _call_args(c)
            cmd = str(args.get("command") or args.get("cmd") or "").strip()
            path = str(args.get("file_path") or args.get("path") or "")
            if cmd and not re.match(r"^(?:edit|create|insert)\b", cmd):
                out.append(f"`{brief(' '.join(cmd.split()), 60)}`")
            elif cmd:
                out.append(f"`{cmd.split(chr(10), 1)[0]}`")
            elif path:
                out.append(f"{name} `{path.rsplit('/', 1)[-1].rsplit(chr(92), 1)[-1]}`")
            else:
                out.append(f"`{name}`")
    return out


FILE_SHOWN = re.compile(r"\[File: (\S+) \(\d+ lines total\)\]|\(Open file: ([^)\n]+)\)")


def rejected_edit(span: Sequence[dict], cwd: str | None = None) -> tuple | None:
    """The last edit attempts when the tool refused them all (a linter's syntax error, a string
    to replace that is not there) and no edit applied since: (attempts, the edit, its file, why),
    else None. The file is unchanged by them: the successor must redo the edit, not test it."""
    got = _rejected(span)
    if got is None:
        return None
    attempts, last, where, why = got[:4]
    from .kinds import _short

    return attempts, last, _short(short_path(where, cwd)) if where else "", why


def rejected_detail(span: Sequence[dict]) -> tuple[list[str], tuple[str, str]]:
    """For the edits refused at the end of the span: each attempt's reason, in order, and the
    range to use when the tool's preview shows why the last one failed (core.blockers.range_fix)."""
    from .blockers import range_fix

    got = _rejected(span)
    if got is None:
        return [], ("", "")
    tries = got[4]
    return [w for _, w, _, _ in tries], range_fix(tries[-1][2], tries[-1][3])


def _rejected(span: Sequence[dict]) -> tuple | None:
    from .kinds import _calls, _command, _failed, _text
    from .outcome import _is_edit

    attempts, last, where, why, shown = 0, "", "", "", ""
    tries: list = []
    for _, name, args, res in _calls([r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]):
        if res is not None:
            m = FILE_SHOWN.search(_text(res))
            target = str(args.get("file_path") or args.get("path") or "")
            if not _is_edit(name, args):
                if m:
                    shown = (m.group(1) or m.group(2) or "").strip()
                continue
            if _failed(res) or _text(res).lstrip().startswith("<tool_use_error>"):
                attempts += 1
                last = _command(args).split("\n", 1)[0] or name
                where = target or shown
                text = re.sub(r"</?tool_use_error>", "", _text(res))
                w = re.search(r"E\d+ (\w+Error: [^\n]+)", text)
                why = w.group(1) if w else brief(next((ln for ln in text.splitlines() if ln.strip()), ""), 140)
                tries.append((last, why, _command(args), text))
            else:
                attempts, tries = 0, []
                if m:
                    shown = (m.group(1) or m.group(2) or "").strip()
    if not attempts:
        return None
    return attempts, last, where, why, tries


# Claude Code's own answer to a `run_in_background` call (the whole result, not a transcript that quotes one)
BACKGROUND = re.compile(r"^\s*Command running in background with ID: (\w+)\.?\s*Output is being written to: "
                        r"([^\s\"\\]+?)\.?\s*$")


def background_runs(span: Sequence[dict]) -> list[tuple[str, str]]:
    """Commands started in the background whose output nobody read before the cut (no read of
    their output file, no TaskOutput/BashOutput call, no notification that they finished):
    (command, output file)."""
    started: dict = {}   # id -> (command, path)
    calls: dict = {}
    for r in span:
        text = r.get("content") if isinstance(r.get("content"), str) else ""
        for c in r.get("tool_calls") or ():
            name, args = _call_args(c)
            calls[c.get("id")] = str(args.get("command") or "")
            blob = " ".join(str(v) for v in args.values())
            for bid, (_, path) in list(started.items()):
                if bid in blob or path in blob:
                    del started[bid]  # its output was read or waited for
        if r.get("role") == "tool":
            m = BACKGROUND.match(text)
            if m:
                started[m.group(1)] = (calls.get(r.get("tool_call_id"), ""), m.group(2))
                continue
        for bid in list(started):
            if bid in text and re.search(r"<task-notification>|completed|exit code|finished", text, re.I):
                del started[bid]
    return [(brief(" ".join(cmd.split()), 120), path) for cmd, path in started.values()]


def failed_action(span: Sequence[dict]) -> str:
    """The last call of a dialogue when it was an action that failed and the agent has not said
    anything since (a reservation update the payment could not cover): `name(args)`: the error."""
    from .kinds import ACTION, _args_line, _calls, _failed, _text

    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    calls = _calls(msgs)
    if not calls:
        return ""
    i, name, args, res = calls[-1]
    if not ACTION.match(name) or res is None or not _failed(res):
        return ""
    if any(r.get("role") == "assistant" and _text(r).strip() for r in msgs[i + 1:]):
        return ""
    return f"`{name}({brief(_args_line(args), 200)})`: {brief(_text(res), 160)}"


def unchecked_edit(span: Sequence[dict]) -> tuple[str, str] | None:
    """(the file, the last command run before it) when an edit applied after the last command
    the agent ran (a SWE-agent fix not yet run), else None."""
    from .kinds import _calls, _command, _failed, _short, _text
    from .outcome import _is_edit

    edited, ran = "", ""
    for _, name, args, res in _calls([r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]):
        cmd = _command(args)
        if _is_edit(name, args):
            if res is not None and not _failed(res):
                m = FILE_SHOWN.search(_text(res))
                edited = _short((m.group(1) or m.group(2)) if m else str(args.get("path") or "")) or "the open file"
        elif name in ("bash", "Bash", "shell") and cmd and not re.match(r"^(?:ls|cat|find|grep|cd|rm)\b", cmd):
            ran, edited = cmd, ""
    return (edited, ran) if edited else None


@dataclass
class PlanState:
    where: str = ""            # the plan file (`plan.md`), or "" when the plan came with ExitPlanMode
    title: str = ""
    parts: list = field(default_factory=list)   # its parts (Epic: …, Task 1: … (depends on Task 1))
    details: list = field(default_factory=list)  # per part: its first sentence and the files it names
    state: str = "drafted"     # drafted | presented | approved | rejected
    said: str = ""             # what the user said with a rejection
    command: str = ""          # the plugin command the request came through (`/handgemacht:create-beads`)
    acted: bool = False        # an edit or command ran after the approval


PLAN_HEAD = re.compile(r"^#{1,3}\s+((?:Epic|Task|Step|Phase|Part|Milestone|Stage)\b[^\n]{0,120})$", re.M | re.I)
DEPENDS = re.compile(r"^\s*\**Depends on\**:?\**\s*(.+)$", re.M | re.I)


def _plan_details(text: str) -> list[str]:
    """Per Epic/Task/Step part of a plan: its first sentence and the files it names."""
    from .shorten import unemphasize

    heads = list(PLAN_HEAD.finditer(text))
    out = []
    for k, m in enumerate(heads):
        body = text[m.end(): heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        body = re.sub(r"```.*?```", " ", body, flags=re.S)
        prose = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "|", "-", "*", ">"))
                 and not DEPENDS.match(ln)]
        first = unemphasize(re.split(r"(?<=[.!?])\s+", prose[0])[0]) if prose else ""
        files = list(dict.fromkeys(re.findall(r"`([\w./-]+\.\w{1,6})`", body)))
        if first or files:
            out.append(f"{brief(unemphasize(m.group(1)), 80)}: " + brief(first, 200) +
                       (f" Files: {', '.join(f'`{x}`' for x in files[:6])}." if files else ""))
    return out


def _plan_outline(text: str) -> tuple[str, list[str]]:
    """A plan's title and its parts: the Epic/Task/Step headings with what each depends on, else
    the parts its own headings name (core.episodes.plan_parts)."""
    from .episodes import plan_parts
    from .shorten import unemphasize

    title = next((unemphasize(ln.lstrip("# ")).strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    title = re.sub(r"^(?:implementation )?plan\s*[:—-]\s*", "", title, flags=re.I)  # "Plan: X" is the plan X
    heads = list(PLAN_HEAD.finditer(text))
    parts = []
    for k, m in enumerate(heads):
        body = text[m.end(): heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        dep = DEPENDS.search(body[:400])
        d = dep.group(1).strip().strip("*") if dep else ""
        part = unemphasize(m.group(1)).strip().rstrip(":")
        parts.append(part + (f" (depends on {d})" if d and d not in ("—", "-", "none", "None") else ""))
    return title, parts or plan_parts(text)


def plan_state(span: Sequence[dict], cwd: str | None = None) -> PlanState | None:
    """The plan the agent presented last (the text ExitPlanMode carried, or the markdown file it
    wrote just before), and whether the user approved it and work started on it."""
    last_md: tuple[str, str] | None = None
    plan: PlanState | None = None
    calls: dict = {}
    for r in span:
        for c in r.get("tool_calls") or ():
            name, args = _call_args(c)
            if name in ("Write",) and str(args.get("file_path") or "").lower().endswith(".md"):
                last_md = (str(args.get("file_path")), str(args.get("content") or ""))
            elif name == "ExitPlanMode":
                text = str(args.get("plan") or "")
                where = ""
                if len(text) < 80 and last_md:
                    where, text = short_path(last_md[0], cwd), last_md[1]
                if len(text) >= 80:
                    title, parts = _plan_outline(text)
                    plan = PlanState(where=where, title=title, parts=parts, state="presented", details=_plan_details(text))
                    calls[c.get("id")] = plan
                continue
            if plan is not None and (name in EDITS or name == "Bash"):
                plan.acted = True  # work went on after the plan was presented
        if r.get("role") == "tool" and r.get("tool_call_id") in calls:
            p = calls.pop(r["tool_call_id"])
            out = r.get("content") if isinstance(r.get("content"), str) else ""
            if re.search(r"\bapproved\b", out, re.I) and "error" not in (r.get("flags") or ()):
                p.state = "approved"
            elif re.search(r"doesn.t want to proceed|rejected|not approved", out, re.I):
                p.state = "rejected"
                m = re.search(r"(?:the user said|reason for the rejection)[:\s]*\n?(.+)", out, re.I | re.S)
                p.said = brief(m.group(1), 200) if m else ""
    if plan is not None:
        from .requests import plugin_command

        plan.command = plugin_command(span)
    if plan is None and last_md and re.search(r"(?:^|/)plan[\w-]*\.md$", last_md[0], re.I):
        title, parts = _plan_outline(last_md[1])
        if parts:
            plan = PlanState(where=short_path(last_md[0], cwd), title=title, parts=parts, details=_plan_details(last_md[1]))
    return plan


def _DEFINES():
    from .blockers import DEFINES

    return DEFINES


def cwd_of(story: Story) -> str | None:
    return story.cwd


def skill_lines(story: Story, f: Focus) -> tuple[list[str], list[str]]:
    from .guidance import skill_lines as lines

    approved = f.plan is not None and f.plan.state == "approved"
    return lines(f.skill, approved, f.plan_step, f.last_words, story.answers)


def plan_lines(p: PlanState) -> tuple[list[str], list[str]]:
    """Current work and Next step lines for a plan not carried out yet."""
    where = f" in `{p.where}`" if p.where else ""
    name = f"\"{brief(p.title, 100)}\"" if p.title else "the plan"
    parts = "; ".join(brief(x, 140) for x in p.parts[:10]) + (f"; and {len(p.parts) - 10} more" if len(p.parts) > 10 else "")
    cur, nxt = [], []
    if p.state == "approved":
        cur.append(f"The plan {name}{where} was approved by the user at the end of the span (plan mode exited); "
                   f"nothing of it is carried out yet.")
    elif p.state == "rejected":
        cur.append(f"The plan {name}{where} was presented and the user did not approve it" +
                   (f"; they said: \"{p.said}\"" if p.said else "") + ".")
    elif p.state == "presented":
        cur.append(f"The plan {name}{where} is presented to the user for approval; no answer yet.")
    else:
        cur.append(f"The plan {name} is drafted{where}; not presented for approval yet.")
    if parts:
        cur.append(f"Its parts, in order: {parts}.")
    if p.state == "approved":
        nxt.append(f"Carry out the approved plan{where}, part by part, in its order" +
                   (f", starting with {brief(p.parts[0], 120)}" if p.parts else "") +
                   (f", as the request's command `{p.command}` asks" if p.command else "") + ".")
    elif p.state == "rejected":
        nxt.append("Revise the plan with what the user said, and present it again.")
    elif p.state == "presented":
        nxt.append("Wait for the user's answer on the plan before carrying any of it out.")
    else:
        nxt.append(f"Present the plan{where} for the user's approval before carrying it out.")
    return cur, nxt


WEB = {"WebFetch": "url", "WebSearch": "query", "web_search": "query", "fetch": "url"}


def research_lines(span: Sequence[dict], cap: int = 8, known: set | None = None) -> list[str]:
    """The web lookups (fetched pages, searches) and the tasks delegated to subagents, as the
    sources of what the span found. A work item id in a subagent's answer that the span never
    saw exist (not in `known`) is a draft's, and says so."""
    from .episodes import ITEM_ID
    fetched, searched, tasks, also = [], [], [], []
    results = {r.get("tool_call_id"): r for r in span if r.get("role") == "tool" and r.get("tool_call_id")}
    for r in span:
        for c in r.get("tool_calls") or ():
            name, args = _call_args(c)
            res = results.get(c.get("id"))
            failed = res is not None and "error" in (res.get("flags") or ())
            if name in WEB and not failed:
                v = str(args.get(WEB[name]) or "").strip()
                if v:
                    from .findings import web_found

                    asked = str(args.get("prompt") or "").strip() if WEB[name] == "url" else v
                    page = res.get("content") if res is not None and isinstance(res.get("content"), str) else ""
                    said = web_found(asked or v, page)
                    # what else it said on the question, for the budget left at the end
                    also.append((v, [x for x in web_found(asked or v, page, cap=5) if x not in said]))
                    (fetched if WEB[name] == "url" else searched).append((v, asked if asked != v else "", said))
            elif name == "Task" and not failed:
                what = str(args.get("description") or "").strip()
                who = str(args.get("subagent_type") or "").strip()
                out = res.get("content") if res is not None and isinstance(res.get("content"), str) else ""
                heads = [h.strip() for h in re.findall(r"(?m)^#{1,4}\s+(.+)$", out)][:6]
                heads = [brief(h, 60) for h in heads]
                if known is not None:  # "1 Epic (spotter-2qx)" in a drafted plan: no such item exists
                    heads = [re.sub(rf"\b({ITEM_ID})\b", lambda m: m.group(1) if m.group(1) in known or
                                    not re.search(r"-\w*\d", m.group(1)) else
                                    f"{m.group(1)}, a draft id: no item was created with it", h) for h in heads]
                if what:
                    tasks.append(f"\"{brief(what, 80)}\"" + (f" ({who} subagent)" if who else "") +
                                 (": its answer's sections: " + "; ".join(heads) if heads else
                                  (": no answer recorded" if not out else "")))
    out = []

    def what(said: list[str]) -> str:
        return ": " + "; ".join(f"\"{x}\"" for x in said) if said else ""
    for u, asked, said in list({u: (u, a, x) for u, a, x in fetched}.values())[:cap]:
        out.append(f"Fetched <{u}>" + (f" (asked: \"{brief(asked, 80)}\")" if asked else "") + what(said) + ".")
    for q, _, said in list({q: (q, a, x) for q, a, x in searched}.values())[:cap]:
        out.append(f"Searched the web for \"{brief(q.replace(chr(34), chr(39)), 80)}\"" + what(said) + ".")
    for t in tasks[-3:]:
        out.append("Delegated to a subagent: " + t + ".")
    shown = {u for u, _, _ in fetched[:cap]} | {q for q, _, _ in searched[:cap]}
    for v, more in dict(also).items():
        if more and v in shown:
            out.append((f"More from <{v}>: " if "://" in v else f"More from the search for \"{brief(v.replace(chr(34), chr(39)), 60)}\": ") +
                       "; ".join(f"\"{x}\"" for x in more) + ".")
    return out


EDITS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch"}
SHELL_SEARCH = re.compile(r"^\s*(?:grep|rg|ag)\s")


def _call_args(call: dict) -> tuple[str, dict]:
    from .artifacts import _args  # the one parser of a call's arguments

    args = _args(call)
    return (call.get("function") or {}).get("name") or "", args if isinstance(args, dict) else {}


def _search_conclusion(name: str, args: dict, result: str, cwd: str | None) -> str | None:
    """One search call and its result as a stated conclusion: what was looked for, and where
    it was found (files, or the first matching line), or that nothing matched."""
    if name in ("Grep", "Glob"):
        pattern = args.get("pattern") or ""
        where = args.get("path") or ""
    elif name == "Bash" and SHELL_SEARCH.match(args.get("command") or ""):
        pattern, where = args["command"].strip(), ""
    else:
        return None
    if not pattern:
        return None
    text = (result or "").strip()
    scope = f" in `{short_path(where, cwd)}`" if where and short_path(where, cwd) not in (".", "") else ""
    head = f"`{brief(pattern, 80)}`{scope}"
    if not text or re.match(r"^(?:No (?:files|matches) found|No match)", text):
        return f"searched {head}: no match."
    lines = [ln for ln in text.splitlines() if ln.strip()]
    m = re.match(r"^Found (\d+) files?", lines[0])
    if m or (name == "Glob") or all("/" in ln and " " not in ln.strip() for ln in lines[:5]):
        files = [short_path(ln.strip(), cwd) for ln in (lines[1:] if m else lines) if ln.strip()]
        if not files:
            return None
        shown = ", ".join(f"`{p}`" for p in files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
        only = "only " if len(files) == 1 else ""
        return f"searched {head}: found {only}in {shown}."
    hit = next((ln for ln in lines if re.match(r"^(?:[^\s:]+:)?\d+:", ln)), None)
    if hit is None:
        return None
    hit = brief(re.sub(r"\s+", " ", hit.strip()), 140)
    return f"searched {head}: first match `{hit}`."


# a shell command that changes something (a write, a move, an install, a commit): not a look-around
CHANGES = re.compile(r"(?:^|[;&|]\s*)(?:git\s+(?:commit|add|push|checkout|reset|merge|rebase|stash)|rm|mv|cp|mkdir|touch|"
                     r"npm\s+(?:i|install|ci)|yarn\s+add|pnpm\s+add|pip\s+install|mix\s+deps\.get|cargo\s+add|"
                     r"Set-Content|Out-File|New-Item|Copy-Item|Move-Item|Remove-Item|Add-Content)\b|(?<![<>=-])>{1,2}\s*[\w./\\$]",
                     re.I)
LOOK_TOOLS = {"Read", "LS", "WebFetch", "view", "open"}



def _entries(lines: list[str]) -> list[str]:
    """The names a listing shows: a path-like word of each row, else its last word (header rows,
    rules and totals left out)."""
    out = []
    for ln in lines:
        t = ln.strip()
        if re.match(r"^(?:Mode\b|Directory:|total \d|FullName\b|Name\b|-{3,})", t) or re.match(r"^[-\s]+$", t):
            continue
        words = t.split()
        path = next((w for w in words if "/" in w or "\\" in w), None)
        out.append(path or words[-1])
    paths = [x for x in out if "/" in x or "\\" in x]
    return paths if paths and len(paths) < len(out) and not any("." in x for x in out if x not in paths) else out


def looked_at(span: Sequence[dict], cwd: str | None = None, n: int = 10, enquiry: str = "",
              skill_at: int = -1) -> list[str]:
    """What the look-around calls since the last change (an edit, a write, an install, a commit)
    found, as conclusions (core.findings.probe): at a cut in the middle of gathering, these are
    what the agent knows so far. A file read says its lines on `enquiry` (the work in progress).
    Two listings that show the same entries are said once. Searches are told apart (last_searches).
    Only the last `n` calls are read (a long span's earlier look-arounds cost nothing). The read
    that loaded the skill in force (message record `skill_at`) is not one: its rules are told apart."""
    from .distill import result_failed
    from .findings import probe

    calls: list = []
    for r in span:
        for c in r.get("tool_calls") or ():
            name, args = _call_args(c)
            cmd = str(args.get("command") or args.get("cmd") or "").strip()
            if name in EDITS or (cmd and CHANGES.search(cmd)):
                calls = []
            elif not ((cmd and SHELL_SEARCH.match(cmd)) or name in ("Grep", "Glob")) and \
                    (name in LOOK_TOOLS or (cmd and name.lower() in ("bash", "shell", "shell_command", "exec_command",
                                                                     "run_command", "terminal"))):
                calls.append((c.get("id"), name, args))
    if len(calls) < 2:
        return []
    wanted = {i for i, _, _ in calls[-n:]}
    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    results = {r.get("tool_call_id"): r for k, r in enumerate(msgs) if r.get("role") == "tool"
               and r.get("tool_call_id") in wanted and k != skill_at}
    seen: list[str] = []
    for cid, name, args in calls[-n:]:
        res = results.get(cid)
        text = res.get("content") if res is not None and isinstance(res.get("content"), str) else ""
        if res is None or text.lstrip().startswith("<tool_use_error>"):
            continue
        if name in LOOK_TOOLS and args.get("file_path"):
            args = dict(args, file_path=short_path(str(args["file_path"]), cwd))
        said = probe(name, args, text, result_failed(res), _entries, enquiry)
        m = re.match(r"^`([^`]+)` holds (.+)$", said)
        twin = next((k for k, x in enumerate(seen) if m and x.endswith(" holds " + m.group(2))), None)
        if twin is not None:   # the same entries in another folder: one line for both
            seen[twin] = seen[twin].replace(" holds ", f" and `{m.group(1)}` each hold ", 1)
        elif said not in seen:
            seen.append(said)
    return seen if len(seen) >= 2 else []


def last_searches(span: Sequence[dict], cwd: str | None = None, n: int = 2) -> list[str]:
    """The search calls made after the last edit or command, newest last, as conclusions (at most `n`)."""
    calls: dict = {}
    found: list[str] = []
    for r in span:
        for c in r.get("tool_calls") or []:
            name, args = _call_args(c)
            if name in EDITS or (name == "Bash" and not SHELL_SEARCH.match(str(args.get("command") or ""))):
                found, calls = [], {}  # an edit or another command since: those searches are history
            else:
                calls[c.get("id")] = (name, args)
        if r.get("role") == "tool" and r.get("tool_call_id") in calls:
            name, args = calls.pop(r["tool_call_id"])
            said = _search_conclusion(name, args, r.get("content") if isinstance(r.get("content"), str) else "", cwd)
            if said:
                found.append(said)
    return found[-n:]


def current_work_lines(story: Story, f: Focus, latest: str = "", cap: int = 6) -> list[str]:
    """Current work, in plain sentences: what is done, half-done and uncommitted."""
    cwd = story.cwd
    out = list(f.outcome.current) if f.outcome is not None else []  # a finished session says so first
    if f.plan is not None:  # a plan not carried out yet: where the work stands is the plan's fate
        plan_cur = plan_lines(f.plan)[0]
        if f.skill is not None and f.plan.state == "approved":  # the command says what an approved plan leads to
            from .guidance import phase_after_approval

            k = phase_after_approval(f.skill)
            if k is not None:
                plan_cur = [x.replace("nothing of it is carried out yet",
                                      f"the command's next phase ({f.skill.phases[k][0]}) has not started") for x in plan_cur]
        out += plan_cur
    if f.skill is not None and f.outcome is None:
        out += skill_lines(story, f)[0]
    for cmd, path in f.background:
        out.append(f"Still running in the background at the cut: `{cmd}`; its output goes to `{path}`, not read yet.")
    if f.failed_action:
        out.append(f"The session's last action failed, after everything else here: {f.failed_action}. "
                   f"Nothing was changed by it, and the agent has not told the user yet.")
    if f.unchecked is not None:
        u = f.unchecked
        if u:
            out.append(f"`{u[0]}` was edited (the change is under Fix) and not run since" +
                       (f"; the last command run before it: `{brief(u[1], 80)}`." if u[1] else "."))
    if f.rejected is not None:
        n, edit, where, why = f.rejected
        whys = list(dict.fromkeys(f.rejected_whys))
        if len(whys) > 1:  # different failures: each said, in order
            why = ", then ".join(whys[-3:])
        out.append(("The last edit" if n == 1 else f"The last {n} edit attempts") + f" (`{brief(edit, 60)}`" +
                   (f" on `{where}`" if where else "") + f") {'was' if n == 1 else 'were'} rejected" +
                   (f": {why}" if why else "") + f"; the file is unchanged by {'it' if n == 1 else 'them'}.")
        if f.rejected_fix[0]:
            out.append("Why the last one failed, as the tool's preview of it shows: " + f.rejected_fix[1])
    for path, line, use, at in f.half_applied:
        out.append(f"Half-applied change in `{short_path(path, cwd)}`: an edit removed `{line}`, but "
                   f"`{brief(use, 80)}`" + (f" (line {at}, as the span last saw the file)" if at else "") +
                   " still uses it, so the file does not build as it stands.")
    if f.item:
        t = f" — {f.item_title}" if f.item_title else ""
        out.append(f"Work item `{f.item}`{t}: claimed (in progress), not closed.")
        desc, files, _ = story.descriptions.get(f.item, ("", [], []))
        if desc:
            out.append(f"`{f.item}` asks: {desc}")
        left = untouched_outputs(story, f)
        if left and not (f.uncommitted and f.outcome is None):  # else Next step says to write them: said once
            out.append(f"Output files `{f.item}` names that are not changed yet: " +
                       ", ".join(f"`{p}`" for p in left) + ".")
    if f.plan_step:
        out.append(f"Plan step in progress: {brief(f.plan_step, 200)}")
    if f.uncommitted:
        plain = []
        held = "Changed in the submitted patch" if f.outcome is not None and f.outcome.kind == "submitted" \
            else "Uncommitted"
        # files the span created and removed again (a repro script) are not in the patch
        scratch = [fc for e in story.episodes for fc in e.files.values()
                   if held != "Uncommitted" and fc.action == "created" and "deleted" in fc.fate]
        if scratch:
            out.append("Scratch files created and deleted, not in the patch: " +
                       ", ".join(f"`{short_path(fc.path, cwd)}`" for fc in scratch) + ".")
        for fc in f.uncommitted:
            if fc in scratch:
                continue
            what = fc.describe(cap)
            verb = {"created": "created", "rewritten": "rewritten", "deleted": "deleted"}.get(fc.action, "edited")
            if what:
                out.append(f"{held}: `{short_path(fc.path, cwd)}` {verb} ({what}).")
            else:
                plain.append(f"`{short_path(fc.path, cwd)}` ({verb})")
        if plain:
            out.append(f"{held}, no definitions changed: " + ", ".join(plain) + ".")
        if f.item_plan:
            parts = []
            for n, (part, subs, done) in enumerate(f.item_plan, 1):
                state = {True: " — done", False: " — not done yet" + (": " + "; ".join(brief(x, 120) for x in subs[:6])
                                                                      if subs else ""), None: ""}[done]
                parts.append(f"({n}) {brief(part, 140)}{state}")
            out.append("The agent's own plan for this work, stated before its first edit: " + "; ".join(parts) + ".")
        if f.commands:
            out.append("Commands run since the last commit: " + ", ".join(
                f"`{c}`" + (f" (changes {w}: commit them with the rest)" if (w := install_writes(c, story)) else "")
                for c in f.commands) + ".")
        if f.checks_after_edit and not (f.outcome is not None and f.outcome.kind == "submitted"):  # it said them
            for cmd, hist, ok in f.checks_after_edit:
                out.append(f"Checked after the last edit: `{brief(cmd, 90)}`: {hist}.")
        elif f.outcome is None:
            out.append("Not yet done since the last edit: no test, build or lint run, no commit.")
    elif f.dirty and f.outcome is None:  # the last `git status` is the evidence, whatever the steps say
        out.append("The last `git status` (after the last commit) still showed changed, not committed: " +
                   ", ".join(f"`{p}`" for p in f.dirty[:8]) + (" …" if len(f.dirty) > 8 else "") + ".")
    elif f.committed and f.outcome is None:  # a finished session's end state says it
        out.append("Everything changed in the span is committed.")
    last_edit = story.episodes[-1].last_edit if story.episodes else -1
    for e in f.open_errors[-3:]:
        old = e.index < last_edit  # edits came after the run that showed it: whether it still holds is unknown
        out.append(f"Open error (from {e.source}" + (", before the last edits; not run since" if old else "") +
                   f"): {brief(e.text, 180)}")
    if f.unfinished:
        out.append(f"The last call has no recorded result (the session stopped while it ran): `{f.unfinished}`; "
                   f"check whether it took effect before going on.")
    if f.place is not None and f.outcome is None:
        from . import environment

        out += environment.lines(f.place, pending_commit=bool(f.uncommitted),
                                 cwd_said=any(x.startswith("Work root:") for _, lines, _ in f.kind for x in lines))
    if (f.last_words or f.last_doc) and (f.outcome is None or f.outcome.kind == "epic_done"):  # else the end state says it
        if f.last_words and f.words_stale:
            out.append(f"The agent's last words, said before the latest request: \"{f.last_words}\"")
        elif f.last_words:
            acts = f.acts_after_words
            when = " (before that action)" if f.failed_action else \
                (f" (before its last {'action' if len(acts) == 1 else f'{len(acts)} actions'}: " +
                 ", ".join(acts[:4]) + (" …" if len(acts) > 4 else "") + ")") if acts else ""
            out.append(f"The agent's last words{when}: \"{f.last_words}\"")
        if f.last_doc and f.plan is None:  # a plan's parts are told above
            out.append("Its last message " + ("then " if f.last_words else "") + "held a document with the sections: " +
                       "; ".join(brief(h, 80) for h in f.last_doc[:8]) + (" …" if len(f.last_doc) > 8 else "") + ".")
    for said in f.searches:
        out.append("Last check: " + said)
    return out


def untouched_outputs(story: Story, f: Focus) -> list[str]:
    """The output files the item in progress names that nothing since the last commit changed
    (only when some of them were changed: an item that names files it never meant to write is quiet)."""
    if not f.item:
        return []
    files = story.descriptions.get(f.item, ("", [], []))[1]
    if not files:
        return []
    touched = {short_path(fc.path, story.cwd) for fc in f.uncommitted}
    names = {t.rsplit("/", 1)[-1] for t in touched}  # the same file kept elsewhere (a static copy)
    left = [p for p in files if not any(t.endswith(p) or p.endswith(t) for t in touched)
            and p.rsplit("/", 1)[-1] not in names
            and not (f.commands and MANIFEST.search(p))]  # an install command changed those
    return left if len(left) < len(files) else []


BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
SPEC_NAME = re.compile(r"[A-Za-z_][\w.-]*[A-Za-z0-9_]")


def spec_check(story: Story, f: Focus) -> list[str]:
    """The spec of the item in progress against the changes since the last commit: its lines whose
    names (in backticks) none of those changes has yet, and the lines that name nothing to look for,
    to check by hand. A line whose names the changes all have is not listed (the changes say it)."""
    specs = story.specs.get(f.item or "", [])
    if not specs or not f.uncommitted:
        return []
    text = "\n".join(t for fc in f.uncommitted for t in fc.texts + [fc.path, fc.describe(60)])
    # a module a changed file is named for is where a line applies, not what it asks for
    places = {re.sub(r"[_.]", "", fc.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()) for fc in f.uncommitted}
    dod = story.descriptions.get(f.item, ("", [], []))[2]
    told = {n for d in unmet_done_items(f, dod) for x in BACKTICKED.findall(d) for n in SPEC_NAME.findall(x)}
    missing, by_hand = [], []
    for line, own in specs:
        names = {n for x in BACKTICKED.findall(own) for n in SPEC_NAME.findall(x)
                 if len(n) >= 4 and n.rsplit(".", 1)[-1].lower() not in places}
        if not names or NEGATED.search(own):  # a prohibition holds while its names are absent
            by_hand.append((line, own))
        else:  # its specific names (`sync_session_by_id`, not `opts`) must all be in the changes
            check = {n for n in names if re.search(r"[_.]|[a-z][A-Z]", n)} or names
            if not all(n in text for n in check) and not names <= told:  # a lacking done-item is told as one
                missing.append((line, own))

    def said(lines: list, cap: int, width: int) -> str:
        """Lines under one parent said once: "Tail worker: Own adapter lifecycle; Buffer incoming lines"."""
        parts: list = []
        for line, own in lines[:cap]:
            head = line[:len(line) - len(own)].rstrip(": ") if line != own else ""
            if parts and head and parts[-1][0] == head:
                parts[-1][1].append(brief(own.rstrip("."), width))
            else:
                parts.append([head, [brief(own.rstrip("."), width)]])
        return "; ".join((f"{h}: " if h else "") + "; ".join(xs) for h, xs in parts)
    out = []
    if missing:
        out.append("Named in the spec, not in the changes yet: " + said(missing, 6, 140) +
                   (f" ({len(missing) - 6} more in the item's description)" if len(missing) > 6 else "") + ".")
    if by_hand:
        out.append("To check by hand (nothing the spec names to look for, or a thing not to do): " + said(by_hand, 8, 110) +
                   (f" ({len(by_hand) - 8} more in the item's description)" if len(by_hand) > 8 else "") + ".")
    return out


NEGATED = re.compile(r"\b(?:no|not|never|don'?t|without|avoid|prohibit\w*|must not|keep existing|only)\b", re.I)


def _uniq_names(names: list) -> list:
    return [f"`{n}`" for n in dict.fromkeys(names)]


def unmet_done_items(f: Focus, dod: list[str]) -> list[str]:
    """Definition-of-Done items that name something (in backticks) no change since the last commit
    mentions: the work the item still lacks, as far as the records can tell."""
    seen = " ".join(f"{fc.path} {fc.describe(60)}" for fc in f.uncommitted)
    return [d for d in dod if (names := BACKTICKED.findall(d)) and not any(n in seen for n in names)]


def next_step_lines(story: Story, f: Focus, latest: str = "") -> list[str]:
    if f.outcome is not None:  # a finished session: nothing to redo
        return list(f.outcome.next_step)
    out = plan_lines(f.plan)[1] if f.plan is not None else []
    then = skill_lines(story, f)[1] if f.skill is not None else []
    if then and f.plan is not None and f.plan.state == "approved":
        out, then = then, []  # the command's own next phase, not "carry out the plan" (it may forbid that)
    what = f"`{f.item}`" if f.item else (f"the plan step \"{brief(f.plan_step, 80)}\"" if f.plan_step else "the current work")
    for cmd, path in f.background:
        out.append(f"Read `{path}` (or wait for it to finish) to see how `{brief(cmd, 60)}` ended before relying on it.")
    if f.failed_action:
        out.append("Tell the user the action failed and why, and settle with them how to go on (another way to "
                   "do it, within the policy) before calling it again.")
    if f.unchecked is not None:
        out.append(f"Run the reproduction" + (f" (`{brief(f.unchecked[1], 80)}`)" if f.unchecked[1] else "") +
                   f" to check the fix in `{f.unchecked[0]}`; when it works, remove any scratch files and `submit`.")
    if f.rejected is not None:
        n, edit, where, why = f.rejected
        if f.rejected_fix[0]:
            out.append(f"Redo the rejected edit" + (f" of `{where}`" if where else "") + " as " +
                       f.rejected_fix[0] + " (why under Current work); then re-run the check.")
        else:
            out.append(f"Redo the rejected edit" + (f" of `{where}`" if where else "") + " so that it applies" +
                       (f" (it failed with {why})" if why else "") + "; then re-run the check.")
    for path, line, use, at in f.half_applied:
        name = next((m(x) for rx, m in _DEFINES() if (x := rx.match(line))), "")
        out.append(f"Make `{short_path(path, cwd_of(story))}` build again before anything else: either put `{line}` back or change "
                   f"`{brief(use, 80)}`" + (f" (line {at})" if at else "") + f" so it no longer uses `{name}` "
                   f"(by the agent's last words, which way it meant is under Current work); then re-run the checks.")
    if f.open_errors and not (f.shape == "swe" and (f.rejected is not None or f.uncommitted)):
        # (SWE-agent: the reproduction's failure is the bug itself; the finish line below re-runs it)
        last_edit = story.episodes[-1].last_edit if story.episodes else -1
        srcs = list(dict.fromkeys(e.source for e in f.open_errors[-3:]))
        if all(e.index < last_edit for e in f.open_errors[-3:]):
            out.append("Re-run " + " and ".join(srcs) + " to see whether the last edits fixed what "
                       f"{'it' if len(srcs) == 1 else 'they'} reported (under Current work), and fix what is left.")
        else:
            out.append("Fix what " + " and ".join(srcs) + " reported (under Current work), then run "
                       f"{'it' if len(srcs) == 1 else 'them'} again.")
    dod = story.descriptions.get(f.item, ("", [], []))[2] if f.item else []
    lacking = unmet_done_items(f, dod) if f.uncommitted else []
    left = untouched_outputs(story, f) if f.uncommitted else []
    # an insertion made at one place of a line the file repeats (a column added to one of two tables)
    twins = [f"check whether `{line}` also belongs after `{anchor}` " +
             (f"{where} in `{short_path(fc.path, story.cwd)}` (the same lines there lack it)" if where else
              f"at the other {places - done} place{'s' if places - done > 1 else ''} in "
              f"`{short_path(fc.path, story.cwd)}` (added at {done} of {places})")
             for fc in f.uncommitted for anchor, line, done, places, where in fc.twin_gaps()]
    if left or lacking or twins:
        todo = ([f"write {', '.join(f'`{p}`' for p in left)} (output files it names, not changed yet)"] if left else []) + \
               twins[:2] + [f"make this hold: \"{d.rstrip('.')}\" (no change since the last commit touches " +
                             " or ".join(_uniq_names(BACKTICKED.findall(d))[:2]) + " yet)" for d in lacking]
        out.append(f"Do what {what} still lacks: " + "; ".join(todo) + ".")
    if f.item_rules and (f.uncommitted or f.item):
        out.append(f"Keep to what `{f.item}` says must hold: " + "; ".join(f.item_rules) + ".")
    rest = [d for d in dod if d not in lacking]  # a lacking item is told above, as something to do
    if rest:
        out.append(f"Check `{f.item}` against {'the rest of ' if lacking else ''}its Definition of Done: " +
                   "; ".join(d.rstrip(".") for d in rest) + ".")
    if f.uncommitted:
        if f.finish_pattern:
            prev = f" (as `{f.finished_item}` was finished" if f.finished_item else " (as the previous step was finished"
            prev += (f"; there {f.finish_note})" if f.finish_note else ")")
            out.append(f"Finish {what}: run " + ", then ".join(f"`{brief(c, 90)}`" for c in f.finish_pattern) + prev +
                       (f"; it is the last open child of `{f.closes_parent}`, so close the epic too" if f.closes_parent else "") + ".")
        elif f.shape == "swe":  # SWE-agent hands in its patch with `submit`; it never commits
            passed = bool(f.checks_after_edit) and all(ok for _, _, ok in f.checks_after_edit)
            out.append(f"Finish {what}: " + ("the last run after the edit passed; " if passed else
                                             "re-run the reproduction to see the fix work, ") +
                       "remove the scratch files, then `submit`.")
        else:
            out.append(f"Finish {what}: test the uncommitted changes and commit them.")
    elif f.item or f.plan_step:
        out.append(f"Continue {what}.")
    out += then  # what the skill says of the phase the work is in (its fallback when its way fails)

    if f.next_items:
        nxt = f.next_items[0]
        asks = story.descriptions.get(nxt[0], ("", [], []))[0]
        out.append(("After that, the next open item: " if out else "The next open item: ") + f"`{nxt[0]}`" + (f" — {nxt[1]}" if nxt[1] else "") + "." +
                   (f" It asks: {brief(asks, 240)}" if asks else ""))
        if len(f.next_items) > 1:
            out.append("Still open after that: " + ", ".join(f"`{i}`" for i, _ in f.next_items[1:6]) + ".")
    elif f.plan_pending:
        out.append(("After that, the next plan step: " if out else "The next plan step: ") + brief(f.plan_pending[0], 200))
    if latest and not out and not any(name == "Next step" for name, *_ in f.kind):  # the kind says what comes next
        if f.committed and story.episodes and story.episodes[-1].commits:
            # the last step ended in a commit after the latest request: continuing it would redo it
            h = story.episodes[-1].commits[-1][0]
            out.append(f"Nothing in the span is left half-done: its last step ends in a commit{' (' + h + ')' if h else ''}. "
                       f"Wait for the user's next request" +
                       (" or `AI!` comment" if f.shape == "aider" else "") + " rather than redo the latest one.")
        elif f.shape == "swe" and not f.ends_on_user:  # SWE-agent: the fix is in and was run since
            out.append("If the last run shows the fix works, remove any scratch files and `submit`; "
                       "otherwise fix and run it again.")
        elif f.ends_on_user:
            out.append("Continue with the latest request (above): the span ends on it.")
        elif f.words_stale:
            acts = [a for a in f.acts_since_request if a != "`think`"]
            if acts and f.shape == "service":
                out.append("The agent has acted on the latest request (" + ", ".join(acts[:4]) + ") and has not "
                           "answered the user yet: answer with what the calls returned (under Actions and results), "
                           "checked against the records and the policy rules below, before any change is made.")
            elif acts:
                out.append("Continue with the latest request (above): the agent had begun it (" + ", ".join(acts[:4]) +
                           ") and said nothing since; what those calls returned is the state.")
            else:
                out.append("Continue with the latest request (above); the agent had not acted on it yet.")
        elif f.asked:
            out.append("Wait for the user's answer to the question the agent asked last (its last words, above); "
                       "do not act on it before the answer.")
        elif INTENT.search(f.last_words or ""):
            out.append("Do what the agent's last words (above) say it was about to do, then go on with the latest "
                       "request; the span stopped in the middle of it.")
        else:
            out.append("Continue with the latest request (above); nothing in the span is left half-done.")
    if f.policy:
        out.append("The system prompt's rules that bear on the latest request (check it against them before acting):")
        out += [f"Policy, {x}" for x in f.policy]
    return out


def work_item_lines(story: Story) -> list[str]:
    """Every work item the span listed or touched, with where it stands (closed, in progress, open)."""
    ids = [i for i, _ in story.listed]
    ids += [i for i in story.item_status if i not in ids and i != story.parent]
    if len(ids) < 2:
        return []
    commits = {}
    for e in story.episodes:
        if e.item and e.commits and e.commits[-1][0]:
            commits[e.item] = e.commits[-1][0]
    listed_done = dict(story.listed)
    out = []
    if story.parent:
        t = story.titles.get(story.parent)
        out.append(f"`{story.parent}`" + (f" — {t}" if t else "") + f": {len(ids)} children")
    for i in ids:
        st = story.item_status.get(i) or ("closed" if listed_done.get(i) else "open")
        if st == "closed" and i in commits:
            st = f"closed, committed {commits[i]}"
        elif st == "in_progress":
            st = "in progress"
        t = story.titles.get(i)
        out.append(f"`{i}`" + (f" — {brief(t, 110)}" if t else "") + f": {st}")
    return out
