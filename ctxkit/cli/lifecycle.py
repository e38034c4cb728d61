"""ctx observe, ctx reflect, ctx maintain: the memory lifecycle and the one command for hooks and cron."""
from __future__ import annotations

import json

import click

from ..services.memory import observe as run_observe
from ..services.memory import reflect as run_reflect
from ..store import logs
from .common import (InputRecords, use_session_cwd, embedder_name, emit_object, get_home, get_workspace, home_option, input_options, note, report_options,
                     workspace_option)


@click.command("observe")
@input_options
@workspace_option
@home_option
def observe(file, from_, skip_invalid):
    """Write what happened in a session to observations/ and update CONTEXT.md.

    An extractive observation: requests, decisions, outcomes, files, errors, pending.

    \b
    Example:
      ctx observe ~/.claude/projects/x/abc.jsonl && ls "$(dirname "$(ctx context path)")/observations"
    """
    from ..store.backend import memory_store

    records = [r for r in InputRecords(file, from_, skip_invalid) if r.get("kind") != "event"]
    use_session_cwd(records=records)   # the workspace: the session's project
    path, ctx = run_observe(records, get_workspace(), memory=memory_store(get_home(), get_workspace()),
                            home=get_home())
    click.echo(path)
    note(f"ctx: CONTEXT.md is at version {ctx.version}")


@click.command("reflect")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]),
              help="minilm also catches near duplicates by meaning (config: embedder).")
@report_options
@workspace_option
@home_option
def reflect(embedder, jq_expr, table, as_json, table_fmt):
    """Crystallize observations into MEMORY.md: flat facts, deduplicated, each with its source.

    Nothing narrative, no session state, nothing AGENTS.md / SOUL.md / USER.md already say.
    Also refreshes a CONTEXT.md older than context_max_age_hours from the newest observation.

    \b
    Example:
      ctx reflect && tail "$(dirname "$(ctx context path)")/MEMORY.md"
    """
    from ..store.backend import memory_store

    home = get_home()
    name = embedder_name(home, embedder)
    emb = None
    if name == "minilm":
        from .score import make_embedder

        emb = make_embedder(home, name, 0)
    res = run_reflect(get_workspace(), emb, home.config.get("context_max_age_hours"),
                      memory=memory_store(home, get_workspace()))
    skipped = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in res["skipped"].items() if n) or "none"
    emit_object(res, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt, human=lambda: click.echo(
        f"added {res['added']} fact(s) to {res['memory']}; skipped: {skipped}"
        + ("; CONTEXT.md refreshed" if res["context_refreshed"] else "")))


CLUSTER_WINDOW = 300  # chunks compared pairwise per maintain pass (measured: 380 chunks take 0.75 s)


@click.command("maintain")
@input_options
@click.option("--session-end", is_flag=True, help="The session is over: also write an observation.")
@workspace_option
@home_option
def maintain(file, from_, skip_invalid, session_end):
    """Apply the whole policy from config in one idempotent pass; print what it did as JSONL.

    curation at curation_trigger_pct (40 %), compaction at compaction_trigger_pct (50 %),
    an observation at observe_trigger_pct (80 %), emergency compaction at max_context_pct
    (85 %), a summary refresh every summary_every_messages new messages, an observation at
    session end. Remembers the last record it processed: an unchanged session is one
    "nothing to do" event, exit 0. Safe to run concurrently with itself.

    \b
    Examples:
      ctx maintain ~/.claude/projects/x/abc.jsonl
      */5 * * * * $HOME/.local/bin/ctx -q maintain "$HOME/agent/session.jsonl" >> "$HOME/.ctx/maintain.log"
    """
    from ..store.backend import run_state

    home = get_home()
    cfg = home.config
    records = [r for r in InputRecords(file, from_, skip_invalid) if r.get("kind") != "event"]
    session = next((r.get("session") for r in records if r.get("session")), "default")
    last_id = records[-1].get("id") if records else None
    events = []
    with run_state(home).hold("maintain", session) as st:  # one pass per session at a time
        if st.get("last_id") == last_id and not session_end:
            events.append({"event": "nothing_to_do", "session": session, "reason": "no new records"})
        else:
            events += _policy(home, cfg, records, session, st, session_end)
            st["last_id"] = last_id
            st["records"] = len(records)
    for ev in events:
        click.echo(json.dumps(ev))


