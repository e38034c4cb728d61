"""ctx count: tokens in records or plain text (ttok-like)."""
from __future__ import annotations

import io
import json
import sys

import click

from ..backends.tokenizers import LazyTokenizer, annotate, total_tokens
from ..errors import InputError, UsageProblem
from ..io.adapters import detect
from ..io.jsonl import Source, Writer
from .common import InputRecords, get_home, home_option, input_options

def tokenizer_options(f):
    f = click.option("--model", "-m", metavar="NAME",
                     help="Model whose encoding to use (gpt-4o -> o200k_base, gpt-4 -> cl100k_base).")(f)
    f = click.option("--tokenizer", metavar="NAME",
                     help="cl100k_base, o200k_base, approx, gguf[:PATH] (default: from config or model).")(f)
    return f


def resolve_tokenizer(tokenizer: str | None, model: str | None):
    cfg = get_home().config
    return LazyTokenizer(cfg.get("tokenizer", tokenizer), cfg.get("model", model) or None)


def _plain_text(inp: InputRecords, from_: str) -> str | None:
    """The input's text when it is not records (what ttok would count), else None."""
    if from_ != "auto":
        return None
    try:
        kind = detect(inp.source)
    except InputError:
        return inp.source.read_all()
    if kind != "json-doc":
        return None
    text = inp.source.read_all()  # starts like JSON: records only if the whole thing parses
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return text
    inp.source = Source(inp.source.path, stream=io.StringIO(text))
    return None


@click.command("count")
@input_options
@tokenizer_options
@click.option("--per-record", is_flag=True, help="Write each record back with its `tokens` set.")
@click.option("-t", "--truncate", "truncate_to", type=click.IntRange(min=0), metavar="N",
              help="Plain text only: print the text truncated to N tokens.")
@click.option("--json", "as_json", is_flag=True, help="Print {tokens, tokenizer, exact, records} as JSON.")
@home_option
def count(file, from_, skip_invalid, tokenizer, model, per_record, truncate_to, as_json):
    """Count tokens in records (any transcript format) or plain text.

    Each record costs its content, its serialized tool-call arguments and 4
    tokens of per-message overhead; events cost nothing. Input that is not
    JSON is counted as plain text, as ttok does.

    \b
    Examples:
      ctx count s.jsonl --model gpt-4o
      ctx import abc.jsonl | ctx count --per-record | jq .tokens
      echo "hello world" | ctx count
      cat notes.md | ctx count -t 100 > head.md
    """
    tok = resolve_tokenizer(tokenizer, model)
    inp = InputRecords(file, from_, skip_invalid)
    text = _plain_text(inp, from_)
    if text is not None:
        if per_record:
            raise UsageProblem("--per-record needs records; the input is plain text")
        if truncate_to is not None:
            sys.stdout.write(tok.truncate(text, truncate_to))
            return
        n = tok.count(text)
        _print_total(n, tok, None, as_json)
        return
    if truncate_to is not None:
        raise UsageProblem("-t/--truncate works on plain text; use `ctx truncate --budget N` for records")
    if per_record:
        Writer().write_all(annotate(tok, inp))
        return
    total, records = total_tokens(tok, inp)
    _print_total(total, tok, records, as_json)


def _print_total(n: int, tok, records, as_json: bool) -> None:
    if as_json:
        out = {"tokens": n, "tokenizer": tok.name, "exact": tok.exact}
        if records is not None:
            out["records"] = records
        click.echo(json.dumps(out))
    else:
        click.echo(str(n))
