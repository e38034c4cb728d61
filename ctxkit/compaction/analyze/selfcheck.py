"""The state checked against itself before anything is written. A violation is a contradiction the
renderer would turn into a false sentence: a step in progress whose item is closed, a file called
uncommitted that a commit holds, a check called stale although a later run of its kind came after
every edit, an error both fixed and open, a run called passed whose own result lines failed."""
from __future__ import annotations

from ..model import State


def violations(st: State) -> list[str]:
    out: list[str] = []
    closed = {i.item for i in st.items if i.status == "closed"}
    for s in st.steps:
        if s.item and s.item in closed and not s.done:
            out.append(f"step {s.title!r} is in progress but its item {s.item} is closed")
    committed = {f.path for f in st.files if f.commit}
    for f in st.current.uncommitted:
        if f.commit or f.path in committed and not any(g.path == f.path and not g.commit for g in st.files):
            out.append(f"{f.path} is called uncommitted but a commit holds it")
    for c in st.checks:
        if c.edited_after:
            later = [d for d in st.checks if d.kind == c.kind and d.at > c.at and not d.edited_after]
            if later:
                out.append(f"{c.command!r} is called not run since the last edit, but {later[0].command!r} ran after it")
    fixed = {e.text for e in st.errors if e.fixed_at >= 0}
    for e in st.errors:
        if e.fixed_at < 0 and e.text in fixed:
            out.append(f"error {e.text[:80]!r} is both fixed and open")
    for c in st.checks:
        if c.passed and c.failures:
            out.append(f"{c.command!r} is called passed but names failing tests")
    if st.next.kind == "fix" and not any(c.passed is False for c in st.checks):
        out.append("the next step fixes a failing check but no check failed")
    return out
