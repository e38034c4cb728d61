"""The working set: what the agent is doing now, and what it is likely to need next (pure, streaming).

`FocusTracker` reads a stream once, oldest first, and keeps only what it needs (the plan state,
the artifact trail's recent writes, the last few turns), so `ctx score` can use it on a stream
of any size. `Focus` holds the facts:

- task          the session's first request
- latest        the newest request that carries content ("continue", "go on", "ok" do not)
- contentless   the newest user message is a bare confirmation or continuation
- plan          the open plan item: the TodoWrite / update_plan step in progress, the work item
                claimed (`bd update ID --status in_progress`) and not closed since
- files         files in play: written or edited recently, named in the plan item or request
- intention     the agent's last stated intention: its last words (its newest text turn's last
                sentences)

The plan step, the work item, the files and the last words are the compaction engine's reading of each
call (`ctxkit.compaction.call_events`, `last_words`), one record at a time.
- errors        the open errors: compaction's (`ctxkit.compaction.open_errors`: a failed check or
                command no later run cleared), read from the last ERROR_SPAN records
- recent        identifiers and paths in the last turns (assistant text and tool calls)

`query()` is the text to score against; `terms()` the working set: identifiers and paths whose
chunks the future is likely to use.
"""
from __future__ import annotations

import re
from functools import lru_cache
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Iterable

from .. import records as R
from .requests import CONFIRMATION, NOT_USER_FLAGS, brief, request_text

CREATED, MODIFIED, READ, SEARCHED = "created", "modified", "read", "searched"


def call_args(call: dict):
    """A tool call's arguments (the compaction engine's one reading)."""
    from ..compaction.extract import call_args as read

    return read(call)

# A request that only says "keep going": it names nothing to score against.
CONTINUATION = re.compile(
    r"^(?=(\W*))\1(?:please\s+)?(?:continue|go on|keep going|carry on|proceed|resume|next|go for it|do it|"
    r"yes,? (?:continue|go on|please|do it)|ok(?:ay)?,? (?:continue|go on|proceed|do it)|"
    r"continue (?:please|where you left off|with (?:the|that|it|this)(?: task| work)?)|"
    r"(?:please )?keep (?:at it|working)|what'?s next\??|and\??|more)\W*$", re.I)
PATHISH = re.compile(r"[~\w./@+-]+")        # tokens that may be paths or file names
FILE_NAME = re.compile(r"[A-Za-z_][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5}")
LETTER = re.compile(r"[A-Za-z]")
RECENT_TURNS = 12      # message records whose identifiers count as "in play"
RECENT_WRITES = 8      # files written or edited most recently
TEXT_CAP = 20_000      # characters of one record read for terms
ERROR_SPAN = 400       # the last message records whose open errors are in play


CONTINUE_START = re.compile(r"^(?=(\W*))\1(?:please\s+|ok(?:ay)?,?\s+|yes,?\s+)?(?:continue|go on|keep going|carry on|proceed|"
                            r"resume)\b", re.I)


# the words a "continue …" may go on with and still ask for nothing new ("continue until all are
# done", "keep going with the rest of the tasks"); any other word is an instruction
FILLER = frozenset("""
a again ahead all an and are as at be been before both done doing down each else every everything finish finished
for from go going good great has have here is it it's its just keep left let let's lets me more next now of off ok
okay on one ones please remaining rest same so still task tasks thanks that the them then there these they this
those through till to todo todos until up us was way we were what what's whats where with work working yes you
complete completed completion issue issues item items step steps bead beads plan remain remains end
""".split())


def contentless(text: str | None) -> bool:
    """A user message that asks for nothing in particular: a confirmation, "continue", or a
    short "continue until it is done" whose words after the "continue" ask for nothing new
    ("continue, then fix the resize bug" is a request)."""
    if text is None:
        return True
    t = " ".join(text.split())
    if not t or CONFIRMATION.match(t) or CONTINUATION.match(t):
        return True
    m = CONTINUE_START.match(t)
    if not m or len(t.split()) > 12 or terms_of(t):
        return False
    rest = re.findall(r"[A-Za-z']+", t[m.end():].lower())
    return all(w in FILLER for w in rest)


# identifier shapes worth matching across chunks: snake_case, dotted.names, camelCase, ids with a
# digit (spotter-a0y.4); found per distinct token, so a long stream is scanned fast
TOKEN = re.compile(r"[A-Za-z_][\w.\-]*\w")


