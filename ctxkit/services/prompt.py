"""The lean, layered system prompt (seeds 000, 002, 004).

Layers: package defaults -> $CTX_HOME/workspace -> ancestor directories' .ctx/ -> ./.ctx/
(-> --workspace). Order is cache-friendly: the static part (identity files, tool names)
first and byte-identical while its files are unchanged; CONTEXT.md next; the dynamic part
(memory for this query, time, git, budget) last. Sections that do not fit are dropped or cut
at paragraph boundaries, never mid-sentence, and reported; pinned ones never are.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..core.context_md import parse
from ..core.hygiene import clean

IDENTITY_FILES = ("SOUL.md", "USER.md", "AGENTS.md")
DEFAULTS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "defaults")
PINNED_MARK = "<!-- ctx:pinned -->"


@dataclass
class Section:
    name: str
    text: str
    source: str
    tier: int            # 0 never dropped; higher tiers go first when over budget
    static: bool = True
    pinned: bool = False
    tokens: int = 0
    status: str = "included"
    note: str = ""


@dataclass
class Prompt:
    sections: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    budget: int = 0

    def included(self) -> list[Section]:
        return [s for s in self.sections if s.status != "omitted"]

    def text(self) -> str:
        return "\n\n".join(f"# {s.name}\n{s.text}".rstrip() for s in self.included()) + "\n"

    def static_prefix(self) -> str:
        return "\n\n".join(f"# {s.name}\n{s.text}".rstrip() for s in self.included() if s.static)


def layer_dirs(home_workspace: str, workspace: str | None, cwd: str) -> list[str]:
    dirs = [DEFAULTS_DIR, home_workspace]
    parts = os.path.abspath(cwd).split(os.sep)
    for i in range(1, len(parts)):
        d = os.sep.join(parts[:i]) or os.sep
        dirs.append(os.path.join(d, ".ctx"))
    dirs.append(os.path.join(cwd, ".ctx"))
    if workspace:
        dirs.append(workspace)
    seen, out = set(), []
    for d in dirs:
        rd = os.path.realpath(d)
        if rd not in seen and os.path.isdir(d):
            seen.add(rd)
            out.append(d)
    return out


def condense(text: str, seen_lines: set) -> str:
    """Drop comments, markers, blank-line runs and lines already said by an earlier layer."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    out, blank = [], False
    for line in text.split("\n"):
        s = line.rstrip()
        key = re.sub(r"\W+", " ", s.lower()).strip()
        if not s.strip():
            if not blank and out:
                out.append("")
            blank = True
            continue
        if len(key) > 20 and key in seen_lines and not s.lstrip().startswith("#"):
            continue
        if len(key) > 20:
            seen_lines.add(key)
        out.append(s)
        blank = False
    return "\n".join(out).strip()


def cut_to(text: str, max_tokens: int, count) -> tuple[str, bool]:
    """The longest prefix of whole paragraphs/bullets within max_tokens."""
    if count(text) <= max_tokens:
        return text, False
    blocks = re.split(r"\n(?=\s*\n|[-*] |\d+\. |#)", text)
    kept = []
    for b in blocks:
        trial = "\n".join(kept + [b])
        if count(trial) > max_tokens:
            break
        kept.append(b)
    return "\n".join(kept).strip(), True


def build(*, home_workspace: str, workspace: str, cwd: str, budget: int, count, tool_names: list[str] | None,
          memory_hits: list[dict] | None, memory_budget: int, time_lines: list[str],
          git_lines: list[str] | None, age_out_hours: float = 24.0, context_view_tokens: int = 500,
          bound=None) -> Prompt:
    p = Prompt(budget=budget)
    seen: set = set()
    dirs = layer_dirs(home_workspace, workspace, cwd)
    for d in dirs:
        for fname in IDENTITY_FILES:
            path = os.path.join(d, fname)
            if not os.path.exists(path):
                continue
            with open(path, encoding="utf-8") as f:
                raw = f.read()
            text = condense(raw, seen)
            if not text:
                continue
            p.sources.append(path)
            p.sections.append(Section(f"{fname} ({path})", text, path, tier=0 if PINNED_MARK in raw else 1,
                                      pinned=PINNED_MARK in raw))
    if tool_names:
        p.sections.append(Section("Tools", "Available tools: " + ", ".join(tool_names) +
                                  "\n(Schemas on demand: `ctx tools show NAME`.)", "tools registry", tier=2))
    cpath = os.path.join(workspace, "CONTEXT.md")
    if os.path.exists(cpath):
        with open(cpath, encoding="utf-8") as f:
            raw = f.read()
        from ..core.context_md import aged_out
        from ..core.timeutil import now

        from ..core.context_view import condensed

        ctx = aged_out(parse(raw), now(), age_out_hours)
        # the file keeps everything; the view and the section's framing stay within the budget
        body = condensed(ctx, max(50, context_view_tokens - 40), count)
        p.sources.append(cpath)
        p.sections.append(Section(f"Context ({cpath})", clean(body), cpath, tier=0, static=False))
    if memory_hits:
        lines, used = [], 0
        for h in memory_hits:
            line = f"- {h['snippet']} ({h['source']})"
            n = count(line)
            if used + n > memory_budget:
                break
            lines.append(line)
            used += n
        if lines:
            p.sections.append(Section("Relevant Memory", "\n".join(lines), "memory search", tier=3, static=False))
    p.sections.append(Section("Time", "\n".join(f"- {x}" for x in time_lines), "clock", tier=0, static=False))
    if git_lines:
        p.sections.append(Section("External", "\n".join(f"- {x}" for x in git_lines), "git", tier=4, static=False))
    _fit(p, budget, count, bound)
    return p


def _fit(p: Prompt, budget: int, count, bound=None) -> None:
    """Fit the sections to the budget. With `bound` (a count never below the exact one, that
    needs no tokenizer), a prompt that fits by the bounds is left as it is without counting."""
    if bound is not None:
        heads = [f"# {s.name}\n{s.text}" for s in p.sections]
        if sum(bound(h) for h in heads) <= budget:
            for s, h in zip(p.sections, heads):
                s.tokens = bound(h)
            return
    for s in p.sections:
        s.tokens = count(f"# {s.name}\n{s.text}")
    total = lambda: sum(s.tokens for s in p.included())  # noqa: E731
    # 1. drop whole optional sections, least vital first (external, memory, tools)
    for tier in (4, 3, 2):
        for s in reversed([s for s in p.sections if s.tier == tier]):
            if total() <= budget:
                return
            s.status, s.note = "omitted", f"over budget ({total()} > {budget})"
    # 2. shorten identity sections at paragraph boundaries, the last layers' first
    for s in reversed([s for s in p.sections if s.tier == 1]):
        over = total() - budget
        if over <= 0:
            return
        room = max(0, s.tokens - over)
        text, cut = cut_to(s.text, room, count)
        if not text:
            s.status, s.note = "omitted", "no whole paragraph fits the budget"
        elif cut:
            s.text, s.status, s.note = text, "shortened", f"cut at a paragraph boundary to fit {budget}"
            s.tokens = count(f"# {s.name}\n{s.text}")
    if total() > budget:
        for s in p.sections:
            if s.tier == 0 and s.status != "omitted":
                s.note = "kept although over budget (hot context and pinned are never dropped)"
