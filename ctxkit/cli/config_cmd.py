"""ctx config: show, get, set, init, path, validate."""
from __future__ import annotations

import os

import click

from ..errors import UsageProblem
from ..store.atomic import atomic_write
from ..store.config import Config, default_yaml
from .common import emit_listing, get_home, home_option, jq_option, output_options


@click.group("config")
def config():
    """Show, read, set, create, locate and validate config.yaml.

    Precedence: command-line flag > CTX_* environment variable (e.g.
    CTX_MAX_TOKENS) > config.yaml > built-in default.
    """


@config.command("show")
@jq_option
@output_options
@home_option
def show(jq_expr, table, as_json, table_fmt):
    """Every knob with its effective value and where it came from.

    \b
    Examples:
      ctx config show -t
      ctx config show --jq 'select(.source != "default")'
    """
    emit_listing(get_home().config.effective(), table=table, as_json=as_json, table_fmt=table_fmt,
                 jq_expr=jq_expr, columns=["key", "value", "source", "help"])


@config.command("path")
@home_option
def path():
    """Print the path of config.yaml.

    \b
    Example:
      $EDITOR "$(ctx config path)"
    """
    click.echo(get_home().config_path)


@config.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing config.yaml.")
@home_option
def init(force):
    """Write a config.yaml with every knob at its default, commented.

    \b
    Example:
      ctx config init && ctx config validate
    """
    p = get_home().config_path
    if os.path.exists(p) and not force:
        raise UsageProblem(f"{p} already exists (use --force to overwrite it)")
    atomic_write(p, default_yaml())
    click.echo(p)


@config.command("validate")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@home_option
def validate(file):
    """Check config.yaml (or FILE): unknown keys and wrong types are errors.

    \b
    Example:
      ctx config validate && echo ok
    """
    p = file or get_home().config_path
    if not os.path.exists(p):
        if file:  # a file the user named must exist
            from ..errors import InputError

            raise InputError(p, None, "no such file")
        click.echo(f"{p}: not present (defaults apply)")
        return
    cfg = Config(p)
    for n in cfg.notes:
        click.echo(f"ctx: note: {n} (the upper-case spelling of a knob is accepted)", err=True)
    click.echo(f"{p}: ok ({len(cfg.file)} knob{'s' if len(cfg.file) != 1 else ''} set)")


def _knob(key: str) -> str:
    from ..store.config import KNOBS, alias

    name = key if key in KNOBS else alias(key)
    if name is None:
        import difflib

        near = difflib.get_close_matches(key, KNOBS, n=1)
        raise UsageProblem(f"unknown key {key!r}" + (f" (did you mean {near[0]}?)" if near else "")
                           + "; ctx config show lists them")
    return name


def _plain(value) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@config.command("get")
@click.argument("key")
@click.option("--source", is_flag=True, help="Also print where the value comes from (flag, env, file, default).")
@home_option
def get(key, source):
    """Print one knob's effective value (as `config show` resolves it), secrets redacted.

    \b
    Examples:
      ctx config get max_tokens
      ctx config get redact_patterns      # a list prints as JSON
    """
    from ..store.config import shown

    name = _knob(key)
    value, src = get_home().config.resolve(name)
    click.echo(_plain(shown(name, value)) + (f"\t{src}" if source else ""))


@config.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@home_option
def set_(key, value):
    """Set one knob in config.yaml: validated first, written atomically under a lock.

    VALUE is read as the knob's type: a number, true/false, a string; a list as a
    YAML flow list (single-quoted items keep backslashes) or one item. The file keeps its comments; a line
    that already sets the knob (in any spelling) is replaced; an invalid value leaves
    the file as it was. The value is written as given, a secret included (a pattern
    in redact_patterns, a password in an endpoint's URL), and the file is private
    (0600); what ctx prints of it has its secrets redacted.

    \b
    Examples:
      ctx config set max_tokens 200000
      ctx config set compaction_trigger_pct 0.6
      ctx config set redact_patterns "['tok_[0-9]+', 'key=\\S+']"
    """
    from ..store.config import set_knob, shown

    name = _knob(key)
    path = get_home().config_path
    new = set_knob(path, name, value)
    click.echo(f"{path}: {name}: {_plain(shown(name, new))}")  # the file has the value as given
    env_key = "CTX_" + name.upper()
    if env_key in os.environ:
        click.echo(f"ctx: note: ${env_key} is set and still overrides the file", err=True)
