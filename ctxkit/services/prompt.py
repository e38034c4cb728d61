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

from typing import Callable

from ..core.context_md import parse
from ..core.hygiene import clean
from ..core.shorten import condense_to, cut_to
from ..store.trust import untrusted
from ..errors import CtxError

IDENTITY_FILES = ("SOUL.md", "USER.md", "AGENTS.md", "NEXUS.md")  # NEXUS.md: the same role as AGENTS.md
CONDENSED = ("SOUL.md", "USER.md")  # seed 000: condensed identity and preferences, ~200 tokens each
# When over budget, identity goes last: AGENTS.md gives way first, SOUL.md last.
GIVE_WAY = {"AGENTS.md": 0, "USER.md": 1, "SOUL.md": 2}
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
    shrink: Callable[[int], str] | None = field(default=None, repr=False)  # a shorter body within N tokens
    floor: int = 0       # the fewest tokens a shrink may leave before the section is omitted instead

    def render(self) -> str:
        return f"# {self.name}\n{self.text}".rstrip()


@dataclass
class Prompt:
    sections: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    budget: int = 0

    def included(self) -> list[Section]:
        return [s for s in self.sections if s.status not in ("omitted", "refused")]

    def text(self) -> str:
        return "\n\n".join(s.render() for s in self.included()) + "\n"

    def static_prefix(self) -> str:
        return "\n\n".join(s.render() for s in self.included() if s.static)


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


def _identity(p: Prompt, d: str, fname: str, seen: set, count, identity_tokens: int) -> None:
    path = os.path.join(d, fname)
    if not os.path.lexists(path):
        return
    why = untrusted(os.path.abspath(path)) if os.path.abspath(d) != os.path.abspath(DEFAULTS_DIR) else None
    if why:
        p.sections.append(Section(f"{fname} ({path})", "", path, tier=9, status="refused",
                                  note=f"refused: {why}"))
        return
    from ..store.atomic import read_text

    raw = read_text(path)
    text = condense(raw, seen)
    if not text:
        return
    pinned = PINNED_MARK in raw
    sec = Section(f"{fname} ({path})", text, path, tier=0 if pinned else 1, pinned=pinned,
                  shrink=lambda n, t=text: condense_to(t, n, count)[0], floor=40)
    if fname in CONDENSED and not pinned and identity_tokens:
        short, cut = condense_to(text, identity_tokens, count)
        if cut and short:
            sec.text, sec.status = short, "condensed"
            sec.note = f"condensed to {identity_tokens} tokens (config: identity_tokens)"
    p.sources.append(path)
    p.sections.append(sec)


# Models whose tokens are dear: the prompt says to hand bulk work to cheaper helpers.
EXPENSIVE = ("opus", "gpt-4", "gpt-5", "o1", "o3", "sonnet", "gemini-2.5-pro", "gemini-3-pro")


def identity_lines(model: str | None, workspace: str) -> list[str]:
    """The agent's own identity, one line each: the model it runs as, its workspace, and for an
    expensive model a cost-delegation hint."""
    lines = []
    if model:
        lines.append(f"Model: you are running as {model}.")
    lines.append(f"Workspace: {os.path.abspath(workspace)}")
    if model and any(x in model.lower() for x in EXPENSIVE):
        lines.append("Cost: this model is expensive; delegate bulk reading, searching and routine edits to "
                     "cheaper subagents or tools.")
    return lines


def build(*, home_workspace: str, workspace: str, cwd: str, budget: int, count, tool_names: list[str] | None,
          memory_hits: list[dict] | None, memory_budget: int, time_lines: list[str],
          git_lines: list[str] | None, age_out_hours: float = 24.0, context_view_tokens: int = 500,
          bound=None, environment: list[str] | None = None, identity_tokens: int = 200,
          identity: list[str] | None = None, context_path: str | None = None) -> Prompt:
    """context_path: another CONTEXT.md than the workspace's (a session's own state)."""
    p = Prompt(budget=budget)
    seen: set = set()
    if identity:
        p.sections.append(Section("Identity", "\n".join(f"- {x}" for x in identity), "config and workspace",
                                  tier=2))  # leaves a tight budget with the environment, before identity files
    dirs = layer_dirs(home_workspace, workspace, cwd)
    for d in dirs:
        for fname in IDENTITY_FILES:
            # the personal layer is first match wins: the user's own file replaces the package default
            if d == DEFAULTS_DIR and os.path.exists(os.path.join(home_workspace, fname)):
                continue
            _identity(p, d, fname, seen, count, identity_tokens)
    # a project's NEXUS.md sits in the working directory itself
    if os.path.realpath(cwd) not in {os.path.realpath(d) for d in dirs}:
        _identity(p, cwd, "NEXUS.md", seen, count, identity_tokens)
    if tool_names:
        p.sections.append(Section("Tools", "Available tools: " + ", ".join(tool_names) +
                                  "\n(Schemas on demand: `ctx tools show NAME`.)", "tools registry", tier=2))
    if environment:
        p.sections.append(Section("Environment", "\n".join(environment), "this machine", tier=2))
    cpath = context_path or os.path.join(workspace, "CONTEXT.md")
    if os.path.lexists(cpath):
        from ..store.atomic import read_text

        raw = read_text(cpath)
        from ..core.context_md import aged_out
        from ..core.context_view import condensed
        from ..core.timeutil import now

        from ..core.context_md import ContextFormatError
        from ..errors import InputError

        try:
            parsed = parse(raw)
        except ContextFormatError as e:
            raise InputError(cpath, e.line, e.reason, hint="fix the line by hand; the file was left as it was") from None
        ctx = aged_out(parsed, now(), age_out_hours)

        def view(n: int, ctx=ctx) -> str:
            return clean(condensed(ctx, max(20, n), count))

        # the file keeps everything; the view and the section's framing stay within the budget
        p.sources.append(cpath)
        p.sections.append(Section(f"Context ({cpath})", view(context_view_tokens - 40), cpath, tier=0,
                                  static=False, shrink=view, floor=60))
    if memory_hits:
        from ..sources.memory import CITED

        lines, used = [], 0
        # a fact is said once: not again when the CONTEXT.md view says it, nor twice from two memory files
        said = {re.sub(r"\W+", " ", ln.lower()).strip() for s in p.sections if s.name.startswith("Context (")
                for ln in s.text.split("\n")}
        for h in memory_hits:
            text = CITED.sub("", h["snippet"])
            key = re.sub(r"\W+", " ", text.lower()).strip()
            if not key or key in said:
                continue
            said.add(key)
            line = f"- {text} ({h['source']})"
            n = count(line)
            if used + n > memory_budget:
                break
            lines.append(line)
            used += n
        if lines:
            p.sections.append(Section("Relevant Memory", "\n".join(lines), "memory search", tier=3, static=False))
    tl = [f"- {x}" for x in time_lines]
    p.sections.append(Section("Time", "\n".join(tl), "clock", tier=0, static=False,
                              shrink=lambda n: cut_to("\n".join(tl), n, count)[0] or tl[0], floor=5))
    if git_lines:
        p.sections.append(Section("External", "\n".join(f"- {x}" for x in git_lines), "git", tier=4, static=False))
    _fit(p, budget, count, bound)
    return p


