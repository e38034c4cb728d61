"""Drop decisions (pure): KEEP, DROP to cold storage, or SUMMARIZE, per chunk."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import records as R

KEEP, DROP, SUMMARIZE, SHRINK = "keep", "drop", "summarize", "shrink"


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
    shrink_saving: int = 0      # its tokens minus its shrunk form's (0: nothing to shrink)


def facts(group: Sequence[dict], saving: int | None = None, shrink_saving: int = 0) -> ChunkFacts:
    score = group[0].get("score") if group else None
    return ChunkFacts(is_message_chunk(group), any(R.is_protected(r) for r in group),
                      score if isinstance(score, (int, float)) and not isinstance(score, bool) else None, saving,
                      shrink_saving)


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


def _base(chunks: Sequence[ChunkFacts], min_keep: int) -> tuple[list, list]:
    """Decisions for the chunks a budget never touches, and the indices it may."""
    msg_idx = [i for i, c in enumerate(chunks) if c.message]
    recent = set(msg_idx[-min_keep:]) if min_keep > 0 else set()
    out: list = [None] * len(chunks)
    free = []
    for i, c in enumerate(chunks):
        if not c.message:
            out[i] = Decision(KEEP, "not_a_message", c.score)
        elif c.protected:
            out[i] = Decision(KEEP, "protected", c.score)
        elif i in recent:
            out[i] = Decision(KEEP, "recent", c.score)
        elif c.score is None:
            out[i] = Decision(KEEP, "unscored", None)
        else:
            out[i] = Decision(KEEP, "relevant", c.score)
            free.append(i)
    return out, free


# The share of a chunk's value a shrink loses (it keeps the head, the tail and the lines naming
# what is in play, and names the rest). Measured on the corpus (15 runs cut at 40/60/80 %,
# ../shared/eval/drop_eval.py's "needed later", each chunk shrunk around its run's terms in play):
# of 98 needed chunks with an output to shrink, 80 kept every needed term in their shrunk form
# alone (90 counting the rest of the stream), so a shrink loses about 0.2 of a needed chunk.
SHRINK_LOSS = 0.2
# A chunk's value is score ** VALUE_POWER: how often a chunk is needed later grows faster than
# its score. Measured on the corpus (15 runs cut at 40/60/80 %, ../shared/eval/drop_eval.py's
# "needed later"): chunks scoring 0.2-0.3 were needed 10 % of the time, 0.5-0.6 53 %, 0.8-0.9
# 69 %; a ratio of about 7 between the two ends, where the score's own ratio is 3.4 and its
# square's 11.6.
VALUE_POWER = 2.0


@dataclass(frozen=True)
class BudgetPlan:
    """What `plan_budget` chose: a decision per chunk, and whether the target was in reach."""
    decisions: list
    in_reach: bool


def plan_budget(chunks: Sequence[ChunkFacts], target: int, min_keep: int, keep_at: float = 1.01) -> BudgetPlan:
    """Free at least `target` tokens (when the chunks allow) losing as little as possible.

    A chunk's value (its score ** VALUE_POWER) stands for how likely the future needs it; a
    drop loses all of it, a shrink SHRINK_LOSS of it. Actions are taken cheapest first per
    token freed, so one large, fairly relevant output is shrunk before many small relevant
    chunks are dropped; a shrunk chunk may later be dropped whole (the rest of its tokens at
    the rest of its value). The action that reaches the target is the one that loses least:
    a cheaper-per-token action far past the target gives way to a later, smaller one that
    loses less in all (so "free half" frees about half, not 60 %). Chunks scoring at or above
    `keep_at` are never touched.

    A target out of reach (the chunks it may touch hold fewer tokens than it asks) frees what
    it can, but a shrunk output keeps its kept lines: dropping those too would not reach the
    target either, and they are the lines the future most likely uses (on the corpus's
    exploration session cut at 40 % and 60 %, where half cannot be freed, keeping them holds
    0.86 and 0.80 of the chunks needed later instead of 0.71 and 0.60)."""
    out, free = _base(chunks, min_keep)
    touch = [i for i in free if chunks[i].score < keep_at]
    in_reach = sum(max(0, chunks[i].saving or 0) for i in touch) >= target
    acts = []
    for i in touch:
        c = chunks[i]
        value = max(c.score, 1e-3) ** VALUE_POWER
        whole = c.saving if c.saving and c.saving > 0 else 0
        if c.shrink_saving > 0:
            acts.append((value * SHRINK_LOSS / c.shrink_saving, i, SHRINK, value))
            if whole > c.shrink_saving and in_reach:
                acts.append((value * (1 - SHRINK_LOSS) / (whole - c.shrink_saving), i, DROP, value))
        elif whole:
            acts.append((value / whole, i, DROP, value))
    acts.sort(key=lambda a: (a[0], a[1], a[2] == DROP))
    state = {}          # chunk index -> SHRINK or DROP, as the actions taken so far leave it
    taken = []          # actions taken (each frees less than what is still to free)
    got = lost = 0.0
    best = None         # (loss in all, actions taken before it, the action that reaches the target)
    for act in acts:
        if got >= target:
            break
        gain, loss = _effect(chunks[act[1]], state.get(act[1]), act[2], act[3])
        if gain <= 0:
            continue
        if best is not None and lost + loss >= best[0]:
            continue    # this one, and what it would take after it, loses more than the best finish
        if got + gain >= target:
            if best is None or lost + loss < best[0]:
                best = (lost + loss, len(taken), act)
            continue
        taken.append(act)
        state[act[1]] = act[2]
        got += gain
        lost += loss
    if best is not None:
        taken = taken[:best[1]] + [best[2]]
    for _, i, action, _ in taken:
        c = chunks[i]
        if action == SHRINK:
            if out[i].action == KEEP:
                out[i] = Decision(SHRINK, "budget_shrunk", c.score)
        else:
            out[i] = Decision(DROP, "budget_low_relevance", c.score)
    for i in touch:   # what it could have touched and left: why it stays
        if out[i].action == KEEP:
            c = chunks[i]
            gains = max(c.saving or 0, c.shrink_saving)
            out[i] = Decision(KEEP, "target_reached" if gains > 0 else "smaller_than_stub", c.score)
    return BudgetPlan(out, in_reach)


def _effect(c: ChunkFacts, now: str | None, action: str, value: float) -> tuple[int, float]:
    """(tokens freed, value lost) of an action on a chunk the actions so far left at `now`."""
    if now == DROP or (action == SHRINK and now == SHRINK):
        return 0, 0.0
    if action == SHRINK:
        return c.shrink_saving, value * SHRINK_LOSS
    if now == SHRINK:
        return (c.saving or 0) - c.shrink_saving, value * (1 - SHRINK_LOSS)
    return c.saving or 0, value


def decide_shrink(chunks: Sequence[ChunkFacts], cutoff: float, keep: float, min_keep: int,
                  summarize_medium: bool = True) -> list[Decision]:
    """The thresholds of `decide_facts`, and chunks between them with large outputs are
    shrunk instead of flagged."""
    out = decide_facts(chunks, cutoff, keep, min_keep, summarize_medium)
    for i, (c, d) in enumerate(zip(chunks, out)):
        if d.reason == "medium_relevance" and c.shrink_saving > 0:
            out[i] = Decision(SHRINK, "medium_relevance_shrunk", c.score)
    return out


# the argument a tool call names its file with (Claude Code, Codex, Gemini CLI, Copilot CLI, OpenAI-style agents)
FILE_ARGS = ("file_path", "notebook_path", "absolute_path", "target_file", "filename", "file", "path")


def named_file(arguments) -> str | None:
    """The file a tool call's arguments (a JSON object, or its text) name, or None."""
    if isinstance(arguments, str):
        import json

        if not arguments.lstrip().startswith("{"):
            return None
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):   # not JSON, or nested too deep: no file named
            return None
    if not isinstance(arguments, dict):
        return None
    return next((arguments[k] for k in FILE_ARGS if isinstance(arguments.get(k), str) and arguments[k].strip()), None)


