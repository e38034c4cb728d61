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


def group_size(group: Sequence[dict]) -> tuple[bool, int]:
    """(always kept, tokens): all truncation needs to know of a group."""
    return any(R.is_protected(r) for r in group), group_tokens(group)


def truncate_sizes(sizes: Sequence[tuple[bool, int]], budget: int, strategy: str = "oldest_first") -> list[int]:
    """Indices of the groups to keep, in order, from each group's (always kept, tokens).

    oldest_first: newest groups backwards until the budget is used; always the most recent one.
    middle_out:   first and last groups, then the groups nearest the end as the budget allows.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (expected {' or '.join(STRATEGIES)})")
    keep: set[int] = set()
    free: list[int] = []
    used = 0
    for i, (protected, tokens) in enumerate(sizes):
        if protected:
            keep.add(i)
            used += tokens
        else:
            free.append(i)
    if not free:
        return sorted(keep)
    remaining = budget - used
    last = free[-1]
    keep.add(last)  # always keep the most recent group
    remaining -= sizes[last][1]
    tail = free[:-1]
    if strategy == "middle_out" and tail:
        first = tail[0]
        cost = sizes[first][1]
        if cost <= remaining:
            keep.add(first)
            remaining -= cost
            tail = tail[1:]
    for i in reversed(tail):
        cost = sizes[i][1]
        if cost > remaining:
            break
        keep.add(i)
        remaining -= cost
    return sorted(keep)
