"""The user's request: the one definition every command uses (pure).

A record carries a request when it is a user message written by the user: not a tool result,
not a meta line (skill expansions, hook output, task notifications, local-command output,
caveats), not the client's own text (`<system-reminder>`s, environment context, AGENTS.md:
core.client_text, whose `own_words` every reader here uses), not a bare slash command, not a confirmation (`y`, `ok`,
`thanks`), not an interruption marker and not an end marker such as tau-bench's `###STOP###`.
For a slash command with arguments (`<command-args>` in Claude Code, `/ask …` in aider) the
arguments are the request.

Compaction (Task, Latest request), `score --query-from last-user`, `observe`, the hooks and
session titles all call `request_text` / `requests`.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from .. import records as R
from .client_text import CLIENT_BLOCK, CLIENT_PREFIX, own_words

NOT_USER_FLAGS = frozenset({"meta", "orphan_result", "demo", "missing_result", "observation"})

# whole-message wrappers that are never the user's words, and the client's blocks inside a
# message: one definition, in core.client_text
META_PREFIX = CLIENT_PREFIX
REMINDER = CLIENT_BLOCK
COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
COMMAND_NAME = re.compile(r"<command-name>\s*(/?[\w:.-]+)\s*</command-name>")
COMMAND_TAG = re.compile(r"<command-(name|message|args)>.*?</command-\1>", re.S)
END_MARKER = re.compile(r"(?<!#)#{2,}\s*(STOP|END|TRANSFER|DONE)\s*#{2,}", re.I)
# `(?=(\W*))\1` is an atomic `\W*` (the phrases all start with a word character): a long run of
# punctuation is read once, not backtracked over once per phrase
CONFIRMATION = re.compile(
    r"^(?=(\W*))\1(y|n|yes|no|yep|nope|ok|okay|k|sure|thanks|thank you|thank you very much|thx|ty|cool|nice|great|"
    r"perfect|done|go|go ahead|proceed|lgtm|sounds good|good|fine|right|correct|exit|quit|bye|goodbye|"
    r"(?:that'?s|this is) (?:all|it)|(?:thank you|thanks),? (?:for|that'?s) [\w\s']{0,40}|"
    r"no,? (?:thanks|thank you)|y/n|a|d|s|all|none)\W*$", re.I)
PROMPT_ANSWER = re.compile(r"\(Y\)es/\(N\)o")   # an answer to aider's own question
# aider and Claude Code commands whose arguments are a request
PROMPT_COMMANDS = {"ask", "code", "architect", "context", "agent", "plan", "review"}
# the user's words inside a wrapper: an issue or a task (SWE-agent, Cline's first message), Cline's
# `<user_message>` on resuming a task and `<feedback>` on a tool it was asked to approve
ISSUE_TAG = re.compile(r"<(issue|pr_description|task|problem_statement|user_message|feedback)>\s*(.*?)\s*</\1>",
                       re.S | re.I)
# SWE-agent's instance template: the issue sits between ISSUE: and INSTRUCTIONS:
ISSUE_BLOCK = re.compile(r"^ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.S | re.M)
CAP = 600


def request_text(rec: dict) -> str | None:
    """The user's own words in `rec` (cleaned), or None when it carries no request."""
    if not isinstance(rec, dict) or rec.get("kind") != "message" or rec.get("role") != "user":
        return None
    if NOT_USER_FLAGS.intersection(R.flags(rec)):
        return None
    if not isinstance(rec.get("content"), str):
        return None
    return clean_request(own_words(rec))


def clean_request(text: str) -> str | None:
    """The request in a user message's text, or None (see the module docstring)."""
    if META_PREFIX.match(text):
        return None
    args = COMMAND_ARGS.search(text)
    if COMMAND_TAG.search(text):
        text = args.group(1) if args else ""
    text = CLIENT_BLOCK.sub(" ", text)
    text = END_MARKER.sub(" ", text)
    m = ISSUE_TAG.search(text)
    if m and m.group(2).strip():
        text = m.group(2)
    m = ISSUE_BLOCK.search(text)
    if m and m.group(1).strip():
        text = m.group(1)
    text = text.strip()
    if not text or META_PREFIX.match(text):
        return None
    if text.startswith("/"):
        cmd, _, rest = text[1:].partition(" ")
        if not re.fullmatch(r"[\w:.-]+", cmd):
            pass  # a path such as /home/x, not a command
        elif cmd.lower() in PROMPT_COMMANDS and rest.strip():
            text = rest.strip()
        else:
            return None  # /exit, /add FILE, /clear, /model …: commands, not requests
    if CONFIRMATION.match(text) or PROMPT_ANSWER.search(text):
        return None
    return text


