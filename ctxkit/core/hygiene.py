"""Summary hygiene (pure): strip thinking and chat-template tokens, reject meta-commentary,
and check that every path, number and identifier a model wrote occurs in the source."""
from __future__ import annotations

import re

THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.I)
THINK_CLOSE_ONLY = re.compile(r"^.*?</(think|thinking|reasoning)>", re.S | re.I)
TEMPLATE = re.compile(r"<\|[^|>]{1,40}\|>|</?s>|\[/?INST\]|<<SYS>>|<</SYS>>|<start_of_turn>|<end_of_turn>")
META = re.compile(r"^\s*(i should|i will|i'll|i need to|i think|i'm going to|let me|let's see|the user wants|"
                  r"the user is asking|the user asked|okay[,.]|ok[,.]|sure[,.]|as an ai|here is|here's|"
                  r"in this conversation|this summary|i can|i would|we should prompt|note:)", re.I)

# each alternative starts only where its run starts (linear on a long run with no match)
PATH = re.compile(r"(?<![\w.~-])(?:[\w.~-]+/)+[\w.-]+|(?<![\w-])[\w-]+\.(?:py|js|ts|tsx|jsx|rs|go|java|rb|ex|exs|heex|c|h|cpp|md|json|"
                  r"ya?ml|toml|sh|txt|cfg|ini|lock|sql|html|css)\b")
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
BACKTICK = re.compile(r"`([^`\n]+)`")
IDENT = re.compile(r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]+|"
                   r"[A-Za-z_]\w*\.[A-Za-z_]\w*(?:\.\w+)*|[A-Za-z_]\w*\(\))")


def strip_thinking(text: str) -> str:
    """Remove <think>…</think> blocks; an unclosed opening tag drops the rest; a stray
    closing tag drops what came before it (the model's hidden reasoning)."""
    text = THINK_BLOCK.sub("", text)
    m = THINK_OPEN.search(text)
    if m:
        text = text[: m.start()]
    if re.search(r"</(think|thinking|reasoning)>", text, re.I):
        text = THINK_CLOSE_ONLY.sub("", text)
    return text


def clean(text: str) -> str:
    return TEMPLATE.sub("", strip_thinking(text)).strip()


def is_meta(bullet: str) -> bool:
    b = re.sub(r"^\s*(now|so|first|next|then|alright|great|good|perfect)[,.!:]?\s+", "", bullet, flags=re.I)
    return bool(META.match(bullet) or META.match(b))


NARRATION = re.compile(
    r"^\s*(?:(?:now|so|ok|okay|alright|great|good|perfect|excellent|right|first|next|then|finally)[,.!:]?\s+)*"
    r"(?:let me|let's|let us|i see|i'll|i will|i need|i should|i can|i'm|i am|i've|i have|i think|i notice|"
    r"i found|i see that|looking at|now i|we need to|we should|we can|i want|i'd|it looks like|it seems|"
    r"the user (?:wants|is asking|asked|said)|this (?:summary|conversation)|here is|here's|"
    r"wait|hmm|oh|ah|actually,)\b"
    r"|^\s*(?:now|next|then|finally|first|also|looks like|seems like)\b", re.I)
TEMPLATE_ECHO = re.compile(
    r"(optional next step|list the next step|primary request and intent|key technical concepts|"
    r"files and code sections|problem solving:|pending tasks:|current work:|your task is to create|"
    r"<summary>|</summary>|<analysis>|\[CONTEXT SUMMARY\]|summary of the conversation|"
    r"- \[ \] (?:todo|item)\b|\{[a-z_]+\})", re.I)


def is_narration(text: str) -> bool:
    """First-person narration or hedging that seed 001 keeps out of a summary."""
    return bool(NARRATION.match(text) or is_meta(text))


def is_template_echo(text: str) -> bool:
    return bool(TEMPLATE_ECHO.search(text))


def ends_mid_word(text: str) -> bool:
    """A bullet cut off: ends with '...' after a partial word, or inside an open backtick or bracket."""
    t = text.rstrip()
    if t.endswith(("...", "…")) and not t.endswith((" …", " ...")):
        return True
    return t.count("`") % 2 == 1


def near_duplicate(a: str, b: str, threshold: float = 0.8) -> bool:
    wa = set(re.findall(r"[a-z0-9_]+", a.lower()))
    wb = set(re.findall(r"[a-z0-9_]+", b.lower()))
    if not wa or not wb:
        return a.strip().lower() == b.strip().lower()
    return len(wa & wb) / min(len(wa), len(wb)) >= threshold


def gate(bullets: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The one hygiene gate for every summarizer: (kept, [(bullet, reason) rejected])."""
    kept, rejected = [], []
    for b in bullets:
        c = clean(b).replace("\\n", " ").strip()
        c = re.sub(r"\s+", " ", c)
        if not c:
            rejected.append((b, "empty"))
        elif len(c.split()) < 4 and not c.startswith("`"):
            rejected.append((b, "fragment"))
        elif is_narration(c):
            rejected.append((b, "narration"))
        elif is_template_echo(c):
            rejected.append((b, "template echo"))
        elif ends_mid_word(c):
            rejected.append((b, "cut mid-word"))
        elif any(near_duplicate(c, k) for k in kept):
            rejected.append((b, "duplicate"))
        else:
            kept.append(c)
    return kept, rejected


def claims(bullet: str) -> set[str]:
    """The checkable atoms of a bullet: paths, numbers, identifiers, backticked terms."""
    out = set()
    for m in BACKTICK.finditer(bullet):
        out.add(m.group(1).strip())
    for rx in (PATH, IDENT):
        out.update(m.group(0) for m in rx.finditer(bullet))
    for m in NUMBER.finditer(bullet):
        if len(m.group(0)) > 1 or True:
            out.add(m.group(0))
    return {c for c in out if c}


def unsupported(bullet: str, source: str) -> list[str]:
    """Atoms of `bullet` that do not occur in `source` (empty: the bullet is faithful)."""
    return sorted(c for c in claims(bullet) if c not in source)


def faithful(bullet: str, source: str) -> bool:
    return not unsupported(bullet, source)


# session state is CONTEXT.md's, never long-term memory: what is failing, running, waiting or next
SESSION_STATE = re.compile(
    r"\b(is|are|was|were|keeps?|still) (now |currently |still )?(failing|broken|red|flaky|running|pending|"
    r"blocked|in progress|waiting|not (yet )?(working|passing|done|fixed))\b|\b(currently|right now|at the moment|"
    r"so far|for now|next step|todo|to do next|still need(s|ed)? to|needs? to be (fixed|done|finished)|"
    r"work in progress|wip|not yet)\b", re.I)


def is_session_state(text: str) -> bool:
    """A bullet about where this session stands ("the idempotency test is failing"), not a fact."""
    return bool(SESSION_STATE.search(text))


FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'll|I'd|me|my|mine|myself|let me|let's)\b")


def first_person(text: str) -> bool:
    """The text speaks as its narrator ("I'll…", "let me…"): a session's voice, not a long-term fact."""
    return bool(FIRST_PERSON.search(text))
