"""The agent's own words, read: sentences that stand alone, the choices it made with their reasons,
what it said caused a failure and how it meant to fix it. Narration ("Let me check…"), self-praise
("Perfect! All tests pass") and fragments are never taken."""
from __future__ import annotations

import re

from ...core.hygiene import near_duplicate
from ...core.text import BULLET, FENCE, TABLE, clean, sentences

NARRATION = re.compile(
    r"^(?:now,?\s+)?(?:let me|let's (?:check|look|see|read|run|verify|explore|start|find|examine|try)|i'll (?:check|look|read|run|"
    r"verify|explore|search|examine|start|now|first|also check|begin|take a look|investigate|review|test)|i need to (?:check|look|"
    r"read|understand|see|find|verify)|i'm going to (?:check|look|read|run)|first,? i|looking at|i see\b|i can see|i notice|"
    r"ok\b|okay\b|alright|good\b|great\b|perfect\b|excellent\b|awesome\b|nice\b|done\b|got it|understood|sure\b|"
    r"now i (?:have|understand|see|know)|here(?:'s| is) (?:the|a|my)|this (?:is|looks) (?:good|great|correct|fine)|"
    r"all (?:\d+ )?tests? (?:pass|are passing)|everything (?:passes|works|is green)|the (?:file|tests?) (?:has|have) been|"
    r"i have (?:successfully|now|completed)|successfully|you're right|you are right|thanks)", re.I)
PRAISE = re.compile(r"^(?:perfect|excellent|great|awesome|amazing|fantastic|wonderful|brilliant)\b|!\s*$", re.I)
FIRST_PERSON = re.compile(r"\b(?:I|I'll|I'm|I've|we|we'll|we're|let's|my|our)\b", re.I)
CHOICE_ONLY_WITH_AGENT = re.compile(r"\b(?:instead of|rather than|should (?:use|keep|live|go)|will (?:keep|use|reuse|follow))\b", re.I)
DECIDE = re.compile(
    r"\b(?:decided|decide to|i'll use|we'll use|i will use|use \S+ instead|instead of|rather than|the (?:simplest|best|cleanest|right|"
    r"correct|safest|better|proper|only) (?:approach|fix|way|option|solution|choice|place)\b|i'm going with|going with|"
    r"chose|choose to|opted? (?:to|for)|prefer(?:red)? to|the plan is|makes sense to|keep(?:ing)? (?:it|them|the)\b|"
    r"should (?:use|keep|live|go)|will (?:keep|use|reuse|follow))", re.I)
REASON = re.compile(r"\b(?:because|since|so that|to avoid|to keep|to make|which (?:means|keeps|avoids)|given that|"
                    r"otherwise|as it|as the|this way|so the|so it|following)\b", re.I)
CAUSE = re.compile(r"\b(?:because|caused by|due to|the (?:issue|problem|cause|bug|error|failure|culprit) (?:is|was|here)|"
                   r"root cause|this happens|this is because|the reason|fails? (?:because|since|when)|is failing because|"
                   r"was failing because|comes from|the test expects|expects? .{1,40} but|(?:is )?what causes|"
                   r"(?:a |is a )?known (?:\w+ ){0,2}(?:bug|issue|limitation|quirk))\b", re.I)
FIX = re.compile(r"\b(?:the fix (?:is|was)|fix(?:ed)? (?:it |this |that )?by|to fix (?:this|it|that)|i'll (?:fix|change|update|"
                 r"add|remove|replace|rename|wrap|move|use|switch)|need(?:s)? to (?:change|add|update|remove|use|be)|"
                 r"should (?:use|be|return|call)|replac(?:e|ing) \S+ with|changing \S+ to)\b", re.I)
CONNECTIVE_START = re.compile(r"^(?:and|but|so|or|which|then|also|because|since|as|that|this|it|they|these)\b", re.I)
IDENT = re.compile(r"`[^`]+`|\b[A-Za-z_]+(?:[A-Z][a-z0-9]+)+\b|\b[a-z]+_[a-z_0-9]+\b|\b[\w-]+\.[a-z]{1,5}\b")


