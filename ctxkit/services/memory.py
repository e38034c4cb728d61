"""Observer and reflector (seed 000 §4, seed 001 layer 1).

observe: what happened in a session -> observations/{timestamp}_{session}.md + CONTEXT.md.
reflect: observations -> MEMORY.md flat fact bullets (no narrative, no session state, nothing
AGENTS/SOUL/USER already say, deduplicated, each traceable to its observation), and a stale
CONTEXT.md refreshed from the newest observation.
"""
from __future__ import annotations

import os
import re
from datetime import datetime

from ..core import context_md as C
from ..core.dedupe import jaccard, shingles
from ..core.hygiene import ends_mid_word, first_person, is_meta, is_narration, is_session_state, is_template_echo
from ..core.timeutil import iso, now
from ..sources.workspace import ContextFile
from ..store.cold import safe_component

OBS_SECTIONS = ("Requests", "Decisions", "Findings", "Outcomes", "Files", "Errors", "Pending")
# what MEMORY.md may learn from an observation: the choices made and what the agent found out about
# the project. Outcomes (commits, items closed, checks that passed), files and errors are the
# session's change log and git state: they stay in the observation, where `ctx memory search` finds them.
FACT_SECTIONS = ("Decisions", "Findings")
# narrative and session plans ("Let's use find_file ...") are not long-term facts
NARRATIVE = re.compile(r"^(then|next|after that|first|finally|we |i |the user |in this session|today|yesterday|"
                       r"let'?s |now )", re.I)


def observation(records: list[dict]) -> dict[str, list[str]]:
    """What happened in a session, from the compaction engine's state: the requests, the choices made (with
    their reasons), the outcomes (commits, items closed, checks that passed, what the agent found out), the
    files changed, the errors
    and how they ended, and what is still to do."""
    from ..compaction import state_of
    from ..core.requests import brief, requests as user_requests

    st = state_of(records)
    requests = []
    for _, _, text in user_requests(records):  # the one definition of the user's request
        first = brief(text, 200)
        if first not in requests:
            requests.append(first)
    decisions = [d.text + (f" — {d.why}" if d.why else "") for d in st.decisions]
    findings = list(dict.fromkeys(f for s in st.steps for f in s.findings))
    outcomes = [f"Committed {c.hash[:9]}: {c.message.splitlines()[0]}" if c.hash else f"Committed: {c.message.splitlines()[0]}"
                for c in st.commits if c.message]
    outcomes += [f"Closed {i.item}: {i.title}" if i.title else f"Closed {i.item}" for i in st.items if i.status == "closed"]
    outcomes += [f"{c.runner} passed" + (f" ({c.summary})" if c.summary and c.summary != "no output" else "")
                 for c in st.checks if c.passed and not c.edited_after]
    found = list(st.current.words) if st.kind in ("explore", "research") else []   # what a look found out
    found += [x for s in st.steps for x in s.findings]
    outcomes += list(dict.fromkeys(found))
    files = [f"`{f.path}` — {f.action}" for f in st.files]
    errors = [e.text + (" (fixed)" if e.fixed_at >= 0 else " (still open)") for e in st.errors]
    pending = [i.title or i.item for i in st.items if i.status != "closed" and i.item not in {x.parent for x in st.items}]
    pending += [t for t, status in st.plan if status != "completed"]
    return {"Requests": requests[-10:], "Decisions": decisions[:10], "Findings": findings[:10],
            "Outcomes": outcomes[:12], "Files": files[:40],
            "Errors": errors[:10], "Pending": pending[:10]}


def _mem(workspace: str, memory):
    if memory is not None:
        return memory
    from ..store.memory import FileMemory

    return FileMemory(workspace)


def observe(records: list[dict], workspace: str, when: datetime | None = None,
            memory=None, home=None) -> tuple[str, C.Context]:
    """Write the observation into the memory store (the workspace's observations/ by default,
    `memory`: a MemoryStore) and fold the session into its own CONTEXT.md (the session store, and the
    workspace's when that is this session's or nobody's: `home` names the session store): the
    engine's state, and Now, Recent and External as seed 000 has them (services/observe)."""
    when = when or now()
    sessions = [r.get("session") for r in records if r.get("session")]
    session = sessions[0] if sessions else None
    obs = observation(records)
    label = session or "session"
    lines = [f"# Observation: {label}", f"<!-- ctx:observation session={label} at={iso(when)} -->", ""]
    for name in OBS_SECTIONS:
        lines.append(f"## {name}")
        lines += [f"- {x}" for x in obs[name]]
        lines.append("")
    name = f"{when.strftime('%Y%m%dT%H%M%SZ')}_{safe_component(label)}.md"
    path = _mem(workspace, memory).write_observation(name, "\n".join(lines), session)  # redacted there

    from .compaction import FULL_BUDGET, engine, to_context
    from .observe import apply_situation, situation, write_session_state
    from ..backends.tokenizers import get_tokenizer

    summary = engine(records, FULL_BUDGET, get_tokenizer("approx"))
    new = to_context(summary.rendered)
    sit = situation(records, summary.state)

    def change(ctx: C.Context) -> C.Context:
        return apply_situation(C.merge(ctx, new), sit)

    ctx, _ = write_session_state(home, workspace, session, change)
    return path, ctx


def _bullets(text: str) -> list[tuple[str, int, str]]:
    out, section = [], None
    if True:
        for n, line in enumerate(text.splitlines(True), 1):
            h = re.match(r"^##\s+(.+?)\s*$", line)
            if h:
                section = h.group(1)
                continue
            m = re.match(r"^-\s+(.*\S)\s*$", line)
            if m and section:
                out.append((section, n, m.group(1)))
    return out


