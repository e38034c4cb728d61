"""ctx status: context usage against the budget."""
from __future__ import annotations

import json
import os
import sys

import click

from ..backends.tokenizers import count_records
from ..core.status import Usage
from ..core.usage import WINDOWS, is_boundary
from ..errors import ExitStatus, UsageProblem
from ..io.tables import render_table, want_table
from ..sources.tools_registry import load_registry, schema_tokens
from ..store import logs
from .common import Share, note, project_session, use_session_cwd, InputRecords, emit_object, get_home, home_option, input_options, jq_option, output_options
from .count import resolve_tokenizer, tokenizer_options

BATCH = 256


def budget_options(f):
    f = click.option("--reserve", "reserve_tokens", type=click.IntRange(min=0), metavar="N",
                     help="Tokens reserved for the response (config: reserve_tokens).")(f)
    f = click.option("--max-tokens", type=click.IntRange(min=1), metavar="N",
                     help="Context window of the model (config: max_tokens).")(f)
    f = click.option("--budget", type=click.IntRange(min=1), metavar="N",
                     help="Token budget; overrides max_tokens - reserve_tokens.")(f)
    return f


def resolve_budget(budget, max_tokens, reserve_tokens) -> int:
    if budget:
        return budget
    cfg = get_home().config
    return max(1, cfg.get("max_tokens", max_tokens) - cfg.get("reserve_tokens", reserve_tokens))


@click.command("status")
@input_options
@tokenizer_options
@budget_options
@click.option("--tools", "tools_file", metavar="FILE", type=click.Path(dir_okay=False),
              help="Tool schemas (JSON/YAML) that count against the budget.")
@click.option("--notify-if-pct", type=Share(), metavar="P",
              help="Exit 3 when the headline (of the budget, when you set one) is at or above P: 0.5, 50 or 50%.")
@click.option("--notify-once", is_flag=True,
              help="With --notify-if-pct: exit 3 only when usage crosses P (it was below at this session's "
                   "last check), not on every check while it stays over.")
@click.option("--log", "log_it", is_flag=True, help="Append to logs/context-health.jsonl.")
@click.option("--session", "session_prefix", metavar="ID",
              help="A session ctx knows (a unique prefix of its id). Without FILE on a terminal: the "
                   "project's latest.")
@click.option("--all", "count_all", is_flag=True,
              help="Count the whole history (default: from the last compaction boundary on).")
@click.option("--check-store", is_flag=True, help="Also check cold storage and index what its index misses "
                                                   "(as `ctx health`).")