def path_tail(path: str, parts: int = 2) -> str:
    """A path's last PARTS components behind '…/' (the file's name never cut): …/spotter/session_live.ex."""
    bits = [b for b in path.rstrip("/").split("/") if b]
    return path if len(bits) <= parts + 1 else "…/" + "/".join(bits[-parts:])


def call_gist(name: str, arguments) -> str:
    """One tool call in a few words: the tool and the tail of the file it names (`Read
    …/spotter/session_live.ex`), else the tool and the start of its arguments."""
    f = named_file(arguments)
    if f:
        return f"{name} {path_tail(f)}"
    args = (arguments if isinstance(arguments, str) else str(arguments or "")).replace("\n", " ")
    return f"{name}({args if len(args) <= 60 else args[:59] + '…'})"


def gist(group: Sequence[dict], width: int = 100) -> str:
    """One line saying what a chunk was; a tool call keeps the name of the file it names."""
    bits = []
    for r in group:
        if "thinking" in R.flags(r):
            continue
        for c in r.get("tool_calls") or ():
            fn = c.get("function") or {}
            bits.append(call_gist(fn.get("name", "tool"), fn.get("arguments") or ""))
        text = (r.get("content") or "").strip().replace("\n", " ")
        if text and r.get("role") != "tool":
            bits.append(f"{r.get('role')}: {text}")
        if bits and len(" ".join(bits)) > width:
            break
    line = "; ".join(bits) or f"{len(group)} record(s)"
    return line if len(line) <= width else line[: width - 1] + "…"


def stub_text(chunk_id: str, session: str, tokens: int, n_records: int, line: str, names=()) -> str:
    """The stub's text; its `ctx recover` command works when pasted into a shell, whatever the ids.
    `names`: what the chunk names (paths, identifiers), so a reader knows what it can get back."""
    import shlex

    one = " ".join(str(chunk_id).split()) == chunk_id and " ".join(str(session).split()) == session
    cmd = f"ctx recover --chunk-id {shlex.quote(chunk_id)} --session {shlex.quote(session)}"
    named = f" | names: {', '.join(names)}" if names else ""
    return (f"[dropped chunk {chunk_id if one else repr(chunk_id)} ({n_records} records, {tokens} tokens): "
            f"{line}{named} | {cmd}]")
