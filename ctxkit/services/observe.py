"""Where a session stands, in seed 000's words (Now, Recent, External of CONTEXT.md), from the compaction
engine's state; and writing it to the session's own state, never another session's.

    ## Now        Focus (what the work is on), Task (the work item or plan step in progress),
                  Blocked (a failing check, an error still open in the work in hand, a question
                  the user has not answered; "none"), Last edited, Current function
    ## Recent     the session's latest decisions and outcomes (commits, items closed, checks that
                  pass, errors fixed), newest last, five at most
    ## External   what the session did outside the working tree: a pushed branch

The state is read through the engine's public API (`ctxkit.compaction.state_of`), never by parsing
what it rendered.
"""
from __future__ import annotations

from ..core import context_md as C
from ..core.requests import brief, latest_request

NOW_LABELS = ("Focus:", "Task:", "Blocked:", "Last edited:", "Current function:")
RECENT_MAX = 5


def _first_line(text: str, cap: int = 140) -> str:
    return brief((text or "").strip().split("\n", 1)[0], cap)


def now_items(st, records: list[dict]) -> list[C.Item]:
    """Focus, Task, Blocked (and where the last edit was) from the state."""
    step = st.steps[st.current.step] if 0 <= st.current.step < len(st.steps) else None
    focus = ""
    if step is not None and step.source in ("item", "plan") and step.title and not step.done:
        focus = step.title
    focus = focus or latest_request(records) or st.task
    out = [C.Item(text=f"Focus: {_first_line(focus, 200)}")] if focus else []
    doing = [i for i in st.items if i.status == "in_progress"]
    if doing:
        i = doing[-1]
        out.append(C.Item(text=f"Task: {i.item}" + (f" {_first_line(i.title, 120)}" if i.title else "")))
    else:
        plan = [t for t, status in st.plan if status == "in_progress"]
        if plan:
            out.append(C.Item(text=f"Task: {_first_line(plan[-1], 160)}"))
    out.append(C.Item(text="Blocked: " + ("; ".join(blocked(st)) or "none")))
    last = max(st.files, key=lambda f: f.last_at, default=None)
    if last is not None:
        out.append(C.Item(text=f"Last edited: `{last.path}`"))
        func = next(iter(last.changed or last.added), None)
        if func:
            out.append(C.Item(text=f"Current function: `{func}`"))
    return out


def blocked(st) -> list[str]:
    """What the state says holds the work up: failing checks, errors still open since the work in hand
    began, a question to the user not answered. Two at most, the check first."""
    out = []
    for c in st.checks:
        if c.passed is False:
            what = ", ".join(c.failures[:2]) or (c.errors[0] if c.errors else "") or c.summary
            out.append(f"{c.runner or c.kind} failing" + (f": {_first_line(what, 120)}" if what else ""))
    start = st.steps[st.current.step].start if 0 <= st.current.step < len(st.steps) else 0
    kinds = {c.kind for c in st.checks if c.passed is False}
    for e in st.errors:
        if e.fixed_at < 0 and e.at >= start and not (e.kind and e.kind in kinds) and not e.silenced:
            out.append(f"open error: {_first_line(e.text, 120)}")
    if st.current.waiting:
        out.append(f"waiting for the user's answer: {_first_line(st.current.waiting, 120)}")
    return out[:2]