@jq_option
@output_options
@home_option
def status(file, from_, skip_invalid, tokenizer, model, budget, max_tokens, reserve_tokens, tools_file,
           notify_if_pct, notify_once, log_it, as_json, table, jq_expr, table_fmt, session_prefix, count_all, check_store):
    """Show how full the model's window is now, then tokens by kind and the budget.

    The headline (window_pct) is what the model sees after the last compaction
    boundary: the provider's last usage while fresh, else ctx's count, over the
    named model's window. Budget: --budget, max_tokens - reserve_tokens if set,
    else a named model's window less the reserve. No FILE on a terminal: this project's newest
    agent session (`ctx sessions`). See docs/status.md.

    \b
    Examples:
      ctx status                         # in a project: its newest session
      ctx status s.jsonl --notify-if-pct 0.5 || notify-send "compact soon"
      ctx status ~/.claude/projects/x/abc.jsonl --json | jq .window_pct
    """
    if table and as_json:
        raise UsageProblem("-t/--table and --json cannot be used together")
    if notify_once and notify_if_pct is None:
        raise UsageProblem("--notify-once goes with --notify-if-pct P")
    home = get_home()
    if session_prefix or (file == "-" and sys.stdin.isatty() and project_session() is None):
        file = _session_transcript(home, session_prefix)
    cfg = home.config
    tok = resolve_tokenizer(tokenizer, model)
    usage = Usage(budget=resolve_budget(budget, max_tokens, reserve_tokens),
                  trigger_pct=cfg.get("compaction_trigger_pct"), hard_pct=cfg.get("max_context_pct"),
                  curation_pct=cfg.get("curation_trigger_pct"))
    if tools_file:
        usage.parts["tools"] = schema_tokens(tok, load_registry(tools_file))
    batch: list[dict] = []

    def flush():
        for rec, n in zip(batch, count_records(tok, batch, reuse=True)):
            rec["tokens"] = n
            usage.add(rec)
            if whole is not None:
                whole.add(rec)
        batch.clear()

    models: list[str] = []
    tally = None
    if log_it:
        from ..store import sessions

        tally = sessions.tally(())
    whole = Usage(budget=usage.budget, trigger_pct=usage.trigger_pct, hard_pct=usage.hard_pct,
                  curation_pct=usage.curation_pct, parts=dict(usage.parts)) if count_all else None
    # counted as they came, as the model reads them: status prints and keeps only numbers, the
    # sessions' ids and model (redacted below), and what --log keeps (the session index redacts it)
    for rec in InputRecords(file, from_, skip_invalid, redact=False):
        if is_boundary(rec):  # compacted away: the model sees what follows the boundary
            flush()
            tools = usage.parts.get("tools")
            usage = Usage(budget=usage.budget, trigger_pct=usage.trigger_pct, hard_pct=usage.hard_pct,
                          curation_pct=usage.curation_pct)
            if tools:
                usage.parts["tools"] = tools
        batch.append(rec)
        m = (rec.get("meta") or {}).get("model") if isinstance(rec.get("meta"), dict) else None
        if isinstance(m, str):
            models[:] = [m]
        if tally is not None:
            sessions.tally((rec,), tally)  # folded as it passes: the index needs no copy of the stream
        if len(batch) >= BATCH:
            flush()
    flush()
    if log_it:
        sessions.commit(home, tally, file)
    model = models[0] if models else None
    own_budget = bool(budget or max_tokens or cfg.resolve("max_tokens")[1] != "default")
    window, window_source = _assumed_window(cfg, model, usage.reported_window)
    if not own_budget and not window_source.startswith("a default"):  # no budget set: the model's window less the reserve
        usage.budget = max(1, window - cfg.get("reserve_tokens", reserve_tokens))
        if whole is not None:
            whole.budget = usage.budget
    d = (whole or usage).as_dict()
    d["counts"] = "all" if whole is not None else "live"
    _window(d, usage.as_dict(), cfg, model, window, window_source, own_budget)
    d["tokenizer"] = tok.name
    d["workspace"], d["workspace_from"] = _workspace(file)
    d["exact"] = tok.exact
    from ..store.worker import last_failure

    failed = last_failure(home)  # the hooks' detached worker failed and has not succeeded since
    if failed:
        d["worker_failed"] = failed
    if check_store or click.get_current_context().find_root().meta.get("ctx.invoked_as") == "health":
        from ..store.cold import ColdStorage

        cold = ColdStorage(home.cold_storage_dir)
        d["store"] = cold.check(repair=True) if os.path.isdir(cold.root) else {"chunk_files": 0, "indexed": 0}
        for what in ("missing_from_index", "index_without_file"):
            if d["store"].get(what):
                note(f"ctx: cold storage: {len(d['store'][what])} chunk(s) {what.replace('_', ' ')} "
                     f"(repaired): {', '.join(d['store'][what][:5])}")
    if log_it:
        from ..store.backend import shared

        store = shared(home)
        logs.append(home, "context-health", {
            "session": d["sessions"][-1] if d["sessions"] else None,
            "current_tokens": d["total"], "limit": d["budget"], "pct_used": d["pct_used"],
            "next_compaction_estimate": d["next_compaction_at"], "memcached_chunks": d["chunks"],
            "cold_storage_chunks": store.cold.count() if store is not None else home.cold_storage_chunks(), "compaction_due": d["compaction_due"],
            "tokenizer": tok.name,
        })
    from ..store import redaction

    d = redaction.output(d)
    if jq_expr:
        emit_object(d, as_json=True, jq_expr=jq_expr)
    elif want_table(table, as_json):
        click.echo(_table(d, table_fmt))
    else:
        click.echo(json.dumps(d))
    used = d["pct_used"] if own_budget else d["window_pct"]   # the one figure, as compaction_due
    over = notify_if_pct is not None and used >= notify_if_pct
    if notify_once and notify_if_pct is not None:
        from ..services.notify import crossed

        who = d["sessions"][-1] if d["sessions"] else os.path.abspath(file)
        if not crossed(home, f"{who}@{notify_if_pct:g}", over):
            over = False
    if over:
        note(f"ctx: usage {used:.1%} is at or above {notify_if_pct:.0%}")
        raise click.exceptions.Exit(ExitStatus.OVER_THRESHOLD)


def _assumed_window(cfg, model: str | None, reported: int | None) -> tuple[int, str]:
    """The model's window and where that figure came from, in words."""
    from ..core.usage import window_for

    configured = cfg.get("context_window")
    n = window_for(model, configured, reported)
    if configured:
        return n, "config context_window"
    if reported:
        return n, "reported by the provider"
    if model and any(model.startswith(prefix) for prefix, _ in WINDOWS):
        return n, f"{model}'s window"
    return n, f"a default: {model} is not a model ctx knows" if model else "a default: the input names no model"