def _policy(home, cfg, records, session, st, session_end) -> list[dict]:
    from ..backends.tokenizers import count_records
    from ..services.scoring import default_query
    from ..store import sessions
    from .count import resolve_tokenizer
    from .status import resolve_budget

    tok = resolve_tokenizer(None, None)
    budget = resolve_budget(None, None, None)
    pct = sum(count_records(tok, records, reuse=True)) / budget if records else 0.0
    events = [{"event": "status", "session": session, "pct_used": round(pct, 4), "records": len(records)}]
    sessions.touch(home, records)
    done_something = False
    if pct >= cfg.get("curation_trigger_pct"):
        q = default_query(records)
        if q:
            from ..services.curation import curate
            from .memory import memory_search

            hits = memory_search(q, 5, 0.0, None, log=False)
            ev = curate(home, cfg, records, q, tok, len(hits))
            events.append({"event": "curation", "query": q[:100], "hits": len(hits),
                           "drops_triggered": ev["drops_triggered"], "token_savings": ev["token_savings"]})
            done_something = True
    new_msgs = len(records) - st.get("summary_at", 0)
    if pct >= cfg.get("compaction_trigger_pct") or new_msgs >= cfg.get("summary_every_messages"):
        from ..services.compaction import compact
        from ..services.compact_options import options_from_config

        emergency = pct >= cfg.get("max_context_pct")
        opts = options_from_config(cfg, budget, force=True)
        if emergency:
            opts.preserve_ratio = opts.preserve_ratio / 2
        elif pct < cfg.get("compaction_trigger_pct"):
            opts.preserve_ratio = 0.0  # a refresh: everything but the newest group goes into CONTEXT.md
        rep = compact(records, tok, opts, home, get_workspace()).commit()
        kind = "emergency_compaction" if emergency else ("compaction" if pct >= cfg.get("compaction_trigger_pct")
                                                         else "summary_refresh")
        events.append({"event": kind, "groups_summarized": rep.groups_summarized, "tokens_before": rep.tokens_before,
                       "tokens_after": rep.tokens_after, "degraded": rep.degraded, "context_md": rep.context_path})
        st["summary_at"] = len(records)
        done_something = True
    if len(records) - st.get("clustered_at", 0) >= cfg.get("cluster_every_messages"):
        from ..core.clusters import CLUSTER_BULLET, cluster_bullet, clusters
        from ..core.context_md import Item, merge_items
        from ..core.groups import iter_groups
        from ..services.observe import write_session_state

        groups = list(iter_groups(records))[-CLUSTER_WINDOW:]  # pairwise similarity: bounded, recent chunks
        bullets = [b for b in (cluster_bullet(groups, m) for m in clusters(groups)) if b]

        def add(c):
            facts = c.sections.get("Facts", [])
            own = [i for i in facts if not CLUSTER_BULLET.match(i.text)]  # facts written by hand: all kept
            c.sections["Facts"] = own + merge_items([i for i in facts if CLUSTER_BULLET.match(i.text)],
                                                    [Item(text=b) for b in bullets], cap=40)
            return c

        if bullets:  # the session's own state; the workspace's only when it is this session's
            write_session_state(home, get_workspace(), session if session != "default" else None, add)
        events.append({"event": "cluster_compaction", "clusters": len(bullets), "messages": len(records)})
        st["clustered_at"] = len(records)
        done_something = True
    if len(records) - st.get("archived_at", 0) >= cfg.get("archive_every_messages"):
        from ..sources.workspace import ContextFile
        from ..store.session_state import archive_context

        from ..store.session_state import may_replace_workspace

        cf = ContextFile(get_workspace())
        owner = cf.read().state.get("session") if cf.exists() else None
        # only this session's CONTEXT.md (or nobody's): never another session's working state
        dest = archive_context(home, cf) if cf.exists() and may_replace_workspace(cf.read(), session) else None
        if cf.exists() and not dest:
            events.append({"event": "archive_skipped", "reason": f"the workspace's CONTEXT.md is session {owner}'s",
                           "messages": len(records)})
            st["archived_at"] = len(records)
        if dest:
            events.append({"event": "archive", "path": dest, "messages": len(records)})
            st["archived_at"] = len(records)
            done_something = True
    if session_end or pct >= cfg.get("observe_trigger_pct"):
        from ..store.backend import memory_store

        path, _ = run_observe(records, get_workspace(), memory=memory_store(home, get_workspace()), home=home)
        events.append({"event": "observation", "path": path, "reason": "session_end" if session_end else "threshold"})
        done_something = True
    if not done_something:
        events.append({"event": "nothing_to_do", "session": session,
                       "reason": f"{pct:.1%} used, {new_msgs} new messages: nothing is due"})
    logs.append(home, "compaction", {"event": "maintain", "session": session,
                                     "actions": [e["event"] for e in events[1:]], "pct_used": round(pct, 4),
                                     "tokens_before": 0, "tokens_after": 0})
    return events