def _said(text: str, others: list[set]) -> bool:
    sh = shingles(text)
    return any(jaccard(sh, o) >= 0.6 for o in others)


def archive_fragment(workspace: str, ctx: C.Context, title: str, when: datetime | None = None, memory=None) -> str:
    """A CONTEXT.md kept as a long-term memory entry: observations/<stamp>_archive_<title>.md with
    the title, task, decisions, facts and outcomes, found again by `ctx memory search` (and
    folded into MEMORY.md by `ctx reflect`). Returns its path."""
    import re as _re

    when = when or now()
    sess = ctx.state.get("session") or "workspace"
    lines = [f"# {C.one_line(title)}", f"<!-- ctx:archive session={sess} at={iso(when)} -->", ""]
    if ctx.task:
        lines += ["## Task", f"- {C.one_line(ctx.task)}", ""]
    out: dict[str, list[str]] = {}
    for name, out_name in (("Decisions", "Decisions"), ("Facts", "Outcomes"), ("Progress", "Outcomes"),
                           ("Recent", "Outcomes"), ("Constraints", "Constraints"), ("Files", "Files")):
        out.setdefault(out_name, []).extend(i.render() for i in ctx.sections.get(name, []))
    for name, items in out.items():
        if items:
            lines += [f"## {name}", *items, ""]
    slug = _re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:60] or "archive"
    name = f"{when.strftime('%Y%m%dT%H%M%SZ')}_archive_{slug}.md"
    return _mem(workspace, memory).write_observation(name, "\n".join(lines).rstrip("\n") + "\n", sess)


def reflect(workspace: str, embedder=None, max_age_hours: float = 24.0, memory=None) -> dict:
    """Fold the observations' facts into MEMORY.md (in the memory store: the workspace's by
    default), under its lock; the identity files are read from the workspace."""
    from ..store.atomic import read_text

    mem = _mem(workspace, memory)
    identity = []
    for name in ("AGENTS.md", "SOUL.md", "USER.md"):
        p = os.path.join(workspace, name)
        if os.path.exists(p):
            identity += [shingles(x) for x in read_text(p).split("\n") if len(x.split()) >= 4]
    added: list[str] = []
    skipped: dict[str, int] = {}

    def change(existing: str) -> str | None:
        # called again from the start when a shared store's connection drops mid-write
        added.clear()
        skipped.clear()
        skipped.update({"narrative": 0, "duplicate": 0, "in_identity_files": 0, "meta": 0, "session_state": 0})
        have = [re.sub(r"\s+\(from [^)]*\)$", "", m.group(1)) for m in re.finditer(r"^-\s+(.*)$", existing, re.M)]
        have_sh = [shingles(h) for h in have]
        cands = []
        for rel, body in mem.observations():
            for section, line, text in _bullets(body):
                if section in FACT_SECTIONS:
                    cands.append((text, f"{rel}:{line}"))

        for text, src in cands:
            if is_meta(text) or is_template_echo(text) or ends_mid_word(text):
                skipped["meta"] += 1
                continue
            if NARRATIVE.match(text) or is_narration(text) or first_person(text):
                skipped["narrative"] += 1
                continue
            if is_session_state(text):
                skipped["session_state"] += 1
                continue
            if _said(text, identity):
                skipped["in_identity_files"] += 1
                continue
            norm = " ".join(text.lower().split())
            if any(norm == " ".join(h.lower().split()) for h in have) or _said(text, have_sh):
                skipped["duplicate"] += 1
                continue
            if embedder is not None and have:
                sims = embedder.similarities(text, have)
                if sims and max(sims) >= 0.9:
                    skipped["duplicate"] += 1
                    continue
            have.append(text)
            have_sh.append(shingles(text))
            added.append(f"- {text} (from {src})")
        if not added:
            return None
        return existing.rstrip("\n") + ("\n" if existing.strip() else "") + "\n".join(added) + "\n"

    memory_path = mem.update_memory(change)
    refreshed = refresh_context(workspace, max_age_hours, mem)
    return {"added": len(added), "skipped": skipped, "memory": memory_path, "context_refreshed": refreshed,
            "bullets": added}


def refresh_context(workspace: str, max_age_hours: float, memory=None) -> bool:
    """CONTEXT.md older than max_age_hours -> refreshed from the newest observation."""
    from ..store.session_state import may_replace_workspace

    cf = ContextFile(workspace)
    obs = _mem(workspace, memory).observations()
    if not obs:
        return False
    if cf.exists() and (now().timestamp() - os.path.getmtime(cf.path)) < max_age_hours * 3600:
        return False
    m = re.search(r"<!-- ctx:observation session=(\S+)", obs[-1][1])
    if cf.exists() and not may_replace_workspace(cf.read(), m.group(1) if m else None):
        return False  # the file is another session's working state: never rewritten from this one's
    latest = _bullets(obs[-1][1])
    new = C.Context()
    mapping = {"Decisions": "Decisions", "Outcomes": "Facts", "Errors": "Errors", "Pending": "Pending"}
    for section, _, text in latest:
        if section in mapping:
            new.items(mapping[section]).append(C.Item(text=text, done=False if section == "Pending" else None))
    req = [t for s, _, t in latest if s == "Requests"]
    if req:
        new.task = req[-1]
    cf.update(lambda ctx: C.merge(ctx, new))
    return True