@lru_cache(maxsize=1 << 16)  # identifiers recur across chunks: decide each once
def _shaped(t: str) -> bool:
    if "_" in t.strip("_"):
        return True
    if "." in t:
        return min(len(x) for x in t.split(".")) >= 2
    if "-" in t:
        return any(c.isdigit() for c in t)
    rest = t[1:]
    return rest != rest.lower() and t != t.upper()


def terms_of(text: str) -> set[str]:
    """Identifiers and paths of a text (a path also gives its file name)."""
    if not text:
        return set()
    text = text[:TEXT_CAP]
    out = {t for t in set(TOKEN.findall(text)) if len(t) >= 3 and _shaped(t)}
    for p in set(PATHISH.findall(text)):
        if "/" not in p and "." not in p:
            continue
        p = re.sub(r"^(?:\./)+", "", p.rstrip(".,;:-"))
        if len(p) < 4 or not LETTER.search(p):
            continue
        if "/" in p:
            if p.strip("/").count("/") < 1 and "." not in p:
                continue   # a bare /word is not a path worth matching
            out.add(p)
            base = p.rsplit("/", 1)[-1]
            if "." in base and len(base) >= 5:
                out.add(base)
        elif len(p) >= 5 and FILE_NAME.fullmatch(p) and not re.fullmatch(r"[\d.]+\w*", p):
            out.add(p)
    return out


@dataclass
class Focus:
    task: str = ""
    latest: str = ""
    last_user: str | None = None
    contentless: bool = False
    plan: list = field(default_factory=list)
    files: list = field(default_factory=list)
    intention: str = ""
    errors: list = field(default_factory=list)
    recent: set = field(default_factory=set)

    def query(self) -> str:
        """What to score against: the latest real request, the open plan item, the agent's
        intention and the files in play (the task when there is no later request)."""
        bits = [self.latest or self.task]
        bits += self.plan
        if self.intention:
            bits.append(self.intention)
        if self.files:
            bits.append(" ".join(self.files))
        return "\n".join(b for b in bits if b).strip()

    def terms(self) -> set[str]:
        """The working set: what the plan item, the requests, the files in play, the open
        errors and the last turns name."""
        out = set(self.recent)
        for t in [self.latest, self.intention, *self.plan, *self.errors]:
            out |= terms_of(t)
        for f in self.files:
            out |= terms_of(f)
            out.add(f)
        return out

    def explain(self) -> dict:
        return {"task": brief(self.task, 200), "latest": brief(self.latest, 200), "contentless": self.contentless,
                "plan": [brief(p, 160) for p in self.plan], "files": self.files[:RECENT_WRITES],
                "intention": brief(self.intention, 200), "errors": [brief(e, 160) for e in self.errors]}


