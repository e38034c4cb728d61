"""ctx truncate: cut a stream to a token budget over whole atomic groups."""
from __future__ import annotations

import click

from ..backends.tokenizers import annotate
from ..core.groups import iter_groups
from ..core.truncate import STRATEGIES, group_size, group_size_importance, truncate_sizes
from ..io.jsonl import Writer
from ..services.spool import GroupSpool, OutputSpool
from .common import Fraction, note, InputRecords, get_home, home_option, input_options
from .count import resolve_tokenizer, tokenizer_options
from .status import budget_options, resolve_budget


@click.command("truncate")
@input_options
@tokenizer_options
@budget_options
@click.option("--tools", "tools_file", metavar="FILE", type=click.Path(dir_okay=False),
              help="Tool-schema registry (JSON/YAML) sent with the request: its tokens come off the budget.")
@click.option("--strategy", type=click.Choice(STRATEGIES),
              help="oldest_first drops the oldest groups; middle_out keeps the first and the newest "
                   "(config: truncation_strategy).")
@click.option("--min-importance", type=Fraction(0, 1), metavar="P",
              help="Leave out groups whose importance (0-1: role, decisions, code, errors, 'remember') is "
                   "below P, whatever the budget; the latest turn and pinned records stay.")
@home_option
def truncate(file, from_, skip_invalid, tokenizer, model, budget, max_tokens, reserve_tokens, tools_file, strategy,
             min_importance):
    """Keep what fits in the budget, dropping whole groups (never half a tool call).

    System records and records flagged pinned or important are always kept,
    and so is the most recent group. What was cut is reported on stderr. With --tools,
    the tool schemas' tokens come off the budget first. Memory stays flat as the input
    grows: groups wait in a temporary file, only their sizes in memory.

    \b
    Examples:
      ctx truncate s.jsonl --budget 8000 | ctx count
      ctx truncate s.jsonl --budget 8000 --strategy middle_out > short.jsonl
      ctx truncate s.jsonl --budget 8000 --tools tools.json | ctx export --to openai
      ctx truncate s.jsonl --budget 3000 --min-importance 0.5     # recent history, important first
    """
    tok = resolve_tokenizer(tokenizer, model)
    strategy = get_home().config.get("truncation_strategy", strategy)
    limit = resolve_budget(budget, max_tokens, reserve_tokens)
    tools = 0
    if tools_file:
        from ..sources.tools_registry import load_registry, schema_tokens

        tools = schema_tokens(tok, load_registry(tools_file))
    with GroupSpool(group_size if min_importance is None else group_size_importance) as spool, \
            OutputSpool() as held:
        spool.extend(iter_groups(annotate(tok, InputRecords(file, from_, skip_invalid), reuse=True)))
        keep = truncate_sizes(spool.info, max(0, limit - tools), strategy, min_importance)
        out = Writer(held)
        kept_tokens = 0
        for group in spool.groups(keep):
            for rec in group:
                kept_tokens += rec.get("tokens") or 0
                out.write(rec)
    dropped = len(spool.info) - len(keep)
    if dropped or tools:
        total = sum(sz[1] for sz in spool.info)
        less = f" - {tools} for tool schemas" if tools else ""
        note(f"ctx: truncate ({strategy}) kept {len(keep)} of {len(spool.info)} groups, "
             f"{kept_tokens} of {total} tokens (budget {limit}{less})")
