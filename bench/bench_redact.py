"""Redaction on the real transcripts: every string of every corpus session (the keys of its objects
included) through `Redactor.spans`, this checkout beside another (`--base DIR`, default ../main), each
in its own Python process with its own checkout first on the path, on the same strings. Prints the
strings and characters read, the spans each finds, CPU seconds each (best of 3; the rule set's load
and first compiles counted apart, as `*_load_s`) and their ratio, and every value only one of them
finds (what a change to the rules starts or stops redacting: look at each); then, on a second line,
the CPU each takes on texts made to be a backtracking regex's worst case. Asserts nothing;
tests/test_redaction_forms.py pins what may be found.

    PYTHONPATH=$PWD python bench/bench_redact.py [--base /work/base-d05d119]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from _common import ROOT, corpus_files, pick
from ctxkit.core.redact import strings_of

WORKER = r"""
import json, sys, time
from ctxkit.core.redact import Redactor
data = json.load(open(sys.argv[1]))
strings, ADVERSARIAL = [tuple(x) for x in data["strings"]], data["adversarial"]
t = time.process_time()
r = Redactor()
r.spans("AccountKey=x npm_ password=warm")  # detect-secrets and the rule set loaded before the clock starts
load = time.process_time() - t
best, hits = None, set()
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    hits = {(f, s[a:b], kind) for f, s in strings for a, b, kind in r.spans(s)}
    dt = time.process_time() - t
    best = dt if best is None else min(best, dt)
worst = {}
for name, text in ADVERSARIAL.items():  # texts made to make a backtracking regex reread what it read
    t = time.process_time()
    r.spans(text)
    worst[name] = time.process_time() - t
print(json.dumps({"cpu_s": best, "load_s": load, "hits": sorted(hits), "adversarial": worst}))
"""
def adversarial(scale: float) -> dict[str, str]:
    """A rule's worst inputs: its keyword everywhere, a value that never ends, a block that never
    closes (`scale`: 1 in a run, less in a smoke run)."""
    def n(k: int) -> int:
        return max(1, int(k * scale))

    return {
        "curl, 3000 continued lines": "curl https://x \\\n" + " -H 'X: y' \\\n" * n(3000) + "-u",
        "curl, 5000 commands": "curl -s http://h/ -o x\n" * n(5000),
        "a keyword every 55 characters, no blank": ("x" * 50 + "token") * n(4000),
        "key= 50000 times": "key=" * n(50000),
        "s. 100000 times": "s." * n(100000),
        "a key block without its end": "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * n(300000),
        "identifiers and api_key": ("abc_def-ghi.jkl" * 10 + " api_key ") * n(2000),
        "password: and no value": ("password: " + " " * 3) * n(30000),
        "a value that runs on over the next keyword": ("secret=" + "a/" * 100) * n(500),
    }


def _corpus() -> list[tuple[str, str]]:
    out = []
    for p in corpus_files(smoke_n=2):
        for line in p.read_text(encoding="utf-8", errors="replace").split("\n"):
            try:
                strings = list(strings_of(json.loads(line)))
            except ValueError:
                strings = [line]
            out += [(p.name, s) for s in strings]
    return out


def _side(checkout, data: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    # run in the checkout: `python -c` puts the current folder first on the path
    res = subprocess.run([sys.executable, "-c", WORKER, data, str(pick(3, 1))], env=env, cwd=str(checkout),
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=str(ROOT.parent / "main"), help="the checkout to compare with")
    args = ap.parse_args()
    strings = _corpus()
    row = {"bench": "redact-corpus", "strings": len(strings), "chars": sum(len(s) for _, s in strings)}
    sides = {"this": ROOT}
    base = os.path.realpath(args.base)
    if os.path.isfile(os.path.join(base, "ctxkit", "core", "redact.py")) and base != os.path.realpath(ROOT):
        sides["main"] = base
        row["base"] = base
    found, worst = {}, {}
    hard = adversarial(pick(1.0, 0.02))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"strings": strings, "adversarial": hard}, f)
    try:
        for side, checkout in sides.items():
            got = _side(checkout, f.name)
            found[side] = {tuple(h) for h in got["hits"]}
            row[f"{side}_cpu_s"], row[f"{side}_load_s"] = round(got["cpu_s"], 3), round(got["load_s"], 3)
            row[f"{side}_spans"] = len(found[side])
            worst[side] = got["adversarial"]
    finally:
        os.unlink(f.name)
    if "main" in found:
        row["this_vs_main_cpu"] = round(row["this_cpu_s"] / max(1e-6, row["main_cpu_s"]), 2)
        row["only_this"] = sorted(f"{f}: {v[:100]} ({k})" for f, v, k in found["this"] - found["main"])
        row["only_main"] = sorted(f"{f}: {v[:100]} ({k})" for f, v, k in found["main"] - found["this"])
    print(json.dumps(row))
    print(json.dumps({"bench": "redact-adversarial", "unit": "CPU ms per text",
                      **{name: {side: round(w[name] * 1000, 1) for side, w in worst.items()} for name in hard}}))


if __name__ == "__main__":
    main()
