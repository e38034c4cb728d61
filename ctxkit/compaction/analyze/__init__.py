"""Events -> state, derived once by one set of rules (`analyze`), then checked against itself."""
from __future__ import annotations

from ..model import (Action, Change, CheckRun, Command, Commit, Delegate, Fetch, Read, Search, State, Submit, Transfer,
                     WebSearch)
from .changes import Changes
from .paths import Paths, is_generated, is_temp, work_root
from .checks import states as check_states_of
from .claims import tests_said
from .environment import environment
from .episodes import steps as steps_of
from .errors import states as error_states_of
from .focus import current as current_of, next_step, next_step_placeholder
from .items import approved_plan, plan as plan_of, states as item_states_of
from .related import related
from .requests import states as request_states_of, task_index, task_text
from .selfcheck import violations

__all__ = ["analyze", "violations"]


def _kind(evs: list) -> str:
    n_change = sum(1 for e in evs if isinstance(e, (Change, Commit)))
    n_action = sum(1 for e in evs if isinstance(e, (Action, Transfer)))
    n_read = sum(1 for e in evs if isinstance(e, (Read, Search, Delegate)))
    n_web = sum(1 for e in evs if isinstance(e, (Fetch, WebSearch)))
    n_check = sum(1 for e in evs if isinstance(e, CheckRun))
    if n_change or n_check:
        return "code"
    if n_action and n_action >= n_read:
        return "dialogue"
    if n_web and n_web >= n_read / 2:
        return "research"
    if n_read:
        return "explore"
    return "chat" if evs else "empty"


def analyze(evs: list) -> State:
    env0 = environment(evs, Changes([], Paths("")))
    changed = [e.path for e in evs if isinstance(e, Change) and e.ok]
    root = work_root(env0.cwd, changed, [e.cwd for e in evs if isinstance(e, Command) and e.cwd])
    chg = Changes(evs, Paths(root))
    env = environment(evs, chg)
    if root != env.cwd:
        env = type(env)(**{**env.__dict__, "cwd": root})
    check_states = check_states_of(evs, chg)
    errs = error_states_of(evs, chg)
    reqs = request_states_of(evs)
    its = item_states_of(evs, reqs[0].text if reqs else "")
    kind = _kind(evs)
    t = task_index(reqs, dialogue=kind == "dialogue")
    titles = {i.item: i.title for i in its}
    files = chg.files()
    stp = steps_of(evs, chg, errs, titles, tests_said(evs, files))
    unc = chg.uncommitted()
    cur = current_of(evs, stp, unc)
    if unc:
        cur = type(cur)(**{**cur.__dict__, "left_alike": tuple(chg.left_alike({f.path for f in unc}))})
    if chg.others() or chg.clean:
        cur = type(cur)(**{**cur.__dict__, "others": chg.others(), "tree_clean": bool(chg.clean)})
    decisions = tuple(d for s in stp for d in s.decisions)
    outcome, outcome_text = "", ""
    for e in evs:
        if isinstance(e, Submit):
            outcome, outcome_text = "submitted", e.text
        elif isinstance(e, Transfer):
            outcome, outcome_text = "transferred", e.reason
    plan_text, plan_at, plan_path = approved_plan(evs)
    st = State(kind=kind, task=task_text(reqs, t), task_at=reqs[t].at if t >= 0 else -1,
               requests=tuple(reqs), steps=tuple(stp), items=tuple(its), plan=plan_of(evs), files=tuple(files),
               reads=tuple(dict.fromkeys(chg.paths.rel(e.path) for e in evs if isinstance(e, Read) and e.path
                                         and not is_temp(e.path) and not is_generated(e.path))),
               checks=tuple(check_states), errors=tuple(errs),
               commits=tuple(e for e in evs if isinstance(e, Commit) and e.ok), decisions=decisions,
               constraints=(), env=env, current=cur, next=next_step_placeholder(),
               outcome=outcome, outcome_text=outcome_text, plan_text=plan_text, plan_at=plan_at,
               plan_path=plan_path,
               actions=tuple((e.name, e.args, e.ok, e.result) for e in evs if isinstance(e, Action)),
               sources=tuple((getattr(e, "url", "") or getattr(e, "query", ""), e.text[:2000]) for e in evs
                             if isinstance(e, (Fetch, WebSearch))))
    nxt = next_step(st)
    rel_names, rel_said, rel_notes, rel_calls = related(evs, nxt.target, chg.paths) if nxt.kind == "request" and nxt.title != "started" \
        else ((), (), (), ())
    return State(**{**st.__dict__, "next": nxt, "related": rel_names, "related_said": rel_said,
                    "related_notes": rel_notes, "related_calls": rel_calls})
