"""ctx truncate: seed 002 semantics over atomic groups; never an orphaned call or result."""

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import corpus, run
from ctxkit.core.groups import assign_groups, iter_groups
from ctxkit.core.truncate import truncate_groups


def msg(i, role, tokens, **kw):
    return {"v": 1, "kind": "message", "id": f"m{i}", "role": role, "content": f"m{i}", "tokens": tokens, **kw}


@st.composite
def sessions(draw):
    recs, i = [], 0
    if draw(st.booleans()):
        recs.append(msg(i, "system", draw(st.integers(1, 50))))
        i += 1
    for _ in range(draw(st.integers(0, 25))):
        shape = draw(st.sampled_from(["user", "assistant", "tools", "pinned"]))
        if shape == "tools":
            n = draw(st.integers(1, 3))
            calls = [{"id": f"call{i}-{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                     for k in range(n)]
            recs.append(msg(i, "assistant", draw(st.integers(1, 80)), tool_calls=calls))
            for c in calls:
                i += 1
                recs.append(msg(i, "tool", draw(st.integers(1, 200)), tool_call_id=c["id"]))
        elif shape == "pinned":
            recs.append(msg(i, "user", draw(st.integers(1, 30)), flags=["pinned"]))
        else:
            recs.append(msg(i, shape, draw(st.integers(1, 100))))
        i += 1
    return recs


@settings(max_examples=300, deadline=None)
@given(sessions(), st.integers(0, 1500), st.sampled_from(["oldest_first", "middle_out"]))
def test_truncate_never_orphans_and_keeps_protected(recs, budget, strategy):
    groups = list(iter_groups(assign_groups([dict(r) for r in recs])))
    keep = truncate_groups(groups, budget, strategy)
    out = [r for i in keep for r in groups[i]]
    calls = {c["id"] for r in out for c in r.get("tool_calls") or ()}
    results = {r["tool_call_id"] for r in out if r["role"] == "tool"}
    assert calls == results  # no orphaned call, no orphaned result
    ids = [r["id"] for r in out]
    assert ids == sorted(ids, key=lambda x: int(x[1:]))  # order preserved
    for r in recs:
        if r["role"] == "system" or "pinned" in r.get("flags", []):
            assert r["id"] in ids
    free = [i for i, g in enumerate(groups) if not any(r["role"] == "system" or r.get("flags") for r in g)]
    if free:
        assert free[-1] in keep  # the most recent group always stays
        protected = sum(r["tokens"] for i, g in enumerate(groups) if i not in free for r in g)
        optional = [i for i in keep if i in free and i != free[-1]]
        if optional:
            assert sum(r["tokens"] for r in out) <= max(budget, protected + sum(r["tokens"] for r in groups[free[-1]]))


def test_oldest_first_keeps_a_recent_suffix():
    groups = [[msg(i, "user", 10)] for i in range(10)]
    assert truncate_groups(groups, 35, "oldest_first") == [7, 8, 9]


def test_middle_out_keeps_first_and_last():
    groups = [[msg(i, "user", 10)] for i in range(10)]
    assert truncate_groups(groups, 35, "middle_out") == [0, 8, 9]
    assert truncate_groups(groups, 45, "middle_out") == [0, 7, 8, 9]


def test_cli_truncates_corpus_to_budget():
    path = corpus("claude-code_spotter_6c2214d7_subagents_agent-afc096d.jsonl")
    for strategy in ("oldest_first", "middle_out"):
        res = run("truncate", path, "--budget", "8000", "--strategy", strategy)
        assert res.code == 0, res.stderr
        recs = res.records()
        total = int(run("count", input=res.stdout).stdout)
        assert total <= 8000 or len({r["group"] for r in recs}) == 1
        calls = {c["id"] for r in recs for c in r.get("tool_calls") or ()}
        assert calls == {r["tool_call_id"] for r in recs if r["role"] == "tool"}
        assert "kept" in res.stderr
    first = run("import", path).records()[0]
    mo = run("truncate", path, "--budget", "8000", "--strategy", "middle_out").records()
    assert mo[0]["id"] == first["id"]