def plugin_command(span) -> str:
    """The plugin command (`/plugin:skill`) the span's first request came through, or "": what
    the request is for is in its name (`/handgemacht:create-beads`)."""
    for r in span:
        if request_text(r):
            t = r.get("content") if isinstance(r.get("content"), str) else ""
            m = COMMAND_NAME.search(t)
            return "/" + m.group(1).strip().lstrip("/") if m and ":" in m.group(1) else ""
    return ""


def not_user_words(text: str) -> bool:
    """Text in a user-role message that the user did not write: harness wrappers, reminders,
    notifications, interruption markers, the compaction prompt, a bare slash command's tags."""
    if META_PREFIX.match(text):
        return True
    if COMMAND_TAG.search(text):
        args = COMMAND_ARGS.search(text)
        return not (args and args.group(1).strip())
    return not CLIENT_BLOCK.sub("", text).strip()


def brief(text: str, cap: int = CAP) -> str:
    """One line, cut at a word boundary when longer than `cap` characters."""
    one = " ".join(text.split())
    if len(one) <= cap:
        return one
    if " " not in one[:cap]:  # one long word: a path is never cut in the middle (it stays whole)
        word = one.split(" ", 1)[0]
        if re.search(r"[/\\]", word.strip("`'\"")):
            return word + (" …" if len(word) < len(one) else "")
    cut = one[:cap].rsplit(" ", 1)[0].rstrip(",;:")
    while cut.count("`") % 2:       # never end inside a code span: cut before the one left open
        cut = re.sub(r"`+[^`]*$", "", cut).rstrip(" ,;:")
    return cut + " …"


# the lines of a request that carry what cannot be guessed: `key: value` data, numbered questions
# or steps, and constraints the user imposed
KEY_VALUE = re.compile(r"^\s*(?:[-*]\s+)?[\w][\w ./()#-]{0,40}:\s*\S")
NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*]\s+\d+[.)])\s+\S")
CONSTRAINT = re.compile(r"\b(?:must|mustn.t|don.t|do not|never|always|only|required|make sure|be sure|should|"
                        r"need(?:s)? to|please (?:provide|include|keep|use)|without|not allowed|FULL)\b", re.I)


def task_brief(text: str, cap: int) -> str:
    """The task on one line, whole when it fits in `cap` characters; else its first line, then its
    `key: value` lines, numbered questions and constraints (in their order), then prose while room
    lasts; each gap is one ` … `."""
    one = " ".join(text.split())
    if len(one) <= cap:
        return one
    lines = [" ".join(ln.split()) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if len(lines) < 2:
        return brief(text, cap)
    from ..compaction.render.task import keep_lines

    kept = keep_lines(lines, cap, lambda ln: bool(KEY_VALUE.match(ln) or NUMBERED.match(ln)),
                      lambda ln: bool(CONSTRAINT.search(ln)))
    return brief(text, cap) if kept is None else kept


def requests(records: Iterable[dict]) -> list[tuple[int, dict, str]]:
    """(index, record, request text) for every request, oldest first."""
    out = []
    for i, r in enumerate(records):
        t = request_text(r)
        if t:
            out.append((i, r, t))
    return out


def first_request(records: Sequence[dict]) -> str | None:
    return next((t for t in map(request_text, records) if t), None)


def last_request(records: Sequence[dict]) -> str | None:
    for r in reversed(records):
        t = request_text(r)
        if t:
            return t
    return None


# an opening that only says help is wanted ("Hi! I need some help with my reservation."): the goal
# comes in the requests after it
GREETING = re.compile(r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening)|greetings)\b|"
                      r"\b(?:need|want|would like|looking for)\s+(?:some\s+)?(?:help|assistance)\b|"
                      r"\b(?:can|could) you help\b", re.I)
