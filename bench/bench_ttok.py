"""Side by side with ttok on the same plain text: ctx must not be slower.

ttok is installed in the bench environment only (`make bench` does it).
"""
from __future__ import annotations

import json
import shutil
import subprocess

from _common import DATA, ENV, PY, build_session, timed


def main() -> dict:
    ttok = shutil.which("ttok") or str((DATA.parent.parent / ".venv" / "bin" / "ttok"))
    src = build_session(target_bytes=8 * 1024 * 1024, name="ttok-src")
    text = DATA / "ttok.txt"
    if not text.exists():
        with open(src) as f, open(text, "w") as out:
            for line in f:
                out.write((json.loads(line).get("content") or "") + "\n")
    # both on o200k_base (ttok's default model is gpt-4o), from the same seeded offline cache
    import os

    from ctxkit.backends.tokenizers import seed_tiktoken_cache

    cache = str(DATA / "home" / "cache" / "tiktoken")
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    seed_tiktoken_cache("o200k_base", cache)
    ENV["TIKTOKEN_CACHE_DIR"] = cache
    try:
        t_ttok = timed([ttok, "-i", str(text)], repeat=3)
    except (FileNotFoundError, subprocess.CalledProcessError):
        print(json.dumps({"bench": "ttok", "skipped": "ttok not installed (pip install ttok)"}))
        return {}
    t_ctx = timed([PY, "-m", "ctxkit", "count", str(text), "--model", "gpt-4o"], repeat=3)
    res = {"bench": "ttok", "text_mb": round(text.stat().st_size / 1024 / 1024, 1), "ttok_s": round(t_ttok, 2),
           "ctx_s": round(t_ctx, 2), "ctx_speedup": round(t_ttok / t_ctx, 2), "goal": ">= 1.0"}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
