"""ctx prompt build: a lean, layered, cache-friendly system prompt."""
from __future__ import annotations

import json
import os

import click

from ..backends.tokenizers import annotate
from ..core.groups import iter_groups
from ..core.truncate import truncate_groups
from ..errors import CtxError, UsageProblem
from ..io.adapters import open_records
from ..io.jsonl import Source
from ..services.prompt import build, identity_lines
from .common import OldQueryShort, emit_listing, get_home, get_workspace, home_option, report_options, workspace_option
from .count import resolve_tokenizer


@click.group("prompt")
def prompt():
    """Assemble the system prompt (and a ready-to-POST messages array).

    \b
    Examples:
      ctx prompt build --budget 2000
      ctx prompt build --query "LoRA training" --format messages --records kept.jsonl > request.json
    """


@prompt.command("build", cls=OldQueryShort)
@click.option("--query", metavar="TEXT", help="Add a Relevant Memory section for this query.")
@click.option("--budget", type=click.IntRange(min=1), metavar="N", help="Token budget (config: prompt_budget, 2000).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "messages"]), default="text", show_default=True,
              help="text, json (sections with sources and tokens), or an OpenAI messages array.")
@click.option("--records", "records_file", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True),
              help="With --format messages: the conversation to append (its newest part that fits).")
@click.option("--history-budget", type=click.IntRange(min=1), metavar="N",
              help="Tokens for --records (default: max_tokens - reserve_tokens - the prompt).")
@click.option("--git/--no-git", "with_git", default=False, help="Add git changes since the last session.")
@click.option("--explain", is_flag=True, help="Instead: tokens per section, sources, what was left out and why.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]), help="For --query (config: embedder).")
@click.option("--mode", type=click.Choice(["auto", "interactive", "pipeline", "hook", "server"]),
              help="The Environment section's Mode (config: prompt_mode).")
@click.option("--no-environment", is_flag=True, help="Leave out the Environment section (cwd, OS, terminal, mode).")
@click.option("--session", "session_prefix", metavar="ID", help="That session's state instead of the project's "
              "CONTEXT.md.")
@report_options
@workspace_option
@home_option
def build_cmd(query, budget, fmt, records_file, history_budget, with_git, explain, embedder, mode, no_environment,
              jq_expr, table, as_json, table_fmt, session_prefix):
    """Build a lean system prompt: identity, tool names, environment, CONTEXT.md, memory on demand, time.

    Static part first (byte-identical while its files are unchanged, so provider prompt
    caches stay valid), dynamic part last. Never over --budget: what gives way first, and
    why, is in --explain; files marked `<!-- ctx:pinned -->` are never cut. More:
    docs/prompt.md.

    \b
    Examples:
      ctx prompt build --workspace ~/agent --budget 2000
      ctx prompt build --explain
      ctx prompt build --query "LoRA training" --format messages --records kept.jsonl > request.json
    """
    home = get_home()
    cfg = home.config
    ws = get_workspace()
    tok = resolve_tokenizer(None, None)
    budget = cfg.get("prompt_budget", budget)
    tool_names = None
    try:
        from .tools_cmd import load_tools, registry_path

        if registry_path(None):
            from ..sources.tools_registry import tool_name

            tool_names = [tool_name(t) for t in load_tools(None)]
    except CtxError:
        tool_names = None
    hits = None
    if query:
        from .memory import memory_search

        hits = memory_search(query, 10, cfg.get("memory_min_score"), embedder)
    from ..services.awareness import time_facts

    from ..sources.workspace import project_root

    tf = time_facts(home, project=project_root(os.getcwd()), strict=False)
    git_lines = None
    if with_git:
        from ..sources.external import git_changes, modified_files, summary_lines
        from ..services.awareness import last_session_time

        when = last_session_time(home)
        git_lines = summary_lines(git_changes(os.getcwd(), when), modified_files(ws, when))
    from ..store.countcache import CountCache
    from ..sources.environment import environment_lines

    env = None if no_environment else environment_lines(os.getcwd(), cfg.get("prompt_mode", mode))

    counts = CountCache(home, tok)  # counts of unchanged texts are remembered: no tokenizer load
    p = build(home_workspace=home.workspace_dir, workspace=ws, cwd=os.getcwd(), budget=budget, count=counts.count,
              tool_names=tool_names, memory_hits=hits, memory_budget=cfg.get("memory_budget"),
              time_lines=tf["block"], git_lines=git_lines, age_out_hours=cfg.get("age_out_hours"),
              context_view_tokens=cfg.get("context_view_tokens"), environment=env,
              identity_tokens=cfg.get("identity_tokens"), identity=identity_lines(cfg.get("model"), ws),
              context_path=_session_context(home, session_prefix),
              bound=counts.upper_bound if fmt == "text" and not explain else None)
    from ..store import redaction

    text = redaction.text(p.text())  # identity files and memory may hold what ctx must not send
    total = counts.count(text) if explain or fmt != "text" else None
    counts.save()
    if explain:
        rows = [{"section": s.name.split(" (")[0], "source": s.source, "tokens": s.tokens, "status": s.status,
                 "static": s.static, "note": s.note} for s in p.sections]
        rows.append({"section": "TOTAL", "source": "", "tokens": total, "status": f"budget {budget}",
                     "static": "", "note": ""})
        # output contract: JSONL piped, a table on a terminal (-t, --json, --jq as every listing)
        emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)
        return
    if table or as_json or jq_expr:
        raise UsageProblem("-t, --json and --jq go with --explain (the prompt itself: --format text|json|messages)")
    if fmt == "text":
        click.echo(text, nl=False)
    elif fmt == "json":
        click.echo(json.dumps({"tokens": total, "budget": budget, "sources": p.sources, "system": text,
                               "sections": [{"name": s.name, "source": s.source, "tokens": s.tokens,
                                             "status": s.status, "note": s.note, "static": s.static}
                                            for s in p.sections]}))
    else:
        from ..io.export import to_openai

        from ..core.timeinfo import session_started

        history: list[dict] = []
        started = None
        if records_file:
            limit = history_budget or max(1, cfg.get("max_tokens") - cfg.get("reserve_tokens") - total)
            recs = list(annotate(tok, open_records(Source(records_file)), reuse=True))
            started = next((r.get("ts") for r in recs if r.get("ts")), None)
            groups = list(iter_groups([r for r in recs if r.get("kind") != "event"]))
            history = [r for i in truncate_groups(groups, limit, "oldest_first") for r in groups[i]]
        body = to_openai(history, system_prefix=text)
        msgs = body["messages"]
        msgs.insert(1 if msgs and msgs[0]["role"] == "system" else 0,
                    {"role": "user", "content": session_started(started)})
        click.echo(json.dumps(redaction.value(body), ensure_ascii=False))


def _session_context(home, prefix: str | None) -> str | None:
    """--session PREFIX: that session's own CONTEXT.md in the session store."""
    if not prefix:
        return None
    from ..store.session_state import state_file
    from ..store.sessions import resolve

    return state_file(home, resolve(home, prefix)).path
