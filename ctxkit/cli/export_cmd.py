"""ctx export: records -> the request body an API takes (OpenAI or Anthropic)."""
from __future__ import annotations

import json

import click

from ..io.export import RENDERERS
from .common import InputRecords, home_option, input_options


@click.command("export")
@input_options
@click.option("--to", "target", type=click.Choice(sorted(RENDERERS)), default="openai", show_default=True,
              help="The API whose request body to print.")
@click.option("--system", "system_text", metavar="TEXT", help="A system prompt to put first (e.g. from ctx prompt build).")
@home_option
def export(file, from_, skip_invalid, target, system_text):
    """Turn records (after drop or compact) into the JSON body a model API takes.

    OpenAI: `{"messages": [...]}` with tool calls and `tool` results. Anthropic: a
    top-level `system`, alternating user/assistant turns, `tool_result` blocks first in
    the user turn right after their `tool_use`. Summaries and stubs become user text
    where they stand; thinking, events and compaction markers are left out. Tool ids
    are rewritten where the API would reject them (the same on the call and its result).
    Input that holds nothing to send (only events) is an error, never an empty request.

    \b
    Examples:
      ctx import s.jsonl | ctx compact --budget 8000 | ctx export --to anthropic > body.json
      ctx export kept.jsonl --to openai --system "$(ctx prompt build)" | jq '.messages | length'
    """
    from ..errors import CtxError
    from ..io.export import NothingToSend
    from ..store import redaction

    try:
        body = RENDERERS[target](InputRecords(file, from_, skip_invalid), system_prefix=system_text)
    except NothingToSend as e:
        raise CtxError(f"{file if file not in (None, '-') else 'stdin'}: {e}") from None
    click.echo(json.dumps(redaction.value(body), ensure_ascii=False))  # a request body goes to a model