def recent_items(st) -> list[C.Item]:
    """The latest decisions and outcomes of the session, newest last."""
    dated: list[tuple[int, str]] = []
    for c in st.commits:
        if c.ok and c.message:
            dated.append((c.at, f"Committed {c.hash[:7]}: {_first_line(c.message)}" if c.hash else
                          f"Committed: {_first_line(c.message)}"))
    for i in st.items:
        if i.status == "closed" and i.closed_at >= 0:
            dated.append((i.closed_at, f"Closed {i.item}" + (f": {_first_line(i.title, 120)}" if i.title else "")))
    for c in st.checks:
        if c.passed and not c.edited_after:
            dated.append((c.at, f"{c.runner or c.kind} passed" + (f" ({_first_line(c.summary, 80)})" if c.summary
                                                                   and c.summary != "no output" else "")))
    for e in st.errors:
        if e.fixed_at >= 0:
            dated.append((e.fixed_at, f"Fixed: {_first_line(e.text, 120)}"))
    decisions = [d for s in st.steps for d in s.decisions] or list(st.decisions)
    for d in decisions:
        dated.append((d.at, f"Decided: {_first_line(d.text, 140)}" + (f" — {_first_line(d.why, 80)}" if d.why else "")))
    if not dated:   # an exploration's outcome is what it found
        found = [x for s in st.steps for x in s.findings] or [what for _, what in st.findings]
        dated += [(k, f"Found: {_first_line(str(x), 160)}") for k, x in enumerate(found[-3:])]
    dated.sort(key=lambda x: x[0])
    seen, out = set(), []
    for _, text in reversed(dated):
        if text not in seen:
            seen.add(text)
            out.append(C.Item(text=text))
        if len(out) == RECENT_MAX:
            break
    return list(reversed(out))


def external_items(st) -> list[C.Item]:
    """What left the machine, where the session shows it: a pushed branch."""
    if st.env.pushes:
        return [C.Item(text=f"Pushed branch `{st.env.branch}`" if st.env.branch else "Pushed to the remote")]
    return []


def situation(records: list[dict], st=None) -> C.Context:
    """Now, Recent and External of `records` (the engine's state `st` when the caller has it)."""
    if st is None:
        from ..compaction import state_of

        st = state_of(records)
    sections = {"Now": now_items(st, records)}
    recent = recent_items(st)
    if recent:
        sections["Recent"] = recent
    external = external_items(st)
    if external:
        sections["External"] = external
    return C.Context(sections=sections)


def apply_situation(ctx: C.Context, sit: C.Context) -> C.Context:
    """`ctx` with the derived Now lines in place of the ones they re-derive (other Now lines, such as a
    hand-written one, stay), and the session's Recent and External as derived."""
    out = C.Context(version=ctx.version, updated=ctx.updated, state=dict(ctx.state), task=ctx.task,
                    sections={k: list(v) for k, v in ctx.sections.items()}, latest=ctx.latest)
    derived = sit.sections.get("Now", [])
    out.sections["Now"] = derived + [i for i in ctx.sections.get("Now", []) if not i.text.startswith(NOW_LABELS)]
    for name in ("Recent", "External"):
        if sit.sections.get(name):
            out.sections[name] = list(sit.sections[name])
    return out


def write_session_state(home, workspace: str, session: str | None, change) -> tuple[C.Context, str]:
    """Apply `change(ctx) -> ctx` to the session's own state (the session store) and to the workspace's
    CONTEXT.md only when that is this session's or nobody's: one session never rewrites another's Now or
    Recent. Returns (the session's state, the file written that holds it)."""
    from ..sources.workspace import ContextFile
    from ..store.session_state import may_replace_workspace, state_file, with_workspace_sections

    wfile = ContextFile(workspace)
    if not session or home is None:
        return wfile.update(change), wfile.path

    def own(cur: C.Context) -> C.Context:
        new = change(cur)
        new.state["session"] = session
        return new

    sfile = state_file(home, session)
    if not sfile.exists() and wfile.exists() and wfile.read().state.get("session") == session:
        saved = sfile.update(lambda cur: own(wfile.read()))  # the workspace file is this session's so far
    else:
        saved = sfile.update(own)
    if may_replace_workspace(wfile.read(), session):
        def mirror(cur: C.Context) -> C.Context:
            out = with_workspace_sections(saved, cur)
            for k, v in cur.sections.items():  # sections only the workspace file has (written by hand) stay
                out.sections.setdefault(k, list(v))
            return out

        return wfile.update(mirror), wfile.path
    return saved, sfile.path
