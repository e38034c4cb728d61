"""ctx count: tokens in records or plain text (ttok-like)."""
from __future__ import annotations

import io
import json
import re
import sys

import click

from ..backends.tokenizers import LazyTokenizer, annotate, total_tokens
from ..errors import InputError, UsageProblem
from ..io.adapters import FORMATS, detect
from ..io.jsonl import Source, Writer
from .common import InputRecords, get_home, home_option

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
    except (ValueError, RecursionError):  # not JSON, or JSON too deep / too long a number to be records
        return text
    inp.source = Source(inp.source.path, stream=io.StringIO(text))
    return None


WHERE = {"flag": "--{}", "env": "$CTX_{}", "file": "config.yaml's {}"}


def _where(src: str, key: str) -> str:
    return WHERE.get(src, "{}").format(key.upper() if src == "env" else key)


def tokenizer_origin(tokenizer: str | None, model: str | None) -> str:
    """Where the tokenizer of `resolve_tokenizer(tokenizer, model)` came from, in words."""
    cfg = get_home().config
    name, src = cfg.resolve("tokenizer", tokenizer)
    if name not in (None, "", "auto"):
        return _where(src, "tokenizer")
    m, src = cfg.resolve("model", model or None)
    if m:
        return f"model {m}, from {_where(src, 'model')}"
    return "the default; --model NAME or config model picks a model's"


@click.command("count")
@click.argument("args", nargs=-1, metavar="[FILE | TEXT...]", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-i", "--input", "inputs", multiple=True, metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True),
              help="Read text from FILE ('-' = stdin), as ttok does; repeatable; TEXT arguments are added after.")
@click.option("--from", "from_", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Input format (auto: sniffed).")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid lines (stderr counts them).")
@tokenizer_options
@click.option("--per-record", is_flag=True, help="Write each record back with its `tokens` set.")
@click.option("-t", "--truncate", "truncate_to", type=click.IntRange(min=0), metavar="N",
              help="Plain text only: print the text truncated to N tokens.")
@click.option("--all", "count_all", is_flag=True,
              help="Records: count the whole history (default: what follows the last compaction boundary).")
@click.option("--json", "as_json", is_flag=True, help="Print {tokens, tokenizer, exact, records} as JSON.")
@home_option
def count(args, inputs, from_, skip_invalid, tokenizer, model, per_record, truncate_to, count_all, as_json):
    """Count tokens in records (any transcript format) or plain text, like ttok.

    One existing FILE (or '-') is read: records cost their content, their serialized
    tool-call arguments and 4 tokens of per-message overhead (events cost nothing), from the
    last compaction boundary on, as the model sees them and `ctx status` counts (--all: the
    whole history); input that is not JSON is counted as plain text. Other arguments are the text itself, and
    `-i FILE` reads text, as ttok does. No input on a terminal: this project's newest agent
    session (`ctx sessions`). Text and records use one tokenizer, the model's
    (--tokenizer, --model, or config, as `ctx status` counts), and stderr names it.

    \b
    Examples:
      ctx count s.jsonl --model gpt-4o
      ctx count hello world
      ctx import abc.jsonl | ctx count --per-record | jq .tokens
      echo "hello world" | ctx count
      cat notes.md | ctx count -t 100 > head.md
      ctx count -i notes.md
    """
    import os

    from .common import note

    tok = resolve_tokenizer(tokenizer, model)  # one tokenizer for text and records, as `ctx status` counts

    def told() -> None:     # which tokenizer counted: said after a count, never beside an error
        note(f"ctx: tokenizer {tok.name} ({tokenizer_origin(tokenizer, model)})"
             + ("" if tok.exact else "; approximate for this model"))
    if len(args) == 1 and not inputs and args[0] != "-" and not os.path.isfile(args[0]) and \
            re.search(r"[/\\]|\.(jsonl?|traj|md|txt|log)$", args[0]):
        raise InputError(args[0], None, "no such file" if not os.path.isdir(args[0]) else "is a directory, not a file",
                         hint="to count these words as text, give more than one or use -i -")
    if inputs or (args and not (len(args) == 1 and (args[0] == "-" or os.path.isfile(args[0])))):
        parts = []
        for path in inputs:  # ttok: -i FILE is text, whatever it looks like
            parts.append(Source(path).read_all())
        if args:
            parts.append(" ".join(args))
        _plain(" ".join(p for p in parts if p), tok, per_record, truncate_to, as_json)
        told()
        return
    # a total prints a number only: records are counted as they came, as the model reads them
    # (redacting every string cost 60 % of the time); records printed back are redacted
    inp = InputRecords(args[0] if args else "-", from_, skip_invalid, redact=per_record)
    text = _plain_text(inp, from_)
    if text is not None:
        _plain(text, tok, per_record, truncate_to, as_json)
        told()
        return
    if truncate_to is not None:
        raise UsageProblem("-t/--truncate works on plain text; use `ctx truncate --budget N` for records")
    if per_record:
        from ..services.spool import OutputSpool

        with OutputSpool() as out:
            Writer(out).write_all(annotate(tok, inp))
        told()
        return
    from ..core.usage import is_boundary

    boundaries = []

    def restart(rec: dict) -> bool:
        if is_boundary(rec):
            boundaries.append(rec)
            return not count_all
        return False

    total, records = total_tokens(tok, inp, restart=restart)
    if boundaries:
        note("ctx: counted the whole history (--all)" if count_all else
             "ctx: counted from the last compaction boundary on, what the model sees; --all counts the whole history")
    _print_total(total, tok, records, as_json)
    told()


def _plain(text: str, tok, per_record: bool, truncate_to, as_json: bool) -> None:
    if per_record:
        raise UsageProblem("--per-record needs records; the input is plain text")
    if truncate_to is not None:
        sys.stdout.write(tok.truncate(text, truncate_to))
        return
    _print_total(tok.count(text), tok, None, as_json)


def _print_total(n: int, tok, records, as_json: bool) -> None:
    if as_json:
        out = {"tokens": n, "tokenizer": tok.name, "exact": tok.exact}
        if records is not None:
            out["records"] = records
        click.echo(json.dumps(out))
    else:
        click.echo(str(n))