CODE_LINE = re.compile(r"^(?:import|export|from|const|let|var|def|class|function|return|package|use|fn|pub|#include)\b|"
                       r"[;{}]\s*$|=>|^\s*[<>]{3,}|^\s*[=]{5,}|^[\w.]+\(.*\)$")


def stands_alone(s: str) -> bool:
    """A sentence a reader can take without its neighbours: whole, not narration, not praise."""
    words = s.split()
    if len(words) < 5 or len(s) > 400:
        return False
    if s.endswith((":", ",", ";", "(", "—", "-")) or s.count("`") % 2 or s.count("(") != s.count(")"):
        return False
    if NARRATION.match(s) or PRAISE.search(s) or CONNECTIVE_START.match(s) or CODE_LINE.search(s):
        return False
    return True


def decisions(text: str) -> list[tuple[str, str]]:
    """(choice, reason) pairs: sentences that make a choice, with the reason clause when they give one."""
    out = []
    prev = ""
    for s in sentences(text):
        m = DECIDE.search(s)
        if not m or not stands_alone(s) or CHOICE_ONLY_WITH_AGENT.fullmatch(m.group(0)) and not FIRST_PERSON.search(s) \
                or not (REASON.search(s) or IDENT.search(s)):
            prev = s
            continue
        m = REASON.search(s)
        if m and m.start() > 12:
            out.append((s[:m.start()].rstrip(" ,;—-"), s[m.start():].strip()))
        elif prev and CAUSE.search(prev) and not NARRATION.match(prev):
            out.append((s, _cut(prev, 240)))     # the reason the sentence before gave ("The issue is that …")
        else:
            out.append((s, ""))
        prev = s
    return out


LINE_NO = re.compile(r"\blines? ~?\d+|:\d+\b")
EXPLAINS = re.compile(
    r"\b(?:because|caused by|due to|root cause|the (?:issue|problem|cause|bug|reason|culprit|key|trick|catch) (?:is|was)|"
    r"turns out|it seems|this means|which means|that's why|so that|is (?:called|used|stored|rendered|handled|set|read|"
    r"written|computed|created|parsed|passed|triggered) (?:by|in|from|when|via|on)|works by|happens (?:when|because)|"
    r"only (?:when|if)|already (?:has|exists|handles|does|uses)|doesn't|does not|isn't|is not|never|instead of|"
    r"complain(?:s|ing)?(?: about)?|too (?:deep|many|long|complex|large)|levels? deep)\b", re.I)


def findings(text: str, limit: int = 3) -> list[str]:
    """What the agent found out, in its words: sentences that explain how the code works or why something
    failed, naming what they speak of (`TranscriptRenderer` stores …, the test fails because …)."""
    out = []
    for s in sentences(text):
        if EXPLAINS.search(s) and IDENT.search(s) and stands_alone(s) and not s.endswith("?") and \
                not DECIDE.search(s) and not re.match(r"(?:let me|i'll|i will|now i'll|next)", s, re.I) and \
                not LINE_NO.search(s):      # "the call on line ~267 is there": true only until the next edit
            out.append(_cut(s, 260))
            if len(out) >= limit:
                break
    return out


def cause(text: str) -> str:
    for s in sentences(text):
        if CAUSE.search(s) and len(s.split()) >= 5 and not NARRATION.match(s) and not PRAISE.search(s):
            return _cut(s)
    return ""


def fix(text: str) -> str:
    for s in sentences(text):
        if FIX.search(s) and len(s.split()) >= 5 and not PRAISE.search(s):
            return _cut(s)
    return ""


def _cut(s: str, n: int = 300) -> str:
    if len(s) <= n:
        return s
    cut = s[:n].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + " …"


INTENT = re.compile(r"^(?:now,?\s+|next,?\s+|then,?\s+)?(?:let me|let's|i'll|i will|i need to|next,? i|i'm going to)\b|"
                    r"^(?:now|next|then),?\s+(?:check|look|see|verify|find|search|add|update|fix|run|read|make|"
                    r"write|create|remove|wire|handle|test)\b", re.I)


