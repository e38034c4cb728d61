"""What the session already knows about the user's latest request: definitions in the files it read or
changed, and the agent's own sentences, that name the request's words."""
from __future__ import annotations

import re

from ..model import Change, Read, Said
from ..registry import language_for
from .code import COMMENT, definitions, strip_numbers
from .prose import sentences, stands_alone
from .paths import Paths

WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
STOP = frozenset("""this that with from have will would should could make sure when what which where there their
about into also some them they then than such only ensure process especially like normally somewhere code file
files both rules please help need want used using does done make made just more most each other very much
error errors fix fixing fixed issue issues problem working work""".split())


def stem(word: str) -> str:
    w = word.lower()
    w = w[:-1] if w.endswith("s") and len(w) > 4 else w
    return w[:6]


def terms(text: str) -> set[str]:
    """The request's content words, as stems (singular, their first six letters, lower case)."""
    return {stem(w) for w in WORD.findall(text) if w.lower() not in STOP}


def _hits(name: str, stems: set[str]) -> int:
    parts = [p for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    return sum(1 for p in parts if len(p) >= 4 and stem(p) in stems)


def related(evs: list, request: str, paths: Paths, limit: int = 8) -> tuple[tuple, tuple, tuple]:
    """(name, path) of the definitions, the agent's sentences, and (path, definition, comment) of the code
    comments that name the request's words."""
    stems = terms(request)
    if not stems:
        return (), (), ()
    found: dict[str, tuple[int, str]] = {}
    seen_text: list[tuple[str, str]] = []       # every read and written text: a later partial read hides nothing
    removed: dict[str, list] = {}   # path -> (where in seen_text, the edit's old text, the calls it took out)
    for e in evs:
        if isinstance(e, Read) and e.text:
            seen_text.append((paths.rel(e.path), strip_numbers(e.text)))
        elif isinstance(e, Change) and (e.new or e.old):
            if e.old:
                before, after = CALL.findall(e.old), CALL.findall(e.new or "")
                gone = tuple(c for c in set(before) if before.count(c) > after.count(c))
                if gone:
                    removed.setdefault(paths.rel(e.path), []).append((len(seen_text), e.old, gone))
            if e.new:
                seen_text.append((paths.rel(e.path), e.new))
    for path, text in seen_text:
        for d in definitions(path, text):
            h = _hits(d.name, stems)
            if h and (d.name not in found or found[d.name][0] < h):
                found[d.name] = (h, path)
    names = sorted(found.items(), key=lambda kv: -kv[1][0])[:limit]
    said = []
    changes = [(e.at, paths.rel(e.path), (e.old or "") + "\n" + (e.new or "")) for e in evs
               if isinstance(e, Change) and e.ok]
    homes: dict[str, set] = {}      # a definition's name -> the files that define it
    for path, text in seen_text:
        for d in definitions(path, text):
            homes.setdefault(d.name.split("/")[0], set()).add(path)
    for e in reversed(evs):
        if isinstance(e, Said):
            for s in sentences(e.text):
                if stands_alone(s) and sum(1 for w in WORD.findall(s) if stem(w) in stems) >= 2 \
                        and all(s != x for _, x in said) and not _overtaken(s, e.at, changes, homes):
                    said.append((e.at, s))
        if len(said) >= 3:
            break
    notes = _comments(seen_text, stems)
    wanted = [n for n, _ in names] + [w for _, w, _, _ in notes if w]
    return tuple((n, p) for n, (_, p) in names), tuple(said), notes, _calls(seen_text, wanted, removed)


CALL = re.compile(r"(?<![\w.$])(?:[\w$]+\.)?([A-Za-z_$][\w$]*[!?]?)\s*\(")


def _calls(seen: list[tuple[str, str]], wanted: list[str], removed: dict, limit: int = 4) -> tuple:
    """How the definitions that bear on the request connect: (caller, path, callees) for the definitions
    whose body calls two or more of them (or one, when it is itself one of them), most callees first;
    each caller once, from the text of it the session saw last; a call a later edit of its file took out
    (`removed`: path -> [(at, the old text, the calls it lost)], placed by where that old text sits) is not
    told; the newest code first among equals."""
    bare = {n.split("/")[0].split(".")[-1]: n for n in wanted}
    if len(bare) < 2:
        return ()
    found: dict[str, tuple[str, tuple[str, ...], int]] = {}
    calls_of: dict[str, set[str]] = {}     # every definition seen -> what its latest text calls
    for at, (path, text) in enumerate(seen):     # every text seen: an edit's new code is there only
        defs = definitions(path, text)
        lines = text.splitlines()
        for k, d in enumerate(defs):
            end = d.end or (defs[k + 1].line - 1 if k + 1 < len(defs) else len(lines))
            if end - d.line > 400:
                continue
            body = "\n".join(lines[d.line:end])
            me = d.name.split("/")[0].split(".")[-1]
            gone = {c for k, old, cs in removed.get(path, ()) if k > at and old in text
                    and d.line <= text[:text.index(old)].count("\n") + 1 <= end for c in cs}
            calls = CALL.findall(body)
            calls_of[me] = (calls_of.get(me, set()) | set(calls)) - gone   # a part seen later hides none
            callees = tuple(dict.fromkeys(bare[c] for c in calls if c in bare and c != me and c not in gone))
            if len(callees) >= (1 if me in bare else 2):
                found[me] = (path, callees, at)
            elif me in found and found[me][2] < at:
                del found[me]       # its newer code no longer calls them
    ranked = sorted(found.items(), key=lambda kv: (-len(kv[1][1]), -kv[1][2]))[:limit]
    return tuple((n, p, c, tuple(x for x, cs in calls_of.items() if n in cs and x != n and x not in found)[:6])
                 for n, (p, c, _) in ranked)     # … and what calls it: how the rest of the code reaches them


def _prose(line: str) -> str:
    """The sentence a line of code carries as text (inside quotes, or a template's own line), when it is
    prose: six words or more, most of them plain words."""
    body = line.strip().strip("`'\",;+()")
    words = body.split()
    if len(words) < 6 or len(body) > 400:
        return ""
    plain = sum(1 for w in words if re.fullmatch(r"[A-Za-z][a-z'-]*[.,:;!?]?|`[^`]+`[.,]?|@?[\w.-]+\.md[.,]?", w))
    return body if plain >= 0.7 * len(words) else ""


def _comments(seen: list[tuple[str, str]], stems: set[str], limit: int = 6) -> tuple:
    """The comments in the code the session saw that name two or more of the request's words, with the
    definition they sit in: what the code already says it does about the request ("Remap issue locations
    from CLAUDE.md → AGENTS.md for consolidated pairs")."""
    found = []
    for path, text in dict.fromkeys(seen):      # every text seen once: a later partial read hides nothing
        defs = None
        for k, line in enumerate(text.splitlines(), 1):
            m = COMMENT.match(line)
            said = m.group(1) if m else _prose(line)     # a comment, or words the code writes (a prompt, a message)
            if not said or len(said.split()) < 3:
                continue
            hits = {stem(w) for w in WORD.findall(said)} & stems
            if len(hits) < 2:
                continue
            if defs is None:
                defs = definitions(path, text)
            inside = [d for d in defs if d.line <= k and (d.end >= k if d.end else d.line == k - 1 or d.line == k + 1)]
            where = min(inside, key=lambda d: k - d.line).name if inside else ""
            note = " ".join(said.replace("\\`", "`").replace("**", "").strip(" */-").split())
            note = re.sub(r"`?\$\{[^}]*\}/?`?:?\s*", "", note).strip(" -:\\")   # a template's slots say nothing
            if note.count("`") % 2:
                note += "`"
            if note and all(note != n for _, _, n, _, _ in found):
                found.append((path, where, note, len(hits), _annotated(text.splitlines()[k:k + 20], said) if m else ()))
    tests = {path for path, text in seen if _has_tests(path, text)}
    found.sort(key=lambda x: (x[0] in tests, -x[3]))    # what the code does before what its tests assert
    per: dict[tuple[str, str], int] = {}    # each definition's two most telling: room for the others' words
    kept = []
    for x in found:
        k = (x[0], x[1])
        if per.get(k, 0) < 2 or not x[1]:
            per[k] = per.get(k, 0) + 1
            kept.append(x)
    return tuple((p, w, n, c) for p, w, n, _, c in kept[:limit])


def _has_tests(path: str, text: str) -> bool:
    lang = language_for(path)
    return bool(lang is not None and getattr(lang, "tests", None) and lang.tests(text))


CALLED = re.compile(r"\b([A-Za-z_]\w{5,})\s*\(")


def _annotated(below: list[str], comment: str) -> tuple[str, ...]:
    """The calls in the code a comment heads (the lines below it, to the next comment) whose names share a word
    with it: "Consolidate colocated pairs" over `await consolidateColocatedFiles(dir, pairs)`."""
    words = {stem(w) for w in WORD.findall(comment)}
    out: list[str] = []
    for line in below:
        if COMMENT.match(line):
            break
        for name in CALLED.findall(line):
            parts = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)
            if name not in out and sum(1 for x in parts if len(x) >= 4 and stem(x) in words) >= 1:
                out.append(name)
    return tuple(out[:2])


CODE_SPAN = re.compile(r"`([^`\s]{3,})`")


def _overtaken(sentence: str, at: int, changes: list, homes: dict) -> bool:
    """The sentence names code (`in backticks`) that a later edit changed, or a definition in a file a later edit
    changed: what it says may be stale (a bug it reports that the edit then fixed)."""
    named = [n.rstrip("()") for n in CODE_SPAN.findall(sentence)]
    return any(a > at and any(n in text or p in homes.get(n, ()) for n in named) for a, p, text in changes)
