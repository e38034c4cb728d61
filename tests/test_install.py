"""A user outside the repository: the two wheels built from this checkout (packaging/build.py),
installed with `uv tool install` into a scratch HOME (the base install, then with `[ml]`), and
the README's tour run as printed, line by line, from a temporary directory against the
installed `ctx` (no checkout on the path). Neither install holds torch or a CUDA package
(nvidia-*, triton); the `[ml]` one stays under 400 MB and scores with MiniLM; the base one
scores by keywords with one notice, and the man pages go where `man` finds them.

Installing needs PyPI (onnxruntime, numpy, tokenizers and the base dependencies), as CI has;
uv's own cache is shared with the user's, so a second run downloads nothing."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

uv_mod = pytest.importorskip("uv", reason="uv (the test extra) installs the wheels as a user would")
pytestmark = [pytest.mark.embedded_only]  # nothing here touches the store: once per suite is enough

HEAVY = re.compile(r"^(torch|nvidia|triton|sentence_transformers|transformers)\b", re.I)
ML_LIMIT_MB = 400


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    if not shutil.which("bash"):
        pytest.skip("the tour runs under bash")
    out = tmp_path_factory.mktemp("dist")
    p = subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py"), "--out", str(out)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr
    ctx, minilm = p.stdout.split()
    assert Path(ctx).name.startswith("ctxkit_cli-") and Path(minilm).name.startswith("ctxkit_minilm-")
    return {"dir": out, "ctx": Path(ctx), "minilm": Path(minilm)}


def _user(root: Path) -> dict:
    """The environment of a user with a fresh HOME: uv's defaults put the tool under
    ~/.local/share/uv/tools and `ctx` in ~/.local/bin, which is on PATH (nothing of this checkout is)."""
    home = root / "home"
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CTX_", "UV_", "PYTHON", "VIRTUAL_ENV", "PIP_"))}
    cache = os.environ.get("UV_CACHE_DIR") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                           os.path.expanduser("~/.cache"), "uv")
    env.update(HOME=str(home), PATH=f"{home}/.local/bin:/usr/local/bin:/usr/bin:/bin", UV_CACHE_DIR=cache,
               UV_PYTHON_DOWNLOADS="never", NO_COLOR="1", TERM="dumb", XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_BIN_HOME=str(home / ".local" / "bin"))
    env.pop("XDG_CONFIG_HOME", None)
    return env


def uv_install(env, spec: str, *extra: str) -> Path:
    uv = uv_mod.find_uv_bin()
    p = subprocess.run([uv, "tool", "install", "--python", sys.executable, "-c", str(ROOT / "constraints.txt"),
                        *extra, spec], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    tool = Path(env["XDG_DATA_HOME"]) / "uv" / "tools" / "ctxkit-cli"
    assert (Path(env["HOME"]) / ".local" / "bin" / "ctx").exists(), p.stderr
    return tool


def site_packages(tool: Path) -> Path:
    return next(tool.glob("lib/python3*/site-packages"))


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def sh(line: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


def tour_lines() -> list[str]:
    """The README's tour, as printed: every line of its sh blocks."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    lines = [ln for body in re.findall(r"```sh\n(.*?)\n```", section, re.S) for ln in body.split("\n")]
    return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def run_tour(root: Path, env: dict) -> dict[str, subprocess.CompletedProcess]:
    work = root / "work"
    work.mkdir()
    done = {}
    for line in tour_lines():
        p = sh(line, work, env)
        assert p.returncode == 0, f"`{line}` exited {p.returncode}:\n{p.stderr[-2000:]}"
        assert "Traceback" not in p.stderr, line
        done[line] = p
    return done


def assert_no_gpu_stack(tool: Path):
    heavy = sorted(p.name for p in site_packages(tool).iterdir() if HEAVY.match(p.name))
    assert not heavy, heavy


def test_base_install_runs_the_tour_by_keywords_and_installs_man_pages(wheels, tmp_path):
    env = _user(tmp_path)
    tool = uv_install(env, f"ctxkit-cli @ {wheels['ctx'].as_uri()}")
    assert_no_gpu_stack(tool)
    assert not list(site_packages(tool).glob("onnxruntime*")) and not list(site_packages(tool).glob("ctxkit_minilm*"))
    done = run_tour(tmp_path, env)
    scored = [p for line, p in done.items() if line.startswith("ctx score")]
    assert scored and all(p.stderr.count("scoring by keywords (BM25): MiniLM is not installed") == 1 for p in scored)
    work = tmp_path / "work"
    asked = sh("ctx score s.jsonl --embedder minilm -q 'credo setup'", work, env)
    assert asked.returncode == 1 and "pip install 'ctxkit-cli[ml]'" in asked.stderr and not asked.stdout
    # the examples and the man pages came with the wheel
    settings = sh("ctx examples claude-code/settings.json", work, env).stdout.strip()
    assert settings.startswith(str(tool)) and os.path.isfile(settings)
    man = sh("ctx man --install", work, env)
    assert man.returncode == 0 and man.stdout.strip() == str(Path(env["HOME"]) / ".local/share/man/man1")
    assert (Path(man.stdout.strip()) / "ctx-drop.1").is_file() and "not on PATH" not in man.stderr
    if shutil.which("man"):
        found = sh("man -w ctx-drop", work, env)  # ~/.local/bin on PATH: man looks in ~/.local/share/man
        assert found.stdout.strip() == str(Path(man.stdout.strip()) / "ctx-drop.1"), found.stderr
    assert sh("ctx man --uninstall", work, env).returncode == 0
    assert not (Path(man.stdout.strip()) / "ctx-drop.1").exists()


def test_ml_install_is_small_has_no_gpu_stack_and_scores_with_minilm(wheels, tmp_path):
    env = _user(tmp_path)
    tool = uv_install(env, f"ctxkit-cli[ml] @ {wheels['ctx'].as_uri()}", "--find-links", str(wheels["dir"]))
    assert_no_gpu_stack(tool)
    assert list(site_packages(tool).glob("ctxkit_minilm/model/model.onnx"))
    mb = size_mb(tool)
    assert mb < ML_LIMIT_MB, f"the [ml] install takes {mb:.0f} MB"
    done = run_tour(tmp_path, env)
    assert not any("MiniLM is not installed" in p.stderr for p in done.values())
    work = tmp_path / "work"
    search = sh("ctx cold-storage search 'credo mix.exs setup' --embedder minilm -n 3 --json", work, env)
    assert search.returncode == 0 and search.stdout.strip(), search.stderr
    scored = sh("ctx score s.jsonl --embedder minilm -q 'how is credo set up' --explain --json", work, env)
    assert scored.returncode == 0 and "similarity" in scored.stdout, scored.stderr
