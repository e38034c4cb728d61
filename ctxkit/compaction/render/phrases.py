"""Small wording helpers: every sentence the summary says is built here or in the section writers."""
from __future__ import annotations

import re

QUOTE_CAP = 300


def code(text: str) -> str:
    """`text` as inline code (backticks inside become quotes)."""
    t = " ".join(str(text).split()).replace("`", "'")
    return f"`{t}`" if t else ""


def cut(text: str, n: int) -> str:
    """One line, cut at a word boundary to `n` characters (a path or a code span is never cut inside)."""
    one = " ".join(str(text).split())
    if len(one) <= n:
        return one
    head = one[:n]
    if head.count("`") % 2:
        head = head[:head.rfind("`")]
    head = head.rsplit(" ", 1)[0] if " " in head else head
    return head.rstrip(",;:(") + " …"


JOINT = re.compile(r"[,;(]|\s(?:from|for|with|by|and|or|which|when|if|so|using|via|before|after|while|because|"
                   r"without|—|-)\s", re.I)     # where a clause or a modifier begins ("to", "of" bind too tight)


def phrase(text: str, n: int) -> str:
    """`text` within `n` characters as words that stand alone: whole when it fits, else cut where a clause or
    a preposition begins ("ensures a worker runs for the given id" -> "ensures a worker runs"), never
    mid-phrase; "" when no such place is left."""
    one = " ".join(str(text).split())
    if len(one) <= n:
        return one
    for end in reversed([m.start() for m in JOINT.finditer(one) if 12 <= m.start() <= n]):
        head = one[:end].rstrip(" ,;:-—")
        if head.count("`") % 2 == 0 and head.count("(") == head.count(")"):
            return head
    return ""


def whole_sentences(text: str, n: int) -> str:
    """As many whole sentences (or list items) of `text` as fit in `n` characters; the first alone cut where a
    clause begins when even it does not fit."""
    parts = re.split(r"(?<=[.!?])\s+|\s+(?=- )", " ".join(text.split()))
    out = ""
    for p in parts:
        if len(out) + len(p) + 1 > n:
            break
        out = f"{out} {p}".strip()
    return out or phrase(text, n) or cut(text, n)


def quote(text: str, n: int = QUOTE_CAP) -> str:
    text = text.replace("\\n", " ")      # an escaped line break quoted from JSON or code reads as a space
    return "“" + cut(text, n).replace("“", '"').replace("”", '"') + "”"


def unlabelled(point: str, before: str) -> str:
    """A point of the agent's account without the heading the point before it already carried
    ("Non-issues verified: …" twice in a row: the second without it)."""
    for sep in (": ", " — "):
        k = before.find(sep)
        if 0 < k <= 62 and point.startswith(before[:k + len(sep)]) and len(point) > k + len(sep) + 20:
            return point[k + len(sep):]
    return point


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def names(items, n: int = 8) -> str:
    """`a`, `b`, `c` and K more."""
    items = [x for x in items if x]
    shown = ", ".join(code(x) for x in items[:n])
    return shown + (f" and {len(items) - n} more" if len(items) > n else "")


def joined(parts) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def short_hash(h: str) -> str:
    return h[:9] if re.fullmatch(r"[0-9a-f]{7,40}", h or "") else h


def command(cmd: str, n: int = 160) -> str:
    """A command as code, its here-documents and long arguments shortened."""
    one = re.sub(r"<<-?\s*'?(\w+)'?.*", "<<…", cmd.split("\n", 1)[0]) if "\n" in cmd else cmd
    return code(cut(one, n))


def check_word(passed) -> str:
    return {True: "passed", False: "FAILED", None: "result not visible"}[passed]


def sentence(text: str) -> str:
    """The text ending as a sentence: a full stop unless it ends in one (inside a closing quote,
    bracket or code span too: `“Done.”`, but `“Add coverage”.`)."""
    t = text.strip()
    end = t.rstrip("”\"'`)")
    return t if not t or (end and end[-1] in ".!?…") else t + "."


PATH_ARG = re.compile(r"^(?:[\w.@-]*/[\w./@-]*|[\w-]+\.[A-Za-z]{1,5})(?::\d+)?$")


def bare_commands(cmds, least: int = 1) -> list[str]:
    """Each command without the files or folders it was pointed at (`mix test test/a_test.exs` is
    `mix test`) when it names `least` of them or more, once each, in order: what the checks are, not
    every file of each run."""
    out = []
    for c in cmds:
        words = c.split()
        paths = [w for k, w in enumerate(words) if k >= 2 and PATH_ARG.match(w)]
        bare = " ".join(w for k, w in enumerate(words) if k < 2 or not PATH_ARG.match(w)) \
            if len(words) > 2 and len(paths) >= least else c
        if bare not in out:
            out.append(bare)
    return out