def _fit(p: Prompt, budget: int, count, bound=None) -> None:
    """Fit the prompt to the budget; it is never over it.

    In order: omit External and Relevant Memory; shorten the largest of AGENTS.md, the CONTEXT.md
    view, USER.md and SOUL.md to a common cap (the biggest give way first, none below 80 tokens);
    omit Tools and Environment; lower the cap to each section's floor; shorten Time; omit
    AGENTS.md, then USER.md, then SOUL.md (identity goes last), then the CONTEXT.md view, then Time.
    Pinned files are never touched: when they alone exceed the budget, that is an error.
    With `bound` (a count never below the exact one, that needs no tokenizer), a prompt that
    fits by the bounds is left as it is without counting.
    """
    if bound is not None:
        heads = [s.render() for s in p.sections]
        if sum(bound(h) for h in heads) + 2 * len(heads) <= budget:
            for s, h in zip(p.sections, heads):
                s.tokens = bound(h)
            return
    total = lambda: count(p.text())  # noqa: E731 -- exact, separators included

    def done() -> bool:
        for s in p.sections:
            s.tokens = count(s.render()) if s.status != "omitted" else 0
        return total() <= budget

    def omit(secs, why) -> bool:
        for s in secs:
            if s.status != "omitted":
                s.status, s.note = "omitted", why
                if done():
                    return True
        return False

    def water_fill(least: int) -> bool:
        """Shorten the biggest shrinkable sections to one cap, never below `least` or their floor."""
        for _ in range(4):  # a shortened body lands near, not on, its target: a few rounds settle it
            secs = [s for s in p.sections if s.shrink and not s.pinned and s.status != "omitted" and s.name != "Time"]
            if not secs:
                return False
            fixed = total() - sum(s.tokens for s in secs)
            lo, hi = 0, max(s.tokens for s in secs)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if fixed + sum(min(s.tokens, mid) for s in secs) <= budget else (lo, mid - 1)
            changed = False
            for s in secs:
                cap = max(lo, least, s.floor)
                if s.tokens > cap:
                    text = s.shrink(max(1, cap - count(f"# {s.name}") - 1))
                    if text and text != s.text:
                        s.text, s.status, s.note = text, "shortened", f"shortened to fit the budget {budget}"
                        changed = True
            if done():
                return True
            if not changed:
                return False
        return False

    if done():
        return
    if omit([s for t in (4, 3) for s in reversed(p.sections) if s.tier == t], f"over budget {budget}"):
        return
    if water_fill(80):
        return
    if omit([s for s in reversed(p.sections) if s.tier == 2], f"over budget {budget}"):
        return
    if water_fill(0):
        return
    timesec = next((s for s in p.sections if s.name == "Time"), None)
    if timesec and timesec.shrink:
        timesec.text = timesec.shrink(max(1, timesec.tokens - (total() - budget)))
        timesec.status, timesec.note = "shortened", f"shortened to fit the budget {budget}"
        if done():
            return
    identity = sorted((s for s in p.sections if s.tier == 1), key=lambda s: GIVE_WAY.get(s.name.split(" (")[0], 0))
    if omit(identity, f"over budget {budget}; identity goes last, SOUL.md last of all"):
        return
    if omit([s for s in p.sections if s.name.startswith("Context (")], f"not even the Task fits the budget {budget}"):
        return
    if omit([timesec] if timesec else [], f"only pinned files fit the budget {budget}"):
        return
    pinned = sum(s.tokens for s in p.included() if s.pinned)
    raise CtxError(f"the prompt needs {total()} tokens but --budget is {budget}"
                   + (f" (pinned files alone need {pinned})" if pinned else ""),
                   hint="raise --budget (config: prompt_budget) or unpin a file")