def intent(text: str) -> str:
    """What the agent said it would do next, from its last words ("Let me re-run the tests to see …",
    "Now check if there's a `terminal_scrolled` handler …"): the last such sentence that names what it is
    about; one that says only "Let me search for it." names nothing and gives way to the one before."""
    said = [s for s in sentences(text) if INTENT.match(s) and len(s.split()) >= 4]
    for s in reversed(said):
        if IDENT.search(s) or len(s.split()) >= 8:
            return _cut(s)
    return _cut(said[-1]) if said else ""


def _says(s: str, words: int = 4) -> bool:
    """A statement of a report: not narration, praise or code."""
    return len(s.split()) >= words and not NARRATION.match(s) and not PRAISE.search(s) and not CODE_LINE.search(s)


ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+\S")
HEAD = re.compile(r"^\s*#{1,6}\s+(.*?)[\s#]*$|^\s*\*\*([^*\n]{3,80})\*\*:?\s*$")
POINT = 360     # the length of one point of a report, in whole sentences


def blocks(text: str) -> list[tuple[str, str, bool]]:
    """A message as (heading, text, is a list item) blocks: each list item whole with its continued lines,
    each paragraph; code blocks and tables left out."""
    body = TABLE.sub("", FENCE.sub("\n", text or ""))
    out: list[tuple[str, str, bool]] = []
    head, cur, item = "", [], False
    for ln in body.split("\n") + [""]:
        m = HEAD.match(ln)
        if m or not ln.strip() or ITEM.match(ln) or (item and not ln[:1].isspace()):
            if cur:
                out.append((head, " ".join(cur), item))
            cur, item = [], False
            if m:
                head = clean(m.group(1) or m.group(2))
                continue
            if not ln.strip():
                continue
            item = bool(ITEM.match(ln))
        cur.append(ln.strip())
    return out


GENERIC_HEAD = {"summary", "changes", "overview", "results", "details", "notes", "review", "status", "update",
                "updates", "conclusion", "findings", "context", "background", "implementation", "description", "done"}
CAUTION = re.compile(r"\b(?:not (?:done|fixed|run|yet)|todo|to do|remaining|risks?|blockers?|caveats?|known issues?|"
                     r"warnings?|unresolved|open (?:questions?|issues?)|left|pending|next steps?|follow[- ]ups?|"
                     r"needs? your)\b", re.I)      # a heading over what is not done or may go wrong
WARNS = re.compile(r"\b(?:fails?|failing|failed|do not|don't|must not|broken|is red|not (?:done|fixed|run|yet|rotated)|"
                   r"irreversibl[ey])\b", re.I)     # a point that warns, under any heading
LEAD_IN = re.compile(r"\b(?:with|to|the|a|an|as|like|these|this|following|by|for|of|and|or|using|via|run|from|in)$", re.I)
BOX = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+\[([ xX])\]")


