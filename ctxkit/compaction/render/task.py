"""The Task and the user's requests, in words: a pasted plan reads as its title, its goal and its steps;
a long request keeps its first line, its key lines and its constraints."""
from __future__ import annotations

import re

from .phrases import cut, whole_sentences

HEAD = re.compile(r"^\s{0,3}(#{1,4})\s+(.+?)\s*#*\s*$")
ITEM = re.compile(r"^\s{0,3}(?:\d+[.)]|[-*+])\s+(.+)$")
KEY_VALUE = re.compile(r"^\s*(?:[-*]\s+)?[\w][\w ./()#-]{0,40}:\s*\S")
CONSTRAINT = re.compile(r"\b(?:must|mustn.t|don.t|do not|never|always|only|required|make sure|be sure|should not|"
                        r"without|not allowed)\b", re.I)
STEP_HEAD = re.compile(r"^(?:step|phase|part|stage)\s*\d+|^\d+[.)]\s|^\d+\.\d*\s", re.I)


GOAL = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|__)?(?:goal|objective|aim)s?(?:\*\*|__)?\s*:(?:\*\*|__)?\s*(\S.+)$", re.I)
INTENT = re.compile(r"\b(?:wants? to|would like to|goal is|we will|we'll|this plan|the plan|needs? to|so that|"
                    r"in order to|is to)\b", re.I)


def _clean(line: str) -> str:
    s = re.sub(r"\*\*|__", "", line.strip())
    return " ".join(s.split())


def plan_digest(text: str, cap: int) -> str | None:
    """A markdown plan in one line: its lead-in, title, first context sentence and its step headings
    (or top-level numbered items), within `cap` characters. None when the text is not such a plan."""
    lines = text.splitlines()
    heads = [(len(m.group(1)), _clean(m.group(2))) for m in (HEAD.match(ln) for ln in lines) if m]
    if len(heads) < 2:
        return None
    lead = _clean(next((ln for ln in lines if ln.strip()), ""))
    lead = "" if HEAD.match(lead) else lead.rstrip(":")
    title = heads[0][1]
    levels = sorted({lv for lv, _ in heads[1:]})
    steps = [h for lv, h in heads[1:] if STEP_HEAD.search(h)]
    if not steps and levels:
        sub = [h for lv, h in heads[1:] if lv == levels[0]]
        steps = sub
    context = ""
    for k, ln in enumerate(lines):
        m = HEAD.match(ln)
        if m and re.search(r"context|background|problem|goal|overview|why", m.group(2), re.I):
            para = []
            for nxt in lines[k + 1:]:
                if HEAD.match(nxt):
                    break
                if nxt.strip():
                    para.append(nxt.strip())
                elif para:
                    break
            context = _clean(" ".join(para))
            break
    out = (f"{lead}: " if lead else "") + f"“{title}”"
    goal = next((_clean(m.group(1)) for m in (GOAL.match(ln) for ln in lines) if m), "")
    if goal or context:
        said = re.split(r"(?<=[.!?])\s+", goal or context)
        k = 0 if goal else next((j for j, x in enumerate(said) if INTENT.search(x)), 0)
        first = " ".join(said[:k + 1]) if k == 1 and len(" ".join(said[:2])) <= 240 else said[k]
        out += f" — {cut(first.rstrip('.'), 240)}"     # what the plan sets out to do, not only the problem
    if steps:
        detail = cap > 500
        parts = [s + (_under(lines, s, 160 if cap > 1000 else 80) if detail else "") for s in steps]
        head = out + ". Its parts: "
        shown = []
        for k, p in enumerate(parts):     # whole parts only; the rest counted
            rest = f"; and {len(parts) - k - 1} more" if k + 1 < len(parts) else ""
            if len(head) + len("; ".join(shown + [p])) + len(rest) > cap and shown:
                return head + "; ".join(shown) + f"; and {len(parts) - len(shown)} more"
            shown.append(p)
        return head + "; ".join(shown)
    return cut(out, cap)


CHECKS = re.compile(r"verif|validat|testing|test plan|acceptance|done when|definition of done|checklist", re.I)
NOTES = re.compile(r"mapping|differences|constraints|requirements|decisions?\b|design|approach|strategy|gotchas|caveats|"
                   r"notes|assumptions|risks|out of scope|non-goals", re.I)


