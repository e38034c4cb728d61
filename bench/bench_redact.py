"""Redaction on the real transcripts: every string of every corpus session through `Redactor.spans`,
this checkout beside main (../main, its redact.py loaded by path) in one run. Prints the strings and
characters read, the spans each finds, CPU seconds each (best of 3) and their ratio, and every value
only one of them finds (what a change to the rules starts or stops redacting: look at each). Asserts
nothing; tests/test_redaction_forms.py pins what may be found.

    PYTHONPATH=$PWD python bench/bench_redact.py
"""
from __future__ import annotations

import importlib.util
import json
import time

from _common import ROOT, corpus_files, pick
from ctxkit.core.redact import strings_of


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


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(mod, strings) -> tuple[set, float]:
    r = mod.Redactor()
    r.spans("AccountKey=x npm_ password=warm")  # detect-secrets imported before the clock starts
    best, hits = None, set()
    for _ in range(pick(3, 1)):
        t = time.process_time()
        hits = {(f, s[a:b], kind) for f, s in strings for a, b, kind in r.spans(s)}
        dt = time.process_time() - t
        best = dt if best is None else min(best, dt)
    return hits, best


def main() -> None:
    strings = _corpus()
    sides = {"this": _module(ROOT / "ctxkit" / "core" / "redact.py", "redact_this")}
    main_py = ROOT.parent / "main" / "ctxkit" / "core" / "redact.py"
    if main_py.is_file() and main_py.resolve() != (ROOT / "ctxkit" / "core" / "redact.py").resolve():
        sides["main"] = _module(main_py, "redact_main")
    row = {"bench": "redact-corpus", "strings": len(strings), "chars": sum(len(s) for _, s in strings)}
    found = {}
    for side, mod in sides.items():
        found[side], row[f"{side}_cpu_s"] = _run(mod, strings)
        row[f"{side}_spans"] = len(found[side])
    if "main" in found:
        row["this_vs_main_cpu"] = round(row["this_cpu_s"] / max(1e-6, row["main_cpu_s"]), 2)
        row["only_this"] = sorted(f"{f}: {v[:100]} ({k})" for f, v, k in found["this"] - found["main"])
        row["only_main"] = sorted(f"{f}: {v[:100]} ({k})" for f, v, k in found["main"] - found["this"])
    for k in list(row):
        if k.endswith("_cpu_s"):
            row[k] = round(row[k], 3)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
