"""The user's requests: whether the agent acted on each, how much work followed it, and which one the
work serves (the task): the request most of the work follows, a short follow-up ("continue", "also …")
counting toward the request before it."""
from __future__ import annotations

import re

from ..model import Answer, Change, CheckRun, Command, Interrupt, Place, Read, Request, RequestState, Search

FOLLOW_UP = re.compile(r"^\W*(?:continue|go on|keep going|proceed|yes|yep|sure|ok|okay|do it|go ahead|and\b|also\b|"
                       r"now\b|then\b|next\b|please (?:continue|proceed)|try again|retry|fix (?:it|that|this)|"
                       r"same\b|that\b|what about|how about)", re.I)
WORK = (Change, Command, CheckRun, Read, Search)


def states(evs: list) -> list[RequestState]:
    reqs = [(k, e) for k, e in enumerate(evs) if isinstance(e, Request)]
    out = []
    for n, (k, r) in enumerate(reqs):
        end = reqs[n + 1][0] if n + 1 < len(reqs) else len(evs)
        after = evs[k + 1:end]
        work = sum(1 for e in after if isinstance(e, WORK))
        acted = any(not isinstance(e, (Interrupt, Answer, Place)) for e in after)
        out.append(RequestState(text=r.text, at=r.at, queued=r.queued, command=r.command or "", acted=acted, work=work))
    return out


def is_follow_up(text: str) -> bool:
    return len(text.split()) <= 6 or bool(FOLLOW_UP.match(text))


GREETING = re.compile(r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening)|greetings)\b|"
                      r"\b(?:need|want|would like|looking for)\s+(?:some\s+)?(?:help|assistance)\b", re.I)
WANTS = re.compile(r"\b(?:i'?d like|i would like|i want|i need|could you|can you|please|help me|let'?s)\b", re.I)


def opening(text: str) -> bool:
    """A first message that only opens the conversation (a greeting, help wanted, nothing named)."""
    return len(text.split()) <= 14 and bool(GREETING.search(text)) and not re.search(r"[`/\\]|\w\.\w{1,5}\b|\d{3,}", text)


def task_text(reqs: list[RequestState], k: int) -> str:
    """The task as a successor needs it: the request, or for an opening that only asks for help, the opening
    with the sentences of the next requests that say what is wanted."""
    if k < 0:
        return ""
    text = reqs[k].text
    if k == 0 and opening(text):
        more = []
        for r in reqs[1:6]:
            sents = [x for x in re.split(r"(?<=[.!?])\s+", " ".join(r.text.split())) if WANTS.search(x) and len(x.split()) >= 5]
            if sents:
                more.append(" ".join(sents))
        if more:
            return " ".join([text] + more[:3])
    return text


def task_index(reqs: list[RequestState], dialogue: bool = False) -> int:
    """The request the work serves (-1 without requests): in a dialogue, the first one."""
    if not reqs:
        return -1
    if dialogue:
        return 0
    weight = [0] * len(reqs)
    owner = 0
    for i, r in enumerate(reqs):
        if i == 0 or not is_follow_up(r.text):
            owner = i
        weight[owner] += r.work + 1
    best = max(range(len(reqs)), key=lambda i: (weight[i], -i))
    # the first request stays the task unless a later one carried clearly more of the work, and most of it
    # (a chat of many small requests has no later one the work serves: its opening says what it is)
    return 0 if weight[0] * 2 >= weight[best] or weight[best] * 2 < sum(weight) else best
