"""ctx prompt build: a lean, layered, cache-friendly system prompt."""
from __future__ import annotations

import json
import os

import click

from ..backends.tokenizers import annotate
from ..core.groups import iter_groups
from ..core.truncate import truncate_groups
from ..errors import CtxError
from ..io.adapters import open_records
from ..io.jsonl import Source
from ..services.prompt import build
from .common import emit_listing, get_home, get_workspace, home_option, workspace_option
from .count import resolve_tokenizer


@click.group("prompt")
def prompt():
    """Assemble the system prompt (and a ready-to-POST messages array).

    \b
    Examples:
      ctx prompt build --budget 2000
      ctx prompt build --query "LoRA training" --format messages --records kept.jsonl > request.json
    """


@prompt.command("build")
@click.option("--query", "-q", metavar="TEXT", help="Add a Relevant Memory section for this query.")
@click.option("--budget", type=click.IntRange(min=1), metavar="N", help="Token budget of the system prompt "
              "(config: prompt_budget, 2000).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "messages"]), default="text", show_default=True,
              help="text, json (sections with sources and tokens), or an OpenAI messages array.")
@click.option("--records", "records_file", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True), help="With --format messages: the conversation to append "
              "(as much of the newest as fits --history-budget).")
@click.option("--history-budget", type=click.IntRange(min=1), metavar="N",
              help="Tokens for --records (default: max_tokens - reserve_tokens - the prompt).")
@click.option("--git/--no-git", "with_git", default=False, help="Add git changes since the last session.")
@click.option("--explain", is_flag=True, help="Instead of the prompt: tokens per section, sources, what was "
              "left out and why.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]), help="For --query (config: embedder).")
@workspace_option
@home_option
def build_cmd(query, budget, fmt, records_file, history_budget, with_git, explain, embedder):
    """Build a lean system prompt: identity, tool names, CONTEXT.md, memory on demand, time.

    Static part first (byte-identical while its files are unchanged, so provider prompt
    caches stay valid), dynamic part last. What does not fit is dropped or cut at a
    paragraph boundary and reported by --explain; CONTEXT.md and files marked
    `<!-- ctx:pinned -->` are never dropped or shortened.

    \b
    Examples:
      ctx prompt build --workspace ~/agent --budget 2000
      ctx prompt build --explain
      ctx prompt build -q "LoRA training" --format messages --records kept.jsonl > request.json
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

        hits = memory_search(query, 10, 0.0, embedder)
    from .time_cmd import time_facts

    tf = time_facts(home)
    git_lines = None
    if with_git:
        from ..sources.external import git_changes, modified_files, summary_lines
        from .external import last_session_time

        when = last_session_time(home)
        git_lines = summary_lines(git_changes(os.getcwd(), when), modified_files(ws, when))
    from ..store.countcache import CountCache

    counts = CountCache(home, tok)  # counts of unchanged texts are remembered: no tokenizer load
    p = build(home_workspace=home.workspace_dir, workspace=ws, cwd=os.getcwd(), budget=budget, count=counts.count,
              tool_names=tool_names, memory_hits=hits, memory_budget=cfg.get("memory_budget"),
              time_lines=tf["block"], git_lines=git_lines, age_out_hours=cfg.get("age_out_hours"),
              context_view_tokens=cfg.get("context_view_tokens"),
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
        emit_listing(rows, table=True, as_json=False)
        return
    if fmt == "text":
        click.echo(text, nl=False)
    elif fmt == "json":
        click.echo(json.dumps({"tokens": total, "budget": budget, "sources": p.sources, "system": text,
                               "sections": [{"name": s.name, "source": s.source, "tokens": s.tokens,
                                             "status": s.status, "note": s.note, "static": s.static}
                                            for s in p.sections]}))
    else:
        from ..io.export import to_openai

        history: list[dict] = []
        if records_file:
            limit = history_budget or max(1, cfg.get("max_tokens") - cfg.get("reserve_tokens") - total)
            recs = list(annotate(tok, open_records(Source(records_file)), reuse=True))
            groups = list(iter_groups([r for r in recs if r.get("kind") != "event"]))
            history = [r for i in truncate_groups(groups, limit, "oldest_first") for r in groups[i]]
        click.echo(json.dumps(redaction.value(to_openai(history, system_prefix=text)), ensure_ascii=False))
