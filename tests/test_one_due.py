"""One "due" for hooks, `status` and `compact`: what the model sees (the provider's usage after the
last compact boundary) over the model's window, unless the user names a budget."""
import json

from conftest import corpus, run


def test_compact_is_due_by_the_same_measure_as_status():
    t = corpus("claude-code_spotter_fa812bfe_session.jsonl")
    st = run("status", t, "--json")
    assert st.code == 0, st.stderr
    pct = json.loads(st.stdout)["window_pct"]  # the measure status decides "due" by without --budget
    dry = run("compact", t, "--dry-run")
    assert dry.code == 0, dry.stderr
    d = json.loads(dry.stdout)
    # the provider said 38 % of a 200k window: not due at the 50 % trigger, whatever the local count
    assert not d["would_compact"] and "provider-reported" in d["reason"] and f"{pct:.1%}" in d["reason"]
    # a budget the user names is counted against, as before
    counted = json.loads(run("compact", t, "--dry-run", "--budget", "120000").stdout)
    assert counted["would_compact"] and counted["reason"] == "token_threshold"