def _window(d: dict, live: dict, cfg, model: str | None, window: int, source: str, own_budget: bool) -> None:
    """The headline: what the model sees now (core.usage.seen_now: the provider's usage when it is
    fresh, else ctx's count of the live records) over the model's window. Without a budget of
    the user's own, compaction and curation are due by that measure."""
    from ..core.usage import seen_now, window_measure

    reported = live.get("reported_tokens")
    tokens, method = seen_now(live["total"], reported,
                              live["total"] - live.get("counted_since_report", 0) if reported is not None else None,
                              live["changed_by_ctx"])
    w = window_measure(tokens, window, method, cfg.get("compaction_trigger_pct"), cfg.get("curation_trigger_pct"))
    d.update({"window": w["window"], "window_tokens": w["tokens"], "window_pct": round(w["pct"], 4),
              "window_method": w["method"], "window_source": source, "model": model,
              "live_tokens": live["total"]})
    if not own_budget:
        d["compaction_due"], d["curation_due"] = w["due"], w["curation_due"]


def _session_transcript(home, prefix: str | None) -> str:
    """The transcript of --session PREFIX, or of the current project's latest session (the one
    resolver the hooks use)."""
    from ..errors import UsageProblem
    from ..services.hooks import resolve, session_for
    from ..store import sessions

    target = resolve(home, {"cwd": os.getcwd()})
    sid = session_for(home, target, prefix)
    if sid is None:
        raise UsageProblem("no input: give FILE, pipe records in, or --session ID (no session of this project "
                           f"is known: {target.project}; `ctx sessions` lists where ctx looked)")
    src = sessions.load(home).get(sid, {}).get("source")
    if not src or not os.path.isfile(src):
        raise UsageProblem(f"session {sid}: its transcript is not known or gone ({src or 'not recorded'})")
    return src


def _workspace(file: str) -> tuple[str, str]:
    """Where this session's CONTEXT.md is, and why there (sources.workspace.locate_workspace)."""
    from ..sources.workspace import locate_workspace

    use_session_cwd(file)
    root = click.get_current_context().find_root()
    return locate_workspace(root.meta.get("ctx.workspace"), get_home().path, root.meta.get("ctx.cwd"),
                            root.meta.get("ctx.session_cwd"))


def headline(d: dict) -> str:
    """The one answer to "how full": what the model sees over its window, and how it is known."""
    how = {"provider-reported": "the provider's usage at its last response",
           "provider-reported + counted since": "the provider's usage at its last response plus ctx's count since",
           "counted": "ctx's count"}.get(d["window_method"], d["window_method"])
    return (f"{d['window_pct']:.1%} of the model's window: {d['window_tokens']:,} of {d['window']:,} tokens "
            f"({d['window_source']}; {how}; after the last compaction boundary)")


def _table(d: dict, fmt: str = "simple") -> str:
    out = [headline(d), ""]
    rows = [{"part": k, "tokens": d[k], "share": f"{d[k] / d['budget']:.1%}"}
            for k in ("system", "tools", "messages", "summaries", "stubs")]
    rows.append({"part": "total", "tokens": d["total"], "share": f"{d['total'] / d['budget']:.1%}"})
    out.append(render_table(rows, ["part", "tokens", "share"], fmt=fmt))
    due = "yes" if d["compaction_due"] else "no"
    counted = "the whole history (--all)" if d.get("counts") == "all" else "after the last compaction boundary"
    out.append(f"\nctx's count, {counted}, against the budget {d['budget']} ({d['available']} available) · "
               f"{d['records']} records in {d['chunks']} chunks · tokenizer {d['tokenizer']}"
               f"{'' if d['exact'] else ' (approximate)'}")
    out.append(f"curation at {d['curation_trigger_pct']:.0%}: due {'yes' if d['curation_due'] else 'no'} · "
               f"compaction at {d['compaction_trigger_pct']:.0%}: due {due} · hard limit "
               f"{d['hard_limit_pct']:.0%}: {'OVER' if d['over_hard_limit'] else 'ok'}")
    out.append(f"workspace {d['workspace']}: {d['workspace_from']}")
    if d.get("worker_failed"):
        f = d["worker_failed"]
        out.append(f"the hooks' background worker FAILED at {f.get('timestamp', '?')}: {f.get('reason', '?')} "
                   f"(its stderr: {f.get('log', 'logs/worker.log')})")
    if "reported_tokens" in d:
        err = d["count_error_pct"]
        out.append(f"provider reported {d['reported_tokens']} tokens at its last response; counted "
                   f"{d['counted_at_report']} locally ({err:+.1%}; the provider's count includes the "
                   f"system prompt and tool schemas a transcript does not record)")
    return "\n".join(out)
