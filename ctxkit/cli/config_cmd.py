"""ctx config: show, get, set, init, path, validate."""
from __future__ import annotations

import os

import click

from ..errors import UsageProblem
from ..store.atomic import atomic_write
from ..store.config import default_yaml
from .common import emit_listing, get_home, home_option, jq_option, output_options


@click.group("config")
def config():
    """Show, read, set, create, locate and validate config.yaml.

    Precedence: flag > CTX_* environment variable > the project's .ctx/config.yaml (the
    nearest from the current directory up to the repository root) > $CTX_HOME/config.yaml >
    the default. A project's file is validated the same way and may not set the knobs that
    decide where data goes or whether secrets are redacted (store, log_path, redact, …).
    """


@config.command("show")
@jq_option
@output_options
@home_option
def show(jq_expr, table, as_json, table_fmt):
    """Every knob with its effective value, its source and the file it came from.

    \b
    Examples:
      ctx config show -t
      ctx config show --jq 'select(.source != "default")'
    """
    emit_listing(get_home().config.effective(), table=table, as_json=as_json, table_fmt=table_fmt,
                 jq_expr=jq_expr, columns=["key", "value", "source", "from", "help"])


project_option = click.option("--project", is_flag=True, help="The project's .ctx/config.yaml instead of the home's.")


def _project_path() -> str:
    """The project's config.yaml: the one in force, else where it goes (the repository root's .ctx/)."""
    from ..store.config import PROJECT_DIR, PROJECT_FILE, project_config_path
    from ..store.project import project_root

    return project_config_path(os.getcwd()) or os.path.join(project_root(os.getcwd()), PROJECT_DIR, PROJECT_FILE)


@config.command("path")
@project_option
@home_option
def path(project):
    """Print the path of config.yaml (with --project, the project's).

    \b
    Example:
      $EDITOR "$(ctx config path)"
    """
    click.echo(_project_path() if project else get_home().config_path)


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
    """Check config.yaml and the project's (or FILE): unknown keys and wrong types are errors.

    \b
    Example:
      ctx config validate && echo ok
    """
    from ..store.config import load_file

    p = file or get_home().config_path
    if not os.path.exists(p):
        if file:  # a file the user named must exist
            from ..errors import InputError

            raise InputError(p, None, "no such file")
        click.echo(f"{p}: not present (defaults apply)")
    else:
        notes: list = []
        knobs = load_file(p, notes)
        for n in notes:
            click.echo(f"ctx: note: {n} (the upper-case spelling of a knob is accepted)", err=True)
        click.echo(f"{p}: ok ({len(knobs)} knob{'s' if len(knobs) != 1 else ''} set)")
    if not file:
        cfg = get_home().config  # the project's file, checked with the home's
        if cfg.project_path:
            n = len(cfg.project)
            click.echo(f"{cfg.project_path}: ok ({n} knob{'s' if n != 1 else ''} set)")


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
@click.option("--source", is_flag=True, help="Also print where the value comes from (flag, env, project, file, "
                                            "default) and which file or variable.")
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
    cfg = get_home().config
    value, src = cfg.resolve(name)
    where = cfg.where(src, name)
    click.echo(_plain(shown(name, value)) + (f"\t{src}" + (f"\t{where}" if where else "") if source else ""))


@config.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@project_option
@home_option
def set_(key, value, project):
    """Set one knob in config.yaml (--project: the project's): validated first, written atomically.

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
    path = _project_path() if project else get_home().config_path
    if project and not os.path.isdir(os.path.dirname(path)):
        from ..store.atomic import makedirs

        makedirs(os.path.dirname(path))
        click.echo(f"ctx: note: created {os.path.dirname(path)}; a project's .ctx/ is also where ctx keeps its "
                   f"CONTEXT.md when you work in that folder", err=True)
    new = set_knob(path, name, value, project=project)
    click.echo(f"{path}: {name}: {_plain(shown(name, new))}")  # the file has the value as given
    env_key = "CTX_" + name.upper()
    if env_key in os.environ:
        click.echo(f"ctx: note: ${env_key} is set and still overrides the file", err=True)
