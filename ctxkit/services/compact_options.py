"""The compaction Options a command or hook starts from: the configuration's knobs (summarizer,
its model or endpoint, trigger, what is kept raw, the summary's size) over a budget."""
from __future__ import annotations

import os

from .compaction import Options


def options_from_config(cfg, budget: int, trigger=None, summarizer=None, model_path=None, force=False,
                        dry_run=False) -> Options:
    name = cfg.get("summarizer", summarizer)
    # summary_model: a GGUF file (llama) or a model name (sent to the OpenAI-compatible endpoint)
    configured = cfg.get("summary_model") or ""
    is_file = configured.endswith(".gguf") or (configured and os.path.isfile(os.path.expanduser(configured)))
    gguf = os.path.expanduser(configured) if is_file else None
    model_name = configured if configured and not is_file else ""
    return Options(
        budget=budget, trigger_pct=cfg.get("compaction_trigger_pct", trigger),
        preserve_ratio=cfg.get("recent_preserve_ratio"), summarizer=name, force=force, dry_run=dry_run,
        target_tokens=cfg.get("summary_target_tokens"),
        model_path=model_path or gguf or None, timeout_s=cfg.get("summary_timeout_s"),
        openai={"base_url": cfg.get("openai_base_url"), "model": cfg.get("openai_model") or model_name,
                "api_key": os.environ.get(cfg.get("openai_api_key_env") or "") or None})
