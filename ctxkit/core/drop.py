"""Drop decisions (pure): KEEP, DROP to cold storage, or SUMMARIZE, per chunk."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import records as R

KEEP, DROP, SUMMARIZE = "keep", "drop", "summarize"


@dataclass(frozen=True)
class Decision:
    action: str
    reason: str
    score: float | None


def is_message_chunk(group: Sequence[dict]) -> bool:
    return all(r.get("kind") == "message" for r in group)


@dataclass(frozen=True)
class ChunkFacts:
    """All a drop decision needs to know of a chunk (so a streaming caller keeps only this)."""
    message: bool
    protected: bool
    score: float | None
    saving: int | None = None   # its tokens minus its stub's


def facts(group: Sequence[dict], saving: int | None = None) -> ChunkFacts:
    score = group[0].get("score") if group else None
    return ChunkFacts(is_message_chunk(group), any(R.is_protected(r) for r in group),
                      score if isinstance(score, (int, float)) and not isinstance(score, bool) else None, saving)


def decide(groups: Sequence[Sequence[dict]], cutoff: float, keep: float, min_keep: int,
           summarize_medium: bool = True, savings: Sequence[int] | None = None) -> list[Decision]:
    """One decision per chunk. `savings[i]` is what dropping chunk i would save (its tokens
    minus its stub's); a chunk that would not get smaller is never dropped."""
    return decide_facts([facts(g, savings[i] if savings is not None else None) for i, g in enumerate(groups)],
                        cutoff, keep, min_keep, summarize_medium)


def decide_facts(chunks: Sequence[ChunkFacts], cutoff: float, keep: float, min_keep: int,
                 summarize_medium: bool = True) -> list[Decision]:
    msg_idx = [i for i, c in enumerate(chunks) if c.message]
    recent = set(msg_idx[-min_keep:]) if min_keep > 0 else set()
    out = []
    for i, c in enumerate(chunks):
        score = c.score
        if not c.message:
            out.append(Decision(KEEP, "not_a_message", score))
        elif c.protected:
            out.append(Decision(KEEP, "protected", score))
        elif i in recent:
            out.append(Decision(KEEP, "recent", score))
        elif score is None:
            out.append(Decision(KEEP, "unscored", None))
        elif score >= keep:
            out.append(Decision(KEEP, "relevant", score))
        elif score <= cutoff and c.saving is not None and c.saving <= 0:
            out.append(Decision(KEEP, "smaller_than_stub", score))
        elif score <= cutoff:
            out.append(Decision(DROP, "low_relevance", score))
        elif summarize_medium:
            out.append(Decision(SUMMARIZE, "medium_relevance", score))
        else:
            out.append(Decision(KEEP, "medium_relevance", score))
    return out


def gist(group: Sequence[dict], width: int = 100) -> str:
    """One line saying what a chunk was."""
    bits = []
    for r in group:
        if "thinking" in R.flags(r):
            continue
        for c in r.get("tool_calls") or ():
            fn = c.get("function") or {}
            args = (fn.get("arguments") or "").replace("\n", " ")
            bits.append(f"{fn.get('name', 'tool')}({args[:60]})")
        text = (r.get("content") or "").strip().replace("\n", " ")
        if text and r.get("role") != "tool":
            bits.append(f"{r.get('role')}: {text}")
        if bits and len(" ".join(bits)) > width:
            break
    line = "; ".join(bits) or f"{len(group)} record(s)"
    return line if len(line) <= width else line[: width - 1] + "…"


def stub_text(chunk_id: str, session: str, tokens: int, n_records: int, line: str) -> str:
    """The stub's text; its `ctx recover` command works when pasted into a shell, whatever the ids."""
    import shlex

    one = " ".join(str(chunk_id).split()) == chunk_id and " ".join(str(session).split()) == session
    cmd = f"ctx recover --chunk-id {shlex.quote(chunk_id)} --session {shlex.quote(session)}"
    return (f"[dropped chunk {chunk_id if one else repr(chunk_id)} ({n_records} records, {tokens} tokens): "
            f"{line} | {cmd}]")
