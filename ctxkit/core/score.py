"""Relevance scoring of chunks (pure; the similarity numbers come from a backend).

score = ( similarity_weight * similarity
        + recency_weight * exp(-age_hours / half_life_hours)
        + importance_weight * importance
        + working_set_weight * working_set )  (the chunk names what is in play now)
      / max(1, the sum of those four weights)
      - superseded_weight * superseded        (the session read or wrote the same thing later)

clamped to [0, 1] (the weights are scaled down only when they add up to more than 1). `working_set` = 1 - prod(1 - 1/df(t)) over the chunk's terms t that are in
play (core.working_set), df(t) = how many chunks name t: one unique term in play makes it ~1, a term
every chunk names adds little.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Container, Iterable, Mapping, Sequence

from .. import records as R
from .timeutil import parse_ts

# Records without timestamps: each chunk counts as this many minutes older than the next one.
POSITION_STEP_MINUTES = 10.0

DECISION = re.compile(r"\b(decided|decision|we(?:'ll| will) use|let'?s (?:go with|use)|chose|choose to|"
                      r"going with|instead of|settled on|agreed)\b", re.I)
# linear: a file name is found by its extension after a name character (not by scanning every
# name from every start), a call by one word character before `()`
CODE = re.compile(r"```|`[^`\n]+`|(?<=[\w/-])\.(?:py|js|ts|tsx|rs|go|java|rb|ex|exs|c|h|cpp|md|json|ya?ml|toml|sh)\b|"
                  r"\bdef \w|\bclass \w|\bfunction \w|\w\(\)")
REMEMBER = re.compile(r"\b(remember (?:this|that)|don'?t forget|keep in mind|note to self)\b", re.I)
ERROR = re.compile(r"\b(error|exception|traceback|warning|failed|failure|panic|fatal)\b", re.I)

ROLE_BASE = {"user": 0.8, "assistant": 0.5, "tool": 0.4, "system": 0.6}

SCORE_EVENT = "score"  # the meta.type of the event `ctx score` writes first (it names the query)


@dataclass(frozen=True)
class Weights:
    similarity: float = 0.6
    recency: float = 0.2
    importance: float = 0.1
    half_life_hours: float = 6.0
    working_set: float = 0.0
    superseded: float = 0.0


IMPORTANCE_HEAD, IMPORTANCE_TAIL = 40_000, 10_000  # characters of one record the cues are looked for in


def importance_slice(text: str) -> str:
    """The part of a record's text its importance cues are looked for in: the head and the tail
    of a long one (a 10 MB tool output costs what 50 KB of it does)."""
    if len(text) <= IMPORTANCE_HEAD + IMPORTANCE_TAIL:
        return text
    return text[:IMPORTANCE_HEAD] + "\n" + text[-IMPORTANCE_TAIL:]


def record_importance(rec: dict) -> float:
    """Seed 004's heuristics: role base, boosts for decisions, code, 'remember this', errors."""
    fl = R.flags(rec)
    if "important" in fl or "pinned" in fl:
        return 1.0
    text = importance_slice(rec.get("content") or "")
    base = ROLE_BASE.get(rec.get("role") or "", 0.4)
    if "thinking" in fl or "reasoning" in fl:
        base = 0.3
    boost = 0.0
    if DECISION.search(text):
        boost += 0.2
    if rec.get("tool_calls") or CODE.search(text):
        boost += 0.1
    if REMEMBER.search(text):
        boost += 0.3
    if "error" in fl or ERROR.search(text):
        boost += 0.15
    return round(min(1.0, base + boost), 4)


def chunk_importance(group: Sequence[dict]) -> float:
    return max((record_importance(r) for r in group), default=0.0)


def chunk_text(group: Sequence[dict], limit: int = 8000) -> str:
    """What a chunk is about: its text and tool calls (thinking left out), capped for embedding."""
    parts = []
    for r in group:
        if "thinking" in R.flags(r):
            continue
        if r.get("content"):
            parts.append(r["content"])
        for c in r.get("tool_calls") or ():
            parts.append(R.tool_call_text(c))
    text = "\n".join(parts)
    return text[:limit]


def chunk_time(group: Sequence[dict]) -> datetime | None:
    times = [t for t in (parse_ts(r.get("ts")) for r in group) if t is not None]
    return max(times) if times else None


def newest_time(records: Sequence[dict]) -> datetime | None:
    times = [t for t in (parse_ts(r.get("ts")) for r in records if r.get("kind") != "event") if t is not None]
    return max(times) if times else None


def recency(age_hours: float, half_life_hours: float) -> float:
    if half_life_hours <= 0:
        return 0.0
    return math.exp(-max(0.0, age_hours) / half_life_hours)


def ages_hours(groups: Sequence[Sequence[dict]], now: datetime) -> list[float]:
    """Age of each chunk: from its timestamps, else from its position (newest = 0)."""
    return ages_from_times([chunk_time(g) for g in groups], now)


