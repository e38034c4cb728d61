"""ctx tools list|show: tool names in the prompt, schemas on demand."""
from __future__ import annotations

import difflib
import json
import os

import click

from ..errors import CtxError
from ..sources.tools_registry import load_registry, tool_name
from .common import emit_listing, get_home, get_workspace, home_option, jq_option, output_options, workspace_option


def registry_path(flag: str | None) -> str | None:
    if flag:
        return flag
    cfg = get_home().config.get("tools_registry")
    if cfg:
        return os.path.expanduser(cfg)
    ws = get_workspace()
    for name in ("tools.json", "tools.yaml", "tools.yml"):
        p = os.path.join(ws, name)
        if os.path.exists(p):
            return p
    return None


def load_tools(flag: str | None) -> list[dict]:
    p = registry_path(flag)
    if p is None:
        raise CtxError("no tools registry found",
                       hint="pass --registry FILE, set tools_registry in config, or put tools.json in the workspace")
    return load_registry(p)


registry_option = click.option("--registry", metavar="FILE", type=click.Path(dir_okay=False), help="Tool schemas (JSON or YAML of OpenAI function "
                               "schemas). Default: config tools_registry, else the workspace's tools.json/yaml.")


@click.group("tools")
def tools():
    """Tool names for the prompt; a full schema only when the agent needs it.

    \b
    Examples:
      ctx tools list && ctx tools show task_board
    """


@tools.command("list")
@registry_option
@jq_option
@output_options
@workspace_option
@home_option
def list_(registry, jq_expr, table, as_json, table_fmt):
    """Tool names (what goes in the prompt) and their first description line.

    \b
    Example:
      ctx tools list --jq .name -r
    """
    ts = load_tools(registry)
    rows = [{"name": tool_name(t), "description": (t["function"].get("description") or "").split("\n")[0]}
            for t in ts]
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)


@tools.command("show")
@click.argument("name")
@registry_option
@workspace_option
@home_option
def show(name, registry):
    """The full schema of one tool, as JSON.

    \b
    Example:
      ctx tools show task_board | jq .function.parameters
    """
    ts = load_tools(registry)
    names = [tool_name(t) for t in ts]
    if name not in names:
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(near)}?" if near else f"known tools: {', '.join(names[:10])}"
        raise CtxError(f"no tool named {name!r}", hint=hint)
    click.echo(json.dumps(ts[names.index(name)], indent=2))
