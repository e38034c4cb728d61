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
    """Indices of the groups to keep, in order.

    oldest_first: newest groups backwards until the budget is used; always the most recent one.
    middle_out:   first and last groups, then the groups nearest the end as the budget allows.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (expected {' or '.join(STRATEGIES)})")
    keep: set[int] = set()
    free: list[int] = []
    used = 0
    for i, g in enumerate(groups):
        if any(R.is_protected(r) for r in g):
            keep.add(i)
            used += group_tokens(g)
        else:
            free.append(i)
    if not free:
        return sorted(keep)
    remaining = budget - used
    last = free[-1]
    keep.add(last)  # always keep the most recent group
    remaining -= group_tokens(groups[last])
    tail = free[:-1]
    if strategy == "middle_out" and tail:
        first = tail[0]
        cost = group_tokens(groups[first])
        if cost <= remaining:
            keep.add(first)
            remaining -= cost
            tail = tail[1:]
    for i in reversed(tail):
        cost = group_tokens(groups[i])
        if cost > remaining:
            break
        keep.add(i)
        remaining -= cost
    return sorted(keep)
