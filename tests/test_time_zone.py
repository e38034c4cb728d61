"""The Time block in the user's time zone: local time as the seed shows it ("Current: Thursday,
Feb 12, 2026, 1:49 PM"), with the zone named, from $TZ; UTC when TZ is unset (a hook or cron job
runs without the user's shell, and the machine's zone is no one's in particular)."""
import json
import time

import pytest

from conftest import corpus, run


@pytest.fixture(autouse=True)
def _process_zone_back():
    yield
    time.tzset()  # a POSIX rule was read through the C library in this process: back to the real TZ


def _block(env, now="2026-02-12T12:49:00Z"):
    return run("time", "--json", "--now", now, env=env).json()["block"]


def test_the_time_block_honours_tz_and_names_the_zone(ctx_home):
    run("status", corpus("claude-code_spotter_491e126e_session.jsonl"), "--log")  # 21:54-22:03 UTC, 2026-02-10
    assert _block({"TZ": "Europe/Berlin"})[0] == "Current: Thursday, Feb 12, 2026, 13:49 CET (Europe/Berlin)"
    assert _block({"TZ": ":America/New_York"})[0] == "Current: Thursday, Feb 12, 2026, 07:49 EST (America/New_York)"
    assert _block({"TZ": "Europe/Berlin"}, "2026-07-12T12:49:00Z")[0].endswith("14:49 CEST (Europe/Berlin)")
    # a POSIX rule, read by the C library, summer time included
    rule = "CET-1CEST,M3.5.0,M10.5.0/3"
    assert _block({"TZ": rule}, "2026-07-12T12:49:00Z")[0].endswith(f"14:49 CEST ({rule})")
    during = run("time", "--json", "--now", "2026-02-10T22:10:00Z", env={"TZ": "Asia/Kolkata"}).json()
    assert "Session started: 2026-02-11 03:24 IST (Asia/Kolkata)" in during["block"]  # 21:54 UTC
    assert during["zone"] == "Asia/Kolkata" and during["now"] == "2026-02-10T22:10:00Z"  # JSON stays UTC


def test_the_time_block_stays_utc_when_tz_is_unset(ctx_home, monkeypatch):
    monkeypatch.delenv("TZ", raising=False)
    facts = run("time", "--json", "--now", "2026-02-12T12:49:00Z").json()
    assert facts["block"][0] == "Current: Thursday, Feb 12, 2026, 12:49 UTC" and facts["zone"] == "UTC"
    for empty in ("", "  "):
        assert _block({"TZ": empty})[0].endswith("12:49 UTC")
    assert _block({"TZ": "Nowhere/Foo"})[0].endswith("12:49 UTC")  # a zone no database knows: UTC, said as such


def test_session_start_shows_local_time(ctx_home, tmp_path):
    payload = {"hook_event_name": "SessionStart", "source": "startup", "session_id": "tz-1", "cwd": str(tmp_path)}
    out = run("hook", "claude-code", "SessionStart", input=json.dumps(payload), env={"TZ": "Asia/Tokyo"})
    assert out.code == 0, out.stderr
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "JST (Asia/Tokyo)" in text and "## Time" in text
