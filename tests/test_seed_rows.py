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
