"""ctx count: tokens in records or plain text (ttok-like)."""
from __future__ import annotations

import io
import json
import os
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


BLOCK = 4 << 20   # plain text is read and counted in blocks of this many characters


def _plain_text(inp: InputRecords, from_: str):
    """The input's text as blocks when it is not records (what ttok would count), else None.
    Only the first lines are sniffed (a file's in pieces: a 1 GB line is never held); plain text
    is then read as it streams."""
    if from_ != "auto":
        return None
    limit = int(get_home().config.get("max_record_mb") * (1 << 20))
    path = inp.source.path
    if path != "-":   # sniffed apart, so a long first line is read again from the file, not held
        kind = _sniff_file(path, limit)
        if kind is None:
            return _blocks(Source(path))
        if kind != "json-doc":
            return None
        size = os.path.getsize(path)
        if size > limit:
            raise InputError(path, None, f"a JSON document of {size / (1 << 20):.1f} MB is over max_record_mb "
                                         f"({limit / (1 << 20):g} MB)",
                             hint="raise max_record_mb in config.yaml, or count it as text: ctx count -i FILE")
    else:
        inp.source.max_chars = limit
        try:
            kind = detect(inp.source)
        except InputError:
            kind = None
        if inp.source.peeked_too_long():
            raise InputError("stdin", None, f"a line over max_record_mb ({limit / (1 << 20):g} MB) and no format "
                                            f"recognised", hint="to count it as text as it streams: ctx count -i -")
        if kind is None:
            return _blocks(inp.source)
        if kind != "json-doc":
            return None
    text = inp.source.read_all()  # starts like JSON: records only if the whole thing parses (within max_record_mb)
    if len(text) > limit:
        raise InputError(inp.source.name, None, f"a JSON document of {len(text) / (1 << 20):.1f} MB is over "
                                                f"max_record_mb ({limit / (1 << 20):g} MB)",
                         hint="raise max_record_mb in config.yaml, or count it as text: ctx count -i -")
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or JSON too deep / too long a number to be records
        return iter([text])
    inp.source = Source(inp.source.path, stream=io.StringIO(text))
    return None


def _sniff_file(path: str, limit: int) -> str | None:
    """The file's format, None for plain text. Its first lines are peeked within BLOCK characters
    each; a longer first line is peeked again within `limit` (max_record_mb) only when it starts
    like JSON (a long record), else it is text."""
    with open(path, "rb") as f:
        head = f.read(BLOCK)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if len(head) == BLOCK and b"\n" not in start and not start.startswith((b"{", b"[")):
        return None   # one long first line that is not JSON: text, not read through to sniff it
    for cap in (BLOCK, limit):
        sniff = Source(path)
        sniff.max_chars = cap
        try:
            kind = detect(sniff)
            long_line = sniff.peeked_too_long()
        except InputError:
            return None
        finally:
            sniff.close()
        if not long_line:
            return kind
        with open(path, "rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
        if not head.startswith((b"{", b"[")):
            return None
    raise InputError(path, None, f"a line over max_record_mb ({limit / (1 << 20):g} MB) that starts like JSON",
                     hint="raise max_record_mb in config.yaml, or count it as text: ctx count -i FILE")


def _blocks(source: Source):
    yield from source.read_blocks(BLOCK)
    source.close()


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
        def parts():   # ttok: -i FILE is text, whatever it looks like; the parts joined by a space
            sep = ""
            for path in inputs:
                for block in _blocks(Source(path)):
                    if block:
                        yield sep + block
                        sep = ""
                sep = " "
            if args:
                yield sep + " ".join(args)
        _plain(parts(), tok, per_record, truncate_to, as_json)
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


def _plain(blocks, tok, per_record: bool, truncate_to, as_json: bool) -> None:
    """Plain text that comes in blocks, counted (or cut) as it streams."""
    from ..backends.tokenizers import count_blocks, truncate_blocks

    if per_record:
        raise UsageProblem("--per-record needs records; the input is plain text")
    if truncate_to is not None:
        from ..services.spool import OutputSpool

        with OutputSpool() as out:   # nothing printed when the input turns out bad half way
            for piece in truncate_blocks(tok, blocks, truncate_to):
                out.write(piece)
        return
    _print_total(count_blocks(tok, blocks), tok, None, as_json)


def _print_total(n: int, tok, records, as_json: bool) -> None:
    if as_json:
        out = {"tokens": n, "tokenizer": tok.name, "exact": tok.exact}
        if records is not None:
            out["records"] = records
        click.echo(json.dumps(out))
    else:
        click.echo(str(n))
