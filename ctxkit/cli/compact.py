"""ctx compact: structured, verified, incremental compaction into CONTEXT.md."""
from __future__ import annotations

import json
import os
import sys

import click

from ..core.context_md import render
from ..errors import UsageProblem
from ..io.jsonl import Writer
from ..services.compact_options import options_from_config
from ..services.compaction import compact_stream
from ..services.spool import OutputSpool
from .common import Share, note, InputRecords, use_session_cwd, emit_object, get_home, get_workspace, home_option, input_options, report_options, workspace_option
from .count import resolve_tokenizer
from .status import budget_options, resolve_budget


@click.command("compact")
@input_options
@click.option("--tokenizer", metavar="NAME", help="cl100k_base, o200k_base, approx, gguf[:PATH] (config: tokenizer).")
@budget_options
@click.option("--trigger", type=Share(), metavar="P",
              help="Act only at P of the budget or more: 0.5, 50 or 50% (config: compaction_trigger_pct).")
@click.option("--force", "--now", "force", is_flag=True, help="Compact now, whatever the usage.")
@click.option("--summarizer", type=click.Choice(["extractive", "llama", "openai"]),
              help="extractive (no model; the default), llama (a GGUF), openai (an endpoint).")
@click.option("--gguf", "--model", "model_path", metavar="PATH.gguf",
              type=click.Path(exists=True, dir_okay=False),
              help="With --summarizer llama: the GGUF file (default: SmolLM2-135M; --model is the old name).")
@click.option("--summary-tokens", type=click.IntRange(min=50), metavar="N",
              help="The most the summary may use (config: summary_target_tokens; it may always use 30% "
                   "of the budget).")
@click.option("--dry-run", is_flag=True, help="Show what would be summarized and kept; write nothing.")
@report_options  # the --dry-run report: -t/--fmt, --json, --jq EXPR [-r]
@workspace_option
@home_option
def compact(file, from_, skip_invalid, tokenizer, budget, max_tokens, reserve_tokens, trigger, force,
            summarizer, model_path, summary_tokens, dry_run, jq_expr, table, as_json, table_fmt):
    """Summarize the older span into a summary record and CONTEXT.md; keep the recent part raw.

    Keeps recent_preserve_ratio (0.2) of the budget raw and summarizes the rest from the
    records alone, no model: where the work stands and the next step, then each step's
    changes, checks, commits and errors. Incremental: only the span evicted since the last
    run is read again. With --summarizer llama or openai a model may rewrite sections as
    prose, kept only when it names nothing the bullets lack. Below the trigger the records
    pass through unchanged. What the summary holds, case by case: docs/compaction.md.

    \b
    Examples:
      ctx compact s.jsonl --budget 8000 > compacted.jsonl
      ctx compact s.jsonl --trigger 0.5 --budget 100000
      ctx compact s.jsonl --summarizer llama --gguf ~/models/Qwen3-1.7B-Q4_K_M.gguf
      ctx compact s.jsonl --dry-run
    """
    if (jq_expr or table or as_json) and not dry_run:
        raise UsageProblem("-t, --json and --jq go with --dry-run (compact itself prints records)")
    if model_path and summarizer not in (None, "llama"):
        raise UsageProblem("--gguf is for --summarizer llama")
    if model_path:
        summarizer = "llama"
        if not os.path.exists(os.path.expanduser(model_path)):
            raise UsageProblem(f"--model: no such file: {model_path}")
        model_path = os.path.expanduser(model_path)
    home = get_home()
    tok = resolve_tokenizer(tokenizer, None)
    opts = options_from_config(home.config, resolve_budget(budget, max_tokens, reserve_tokens), trigger,
                               summarizer, model_path, force, dry_run)
    if summary_tokens:
        opts.target_tokens = summary_tokens
    # as in `ctx status`: without --budget/--max-tokens, provider usage over the model's window decides
    opts.window_due, opts.context_window = not (budget or max_tokens), home.config.get("context_window") or 0
    if opts.summarizer == "llama" and sys.stderr.isatty():
        def progress(tokens, seconds):
            click.echo(f"\rctx: {opts.summarizer}: {tokens} tokens in {seconds:.0f}s", err=True, nl=False)

        opts.progress = progress
    from ..store import sessions

    sessions.check(home)  # a damaged index fails the compaction before CONTEXT.md is written
    window = int(home.config.get("compact_window_mb") * (1 << 20))
    records = InputRecords(file, from_, skip_invalid)   # first: with no FILE, it finds this project's session
    use_session_cwd(records.source.path)                 # the workspace: the session's project
    rep, tally = compact_stream(records, tok, opts, home, get_workspace(), window)
    if dry_run:
        _dry_run_report(rep, as_json, table, jq_expr, table_fmt)
        return
    with OutputSpool() as out:  # held back until the state is written: a failure prints nothing
        Writer(out).write_all(rep.records)
        rep.commit()
        sessions.commit(home, tally, file)
    if rep.acted:
        extra = f"; degraded: {rep.degraded}" if rep.degraded else ""
        model_note = (f"; model bullets kept {rep.kept_bullets}, discarded {rep.discarded_bullets}"
                      if rep.kept_bullets or rep.discarded_bullets else "")
        note(f"ctx: compacted {rep.groups_summarized} of {rep.groups_total} groups with {rep.summarizer}: "
                   f"{rep.seen_before} -> {rep.seen_after} tokens the model sees (after the last compaction "
                   f"boundary; the whole stream {rep.tokens_before} -> {rep.tokens_after}); wrote "
                   f"{rep.context_path or 'no CONTEXT.md'}"
                   f"{model_note}{extra}")
        for n in rep.notes:
            note(f"ctx: {n}")
    else:
        note(f"ctx: compact: {rep.reason}; records passed through unchanged")


def _dry_run_report(rep, as_json: bool, table: bool = False, jq_expr: str | None = None,
                    table_fmt: str = "simple") -> None:
    """The dry run's report (output contract): JSON when piped or --json, text for people."""
    d = {"would_compact": rep.acted, "reason": rep.reason, "tokens_before": rep.tokens_before,
         "tokens_after": rep.tokens_after,
         "seen_before": rep.seen_before, "seen_after": rep.seen_after, "groups_total": rep.groups_total,
         "groups_summarized": rep.groups_summarized, "groups_kept": rep.groups_total - rep.groups_summarized,
         "summarizer": rep.summarizer, "degraded": rep.degraded, "context_md": rep.context_path}
    if rep.context is not None:
        d["context"] = rep.context.as_dict()

    def human():
        for k, v in d.items():
            if k != "context":
                click.echo(f"{k}: {'none' if v is None else str(v).lower() if isinstance(v, bool) else v}")
        if rep.context is not None:
            click.echo("\n" + render(rep.context))

    emit_object(d, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt, human=human)
