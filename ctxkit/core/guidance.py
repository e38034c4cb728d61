"""What governs the next action, as the span states it (pure): the rules and phases of the skill or
command the work runs under, the system prompt's policy rules that the pending request touches, the
explicit constraints of the work item in progress, and the plan the agent stated for it.

A successor that only knows "continue" breaks these: it implements where a command only files work
items, books a mixed-cabin trip the policy forbids, edits the file an item says not to touch, or
forgets the parts of its own plan not done yet. Each line quotes the source briefly, and only
where it bears on what comes next.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from .requests import COMMAND_NAME, brief, request_text
from .shorten import unemphasize as _unemphasize


def unemphasize(text: str) -> str:
    """Bold markers removed, also around a code span (`**Create `x.css`**`)."""
    return re.sub(r"\*\*(.+?)\*\*", r"\1", _unemphasize(text))

# a rule line: emphasized scope words, or a sentence that tells always / never / only
RULE = re.compile(r"\*\*SCOPE\*\*|\b(?:ONLY|NOT|NEVER|MUST|ALWAYS|DO NOT)\b|(?i:^\W*(?:always|never|do not|don't)\b|"
                  r"\bnever (?:fabricate|invent|guess)\b)")
PHASE = re.compile(r"^(#{2,4})\s+((?:Phase|Step|Stage)\s*\d+\b.*?)\s*#*$", re.M | re.I)
NUMBERED = re.compile(r"^(\d+)[.)]\s+(.+)$")
SKILL_FILE = re.compile(r"(?:^|[/\\])SKILL\.md\b", re.I)
FRONT_NAME = re.compile(r"^name:\s*(.+)$", re.M)
FRONT_DESC = re.compile(r"^description:\s*(.+)$", re.M)


@dataclass
class Skill:
    name: str = ""          # `/plugin:command`, or the skill's own name
    about: str = ""         # its first line or its description
    text: str = ""
    at: int = -1            # the record that loaded it
    rules: list = field(default_factory=list)
    phases: list = field(default_factory=list)   # (title, body)


def _text(r) -> str:
    return r.get("content") if isinstance(r, dict) and isinstance(r.get("content"), str) else ""


def _flags(r) -> tuple:
    return tuple(r.get("flags") or ()) if isinstance(r, dict) else ()


def _loaded(span: Sequence[dict]) -> list[tuple[int, str, str]]:
    """(record index, name, text) of every skill or command body the span loaded: a command's
    expansion (the meta user message after `<command-name>`), the body a Skill call loaded, a
    SKILL.md file read."""
    from .artifacts import _args

    out = []
    calls: dict = {}
    skill_called = ""
    for i, r in enumerate(span):
        t = _text(r)
        if r.get("role") == "user":
            m = COMMAND_NAME.search(t)
            if m and i + 1 < len(span):
                nxt = span[i + 1]
                if nxt.get("role") == "user" and "meta" in _flags(nxt) and len(_text(nxt)) > 200:
                    out.append((i + 1, "/" + m.group(1).strip().lstrip("/"), _text(nxt)))
            elif skill_called and "meta" in _flags(r) and len(t) > 200:
                out.append((i, skill_called, t))
                skill_called = ""
        for c in r.get("tool_calls") or ():
            name = ((c.get("function") or {}).get("name") or "")
            args = _args(c)
            calls[c.get("id")] = (name, args if isinstance(args, dict) else {})
        if r.get("role") == "tool" and r.get("tool_call_id") in calls:
            name, args = calls.pop(r["tool_call_id"])
            failed = "error" in _flags(r)
            target = " ".join(str(v) for v in args.values() if isinstance(v, str))
            if name == "Skill" and not failed:
                skill_called = str(args.get("skill") or args.get("name") or "")
            elif SKILL_FILE.search(target) and not failed and FRONT_NAME.search(t[:400]):
                out.append((i, "", re.sub(r"^(?:Exit code: \d+\s*\n)?(?:Wall time: [^\n]*\n)?(?:Output:\s*\n)?", "", t)))
    return out


def demojibake(text: str) -> str:
    """UTF-8 text that was read as cp1252 (`â€”` for `—`), put right; any other text as it is."""
    if not re.search(r"[âÃ][\u0080-\u203f]", text):
        return text

    def fix(line: str) -> str:
        try:
            return line.encode("cp1252").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            return line
    return "\n".join(fix(ln) for ln in text.split("\n"))


POINTS_BACK = re.compile(r"\bthis (?:link|url|address|file|command|script)\b", re.I)


def _rules(text: str, cap: int = 4) -> list[str]:
    """The lines of a skill that limit what may be done: scope statements and always / never /
    only / must rules, whole, in their order (blockquote marks and emphasis left out). A rule that
    points back ("Always show this link") is quoted with the line it points to."""
    out = []
    body = re.sub(r"```.*?```", "", text, flags=re.S)
    prev = ""
    for ln in body.splitlines():
        t = ln.strip().lstrip(">").strip()
        t = re.sub(r"^[-*]\s+", "", t)
        if not t:
            continue
        if t.startswith(("#", "|")) or len(t) > 260 or not RULE.search(t) or \
                re.search(r"\bIf\b.*:$|^\W*(?:Options|Use AskUserQuestion)", t):
            prev = t
            continue
        t = unemphasize(t)
        if POINTS_BACK.search(t) and prev and not prev.startswith(("#", "|")):
            t = unemphasize(prev) + " " + t
        if t not in out:
            out.append(t)
        prev = t
    return out[:cap]


def _phases(text: str) -> list[tuple[str, str]]:
    heads = list(PHASE.finditer(text))
    out = []
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        nxt_head = re.search(rf"(?m)^#{{1,{len(m.group(1))}}}\s", text[m.end():end])
        body = text[m.end(): m.end() + nxt_head.start()] if nxt_head else text[m.end():end]
        out.append((unemphasize(m.group(2)).strip(), body))
    return out


def skill_in_force(span: Sequence[dict]) -> Skill | None:
    """The skill or command whose instructions the work runs under at the cut: the last one loaded
    at or after the latest request, or the command the latest request came through."""
    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    last_req = next((k for k in range(len(msgs) - 1, -1, -1) if msgs[k].get("role") == "user"
                     and request_text(msgs[k])), -1)
    loaded = _loaded(msgs[max(last_req, 0):])  # what was loaded before the latest request governed an older one
    if loaded:
        at, name, text = loaded[-1]
        at += max(last_req, 0)
    else:  # the command the session began with governs it to the end
        first_req = next((k for k, r in enumerate(msgs) if request_text(r)), -1)
        begun = [x for x in _loaded(msgs[max(first_req, 0):first_req + 3]) if x[1].startswith("/")] if first_req >= 0 else []
        if not begun:
            return None
        at, name, text = begun[0]
        at += first_req
    text = demojibake(text)
    s = Skill(name=name, text=text, at=at)
    front = FRONT_NAME.search(text[:600])
    if front and not name:
        s.name = front.group(1).strip()
        d = FRONT_DESC.search(text[:1200])
        s.about = brief(re.split(r"\s+Use (?:it )?when\b", d.group(1).strip())[0], 200) if d else ""
    else:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        s.about = brief(first, 200) if not first.startswith(("#", ">", "-", "---")) else ""
    s.rules = _rules(text)
    s.phases = _phases(text)
    return s


def _stems(text: str) -> set:
    return {w[:5] for w in re.findall(r"[a-z][a-z0-9]{3,}", text.lower()) if w not in STOP}


STOP = frozenset("""that this with from have will your when then them they what which would could should there
their about into only also just like want need please okay sure help make does done been being these those
other than more most such each very some""".split())


def phase_for(s: Skill, words: str) -> int | None:
    """The phase whose title shares most words with `words` (a plan step, the agent's last words)."""
    best, score = None, 0
    w = _stems(words)
    for k, (title, _) in enumerate(s.phases):
        n = len(_stems(re.sub(r"^(?:Phase|Step|Stage)\s*\d+\W*", "", title, flags=re.I)) & w)
        if n > score:
            best, score = k, n
    return best if score >= 2 else None


def phase_after_approval(s: Skill) -> int | None:
    """The phase the skill runs only once its plan is approved ("Create Beads (only after plan approval)")."""
    return next((k for k, (t, _) in enumerate(s.phases) if re.search(r"\bapprov", t, re.I)), None)


def phase_steps(body: str, cap: int = 6) -> list[str]:
    """A phase's numbered steps, each its first sentence and the first command of the code block
    that follows it."""
    lines = body.splitlines()
    out = []
    k = 0
    while k < len(lines):
        m = NUMBERED.match(lines[k].strip())
        if m:
            sents = re.split(r"(?<=[.!?:])\s+", m.group(2).strip())
            step = sents[0] + (" " + sents[1] if len(sents) > 1 and len(sents[0]) + len(sents[1]) < 170 else "")
            step = unemphasize(step).rstrip(":.")
            cmd = ""
            j = k + 1
            while j < len(lines) and not NUMBERED.match(lines[j].strip()):
                if lines[j].strip().startswith("```"):
                    code = next((x.strip() for x in lines[j + 1:] if x.strip() and not x.strip().startswith("```")), "")
                    cmd = _command_gist(code)
                    break
                j += 1
            out.append(step + (f" (`{cmd}`)" if cmd else ""))
        k += 1
    return out[:cap]


def _command_gist(code: str) -> str:
    """A templated command without its long placeholder values: `bd create --title=… --type=epic`."""
    code = re.sub(r"=\"\[[^\]]*\]\"|=\[[^\]]*\]", "=…", code)
    code = re.sub(r"\"\[[^\]]*\]\"", "…", code)
    return brief(code, 120)


ANSWER_SKIP = frozenset("which what should would could these this that with from into your have will use set "
                        "the and for are can".split())


def _answers_for(text: str, answers) -> list[str]:
    """The user's answers to the agent's questions whose question shares a word with `text` (a
    phase's steps): "Which rig …?" → "No rig" bears on "use `--rig` to route to the correct rig"."""
    words = {w for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in ANSWER_SKIP}
    return [f"\"{brief(q, 70)}\": {a}" for q, a in answers
            if words & {w for w in re.findall(r"[a-z]{3,}", q.lower()) if w not in ANSWER_SKIP}]


def skill_lines(s: Skill, plan_approved: bool, step: str | None, words: str, answers=()) -> tuple[list[str], list[str]]:
    """Current work and Next step lines for the skill in force: its name and scope rules, the phase
    the work is in, and (next) the phase that comes now with its steps, with the user's answers
    that bear on them."""
    cur, nxt = [], []
    what = f"`{s.name}`" if s.name.startswith("/") else f"the `{s.name}` skill" if s.name else "the loaded skill"
    head = f"The work runs under {what}" + (f" ({s.about.rstrip('.')})" if s.about else "")
    cur.append(head + (": " + " ".join(f"\"{brief(r, 220)}\"" for r in s.rules) if s.rules else "."))
    k = phase_after_approval(s) if plan_approved else None
    if k is None and s.phases:
        k = phase_for(s, step or words)
        if k is not None and not step:
            k = None  # a phase named only by the agent's words is a guess
    if k is not None:
        title, body = s.phases[k]
        steps = phase_steps(body)
        if plan_approved:
            said = _answers_for(" ".join(steps), answers)
            nxt.append(f"By {what}'s own instructions the next phase is {title}" +
                       (": " + "; ".join(f"{n}. {x}" for n, x in enumerate(steps, 1)) if steps else "") + "." +
                       (" The user's answers that bear on it: " + "; ".join(said) + "." if said else ""))
        else:
            cur.append(f"By {what}'s own phases the work is in {title}" +
                       (f"; then {s.phases[k + 1][0]}" if k + 1 < len(s.phases) else "") + ".")
            fallback = re.search(r"(?im)^\W*fallback\W*\s*(.+(?:\n(?!\s*\n).+)*)", body)
            if fallback:
                nxt.append(f"{title} says, if its way fails: " + brief(unemphasize(" ".join(fallback.group(1).split())), 420))
            if k + 1 < len(s.phases):  # what the skill asks next, in its own steps
                then, body2 = s.phases[k + 1]
                steps = phase_steps(body2)
                if steps:
                    nxt.append(f"The next phase by {what}, {then}: " + "; ".join(f"{n}. {x}" for n, x in enumerate(steps, 1)) + ".")
    return cur, nxt


# --- a system prompt's policy -------------------------------------------------------------------------

def _bullets(prompt: str) -> list[tuple[str, str]]:
    """(section heading, rule) for each bullet or paragraph of a policy prompt."""
    out = []
    head = ""
    for block in re.split(r"\n\s*\n", prompt):
        b = block.strip()
        h = re.match(r"^#{1,4}\s+(.+)$", b)
        if h and "\n" not in b:
            head = h.group(1).strip()
            continue
        for part in re.split(r"(?m)^\s*[-*]\s+", b):
            t = " ".join(part.split())
            if len(t) > 30 and not t.startswith("#"):
                out.append((head, t))
    return out


def policy_lines(span: Sequence[dict], cap: int = 2) -> list[str]:
    """The system prompt's rules that bear on the pending request, quoted: the bullets that share
    the most rare words with the latest request (a bullet's own label, "Change cabin:", counts
    double; a bullet the request does not name by its label needs one shared word more), within
    60 % of the best, from the sections the whole conversation is about; then,
    from the best one's section, the bullet that shares the most with what the agent last asked of
    the user (the payment rule when it asked for a payment method)."""
    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    prompt = next((_text(r) for r in msgs if r.get("role") == "system" and len(_text(r)) > 400), "")
    if not prompt:
        return []
    rules = _bullets(prompt)
    if len(rules) < 4:
        return []
    asked = [(k, request_text(r)) for k, r in enumerate(msgs) if request_text(r)]
    if not asked:
        return []
    docs = [_stems(t) for _, t in rules]
    labels = [_stems(m.group(1)) if (m := re.match(r"^([\w /&-]{2,40}):\s", t)) else set() for _, t in rules]
    df = Counter(x for d in docs for x in d)
    n = len(docs)

    def scores(query: set, least: int = 3) -> list[tuple[float, int]]:
        out = []
        for k, d in enumerate(docs):
            hit = d & query
            weight = sum((2 if x in labels[k] else 1) * math.log(1 + n / df[x]) for x in hit)
            if (hit & labels[k] and len(hit) + len(hit & labels[k]) >= least) or len(hit) >= least + 1:
                out.append((weight, k))
        return sorted(out, reverse=True)

    # the sections the conversation is about: the best match of every request so far, section by section
    about: Counter = Counter()
    for _, t in asked:
        for sc, k in scores(_stems(t), 2)[:1]:
            about[rules[k][0]] += sc
    first = rules[0][0]
    top = max(about.values(), default=0)
    sections = {h for h, v in about.items() if v >= top * 0.5} | {first}
    best = [(sc, k) for sc, k in scores(_stems(asked[-1][1])) if rules[k][0] in sections]
    if not best:
        return []
    keep = [k for sc, k in best[:cap] if sc >= best[0][0] * 0.6]
    said = next((_text(r) for r in reversed(msgs[:asked[-1][0]]) if r.get("role") == "assistant" and _text(r).strip()), "")
    section = rules[best[0][1]][0]
    more = [k for _, k in scores(_stems(said)) if rules[k][0] == section and k not in keep]
    keep += more[:1]
    query = _stems(asked[-1][1]) | _stems(said)
    return [(f"{rules[k][0]}: " if rules[k][0] else "") + f"\"{_rule_gist(rules[k][1], query)}\"" for k in sorted(keep)]


LIMITS = re.compile(r"\b(?:must|cannot|can not|can't|not possible|only|never|at most|at least|required?|no more than)\b", re.I)


def _rule_gist(rule: str, query: set, cap: int = 300) -> str:
    """A policy bullet in its own words, shortened to its sentences that share a word with the
    request, those that also set a limit first (in their order; its label kept): "Change cabin: …
    Cabin class must be the same …"."""
    if len(rule) <= 160:
        return rule
    sents = re.split(r"(?<=[.!?;])\s+", rule)
    ranked = sorted((0 if LIMITS.search(x) else 1, k) for k, x in enumerate(sents) if _stems(x) & query)
    picked, size = set(), 0
    for _, k in ranked:
        if size + len(sents[k]) + 1 <= cap or not picked:
            picked.add(k)
            size += len(sents[k]) + 1
    kept = [sents[k] for k in sorted(picked)] or sents[:1]
    label = re.match(r"^([\w /&-]{2,40}):\s", rule)
    out = " ".join(kept)
    if label and not out.startswith(label.group(0)):
        out = label.group(0) + "… " + out
    return brief(out, cap + 60)


# --- the work item's constraints ---------------------------------------------------------------------

CONSTRAINT = re.compile(r"\b(?:do not|don'?t|never|must not|only|keep\b[^.]*\b(?:intact|unchanged|as is)|unchanged|"
                        r"not (?:edit|change|touch|modify)|no new)\b", re.I)
LITERAL_TEXT = re.compile(r"`([^`\n]*\s[^`\n]*[.!?])`")   # a required text: a backticked phrase that ends a sentence


def item_text(span: Sequence[dict], item: str) -> str:
    """The last `bd show ITEM` (or `br show`) output the span holds for the item."""
    from .artifacts import _args

    want = re.compile(rf"\b(?:bd|br|beads)\s+show\s+(?:\S+\s+)*{re.escape(item)}\b")
    calls: dict = {}
    found = ""
    for r in span:
        for c in r.get("tool_calls") or ():
            args = _args(c)
            cmd = str(args.get("command") or "") if isinstance(args, dict) else ""
            if want.search(cmd):
                calls[c.get("id")] = True
        if r.get("role") == "tool" and calls.pop(r.get("tool_call_id"), False) and "error" not in _flags(r):
            found = _text(r)
    return found


def item_constraints(span: Sequence[dict], item: str, cap: int = 5) -> list[str]:
    """The explicit constraints of a work item's description (scope fences, what must stay as it
    is) and the texts it requires verbatim."""
    text = item_text(span, item)
    if not text:
        return []
    out = []
    for ln in text.splitlines():
        t = re.sub(r"^\s*[-*]\s+", "", ln).strip()
        if not t or len(t) > 240 or t.endswith(":"):
            continue
        if CONSTRAINT.search(t) and not re.match(r"^(?:For unrelated changes|Tests to verify|All requirements)", t):
            out.append(f"\"{t}\"")
        else:
            for m in LITERAL_TEXT.finditer(t):
                out.append(f"the text `{m.group(1)}` ({brief(t[:m.start()].rstrip(' :'), 100)})")
    # scope fences first, then what must stay as it is, then the required texts, then the rest
    rank = [(0 if re.search(r"\b(?:do not|don'?t|never|must not|not (?:edit|change|touch|modify))\b", x, re.I) else
             1 if re.search(r"\b(?:intact|unchanged|as is|scope)\b", x, re.I) else
             2 if x.startswith("the text ") else 3, k) for k, x in enumerate(out)]
    ordered = [out[k] for _, k in sorted(rank)]
    return list(dict.fromkeys(ordered))[:cap]


# --- the agent's stated plan for the work in progress ----------------------------------------------------

def stated_plan(span: Sequence[dict], start: int, first_edit: int) -> list[tuple[str, list[str]]]:
    """The numbered plan the agent wrote between `start` (the claim of the item, the step's start)
    and its first edit: (item, its sub-points) in order; [] when it wrote none."""
    plan: list = []
    for r in span[start:first_edit if first_edit >= 0 else len(span)]:
        if r.get("role") != "assistant":
            continue
        t = re.sub(r"```.*?```", "", _text(r), flags=re.S)
        items: list = []
        for ln in t.splitlines():
            m = NUMBERED.match(ln.strip())
            if m and not ln.startswith((" ", "\t")):
                items.append((unemphasize(m.group(2)).strip().rstrip(":"), []))
            elif items and re.match(r"^\s+[-*]\s+\S", ln):
                items[-1][1].append(unemphasize(re.sub(r"^\s+[-*]\s+", "", ln)).strip())
            elif items and ln.strip() and not ln.startswith((" ", "\t")):
                break
        if len(items) >= 2:
            plan = items
    return plan
