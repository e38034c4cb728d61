"""The design's partial rows made whole: each test reads as the design's own sentence."""
import json
import os

import pytest

from conftest import ROOT, corpus, run

MEMORY = """# Memory
- LoRA training needs rank 16 and alpha 32 on the 7B model.
- The user prefers tabs over spaces in Go code.
- Redis runs on port 6380 in staging.
- LoRA training diverged with learning rate 1e-3; use 2e-4.
"""


def test_prompt_build_injects_only_memory_that_matches_the_query_each_sentence_once(tmp_path):
    pytest.importorskip("onnxruntime")
    ws = tmp_path / "ws"
    (ws / "observations").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY)
    # reflect and observe may repeat a sentence in another memory file: it is said once
    (ws / "observations" / "2026-01-01.md").write_text("- LoRA training needs rank 16 and alpha 32 on the 7B model.\n")
    res = run("prompt", "build", "-q", "LoRA training", "--workspace", ws, "--embedder", "minilm", "--no-environment")
    assert res.code == 0, res.stderr
    section = res.stdout.split("Relevant Memory", 1)[1]
    assert "rank 16" in section and "2e-4" in section
    assert section.count("rank 16 and alpha 32") == 1
    assert "Redis" not in section and "tabs over spaces" not in section  # below memory_min_score
    assert run("config", "get", "memory_min_score").stdout.strip() == "0.25"


def test_time_says_session_just_started_and_the_last_sessions_length_and_topic(ctx_home):
    """Time: "Session: Just started"; "Last session: 2 hours ago (45 min, testing TUI)"."""
    run("status", corpus("claude-code_spotter_491e126e_session.jsonl"), "--log")  # 21:54-22:03 on 2026-02-10
    later = run("time", "--json", "--now", "2026-02-11T01:00:00Z").json()
    assert "Session: Just started" in later["block"]
    line = next(x for x in later["block"] if x.startswith("Last session:"))
    assert line.startswith("Last session: 2 hours ago (8 min, websearch to learn how to fastest setup credo")
    assert later["last_session"]["minutes"] == 8
    during = run("time", "--json", "--now", "2026-02-10T22:10:00Z").json()
    assert "Session: Just started" not in during["block"]
    assert "Session started: 2026-02-10 21:54 UTC" in during["block"]