def plan_outline(text: str) -> tuple[str, list[tuple[str, str, str, str]]] | None:
    """A markdown plan as its head (lead-in, title, first context sentence) and its parts, each as
    (heading, what it says in brief, what it says at length, its role): the steps ("step"), then how the
    work is checked ("check": a Verification part), and what the steps rest on ("note": a mapping, key
    differences, constraints; a table's rows as `a → b`). None when the text is not such a plan."""
    head = plan_digest(text, 400)
    if head is None:
        return None
    head = head.split(". Its parts: ", 1)[0]
    lines = text.splitlines()
    heads = [(len(m.group(1)), _clean(m.group(2))) for m in (HEAD.match(ln) for ln in lines) if m]
    steps = [h for lv, h in heads[1:] if STEP_HEAD.search(h)]
    if not steps:
        levels = sorted({lv for lv, _ in heads[1:]})
        steps = [h for lv, h in heads[1:] if levels and lv == levels[0]]
    parts = [(h, _under(lines, h, 160), _under(lines, h, 600, deep=True), "step") for h in steps]
    for k, (lv, h) in enumerate(heads[1:], 1):
        parent = next((ph for pl, ph in reversed(heads[:k]) if pl < lv), "")
        if h in steps or parent in steps:
            continue        # a step's own sub-part: told with the step
        role = "check" if CHECKS.search(h) else "note" if NOTES.search(h) else ""
        if role:
            only = role == "check"      # a check list is its items: the paragraph after it is not a check
            short = _under(lines, h, 240, table=True, items=only)
            long = _under(lines, h, 700 if only else 1600, deep=True, table=True, items=only)   # what binds: whole
            if short or long:
                parts.append((h, short, long, role))
    order = {"note": 0, "step": 1, "check": 2}
    return head, sorted(parts, key=lambda x: order[x[3]])


def plan_part(text: str, heading: str, cap: int) -> str:
    """What a plan says under `heading`, read through its sub-parts, within about `cap` characters."""
    return _under(text.splitlines(), heading, cap, deep=True, table=True)


def _under(lines: list[str], heading: str, n: int, deep: bool = False, table: bool = False,
           items: bool = False) -> str:
    """What the plan says under `heading`: its first lines that are whole statements (a line ending in a colon
    introduces the list after it, which is taken instead), as ` (…; …)`; `deep` reads on through the part's
    sub-headings (each leading what follows it), code blocks left out; with `table`, a table's rows as
    `first cell → second cell`, its head row and rule left out; with `items`, list items only, up to the
    first line after the list."""
    for k, ln in enumerate(lines):
        m = HEAD.match(ln)
        if m and _clean(m.group(2)) == heading:
            got: list[str] = []
            level, fence, head_row = len(m.group(1)), False, None
            whole_part = False      # read to the part's end: what is left can be counted
            window = lines[k + 1:k + (120 if deep else 20)]
            for nxt in window + ([] if k + 1 + len(window) < len(lines) else ["# end"]):
                if nxt.strip().startswith("```"):
                    fence = not fence
                    continue
                sub = HEAD.match(nxt)
                if fence:
                    continue
                if sub and (not deep or len(sub.group(1)) <= level):
                    whole_part = True
                    break
                if sub:     # a sub-heading of the part leads what follows it
                    got.append(_clean(sub.group(2)) + ":")
                    continue
                if items and nxt.strip() and not ITEM.match(nxt):
                    if got:
                        whole_part = True
                        break
                    continue
                t = _clean(ITEM.sub(r"\1", nxt))
                if table and t.startswith("|"):
                    row = _row(t)
                    if row is None:     # the rule under the table's head row: that row named the columns
                        if got and got[-1] == head_row:
                            got.pop()
                        continue
                    t = head_row = row
                if t.endswith(":") and not t.startswith("|"):     # "Keep x (why). Add y used by z:" keeps its whole
                    t = " ".join(re.split(r"(?<=[.!?])\s+(?=[A-Z`*])", t)[:-1])     # sentences, not the lead-in
                if not t or t.endswith(":") or t.startswith("|") or re.fullmatch(r"[-*_=]{3,}", t):
                    continue
                got.append(t)
            while got and got[-1].endswith(":"):
                got.pop()
            if not got:
                break
            whole = got[:1]     # whole statements only; more than fits is marked, not cut mid-item
            for t in got[1:]:
                if len(_joined(whole + [t])) > n:
                    break
                whole.append(t)
            while len(whole) > 1 and whole[-1].endswith(":"):
                whole.pop()
            told = whole_sentences(_joined(whole), n)     # whole statements, never a cut one
            left = [t for t in got[len(whole):] if not t.endswith(":")]
            heads = [_head(t) for t in left]
            if left and whole_part and all(heads) and len(told) + sum(len(x) + 2 for x in heads) <= n + n // 2 \
                    and len(told) >= len(_joined(whole)) - 1:
                return f" ({_joined(whole + heads)})"     # the rest by their names, not a count
            named = [_head(t) for t in got if not t.endswith(":")]
            if left and whole_part and len(named) > 2 and all(named) and len(_joined(named)) <= n + n // 2:
                return f" ({_joined(named)})"      # too long to tell one whole: every one by its name
            more = f"{len(left)} more" if left and whole_part else "more" if left or len(told) < len(_joined(whole)) - 1 else ""
            if more:      # more than fits: counted, not cut
                told = (told[:-1] if told.endswith(".") and not told.endswith("..") else told) + f"; and {more}"
            return f" ({told})"
    return ""


