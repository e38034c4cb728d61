"""Compaction (pure): pick the span to summarize, build the summary record (seed 002)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .. import records as R
from .context_md import Context, render
from .truncate import group_tokens

SUMMARY_HEADER = ("[CONTEXT SUMMARY]\n"
                  "The following is a summary of our previous conversation. It was automatically generated "
                  "when the context window needed compaction (at {ts}). Treat this as established context - "
                  "you don't need to re-confirm decisions already made.\n\n---\n")


@dataclass
class Selection:
    summarize: list[int] = field(default_factory=list)   # group indices, oldest first
    keep: list[int] = field(default_factory=list)        # group indices kept raw (preserved or protected)
    protected: list[int] = field(default_factory=list)


def is_compaction_summary(group: Sequence[dict]) -> bool:
    return any(r.get("kind") == "summary" and "compaction" in R.flags(r) for r in group)


def select(groups: Sequence[list[dict]], budget: int, preserve_ratio: float,
           skip_through: int = -1) -> Selection:
    """Walk groups from the newest, keeping `preserve_ratio` of the budget raw; the older span
    is summarized. System and pinned/important groups are never summarized; groups flagged
    `summarize` (by ctx drop) are summarized even inside the preserved window, except the
    newest group. Groups up to index `skip_through` were summarized before and are left out."""
    sel = Selection()
    preserve = max(0, int(budget * preserve_ratio))
    used = 0
    preserved: set[int] = set()
    first, full = True, False
    for i in reversed(range(skip_through + 1, len(groups))):
        g = groups[i]
        if any(R.is_protected(r) for r in g) or is_compaction_summary(g) or \
                all(r.get("kind") == "event" for r in g):
            continue
        cost = group_tokens(g)
        if first:  # the newest group always stays raw
            preserved.add(i)
            used += cost
            first = False
            continue
        if full or any("summarize" in R.flags(r) for r in g):
            continue
        if used + cost <= preserve:
            preserved.add(i)
            used += cost
        else:
            full = True  # the preserved window is a contiguous recent tail
    for i, g in enumerate(groups):
        if any(R.is_protected(r) for r in g):
            sel.protected.append(i)
            sel.keep.append(i)
        elif i <= skip_through or i in preserved or is_compaction_summary(g) or \
                all(r.get("kind") == "event" for r in g):
            sel.keep.append(i)
        else:
            sel.summarize.append(i)
    return sel


def fold_tool_tail(groups: Sequence[list[dict]], sel: Selection, skip_through: int = -1) -> Selection:
    """The records kept raw after a summary must read as conversation: trailing kept groups
    that end in a tool result (an edit receipt, a search listing, a file dump) move into the
    summarized span, whole, until a kept group ends with user or assistant text. Protected
    groups stay where they are, and so does everything before them."""
    fold = []
    for i in reversed(range(len(groups))):
        g = groups[i]
        if is_compaction_summary(g) or all(r.get("kind") == "event" for r in g):
            continue
        if i <= skip_through or i in sel.protected or i not in sel.keep:
            break
        last = next((r for r in reversed(g) if r.get("kind") != "event"), None)
        if last is None or last.get("role") != "tool":
            break
        fold.append(i)
    return _summarized(sel, fold)


def _summarized(sel: Selection, fold: list[int]) -> Selection:
    """`sel` with the groups `fold` moved from the kept ones into the summarized span."""
    if fold:
        sel.keep = [i for i in sel.keep if i not in fold]
        sel.summarize = sorted(set(sel.summarize) | set(fold))
    return sel


def fold_tool_head(groups: Sequence[list[dict]], sel: Selection, skip_through: int = -1) -> Selection:
    """The records kept raw after a summary start at conversation, not at a tool exchange the summary
    already tells (a test run and its output, a lint run): leading kept groups that hold a tool result
    move into the summarized span, whole, up to the first kept group without one. The newest group stays;
    nothing moves when a protected group is among the kept ones."""
    kept = [i for i in sel.keep if i > skip_through and not is_compaction_summary(groups[i])
            and not all(r.get("kind") == "event" for r in groups[i])]
    if len(kept) < 2 or any(i in sel.protected for i in kept) or max(sel.summarize, default=-1) < 0:
        return sel
    fold = []
    for k, i in enumerate(kept[:-1]):
        if not any(r.get("role") == "tool" for r in groups[i]) and not _report_before_request(groups[i], groups[kept[k + 1]]):
            break
        fold.append(i)
    return _summarized(sel, fold)


def _report_before_request(group: list[dict], nxt: list[dict]) -> bool:
    """The agent's closing words (no tool call) right before the user's next request: the summary tells
    them, and the raw records start at the request."""
    said = [r for r in group if r.get("kind") == "message"]
    return bool(said) and all(r.get("role") == "assistant" and not r.get("tool_calls") for r in said) and \
        bool(nxt) and nxt[0].get("role") == "user" and nxt[0].get("kind") == "message"


def summary_record(ctx: Context, session: str | None, ts: str, meta: dict) -> dict:
    body = render(ctx)
    body = "\n".join(line for line in body.split("\n") if not line.startswith("<!--")).strip()
    content = SUMMARY_HEADER.format(ts=ts) + body
    return R.make("summary", id=f"summary-{R.content_hash(session, ts, body)[:12]}", session=session, ts=ts,
                  role="user", content=content, flags=["compaction"], meta=meta)