class FocusTracker:
    """Feed records oldest first; `focus()` at any point gives the facts so far.

    Each record becomes a few small operations (`ops`) that are then applied; with `record`
    set to a list, they are also appended there, so a caller can keep a chunk's operations
    (they depend on the chunk alone) and `replay` them later instead of reading the chunk
    again: the facts come out the same."""

    def __init__(self) -> None:
        self.f = Focus()
        self.writes: "OrderedDict[str, None]" = OrderedDict()
        self.turns: deque = deque(maxlen=RECENT_TURNS)
        self.plan_items: list = []
        self.bd_item: str | None = None
        self.actions: list = []          # (action, path) of the calls fed since the caller last cleared it
        self.record: list | None = None  # when a list: every operation applied is appended to it
        self.resolve = None              # (ref) -> the text of a turn `replay` was given no text for
        self.memo: dict = {}             # the engine's dialects' state between calls (background shells)

    def feed(self, r: dict) -> None:
        if not isinstance(r, dict) or r.get("kind") != "message":
            return
        for op in self.ops(r):
            self.apply(op)
            if self.record is not None:
                self.record.append(op)

    def replay(self, ops, ref=None) -> None:
        """Apply operations `feed` recorded. A turn's text may be left out (`("t", None)`, see
        `lean`): the turn is then kept as (`ref`, its number in `ops`) for `resolve` to give the
        text, which only the last few turns need."""
        k = 0
        for op in ops:
            if op[0] == "t" and op[1] is None:
                self.turns.append((ref, k))
            else:
                self.apply(op)
            k += op[0] == "t"

    def ops(self, r: dict) -> list:
        """What a message record changes, as operations (plain tuples of strings)."""
        role = r.get("role")
        fl = R.flags(r)
        out: list = []
        parsed: dict = {}

        def args_of(call):  # each call's arguments parsed once per record
            if id(call) not in parsed:
                parsed[id(call)] = call_args(call)
            return parsed[id(call)]

        if role == "user" and not r.get("tool_call_id"):
            t = request_text(r)
            raw = " ".join(str(r.get("content") or "").split())
            if t is not None:
                out.append(("u", t))
            elif raw and CONFIRMATION.match(raw) and not NOT_USER_FLAGS.intersection(fl):
                out.append(("u", ""))
            if t and not contentless(t):
                out.append(("q", t))
        if role == "assistant":
            text = (r.get("content") or "").strip()
            if text and "thinking" not in fl and "reasoning" not in fl:
                from ..compaction import last_words

                out.append(("i", last_words(text)))
            fmt = (r.get("source") or {}).get("format") if isinstance(r.get("source"), dict) else None
            for call in r.get("tool_calls") or ():
                self._call(call, fmt, out)
        if role == "assistant" or (role == "user" and not r.get("tool_call_id") and "meta" not in fl):
            parts = [r.get("content") or ""] + [call_values(c, args_of(c)) for c in r.get("tool_calls") or ()]
            out.append(("t", "\n".join(parts)[:TEXT_CAP]))
        return out

    def apply(self, op) -> None:
        kind = op[0]
        if kind == "u":
            self.f.last_user = op[1]
        elif kind == "q":
            if not self.f.task:
                self.f.task = op[1]
            self.f.latest = op[1]
        elif kind == "i":
            self.f.intention = op[1]
        elif kind == "p":
            self.plan_items = list(op[1])
        elif kind == "b":
            self.bd_item = op[1]
        elif kind == "x":
            if self.bd_item == op[1]:
                self.bd_item = None
        elif kind == "a":
            action, path = op[1], op[2]
            self.actions.append((action, path))
            if action in (CREATED, MODIFIED):
                self.writes.pop(path, None)
                self.writes[path] = None
        elif kind == "t":
            self.turns.append(op[1])

    def _call(self, call: dict, fmt, out: list) -> None:
        """What a call does, as the compaction engine reads it (one definition of what edits a file, what
        moves a work item, what the plan is)."""
        from ..compaction import call_events
        from ..compaction.model import CREATE, Change, Item, Plan, Read, Search

        claimed = False
        for e in call_events(call, fmt, self.memo):
            if isinstance(e, Plan):
                step = next((t for t, status in e.steps if status == "in_progress"), None)
                out.append(("p", (step,) if step else ()))
            elif isinstance(e, Item) and e.action == "claim":
                out.append(("b", e.item))
                claimed = True
            elif isinstance(e, Item) and e.action == "close" and not claimed:
                out.append(("x", e.item))   # as compaction reads a command: one that claims an item closes none
            elif isinstance(e, Change) and e.ok and e.path:
                out.append(("a", CREATED if e.action == CREATE else MODIFIED, e.path))
            elif isinstance(e, Read) and e.path:
                out.append(("a", READ, e.path))
            elif isinstance(e, Search) and e.path:
                out.append(("a", SEARCHED, e.path))

    def focus(self) -> Focus:
        f = self.f
        f.contentless = contentless(f.last_user) if f.last_user is not None or f.latest else False
        f.plan = [p for p in self.plan_items if p] + ([f"issue {self.bd_item} (in progress)"] if self.bd_item else [])
        files = list(reversed(self.writes))[:RECENT_WRITES]
        for t in [f.latest, *f.plan]:
            for p in sorted(terms_of(t)):
                if ("/" in p or "." in p) and p not in files:
                    files.append(p)
        f.files = files
        turns = [t if isinstance(t, str) else self.resolve(t) for t in self.turns]
        f.recent = set().union(*(terms_of(t) for t in turns)) if turns else set()
        return f


def lean(ops) -> tuple:
    """Operations to keep: the turns' texts left out (`replay` then asks `resolve` for them)."""
    return tuple(("t", None) if op[0] == "t" else op for op in ops)


def turn_texts(records: Iterable[dict]) -> list[str]:
    """The texts the turns of these records add (what `resolve` gives back)."""
    t = FocusTracker()
    return [op[1] for r in records if isinstance(r, dict) and r.get("kind") == "message"
            for op in t.ops(r) if op[0] == "t"]


def call_values(call: dict, args=None) -> str:
    """A tool call's name and argument values (not the argument names the tool schema gives;
    `args`: the call's parsed arguments, when the caller has them)."""
    args = call_args(call) if args is None else args
    name = (call.get("function") or {}).get("name") or ""
    if not isinstance(args, dict):
        return f"{name} {args}"
    return name + " " + " ".join(str(v) for v in args.values() if isinstance(v, (str, int, float)))