HEAD_OF = re.compile(r"^(.{3,70}?)(?:\s+[—–-]\s+|:\s+)\S")


def _head(item: str) -> str:
    """What a list item names before its dash or colon (`build(x)` — what it does): "" when it has no such head."""
    m = HEAD_OF.match(item)
    return m.group(1).strip() if m and m.group(1).count("`") % 2 == 0 else ""


def _row(line: str) -> str | None:
    """A table row as `first → second`; None for the table's rule (`|---|---|`), "" for a row with no two cells."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
        return None
    return f"{cells[0]} → {cells[1]}" if len(cells) >= 2 and cells[0] and cells[1] else ""


def _joined(parts: list[str]) -> str:
    out = ""
    for p in parts:
        if out and out.endswith(".") and not out.endswith(".."):
            out = out[:-1]      # `Follow x.; y` reads `Follow x; y`
        out += p if not out else (" " if out.endswith(":") else "; ") + p
    return out


def brief(text: str, cap: int) -> str:
    """A request on one line within `cap` characters: whole when it fits, else its first line, its
    `key: value` and numbered lines and its constraints, in their order."""
    one = " ".join(text.split())
    if len(one) <= cap:
        return one
    digest = plan_digest(text, cap)
    if digest:
        return digest
    lines = [_clean(ln) for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return cut(one, cap)
    kept = keep_lines(lines, cap, lambda ln: bool(KEY_VALUE.match(ln) or ITEM.match(ln)),
                      lambda ln: bool(CONSTRAINT.search(ln)))
    return cut(one, cap) if kept is None else kept


def keep_lines(lines: list[str], cap: int, marked, constrained) -> str | None:
    """The lines that fit in `cap` characters, in their order: the first, then the `marked` ones (data,
    numbered items), then the `constrained` ones, then the rest while room lasts; each gap one ` … `.
    None when the first line alone does not fit."""
    keep = [False] * len(lines)
    used = 0

    def take(k: int) -> None:
        nonlocal used
        if not keep[k] and used + len(lines[k]) + 3 <= cap:
            keep[k] = True
            used += len(lines[k]) + 3

    take(0)
    for k, ln in enumerate(lines):
        if marked(ln):
            take(k)
    for k, ln in enumerate(lines):
        if constrained(ln):
            take(k)
    for k in range(len(lines)):
        take(k)
    if not keep[0]:
        return None
    out, gap = [], False
    for k, ln in enumerate(lines):
        if keep[k]:
            out.append(("… " if gap else "") + ln)
            gap = False
        else:
            gap = True
    return " ".join(out) + (" …" if gap else "")


def plan_parts(text: str) -> list[str]:
    """A plan's verification or checklist lines (commands in backticks, `- [ ]` items), for what is left."""
    out = []
    for ln in text.splitlines():
        m = ITEM.match(ln)
        if m and ("`" in m.group(1) or ln.strip().startswith(("- [ ]", "* [ ]"))):
            out.append(_clean(m.group(1)).removeprefix("[ ] "))
    return out