def report(text: str, limit: int = 6) -> list[str]:
    """The points of a closing report, each whole: a list item with what it goes on to say (a checklist item
    with whether it is done), a paragraph's sentences up to a point's length; under a heading that names its
    kind ("Non-issues verified", "Risks"), the heading first. Narration, praise, code and lead-ins to what
    follows ("run it with") are left out; items alike but for nothing (every word of one in the other) are
    told once. Past `limit`, what is not done or may go wrong (a "Not done" or "Risks" part) is kept first."""
    out: list[tuple[str, bool]] = []
    for head, text, item in blocks(text):
        if not item and text.rstrip().endswith(":") and len(text) < 200:
            continue        # "Here's what changed in `x`:": what follows says it
        if LEAD_IN.search(text.rstrip()):
            continue        # its words go on in a code block or a list: a fragment alone
        box = BOX.match(text) if item else None
        said = sentences(BULLET.sub("", text) if item else text)
        if not said or not _says(said[0], 2 if item else 4) or not (stands_alone(said[0]) or IDENT.search(said[0]) or item):
            said = [s for s in said[1:2] if stands_alone(s)]      # a paragraph's opening narration: what follows
            if not said:
                continue
        point, rest = said[0], said[1:]
        while rest and _says(rest[0], 2) and len(point) + len(rest[0]) < POINT:
            point, rest = f"{point} {rest[0]}", rest[1:]
        named = len(head.split()) >= 2 or head.lower().strip(" :") not in GENERIC_HEAD
        label = head if head and named and len(head) <= 60 and head.lower() not in point.lower() else ""
        if not re.sub(r"`[^`]*`", "", point).strip(" .;:,—-"):
            continue        # code alone, no words about it
        if box:         # a checklist item: whether it is done, first
            state = "done" if box.group(1) in "xX" else "not done"
            point = f"{label}, {state}: {point}" if label else f"{state[0].upper()}{state[1:]}: {point}"
        else:
            point = (f"{label} — {point}" if ":" in label else f"{label}: {point}") if label else point
        caution = bool(CAUTION.search(head) or WARNS.search(point)) or (box is not None and box.group(1) == " ")
        if sum(1 for _, c in out if c == caution) >= limit:
            continue        # enough of its kind: past the limit only what is not done or may go wrong is read on
        if not any(near_duplicate(point, x, 1.0) for x, _ in out):     # every word of it told already: once
            out.append((point, caution))
        if not item:        # a paragraph's other sentences: points of their own
            while rest:
                s = rest.pop(0)
                if not stands_alone(s):
                    continue
                while rest and _says(rest[0]) and len(s) + len(rest[0]) < POINT:
                    s, rest = f"{s} {rest[0]}", rest[1:]
                if sum(1 for _, c in out if c == caution) < limit:
                    out.append((s, caution))
    if len(out) > limit:        # over the limit: what is not done or may go wrong stays, the rest from the end
        keep = sum(1 for _, c in out if c)
        room = max(0, limit - keep)
        out = [(x, c) for k, (x, c) in enumerate(out) if c or k < room or sum(1 for _, cc in out[:k] if not cc) < room]
    return [x for x, _ in out][:max(limit, sum(1 for _, c in out if c))]


def is_final(text: str) -> bool:
    """A closing answer or report (long enough to be the work's result, not a step's narration)."""
    return len((text or "").split()) >= 60


LEAD = re.compile(r"^(?:now,?\s+|next,?\s+|then,?\s+|first,?\s+|finally,?\s+|also,?\s+)*(?:let me|let's|i'll|i will|i need to|"
                  r"i should|we need to|i'm going to|i am going to)?\s*", re.I)
LOOKING = re.compile(r"^(?:check|read|look|see|verify|find|search|explore|examine|understand|review|investigate|run|"
                     r"test|try|confirm|inspect)\b", re.I)


VERBS = (r"(?:add|update|create|fix|remove|replace|rename|move|change|wire|extract|implement|write|use|"
    r"make|register|refactor|set|handle|define|pass|return|include|convert|simplify|introduce|delete|drop|wrap|call|"
    r"import|export|insert|append|adjust|apply|buffer|store|render|show|display|hide|mark|ensure|keep|split|merge|"
    r"subscribe|switch|expand|mirror|restore|revert|align|bump|enable|disable|guard|cache|clean|trim|strip|"
    r"emit|log|validate|parse|format|sort|filter|map|load|save|persist|reset|initialize|init|configure|document)\b")
CHANGE_VERB = re.compile(r"^" + VERBS, re.I)
WHERE_IN_FILE = re.compile(r"\s*,?\s*\b(?:at|to|near|after|before)\s+the\s+(?:very\s+)?(?:end|bottom|top|beginning|start)"
                           r"\s+of\s+(?:the|this|that)\s+(?:file|module|class)\b(?:\s*\([^)]*\))?", re.I)