def focus_of(records: Iterable[dict]) -> Focus:
    t = FocusTracker()
    tail: deque = deque(maxlen=ERROR_SPAN)
    for r in records:
        t.feed(r)
        if isinstance(r, dict) and r.get("kind") == "message":
            tail.append(r)
    return with_open_errors(t.focus(), tail)


def with_open_errors(f: Focus, tail: Iterable[dict]) -> Focus:
    """The focus with the errors `tail` (a stream's last message records) leaves open, by
    compaction's definition."""
    from ..compaction import open_errors

    f.errors = open_errors(list(tail))
    return f


def reads_of(group: Iterable[dict] = (), actions=None) -> tuple[set[str], set[str]]:
    """(paths a chunk reads, paths it writes whole) through its tool calls (or of the
    (action, path) pairs a FocusTracker collected for it)."""
    if actions is None:
        t = FocusTracker()
        for r in group:
            if isinstance(r, dict) and r.get("role") == "assistant":
                fmt = (r.get("source") or {}).get("format") if isinstance(r.get("source"), dict) else None
                ops: list = []
                for call in r.get("tool_calls") or ():
                    t._call(call, fmt, ops)
                t.actions += [(op[1], op[2]) for op in ops if op[0] == "a"]
        actions = t.actions
    reads, writes = set(), set()
    for action, path in actions:
        if action == READ:
            reads.add(path)
        elif action == CREATED:
            writes.add(path)
    return reads, writes


SEARCH_CALLS = frozenset({"grep", "glob", "search", "find", "ls", "list", "listdir", "listfiles", "filesearch",
                          "codebasesearch", "findfile", "searchfile", "searchdir", "grepsearch"})
SEARCH_COMMANDS = frozenset({"find", "grep", "egrep", "rg", "ls", "fd", "ag", "tree", "locate", "Get-ChildItem", "gci",
                             "dir", "Select-String"})
FOUND_MAX = 200        # paths one search result lists that are kept


def _search_shell(cmd: str) -> bool:
    for part in re.split(r"&&|\|\||;|\n", cmd):
        words = part.split()
        while len(words) > 2 and words[0] in ("bash", "sh", "zsh") and words[1] in ("-c", "-lc"):
            words = [w.strip("'\"") for w in words[2:]]   # Codex: ["bash", "-lc", "rg …"]
        if words and words[0] == "cd":
            continue
        if words and (words[0] in SEARCH_COMMANDS or words[:2] in (["git", "grep"], ["git", "ls-files"])):
            return True
        if words:
            return False   # the first command that is not `cd` decides
    return False


def found_paths(group: Iterable[dict]) -> tuple[str, ...]:
    """The paths a chunk's searches listed (Grep / Glob / ls / find / rg results, SWE-agent's
    find_file / search_dir): what the agent looked for before opening one of them."""
    g = list(group)
    searches = set()
    swe = False
    for r in g:
        for call in r.get("tool_calls") or ():
            fn = ((call.get("function") or {}).get("name") or "").lower().replace("_", "").replace("-", "")
            args = call_args(call)
            cmd = (args.get("command") or args.get("cmd")) if isinstance(args, dict) else None
            if isinstance(cmd, list):
                cmd = " ".join(map(str, cmd))
            if fn in SEARCH_CALLS or (isinstance(cmd, str) and _search_shell(cmd)):
                if call.get("id"):
                    searches.add(call["id"])
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        if r.get("role") == "assistant" and isinstance(meta.get("action"), str):
            first = meta["action"].strip().split(maxsplit=1)
            swe = bool(first) and (first[0] in ("find_file", "search_dir", "search_file") or _search_shell(meta["action"]))
    out: dict = {}
    for r in g:
        text = r.get("content") if isinstance(r.get("content"), str) else ""
        if not text:
            continue
        if (r.get("role") == "tool" and r.get("tool_call_id") in searches) or \
                (swe and r.get("role") in ("user", "tool") and "observation" in R.flags(r)):
            terms = terms_of(text)
            listed = {file_base(t) for t in terms if "/" in t}
            for t in terms:   # paths, and file names not only the last part of a listed path
                if "/" in t or ("." in t and t not in listed):
                    out[t] = None
    return tuple(sorted(out)[:FOUND_MAX])


def file_base(p: str) -> str:
    return p.rstrip("/").rsplit("/", 1)[-1]


def same_file(found: str, touched: str) -> bool:
    """A listed path and a path a tool read or wrote name the same file: equal, or one ends
    with the other at a `/` (a relative listing of an absolute path), or a bare name listed."""
    a, b = found.lstrip("./").rstrip("/"), touched.lstrip("./").rstrip("/")
    if not a or not b:
        return False
    return a == b or b.endswith("/" + a) or a.endswith("/" + b)
