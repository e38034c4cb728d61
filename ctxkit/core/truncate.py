"""Truncation over atomic groups (seed 002 semantics), pure.

System and pinned/important records are always kept; whole groups only, so
no tool call is ever separated from its results.
"""
from __future__ import annotations

from typing import Sequence

from .. import records as R

STRATEGIES = ("oldest_first", "middle_out")


def group_tokens(group: Sequence[dict]) -> int:
    return sum(r.get("tokens") or 0 for r in group)


def truncate_groups(groups: Sequence[list[dict]], budget: int, strategy: str = "oldest_first") -> list[int]:
    """Indices of the groups to keep, in order (see `truncate_sizes`)."""
    return truncate_sizes([group_size(g) for g in groups], budget, strategy)


def group_size(group: Sequence[dict]) -> tuple[bool, int, bool]:
    """(always kept, tokens, is a turn): all truncation needs to know of a group.

    A turn holds a message, summary or stub (something a model is sent); a group of only
    events (usage, bookkeeping) is not one, so it never stands in for the last turn."""
    return (any(R.is_protected(r) for r in group), group_tokens(group),
            any(r.get("kind") in TURN_KINDS for r in group))


TURN_KINDS = ("message", "summary", "stub")


def group_size_importance(group: Sequence[dict]) -> tuple[bool, int, bool, float]:
    """group_size and the group's importance (0-1: role, decisions, code, errors, "remember")."""
    from .score import chunk_importance

    return (*group_size(group), chunk_importance(group))


def truncate_sizes(sizes: Sequence[tuple], budget: int, strategy: str = "oldest_first",
                   min_importance: float | None = None) -> list[int]:
    """Indices of the groups to keep, in order, from each group's (always kept, tokens[, is a turn]).

    oldest_first: newest groups backwards until the budget is used; always the most recent turn.
    middle_out:   first and last turns, then the groups nearest the end as the budget allows.
    Groups that are not turns (events) never take the place of the last or first turn.
    min_importance (with (…, importance) sizes): less important groups are left out first, whatever
    the budget (the last turn and protected groups stay).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (expected {' or '.join(STRATEGIES)})")
    keep: set[int] = set()
    free: list[int] = []
    used = 0
    turn = [len(sz) < 3 or bool(sz[2]) for sz in sizes]
    for i, (protected, tokens, *_) in enumerate(sizes):
        if protected:
            keep.add(i)
            used += tokens
        else:
            free.append(i)
    if not free:
        return sorted(keep)
    remaining = budget - used
    turns = [i for i in free if turn[i]]
    last = turns[-1] if turns else free[-1]
    keep.add(last)  # always keep the most recent turn
    remaining -= sizes[last][1]
    tail = [i for i in free if i != last]
    if strategy == "middle_out" and tail:
        first = next((i for i in tail if turn[i]), tail[0])
        cost = sizes[first][1]
        if cost <= remaining:
            keep.add(first)
            remaining -= cost
            tail = [i for i in tail if i != first]
    if min_importance is not None:
        tail = [i for i in tail if len(sizes[i]) < 4 or sizes[i][3] >= min_importance]
    for i in reversed(tail):
        cost = sizes[i][1]
        if cost > remaining:
            break
        keep.add(i)
        remaining -= cost
    return sorted(keep)