LABEL = re.compile(r"^(?:(?:step|phase|part|stage|task)\s*#?\d+[a-z]?|fix|bug\s?fix|cleanup|refactor)\s*[:.)—–-]\s+(?=\S)",
                   re.I)
MORE_ACTIONS = re.compile(r",\s*(?:and\s+)?" + VERBS, re.I)


def edit_intent(text: str) -> str:
    """What the agent said an edit does, from the words it sent with the call: its sentence that says what it
    changes ("update PaneListLive to subscribe to `session_activity`"), without "Now let me"; "" when the
    words only narrate or comment. When the sentence before it names the problem the edit answers ("Too many
    conditionals in one function."), the edit's words carry it: "Extract the logic into a helper — why: …"."""
    said = sentences(text)
    for k, s in enumerate(said):
        body = LABEL.sub("", LEAD.sub("", s, count=1).strip(), count=1)    # "Step 1: Add x" is "Add x"
        body = WHERE_IN_FILE.sub("", body).strip()      # "… at the end of the file": where, not what
        if len(body.split()) < 3 or LOOKING.match(body) or PRAISE.search(body) or s.endswith("?"):
            continue
        if CODE_LINE.search(body) or not CHANGE_VERB.match(body) or body.count("`") % 2:
            continue
        if not IDENT.search(body) and len(body.split()) < 6:
            continue    # "Implement this task": says nothing a reader can use
        if len(MORE_ACTIONS.findall(body)) >= 2:
            continue    # "Implement X, add CSS, and write tests": a plan of the turn, not what this edit does
        why = said[k - 1].strip() if k else ""
        if why and PROBLEM.search(why) and 3 <= len(why.split()) <= 30 and not NARRATION.match(why) \
                and not PRAISE.search(why) and not why.endswith(("?", ":")) and not CODE_LINE.search(why):
            return _cut(body[0].upper() + body[1:], 220).rstrip(".") + " — why: " + _cut(why.rstrip("."), 160)
        return _cut(body[0].upper() + body[1:], 220)
    return ""


PROBLEM = re.compile(r"\b(?:too (?:many|deep|long|complex|large)|warn(?:s|ing|ings)?|unused|complain(?:s|ing)?|flag(?:s|ged)|"
                     r"fail(?:s|ed|ing|ure)?|errors?|expensive|missing|duplicated?|deprecated|undefined|not (?:found|defined|"
                     r"used|handled)|doesn't|does not|isn't|is not|can't|cannot|wrong|broken|bug|stale|leaks?|conflicts?|"
                     r"mismatch|crash(?:es|ed)?|panics?|overflows?)\b", re.I)


RULE = re.compile(r"\s*(?:\||[-=*_]{3,}\s*$)")
MOOD = re.compile(r"^(?:(?:perfect|great|excellent|good|awesome|nice|okay|ok|alright)[!.,]\s+)+", re.I)


def last_words(text: str, n: int = 2, cap: int = 320) -> str:
    """The agent's last words: the last sentences of its text, code, tables and rules left out, a closing
    "Here is the block:" and its mood word ("Perfect!") dropped; one line of at most `cap` characters."""
    body = re.sub(r"```.*?```", " ", text or "", flags=re.S)
    body = "\n".join(ln for ln in body.splitlines() if not RULE.match(ln))
    codes: list[str] = []   # inline code is one word: a `// note.` inside backticks ends no sentence
    body = re.sub(r"`[^`\n]+`", lambda m: codes.append(m.group(0)) or f"\x00{len(codes) - 1}\x00", body)
    sents = [x.strip() for x in re.split(r"(?<=[.!?])\s+|\n+", body) if len(x.strip()) > 3]
    while len(sents) > 1 and sents[-1].rstrip("*_ ").endswith(":"):
        sents.pop()
    sents = [re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], x) for x in sents]
    picked: list[str] = []
    for x in reversed(sents[-n:]):
        if picked and len(" ".join([x] + picked)) > cap:
            break
        picked.insert(0, x)
    said = MOOD.sub("", " ".join(" ".join(picked).split()))
    return _cut(said, cap)
