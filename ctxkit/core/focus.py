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
    finish_pattern: list = field(default_factory=list)  # how the previous item was finished
    finished_item: str | None = None
    next_items: list = field(default_factory=list)      # (id, title) still open
    plan_pending: list = field(default_factory=list)
    committed: bool = False                             # the last episode ended in a commit
    searches: list = field(default_factory=list)        # conclusions of the searches after the last edit
    closes_parent: str | None = None                    # the epic whose last open child is in progress
    outcome: object = None                              # core.outcome.Outcome: the session is finished
    kind: list = field(default_factory=list)            # core.kinds: (section, lines) this kind of session needs
    unfinished: str | None = None                       # the last call, when it has no recorded result

    @property
    def half_done(self) -> bool:
        return bool(self.uncommitted)


def _last_sentences(text: str, n: int = 2) -> str:
    text = re.sub(r"```.*?```", " ", text or "", flags=re.S)
    # a table row or a rule is not a sentence: the last words are the agent's prose
    text = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*(?:\||[-=*_]{3,}\s*$)", ln))
    sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 3]
    return brief(" ".join(sents[-n:]), 240)


def current(story: Story, cwd: str | None = None) -> Focus:
    f = Focus()
    eps: list[Episode] = story.episodes
    f.last_words = _last_sentences(story.last_text)
    if not eps:
        return f
    last = eps[-1]
    f.item = last.item if last.item and story.item_status.get(last.item) != "closed" else None
    f.item_title = story.titles.get(f.item) if f.item else None
    f.plan_step = next((s for s, st in story.plan if st == "in_progress"), None)
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
                continue
            from dataclasses import replace

            seen[fc.path] = replace(fc, added=list(fc.added), changed=list(fc.changed), removed=list(fc.removed),
                                    shapes=list(fc.shapes), private=set(fc.private), defaults=dict(fc.defaults))
            f.uncommitted.append(seen[fc.path])
        f.commands += e.commands
    if last.last_edit >= 0:
        f.checks_after_edit = [(c.command, c.history(), c.ok) for c in last.checks.values() if c.last_index > last.last_edit]
        f.edited_after_checks = any(c.last_index < last.last_edit for c in last.checks.values())
    carry_errors(story)
    for e in (tail or [last]):  # errors of committed steps are history, not where the work stands
        # a failed check or git step blocks the work; a failed look-around command does not
        f.open_errors += [x for x in e.errors if not x.resolved and x.kind in ("check", "git")]
    f.last_words = _last_sentences(story.last_text)
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
    return story, f


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
    if f.item:
        t = f" — {f.item_title}" if f.item_title else ""
        out.append(f"Work item `{f.item}`{t}: claimed (in progress), not closed.")
        desc, files, _ = story.descriptions.get(f.item, ("", [], []))
        if desc:
            out.append(f"`{f.item}` asks: {desc}")
        left = untouched_outputs(story, f)
        if left:
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
        if f.commands:
            out.append("Commands run since the last commit: " + ", ".join(
                f"`{c}`" + (f" (changes {w}: commit them with the rest)" if (w := install_writes(c, story)) else "")
                for c in f.commands) + ".")
        if f.checks_after_edit and not (f.outcome is not None and f.outcome.kind == "submitted"):  # it said them
            for cmd, hist, ok in f.checks_after_edit:
                out.append(f"Checked after the last edit: `{brief(cmd, 90)}`: {hist}.")
        elif f.outcome is None:
            out.append("Not yet done since the last edit: no test, build or lint run, no commit.")
    elif f.committed and f.outcome is None:  # a finished session's end state says it
        out.append("Everything changed in the span is committed.")
    for e in f.open_errors[-3:]:
        out.append(f"Open error (from {e.source}): {brief(e.text, 180)}")
    if f.unfinished:
        out.append(f"The last call has no recorded result (the session stopped while it ran): `{f.unfinished}`; "
                   f"check whether it took effect before going on.")
    if f.last_words and (f.outcome is None or f.outcome.kind == "epic_done"):  # else the end state says it
        later = max((e.last_edit for e in story.episodes), default=-1) > story.last_text_index
        out.append(f"The agent's last words{', said before its last edits' if later else ''}: \"{f.last_words}\"")
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
    out = []
    what = f"`{f.item}`" if f.item else (f"the plan step \"{brief(f.plan_step, 80)}\"" if f.plan_step else "the current work")
    if f.open_errors:
        out.append("Fix the open error" + ("s" if len(f.open_errors) > 1 else "") + " named under Current work.")
    dod = story.descriptions.get(f.item, ("", [], []))[2] if f.item else []
    lacking = unmet_done_items(f, dod) if f.uncommitted else []
    left = untouched_outputs(story, f) if f.uncommitted else []
    # an insertion made at one place of a line the file repeats (a column added to one of two tables)
    twins = [f"check whether `{line}` also belongs after `{anchor}` at the other {places - done} place"
             f"{'s' if places - done > 1 else ''} in `{short_path(fc.path, story.cwd)}` (added at {done} of {places})"
             for fc in f.uncommitted for (anchor, line), (places, done) in fc.twins.items() if done < places]
    if left or lacking or twins:
        todo = ([f"write {', '.join(f'`{p}`' for p in left)} (output files it names, not changed yet)"] if left else []) + \
               twins[:2] + [f"make this hold: \"{d.rstrip('.')}\" (no change since the last commit touches " +
                             " or ".join(_uniq_names(BACKTICKED.findall(d))[:2]) + " yet)" for d in lacking]
        out.append(f"Do what {what} still lacks: " + "; ".join(todo) + ".")
    if dod:
        out.append(f"Check `{f.item}` against its Definition of Done: " +
                   "; ".join(d.rstrip(".") for d in dod) + ".")
    if f.uncommitted:
        if f.finish_pattern:
            prev = f" (as `{f.finished_item}` was finished)" if f.finished_item else " (as the previous step was finished)"
            out.append(f"Finish {what}: run " + ", then ".join(f"`{brief(c, 90)}`" for c in f.finish_pattern) + prev +
                       (f"; it is the last open child of `{f.closes_parent}`, so close the epic too" if f.closes_parent else "") + ".")
        else:
            out.append(f"Finish {what}: test the uncommitted changes and commit them.")
    elif f.item or f.plan_step:
        out.append(f"Continue {what}.")

    if f.next_items:
        nxt = f.next_items[0]
        asks = story.descriptions.get(nxt[0], ("", [], []))[0]
        out.append(("After that, the next open item: " if out else "The next open item: ") + f"`{nxt[0]}`" + (f" — {nxt[1]}" if nxt[1] else "") + "." +
                   (f" It asks: {brief(asks, 240)}" if asks else ""))
        if len(f.next_items) > 1:
            out.append("Still open after that: " + ", ".join(f"`{i}`" for i, _ in f.next_items[1:6]) + ".")
    elif f.plan_pending:
        out.append(("After that, the next plan step: " if out else "The next plan step: ") + brief(f.plan_pending[0], 200))
    if latest and not out:
        out.append("Continue with the latest request (above); nothing in the span is left half-done.")
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