def ages_from_times(times: Sequence[datetime | None], now: datetime) -> list[float]:
    n = len(times)
    out = []
    for i, t in enumerate(times):
        if t is not None:
            out.append((now - t).total_seconds() / 3600)
        else:
            out.append((n - 1 - i) * POSITION_STEP_MINUTES / 60)
    return out


def score_groups(groups: Sequence[list[dict]], similarities: Sequence[float], now: datetime,
                 w: Weights, working: Sequence[float] | None = None, superseded: Sequence[float] | None = None
                 ) -> None:
    """Write `score` and `score_parts` on every record of every chunk (in place)."""
    n = len(groups)
    working = working if working is not None else [0.0] * n
    superseded = superseded if superseded is not None else [0.0] * n
    for g, sim, age, ws, sp in zip(groups, similarities, ages_hours(groups, now), working, superseded):
        score_chunk(g, sim, age, w, ws, sp)


def working_set(chunk_terms: Iterable[str], in_play: Container[str], df: Mapping[str, int]) -> float:
    """How surely this chunk holds something in play: 1 - prod(1 - 1/df) over its terms in play."""
    miss = 1.0
    for t in chunk_terms:
        if t in in_play:
            miss *= 1.0 - 1.0 / max(1, df.get(t, 1))
            if miss <= 0.0:
                break
    return round(1.0 - miss, 4)


def score_chunk(g: Sequence[dict], sim: float, age: float, w: Weights, ws: float = 0.0,
                superseded: float = 0.0, importance: float | None = None) -> None:
    """Write `score` and `score_parts` on every record of the chunk (`importance` None: from the chunk)."""
    score, parts = chunk_score(sim, age, chunk_importance(g) if importance is None else importance, w, ws,
                               superseded)
    for r in g:
        r["score"] = score
        r["score_parts"] = dict(parts)


def contributions(parts: dict, w: Weights) -> dict:
    """What each signal added to a chunk's score (before the clamp to [0, 1]), as chunk_score sums them."""
    total = max(1.0, w.similarity + w.recency + w.importance + w.working_set)
    return {"similarity": w.similarity * (parts.get("similarity") or 0) / total,
            "recency": w.recency * (parts.get("recency") or 0) / total,
            "importance": w.importance * (parts.get("importance") or 0) / total,
            "working_set": w.working_set * (parts.get("working_set") or 0) / total,
            "superseded": -w.superseded * (parts.get("superseded") or 0)}


def explain_why(parts: dict, w: Weights, in_play: Sequence[str] = (), reread: Sequence[str] = (),
                most: int = 3) -> str:
    """Why a chunk scored so, in words: its largest contributions first (at most `most`, never
    none), each with what it added: "similar to the query 0.41 (+0.08); names pane_list_live.ex in
    play (+0.21); recent (+0.09)". `in_play`: the terms in play it names; `reread`: the files it
    read that were read again or rewritten later."""
    c = contributions(parts, w)
    in_play = [t.rstrip("/").rsplit("/", 1)[-1] or t for t in in_play]   # a path by its file name
    sim, rec = parts.get("similarity") or 0, parts.get("recency") or 0
    words = {
        "similarity": f"{'similar to' if sim >= 0.35 else 'not much like'} the query {sim:.2f}",
        "recency": "recent" if rec >= 0.5 else f"old (recency {rec:.2f})",
        "importance": f"importance {parts.get('importance') or 0:g}",
        "working_set": ("names " + ", ".join(in_play[:3]) + (" …" if len(in_play) > 3 else "") + " in play")
        if in_play else "names what is in play",
        "superseded": ("superseded: " + ", ".join(reread[:3]) + " read again or rewritten later") if reread
        else "superseded: a search whose result was then opened",
    }
    ranked = sorted((k for k in c if c[k]), key=lambda k: -abs(c[k]))
    picked = [k for k in ranked if abs(c[k]) >= 0.01][:most] or ranked[:1]
    if not picked:
        return "no signal: unlike the query, old, nothing in play"
    return "; ".join(f"{words[k]} ({c[k]:+.2f})" for k in picked)


def weights_line(w: Weights) -> str:
    """The weights a run scored with, said once above an explanation."""
    return (f"similarity {w.similarity:g}, recency {w.recency:g} (half-life {w.half_life_hours:g} h), importance "
            f"{w.importance:g}, working set {w.working_set:g}, superseded -{w.superseded:g}")


def chunk_score(sim: float, age: float, importance: float, w: Weights, ws: float = 0.0,
                superseded: float = 0.0) -> tuple[float, dict]:
    """(score, score_parts) of a chunk from its signals."""
    parts = {"similarity": round(sim, 4), "recency": round(recency(age, w.half_life_hours), 4),
             "importance": importance, "working_set": round(ws, 4), "superseded": round(superseded, 4)}
    total = max(1.0, w.similarity + w.recency + w.importance + w.working_set)
    score = (w.similarity * parts["similarity"] + w.recency * parts["recency"]
             + w.importance * parts["importance"] + w.working_set * parts["working_set"]) / total \
        - w.superseded * parts["superseded"]
    return round(min(1.0, max(0.0, score)), 4), parts
