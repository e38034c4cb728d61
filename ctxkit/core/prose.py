"""A model's prose for one summary section, checked against that section's bullets (pure).

The extractive summary says where the work stands (Current work, Next step) and what each step
did as bullets. A model may rewrite one such section into a few sentences, given exactly its
bullets; the prose is kept only when every sentence holds nothing the bullets (or the request)
do not say, and it keeps every file path, commit hash, work item and error the bullets named.
Anything else and the section keeps its bullets. The reason is returned for stderr.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .hygiene import TEMPLATE_ECHO, clean, claims, is_narration

PROSE_PROMPT = """Rewrite the notes below as 2 to 4 plain sentences for a developer who continues this work.
Rules:
1. Use only what the notes say: add no file, name, number, reason or result
2. Keep every file path, commit hash, work item, command and error EXACTLY as written, in backticks
3. Keep "not committed", "not closed", "no test" and other negations as they are
4. No list, no heading, no "I", no commentary: only the sentences"""

MAX_INPUT_CHARS = 4000   # small models do better with small inputs (about 1k tokens); a longer section keeps its bullets

HASH = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-])")
QUOTED = re.compile(r"\"([^\"\n]{2,})\"|“([^”\n]{2,})”")
# a work item or issue id: hyphenated with a digit or a dotted suffix (`spotter-fum.3`, `PROJ-12`)
WORK_ID = re.compile(r"(?<![\w/.-])[A-Za-z][\w]*(?:-[\w]+)+(?:\.[\w]+)+|(?<![\w/.-])[A-Za-z][\w]*-[\w]*\d[\w]*")
ERROR_NAME = re.compile(r"\b\w+(?:Error|Exception|Failure)\b")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(])")
WORD = re.compile(r"[a-z0-9]+")
NEGATION = re.compile(r"^(?:not|no|never|nothing|none|neither|nor|without|yet|unfinished)$|n't$")
CLAUSE = re.compile(r"[,;:()\n]|[.!?](?=\s|$)|\b(?:but|although|though|while|whereas)\b|—|–")
# the status a sentence gives: it must not flip between the bullets and the prose
STATUS = {"commit": "commit", "committed": "commit", "commits": "commit", "uncommitted": "-commit",
          "closed": "close", "close": "close", "resolved": "resolve", "unresolved": "-resolve",
          "fixed": "fix", "passed": "pass", "passes": "pass", "passing": "pass", "failed": "fail",
          "fails": "fail", "failing": "fail", "done": "done", "finished": "finish", "unfinished": "-finish",
          "completed": "complete", "complete": "complete", "incomplete": "-complete", "tested": "test",
          "untested": "-test", "compiled": "compile", "pushed": "push", "merged": "merge",
          "claimed": "claim", "installed": "install"}
# words prose may use that carry no claim of their own (grammar, and the verbs of telling what happened)
ALLOW = set("""a an the and or but so then than that this these those it its they their there here which who
what when where while with without within into onto from for of in on at to by as is are was were be been
being has have had having do does did not no nor never nothing none yet also still only just both each
every all any some more most other another same such one first last next after before since until once
again now so far already about over under between through via per same own
work working worked step steps section notes note item items task tasks change changes changed changing
file files edit edits edited editing code line lines new added adding add adds removed remove removing
made make makes making set sets setting uses used using use call calls called run runs ran running
command commands check checks checked checking then later earlier still pending open current currently
part parts rest remaining remains remain left what how
agent user developer session span it's isn't wasn't aren't weren't hasn't haven't didn't doesn't don't
since last time after that will would should must can could may might need needs needed
both either well like""".split())


@dataclass
class Checked:
    text: str | None          # the prose to keep, or None: the section keeps its bullets
    reason: str = ""          # why not (one short phrase)


def section_input(name: str, bullets: list[str]) -> str:
    """The user message for one section: its name and exactly its bullets."""
    return f"Section: {name}\nNotes:\n" + "\n".join(f"- {b}" for b in bullets)


def sentences(text: str) -> list[str]:
    text = " ".join(text.split())
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip()]


def _bounded(atom: str, source: str) -> bool:
    """`atom` occurs in `source` as a whole (a number not inside a longer number or hash)."""
    pre = r"(?<![\w])" if atom[:1].isalnum() or atom[:1] == "_" else ""
    post = r"(?![\w])" if atom[-1:].isalnum() or atom[-1:] == "_" else ""
    return re.search(pre + re.escape(atom) + post, source) is not None


def atoms(text: str) -> set[str]:
    """What a sentence can be checked on: paths, identifiers, numbers, backticked terms (commands),
    commit hashes, quoted strings, work item ids, error names."""
    out = set(claims(text))
    out.update(m.group(0) for rx in (HASH, WORK_ID, ERROR_NAME) for m in rx.finditer(text))
    out.update((m.group(1) or m.group(2)).strip() for m in QUOTED.finditer(text))
    return {a.strip(".,;:") for a in out if a.strip(".,;:")}


def required(bullets: list[str]) -> set[str]:
    """What the prose may not drop: every file path, commit hash, work item id, and for each
    error bullet its error names and source."""
    from .hygiene import PATH

    out = set()
    for b in bullets:
        out.update(m.group(0) for rx in (PATH, HASH, WORK_ID) for m in rx.finditer(b))
        if re.match(r"(?i)error\b", b):
            out.update(m.group(0) for m in ERROR_NAME.finditer(b))
            src = re.match(r"(?i)error from (`[^`]+`|\S+?):", b)
            if src:
                out.add(src.group(1).strip("`"))
    return {a.strip(".,;:") for a in out if a.strip(".,;:")}


def _known(vocab: set) -> set:
    """Every word of `vocab` and its 4- and 5-letter beginnings: another form of a word the
    bullets use (`edit` for `edited`, `committing` for `committed`) is not a new word."""
    return vocab | {w[:4] for w in vocab if len(w) >= 4} | {w[:5] for w in vocab if len(w) >= 5}


def _is_known(w: str, known: set, vocab: set) -> bool:
    return w in known or (len(w) >= 5 and (w[:5] in known or w[:4] in vocab))


def _statuses(text: str) -> set[str]:
    """The status words of `text`, each with its polarity in its clause (`commit`, `-commit`)."""
    out = set()
    for clause in CLAUSE.split(text.lower()):
        words = re.findall(r"[a-z']+", clause)
        negated = False
        for w in words:
            if NEGATION.search(w):
                negated = True
            s = STATUS.get(w)
            if s:
                neg = s.startswith("-") != negated
                out.add(("-" if neg else "") + s.lstrip("-"))
    return out


def _commentary(sentence: str, source: str) -> bool:
    """The model talking (narration, a template's words, thinking tags), not a line it was given."""
    if re.search(r"</?think|<\|", sentence, re.I):
        return True
    if is_narration(sentence) and sentence[:40] not in source:
        return True
    m = TEMPLATE_ECHO.search(sentence)
    return bool(m and m.group(0) not in source)


def check(prose: str, bullets: list[str], facts: str = "") -> Checked:
    """Keep `prose` only when each of its sentences says nothing beyond `bullets` (and `facts`:
    the request), flips no status, and it drops no path, hash, work item or error they name."""
    text = clean(prose)
    text = re.sub(r"^\s*(?:#+[^\n]*\n|[-*]\s+)", "", text)
    if re.search(r"^\s*(?:[-*]|\d+\.)\s+", text, re.M) or "\n#" in text:
        return Checked(None, "wrote a list, not prose")
    sents = sentences(text)
    if not sents:
        return Checked(None, "empty answer")
    source = "\n".join(bullets) + "\n" + facts
    vocab = set(WORD.findall(source.lower()))
    known = _known(vocab)
    said = _statuses(source)
    for s in sents:
        if _commentary(s, source):
            return Checked(None, f"commentary: {s[:60]!r}")
        bad = sorted(a for a in atoms(s) if not _bounded(a, source))
        bad = [a for a in bad if not any(a != x and a in x for x in bad)]   # the longest form of each
        if bad:
            return Checked(None, f"adds {', '.join(bad[:3])}")
        new = [w for w in WORD.findall(s.lower()) if w not in ALLOW and not w.isdigit() and len(w) > 2
               and not _is_known(w, known, vocab)]
        if new:
            return Checked(None, f"adds the words {', '.join(new[:3])}")
        flipped = sorted(x for x in _statuses(s) if x not in said)
        if flipped:
            return Checked(None, "changes a status ("
                                 + ", ".join(("not " + x[1:]) if x.startswith("-") else x for x in flipped[:2]) + ")")
    out = " ".join(sents)
    dropped = sorted(a for a in required(bullets) if not _bounded(a, out))
    if dropped:
        return Checked(None, f"drops {', '.join(dropped[:3])}")
    if any(re.match(r"(?i)error\b", b) for b in bullets) and not re.search(r"(?i)\berror|\bfail", out):
        return Checked(None, "drops an error")
    return Checked(out)
