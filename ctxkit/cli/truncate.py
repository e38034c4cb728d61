"""ctx truncate: cut a stream to a token budget over whole atomic groups."""
from __future__ import annotations

import click

from ..backends.tokenizers import annotate
from ..core.groups import iter_groups
from ..core.truncate import STRATEGIES, truncate_groups
from ..io.jsonl import Writer
from .common import note, InputRecords, get_home, home_option, input_options
from .count import resolve_tokenizer, tokenizer_options
from .status import budget_options, resolve_budget


@click.command("truncate")
@input_options
@tokenizer_options
@budget_options
@click.option("--strategy", type=click.Choice(STRATEGIES),
              help="oldest_first drops the oldest groups; middle_out keeps the first and the newest "
                   "(config: truncation_strategy).")
@home_option
def truncate(file, from_, skip_invalid, tokenizer, model, budget, max_tokens, reserve_tokens, strategy):
    """Keep what fits in the budget, dropping whole groups (never half a tool call).

    System records and records flagged pinned or important are always kept,
    and so is the most recent group. What was cut is reported on stderr.

    \b
    Examples:
      ctx truncate s.jsonl --budget 8000 | ctx count
      ctx truncate s.jsonl --budget 8000 --strategy middle_out > short.jsonl
    """
    tok = resolve_tokenizer(tokenizer, model)
    strategy = get_home().config.get("truncation_strategy", strategy)
    limit = resolve_budget(budget, max_tokens, reserve_tokens)
    groups = list(iter_groups(annotate(tok, InputRecords(file, from_, skip_invalid), reuse=True)))
    keep = truncate_groups(groups, limit, strategy)
    out = Writer()
    kept_tokens = 0
    for i in keep:
        for rec in groups[i]:
            kept_tokens += rec.get("tokens") or 0
            out.write(rec)
    dropped = len(groups) - len(keep)
    if dropped:
        total = sum(r.get("tokens") or 0 for g in groups for r in g)
        note(f"ctx: truncate ({strategy}) kept {len(keep)} of {len(groups)} groups, "
                   f"{kept_tokens} of {total} tokens (budget {limit})")
