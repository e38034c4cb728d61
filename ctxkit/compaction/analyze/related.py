"""What the session already knows about the user's latest request: definitions in the files it read or
changed, and the agent's own sentences, that name the request's words."""
from __future__ import annotations

import re

from ..model import Change, Read, Said
from . import code, prose
from .changes import Paths

WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
STOP = frozenset("""this that with from have will would should could make sure when what which where there their
about into also some them they then than such only ensure process especially like normally somewhere code file
files both rules please help need want used using does done make made just more most each other very much
error errors fix fixing fixed issue issues problem working work""".split())


def terms(text: str) -> set[str]:
    """The request's content words, as stems (their first six letters, lower case)."""
    return {w.lower()[:6] for w in WORD.findall(text) if w.lower() not in STOP}


def _hits(name: str, stems: set[str]) -> int:
    parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    return sum(1 for p in parts if len(p) >= 4 and p[:6] in stems)


def related(evs: list, request: str, paths: Paths, limit: int = 8) -> tuple[tuple, tuple]:
    stems = terms(request)
    if not stems:
        return (), ()
    found: dict[str, tuple[int, str]] = {}
    seen_text: dict[str, str] = {}
    for e in evs:
        if isinstance(e, Read) and e.text:
            seen_text[paths.rel(e.path)] = code.strip_numbers(e.text)
        elif isinstance(e, Change) and e.new:
            seen_text.setdefault(paths.rel(e.path), e.new)
    for path, text in seen_text.items():
        for d in code.definitions(path, text):
            h = _hits(d.name, stems)
            if h and (d.name not in found or found[d.name][0] < h):
                found[d.name] = (h, path)
    names = sorted(found.items(), key=lambda kv: -kv[1][0])[:limit]
    said = []
    for e in reversed(evs):
        if isinstance(e, Said):
            for s in prose.sentences(e.text):
                if prose.stands_alone(s) and sum(1 for w in WORD.findall(s) if w.lower()[:6] in stems) >= 2 \
                        and s not in said:
                    said.append(s)
        if len(said) >= 3:
            break
    return tuple((n, p) for n, (_, p) in names), tuple(said)
