"""ctx config: show, init, path, validate."""
from __future__ import annotations

import os

import click

from ..errors import UsageProblem
from ..store.atomic import atomic_write
from ..store.config import Config, default_yaml
from .common import emit_listing, get_home, home_option, jq_option, output_options


@click.group("config")
def config():
    """Show, create, locate and validate config.yaml.

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
    click.echo(f"{p}: ok ({len(cfg.file)} knob{'s' if len(cfg.file) != 1 else ''} set)")
