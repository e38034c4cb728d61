"""ctx man and ctx examples: the man pages and the examples the package carries."""
from __future__ import annotations

import os
import shutil
import subprocess

import click

from ..errors import CtxError, UsageProblem
from ..services import bundled
from .common import emit_listing, jq_option, note, output_options


@click.command("man")
@click.argument("command", required=False, metavar="[COMMAND]")
@click.option("--install", "install", is_flag=True,
              help="Copy the pages into PREFIX/share/man/man1 (each replaced whole); prints that folder.")
@click.option("--uninstall", is_flag=True, help="Remove from PREFIX/share/man/man1 the pages ctx ships.")
@click.option("--prefix", default="~/.local", show_default=True, metavar="DIR",
              help="Where --install and --uninstall work. `man` finds DIR/share/man when DIR/bin is on PATH.")
@click.option("--path", "show_path", is_flag=True,
              help="Print the folder the pages are in (or, with COMMAND, the page's file).")
def man(command, install, uninstall, prefix, show_path):
    """Show a ctx man page, or install the pages where `man` finds them.

    A wheel installed by pip into a virtualenv puts the pages in its share/man, which `man` finds
    when the venv's bin is on PATH; pipx links them into ~/.local/share/man; `uv tool install`
    does neither: run `ctx man --install` once after it (and again after an upgrade).

    \b
    Examples:
      ctx man compact                       # the page of ctx compact (man -l)
      ctx man --install                     # ~/.local/share/man/man1: then `man ctx-drop` works
      ctx man --install --prefix /usr/local # for every user (as root)
      ctx man --uninstall
      man -l "$(ctx man score --path)"
    """
    if install and uninstall:
        raise UsageProblem("--install and --uninstall cannot be used together")
    if (install or uninstall) and (command or show_path):
        raise UsageProblem(f"--{'install' if install else 'uninstall'} takes no COMMAND and no --path")
    if install or uninstall:
        try:
            dest, files = (bundled.install_man if install else bundled.uninstall_man)(prefix)
        except OSError as e:
            raise CtxError(f"{bundled.man_dir(prefix)}: {e.strerror or e}",
                           hint="choose a --prefix you can write to (the default is ~/.local)") from None
        note(f"ctx: {'installed' if install else 'removed'} {len(files)} man page(s) "
             f"{'in' if install else 'from'} {dest}")
        if install and not bundled.on_manpath(prefix, os.environ.get("PATH")):
            note(f"ctx: {os.path.join(os.path.expanduser(prefix), 'bin')} is not on PATH: "
                 f"add it, or set MANPATH=\"{os.path.dirname(dest)}:\"")
        click.echo(dest)
        return
    path = bundled.man_page(command)
    if show_path:
        click.echo(path if command else os.path.dirname(path))
        return
    viewer = shutil.which("man")
    if viewer is None:
        raise CtxError("`man` is not installed here", hint=f"read the page with: ctx man {command or ''} --path")
    raise SystemExit(subprocess.call([viewer, "-l", path]))


@click.command("examples")
@click.argument("name", required=False)
@jq_option
@output_options
def examples(name, jq_expr, table, as_json, table_fmt):
    """List the examples ctx ships (agent settings, a crontab, a demo transcript), or print the
    path of one, to copy or import it.

    \b
    Examples:
      ctx examples -t
      ctx import "$(ctx examples claude-code_spotter_491e126e_session.jsonl)" > s.jsonl
      mkdir -p .claude && cp "$(ctx examples claude-code/settings.json)" .claude/settings.json
    """
    if name is not None:
        if jq_expr or table or as_json:
            raise UsageProblem("with NAME, examples prints one path: --json, -t and --jq list every example")
        click.echo(bundled.example(name))
        return
    emit_listing(bundled.examples(), table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 columns=["name", "bytes", "path"])
