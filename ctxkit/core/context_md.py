"""CONTEXT.md: one working-state document with a fixed grammar (pure parse / render / merge).

    <!-- ctx:context v1 version=N updated=ISO [session=S through=ID] -->
    # Context

    ## Task
    One sentence.

    ## Decisions
    - Use RS256 — why: distributed verification (by agent-a)

    ## Pending
    - [ ] test the refresh flow
    - [x] write the migration

    ## Files
    - `auth/jwt.py` — modified

Sections are `## Name`; items are `- text`, with `- [ ]` / `- [x]` for checkable
items and `— why: …` for rationale. Indented lines continue the item above.
Unknown sections are kept as they are. Anything else is an error naming the line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

SAFE_VALUE = "/:@.+~_,;!*'()[]#$&?^|{}"  # kept in a marker value; whitespace, '<', '>', '=', '%' are escaped

MARKER = re.compile(r"^<!--\s*ctx:context\s+v(\d+)(.*?)-->\s*$")
KV = re.compile(r"(?<!\w)(\w+)=(\S+)")  # starts at a word's start: linear on a long word
HEADING = re.compile(r"^##\s+(.+?)\s*$")
ITEM = re.compile(r"^[-*]\s+(?:\[( |x|X)\]\s+)?(.*)$")
WHY = re.compile(r"(?<!\s)\s+—\s+why:\s+(.*)$")
BY = re.compile(r"(?<!\s)\s+\((?:by ([^(),]+?))?(?:, )?(?:at (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z))?\)$")

# Section order: seed 000's Now/Time first, seed 001's template (+ Files), seed 004's hot
# context, then seed 000's Recent/External. Free-text sections hold a paragraph, not items.
# the sections a kind of session adds come right after where the work stands
KIND_SECTIONS = ["Fix", "Findings", "Customer records", "Agreed with the customer", "Actions and results",
                 "Aider requests and undo"]
# the spec of the work item in progress, checked against the changes since the last commit
SPEC_SECTION = "The item's spec, against the changes since the last commit"
KIND_SECTIONS.append(SPEC_SECTION)
ORDER = ["Now", "Time", "Task", "Latest request", "Current work", "Next step", "Plan", *KIND_SECTIONS, "Work items", "User requests", "Project", "Goals", "Decisions", "Constraints", "Pinned", "Facts", "Progress",
         "Pending", "Errors", "Files", "Key entities", "Recent", "External"]
STEP = re.compile(r"^Step \d+\b")   # a step of the session's history (compaction writes them in order)
FREE_TEXT = {"Task": "task", "Latest request": "latest"}
CHECKABLE = {"Pending", "Goals"}
MAX_ITEMS = 10
MAX_ITEMS_BY_SECTION = {"Plan": 40, "Work items": 40, "Findings": 40, "Actions and results": 20, "Customer records": 20, "Files": 200, "Key entities": 40, "Facts": 40, "Decisions": 20, "Errors": 20,
                        "Progress": 20, "Pending": 20}


class ContextFormatError(ValueError):
    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass
class Item:
    text: str
    done: bool | None = None      # None: not a checkbox item
    why: str | None = None
    by: str | None = None
    at: str | None = None         # when it was logged (UTC, to the minute): `(by X, at 2026-11-22T14:05Z)`

    def key(self) -> str:
        return normalize(self.text)

    def render(self) -> str:
        box = "" if self.done is None else ("[x] " if self.done else "[ ] ")
        why = f" — why: {one_line(self.why)}" if self.why else ""
        tag = ", ".join(([f"by {one_line(self.by).replace(',', ' ')}"] if self.by else [])
                        + ([f"at {self.at}"] if self.at else []))
        by = f" ({tag})" if tag else ""
        return f"- {box}{one_line(self.text)}{why}{by}"

    def as_dict(self) -> dict:
        d: dict = {"text": self.text}
        if self.done is not None:
            d["done"] = self.done
        if self.why:
            d["why"] = self.why
        if self.by:
            d["by"] = self.by
        if self.at:
            d["at"] = self.at
        return d


@dataclass
class Context:
    version: int = 0
    updated: str | None = None
    state: dict = field(default_factory=dict)       # e.g. session, through
    task: str = ""
    sections: dict = field(default_factory=dict)    # name -> list[Item]
    latest: str = ""                                # the newest request, when it is not the task

    def items(self, name: str) -> list[Item]:
        return self.sections.setdefault(name, [])

    def as_dict(self) -> dict:
        out: dict = {"version": self.version, "updated": self.updated, **({"state": self.state} if self.state else {})}
        out["task"] = self.task
        if self.latest:
            out["latest_request"] = self.latest
        out["sections"] = {k: [i.as_dict() for i in v] for k, v in self.sections.items()}
        return out


def one_line(text: str) -> str:
    """Text from data never breaks the grammar: one line, whatever it held."""
    return " ".join(str(text).split())


def normalize(text: str) -> str:
    return re.sub(r"[^a-z0-9./_-]+", " ", text.lower()).strip()


def parse(text: str) -> Context:
    ctx = Context()
    current: str | None = None
    free: list[str] = []
    last_item: Item | None = None
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        m = MARKER.match(line)
        if m:
            if m.group(1) != "1":
                raise ContextFormatError(n, f"unsupported CONTEXT.md version v{m.group(1)}")
            for k, v in KV.findall(m.group(2)):
                if k == "version":
                    ctx.version = int(v) if v.isdigit() else 0
                elif k == "updated":
                    ctx.updated = v
                else:
                    ctx.state[k] = unquote(v)
            continue
        if not line.strip():
            last_item = None if current not in FREE_TEXT else last_item
            continue
        if line.startswith("# ") and current is None:
            continue  # the document title
        h = HEADING.match(line)
        if h:
            if current in FREE_TEXT:
                setattr(ctx, FREE_TEXT[current], " ".join(free).strip())
            current, free, last_item = h.group(1), [], None
            if current not in FREE_TEXT:
                ctx.sections.setdefault(current, [])
            continue
        if current is None:
            raise ContextFormatError(n, "text before the first '## Section' heading")
        if current in FREE_TEXT:
            free.append(line.strip())
            continue
        im = ITEM.match(line)
        if im:
            body = im.group(2).strip()
            item = Item(text=body)
            if im.group(1) is not None:
                item.done = im.group(1).lower() == "x"
            bm = BY.search(item.text)
            if bm and (bm.group(1) or bm.group(2)):
                item.by, item.at, item.text = bm.group(1), bm.group(2), item.text[: bm.start()]
            wm = WHY.search(item.text)
            if wm:
                item.why, item.text = wm.group(1).strip(), item.text[: wm.start()].strip()
            ctx.sections[current].append(item)
            last_item = item
            continue
        if raw.startswith(("  ", "\t")) and last_item is not None:
            last_item.text += " " + line.strip()
            continue
        raise ContextFormatError(n, f"expected '- item' in section '{current}', got: {line.strip()[:60]}")
    if current in FREE_TEXT:
        setattr(ctx, FREE_TEXT[current], " ".join(free).strip())
    return ctx


def render(ctx: Context) -> str:
    marker = f"<!-- ctx:context v1 version={ctx.version}"
    if ctx.updated:
        marker += f" updated={ctx.updated}"
    for k, v in sorted(ctx.state.items()):
        marker += f" {k}={quote(str(v), safe=SAFE_VALUE)}"  # ids from data never break the marker
    lines = [marker + " -->", "# Context", ""]
    names = [n for n in ORDER if n in ctx.sections or (n in FREE_TEXT and getattr(ctx, FREE_TEXT[n]))]
    # the session's steps, in order, right after where the work stands (before the reference sections)
    steps = [n for n in ctx.sections if n not in ORDER and STEP.match(n)]
    at = max((names.index(n) + 1 for n in ("Task", "Latest request", "Current work", "Next step", *KIND_SECTIONS,
                                            "Work items", "User requests", "Project") if n in names), default=0)
    names[at:at] = steps
    names += [n for n in ctx.sections if n not in ORDER and n not in steps]
    for name in names:
        lines.append(f"## {name}")
        if name in FREE_TEXT:
            lines.append(one_line(getattr(ctx, FREE_TEXT[name])))
        else:
            lines.extend(i.render() for i in ctx.sections.get(name, []))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


RESOLVED = re.compile(r"\b(resolved|fixed|solved|works now|passing|passes)\b", re.I)


def merge_items(old: list[Item], new: list[Item], cap: int = MAX_ITEMS) -> list[Item]:
    """Deduplicated by normalized text; a newer item with the same key replaces the older
    one (newer wins) and moves to the end; the newest `cap` items are kept."""
    out: dict[str, Item] = {}
    for it in list(old) + list(new):
        k = it.key()
        if not k:
            continue
        out.pop(k, None)
        out[k] = it
    items = list(out.values())
    return items[-cap:] if cap else items


def _terms(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9_./-]{4,}", text.lower())}


def merge(base: Context, new: Context) -> Context:
    """Anchored merge: the existing document plus a newer extraction, section by section."""
    out = Context(version=base.version, updated=base.updated, state=dict(base.state), task=base.task,
                  sections={k: list(v) for k, v in base.sections.items()}, latest=base.latest)
    if new.task:
        out.task = new.task
    if new.latest or new.task:
        out.latest = new.latest if new.latest != out.task else ""
    for name, items in new.sections.items():
        cap = MAX_ITEMS_BY_SECTION.get(name, MAX_ITEMS)
        if name == "Files":
            out.sections[name] = merge_files(out.sections.get(name, []), items, cap)
        else:
            out.sections[name] = merge_items(out.sections.get(name, []), items, cap)
    # Resolved errors leave Pending: a pending item sharing terms with a resolved error is done.
    resolved = [e for e in out.sections.get("Errors", []) if RESOLVED.search(e.text)]
    if resolved and out.sections.get("Pending"):
        keep = []
        for p in out.sections["Pending"]:
            pt = _terms(p.text)
            if p.done is not True and any(len(pt & _terms(e.text)) >= 2 for e in resolved):
                continue
            keep.append(p)
        out.sections["Pending"] = keep
    return out


FILE_ITEM = re.compile(r"^`(.+?)`\s+—\s+(\w+)$")


def file_items(trail: dict) -> list[Item]:
    return [Item(text=f"`{path}` — {action}") for path, action in trail.items()]


def files_of(items: list[Item]) -> dict:
    out = {}
    for it in items:
        m = FILE_ITEM.match(it.text)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def combine(prev: str | None, action: str) -> str:
    """The action to record when `action` follows `prev` on one path: the last one, except that a file
    created here stays `created` when edited, and a read never hides a write."""
    if prev == "created" and action in ("modified", "read"):
        return "created"
    if prev in ("created", "modified", "deleted") and action in ("read", "searched"):
        return prev
    if prev == "read" and action == "searched":
        return "read"
    return action


def merge_files(old: list[Item], new: list[Item], cap: int) -> list[Item]:
    """By path, the last action wins and moves the path to the end (most recent last)."""
    trail = files_of(old)
    for path, action in files_of(new).items():
        trail[path] = combine(trail.pop(path, None), action)
    items = file_items(trail)
    return items[-cap:]


GOAL_DONE_AT = re.compile(r"^g-\d+ \(complete ([\dT:Z-]+)")


def aged_out(ctx: Context, now, hours: float) -> Context:
    """A copy without goals completed more than `hours` ago (they stay in the file and logs)."""
    from .timeutil import parse_ts

    out = Context(version=ctx.version, updated=ctx.updated, state=dict(ctx.state), task=ctx.task,
                  sections={k: list(v) for k, v in ctx.sections.items()}, latest=ctx.latest)
    keep = []
    for it in out.sections.get("Goals", []):
        m = GOAL_DONE_AT.match(it.text)
        t = parse_ts(m.group(1)) if m else None
        if t is not None and (now - t).total_seconds() > hours * 3600:
            continue
        keep.append(it)
    if "Goals" in out.sections:
        out.sections["Goals"] = keep
    return out


KEPT_SECTIONS = ("Constraints", "Decisions", "Goals", "Pending", "Pinned")
GOAL_ID = re.compile(r"^(g-\d+) \(")


def kept_key(section: str, item) -> str:
    if section == "Goals":
        m = GOAL_ID.match(item.text)
        if m:
            return m.group(1)  # a goal changing status is the same goal
    return item.key()


def kept_before(ctx: Context) -> dict:
    """The kept sections' items before a change (what `left_kept_sections` compares with)."""
    return {s: list(ctx.sections.get(s, [])) for s in KEPT_SECTIONS}


def left_kept_sections(before: dict, new: Context) -> dict[str, list[str]]:
    """{section: the items (rendered, without their "- ") that left it} between `before` (from
    `kept_before`) and `new`: what must be archived, never dropped silently."""
    out = {}
    for section, old in before.items():
        have = {kept_key(section, i) for i in new.sections.get(section, [])}
        gone = [i for i in old if kept_key(section, i) not in have]
        if gone:
            out[section] = list(dict.fromkeys(r[2:] if r.startswith("- ") else r for r in (i.render() for i in gone)))
    return out