WANTS = re.compile(r"\b(?:i'?d like|i would like|i want|i need|i'?m looking|could you|can you|could i|can i|could we|"
                   r"please|help me|let'?s)\b", re.I)
IDENT = re.compile(r"\b(?=[A-Za-z0-9_]*\d)(?=[A-Za-z0-9_]*[A-Za-z])[A-Za-z0-9_]{5,}\b|\b[A-Z]{5,}\b|[\w.+-]+@[\w-]+\.[\w.]+")
# a short question about "this" that names nothing ("What's this repo doing?", "Tell me what you know")
GENERIC_Q = re.compile(r"^\W*(?:what|what's|whats|how|tell me|explain|describe|any idea|can you (?:say|tell))\b", re.I)


def _generic_question(text: str) -> bool:
    """A short question about "this" that names nothing ("What's this repo doing?")."""
    words = text.split()
    return len(words) <= 9 and bool(GENERIC_Q.match(text)) and bool(re.search(r"\b(?:this|it|here|these)\b", text, re.I)) \
        and not re.search(r"[`/\\]|\.\w{1,5}\b", text)


def _opening(text: str) -> bool:
    """A first message that only opens the conversation: a greeting, or help wanted with nothing named."""
    return len(text.split()) <= 12 and bool(GREETING.search(text)) and not IDENT.search(text) \
        and not re.search(r"[`/\\]|\w\.\w{1,5}\b", text)


def task_statement(records: Sequence[dict]) -> str:
    """The session's task as a successor needs it, from its first requests: the first request
    itself, unless
    - it came through a slash command or skill: the command's name and what it makes (the first
      line of its instructions) come first, then the request;
    - it only opens the conversation (a greeting, "I need some help with …"): the requests after it
      that say what is wanted, or give an identifier, are joined to it;
    - it is the first of a run of short questions about "this" asked again in other words: it is
      said once with how often it was asked, then the first request that moved on.
    "" when the span has no request."""
    reqs = requests(records)
    if not reqs:
        return ""
    k0, rec0, first = reqs[0]
    raw = rec0.get("content") if isinstance(rec0.get("content"), str) else ""
    m = COMMAND_NAME.search(raw)
    if m and COMMAND_ARGS.search(raw):
        name = "/" + m.group(1).strip().lstrip("/")
        about = ""
        for r in records[k0 + 1:k0 + 4]:  # the command's expansion: a meta user message right after it
            t = r.get("content") if isinstance(r, dict) and isinstance(r.get("content"), str) else ""
            if r.get("role") == "user" and "meta" in R.flags(r) and t.strip():
                line = next((ln.strip() for ln in t.splitlines() if ln.strip()), "")
                if not line.startswith(("#", ">", "-", "|", "<", "`")) and len(line) <= 240:
                    about = line.rstrip(".")
                break
        return f"Through the command `{name}`" + (f" ({about})" if about else "") + f"; the request: {first}"
    if _opening(first):  # what is wanted, in the user's words: each later request's sentences that ask
        more = []
        for _, _, t in reqs[1:6]:
            sents = [x for x in re.split(r"(?<=[.!?])\s+", " ".join(t.split())) if WANTS.search(x) and len(x.split()) >= 6]
            if sents:
                more.append(" ".join(sents))
        if more:
            return " ".join([first] + more[:3])
    run = 1
    while run < len(reqs) and _generic_question(reqs[run][2]):
        run += 1
    if run >= 2 and _generic_question(first):
        rest = reqs[run:]
        out = f"{first} (asked {run} times in different words)"
        if rest:
            out += f"; then: {rest[0][2]}"
            if len(rest) > 1:
                out += " (the later requests are listed below)"
        return out
    return first


def latest_request(records: Sequence[dict], cap: int = 200) -> str:
    """The newest real request, on one line (cut at a word boundary to `cap` characters)."""
    t = last_request(records)
    return brief(t, cap) if t else ""
