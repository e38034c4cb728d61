"""One definition of "current work": the plan step in progress, the work item claimed and not
closed, the agent's last words and the open errors are what the compaction engine's state says
(`ctxkit.compaction.state_of`) and what relevance scoring scores against (core.working_set,
streaming, through the engine's reading of each call)."""
import json

import pytest

from conftest import CORPUS_FILES, corpus, run
from ctxkit.compaction import state_of
from ctxkit.core.working_set import ERROR_SPAN, focus_of
from ctxkit.io.adapters import open_records
from ctxkit.io.jsonl import Source


def scorer_item(w) -> list[str]:
    return [p.split()[1] for p in w.plan if p.startswith("issue ") and p.endswith("(in progress)")]


class For:
    """The engine's current work, as the old tests read it."""

    def __init__(self, recs):
        st = state_of(list(recs))
        self.last_words = st.current.intention
        claimed = [i for i in st.items if i.status == "in_progress" and i.claimed_at >= 0]
        self.item = claimed[-1].item if claimed else None
        self.plan_step = next((t for t, s in st.plan if s == "in_progress"), None)
        self.open_errors = [e for e in st.errors if e.fixed_at < 0]


def for_span(recs):
    return None, For(recs)


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_compaction_and_scoring_agree_on_the_current_work(name):
    recs = list(open_records(Source(corpus(name)), skip_invalid=True))
    for cut in (0.6, 1.0):
        span = recs[: int(len(recs) * cut)]
        f = For(span)
        w = focus_of(span)
        assert w.intention == f.last_words
        assert scorer_item(w) == ([f.item] if f.item else [])
        steps = [p for p in w.plan if not p.startswith("issue ")]
        assert steps == ([f.plan_step] if f.plan_step else [])
        tail = [r for r in span if r.get("kind") == "message"][-ERROR_SPAN:]
        assert w.errors == [e.text for e in For(tail).open_errors]


def test_an_open_error_is_in_play_until_its_check_passes():
    """The scorer's open errors are compaction's: a failed check not resolved since."""
    fail = "1) test retries twice (FetchTest)\n  ** (MatchError) no match of right hand side value: :timeout\n\n5 tests, 1 failure"
    recs = [
        msg("user", "make fetch_page retry", id="u1"),
        msg("assistant", "", id="a1", tool_calls=[call("t1", "Bash", command="mix test test/fetch_test.exs")]),
        msg("tool", fail, id="r1", tool_call_id="t1"),
    ]
    _, f = for_span(recs)
    w = focus_of(recs)
    assert f.open_errors and w.errors == [e.text for e in f.open_errors]
    assert "MatchError" in " ".join(w.errors) and "MatchError" in w.terms()
    fixed = recs + [
        msg("assistant", "", id="a2", tool_calls=[call("t2", "Edit", file_path="lib/fetch.ex", old_string="a", new_string="b")]),
        msg("tool", "ok", id="r2", tool_call_id="t2"),
        msg("assistant", "", id="a3", tool_calls=[call("t3", "Bash", command="mix test test/fetch_test.exs")]),
        msg("tool", "5 tests, 0 failures", id="r3", tool_call_id="t3"),
    ]
    assert focus_of(fixed).errors == [] == for_span(fixed)[1].open_errors


def msg(role, content="", **kw):
    return {"v": 1, "kind": "message", "session": "s", "role": role, "content": content, **kw}


def call(cid, name, **args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_a_closed_item_and_a_finished_step_are_no_longer_current_work():
    recs = [
        msg("user", "work through the open issues", id="u1"),
        msg("assistant", "", id="a1", tool_calls=[call("t1", "Bash", command="bd update app-7 --status in_progress")]),
        msg("tool", "ok", id="r1", tool_call_id="t1"),
        msg("assistant", "", id="a2", tool_calls=[call("t2", "TodoWrite", todos=[
            {"content": "Add the retry to fetch_page", "activeForm": "Adding the retry", "status": "in_progress"},
            {"content": "Test it", "activeForm": "Testing it", "status": "pending"}])]),
        msg("tool", "ok", id="r2", tool_call_id="t2"),
        msg("assistant", "I will now add the retry. ```py\nretry()\n``` Then fetch_page retries twice.", id="a3"),
    ]
    _, f = for_span(recs)
    w = focus_of(recs)
    assert f.item == "app-7" and scorer_item(w) == ["app-7"]
    assert f.plan_step == "Add the retry to fetch_page" and "Add the retry to fetch_page" in w.plan
    assert w.intention == f.last_words and "retry()" not in w.intention
    assert "fetch_page" in w.terms()
    done = recs + [
        msg("assistant", "", id="a4", tool_calls=[call("t4", "TodoWrite", todos=[
            {"content": "Add the retry to fetch_page", "status": "completed"},
            {"content": "Test it", "status": "completed"}])]),
        msg("tool", "ok", id="r4", tool_call_id="t4"),
        msg("assistant", "", id="a5", tool_calls=[call("t5", "Bash", command="bd close app-7")]),
        msg("tool", "closed", id="r5", tool_call_id="t5"),
    ]
    _, f = for_span(done)
    w = focus_of(done)
    assert f.item is None and f.plan_step is None and w.plan == []


def test_score_explains_the_current_work_it_scored_against(ctx_home, tmp_path):
    recs = [
        msg("user", "work through the open issues", id="u1", group="g1"),
        msg("assistant", "", id="a1", group="g2", tool_calls=[call("t1", "Bash", command="bd update app-7 --status in_progress")]),
        msg("tool", "ok", id="r1", tool_call_id="t1", group="g2"),
        msg("assistant", "Next I wire fetch_page into crawler.py.", id="a2", group="g3"),
        msg("user", "continue", id="u2", group="g4"),
    ]
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    res = run("score", "--embedder", "keyword", str(src))
    assert res.code == 0, res.stderr
    event = json.loads(res.stdout.splitlines()[0])
    focus = event["meta"]["focus"]
    assert focus["plan"] == ["issue app-7 (in progress)"]
    assert focus["intention"] == "Next I wire fetch_page into crawler.py."
    assert "fetch_page" in event["meta"]["query"] or "fetch_page" in event["meta"]["in_play"]
