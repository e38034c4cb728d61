"""Every benchmark runs to its end, once, on tiny inputs (CTX_BENCH_SMOKE=1): a benchmark can never
rot unnoticed. The numbers of a smoke run mean nothing and are not checked; that each script runs
and prints its rows is."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

# each script and a bench name it prints
EXPECT = {"startup": "startup", "memory": "memory", "count": "count", "ttok": "ttok", "prompt": "prompt-startup",
          "semantic": "semantic-lookup", "compact": "compact-extractive", "relevance": "drop-quality",
          "streaming": "streaming", "defaults": "defaults", "crash": "crash",
          "hooks": "hooks-stop", "drop_sets": "drop-sets", "redact": "redact-corpus",
          "install": "first-search", "hooks_huge": "hooks-huge"}


@pytest.mark.embedded_only  # the benchmarks measure the embedded store (bench_pg.py the other one)
def test_every_benchmark_runs_to_its_end_in_smoke_mode(tmp_path):
    if not (ROOT.parent / "shared" / "corpus").is_dir():
        pytest.skip("the benchmarks read the shared corpus (../shared/corpus), which is not beside this checkout")
    env = dict(os.environ, CTX_BENCH_SMOKE="1", CTX_BENCH_DATA=str(tmp_path / "bench-data"),
               PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("CTX_HOME", None)
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "run_all.py")], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    names = [r["bench"] for r in rows]
    for script, name in EXPECT.items():
        assert any(n.startswith(name) for n in names), (script, sorted(set(names)))
    assert not (ROOT / "bench" / "data" / "smoke").exists()  # a smoke run writes only where it is told
