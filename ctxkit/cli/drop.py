"""ctx drop (low-relevance chunks -> cold storage, a stub stays) and ctx drops (what was dropped)."""
from __future__ import annotations

import tempfile
import time

import click

from .completion import complete_session

from .. import records as R
from ..backends.tokenizers import count_records
from ..core.drop import DROP, SUMMARIZE, decide_facts, facts, gist, stub_text
from ..core.groups import iter_groups
from ..core.timeutil import parse_since
from ..errors import UsageProblem
from ..io.jsonl import Writer
from ..services.spool import GroupSpool
from ..store import logs
from ..store.cold import ColdStorage, check_id, new_entry
from .common import note, InputRecords, emit_listing, get_home, home_option, input_options, jq_option, output_options
from .count import resolve_tokenizer
from .score import SCORE_EVENT


@click.command("drop")
@input_options
@click.option("--cutoff", type=click.FloatRange(0, 1), help="Drop chunks scoring at or below this "
              "(config: relevance_cutoff, 0.3).")
@click.option("--keep", "keep_at", type=click.FloatRange(0, 1), help="Keep chunks scoring at or above this; "
              "those in between are flagged `summarize` (config: relevance_keep, 0.7).")
@click.option("--min-keep", type=click.IntRange(min=0), help="Never drop the newest N chunks "
              "(config: min_chunks_to_keep, 5).")
@click.option("--dry-run", is_flag=True, help="Print each chunk's decision instead; change nothing.")
@click.option("-t", "--table", is_flag=True, help="With --dry-run: a table (default on a terminal).")
@home_option
def drop(file, from_, skip_invalid, cutoff, keep_at, min_keep, dry_run, table):
    """Move low-relevance chunks to cold storage; a one-line stub takes each one's place.

    Reads scored records (run `ctx score` first). KEEP at or above --keep, DROP at or
    below --cutoff, SUMMARIZE (flag for ctx compact) in between. Always kept: the newest
    --min-keep chunks, system records, pinned/important chunks. A dropped chunk is written
    and fsynced to cold-storage/SESSION/CHUNK.jsonl before its stub is printed.

    \b
    Examples:
      ctx import s.jsonl | ctx score --query "fix the JWT refresh bug" | ctx drop > kept.jsonl
      ctx score s.jsonl -q "refresh token" | ctx drop --dry-run -t
    """
    home = get_home()
    cfg = home.config
    cutoff = cfg.get("relevance_cutoff", cutoff)
    keep_at = cfg.get("relevance_keep", keep_at)
    if cutoff > keep_at:
        raise UsageProblem(f"--cutoff {cutoff} is above --keep {keep_at}")
    min_keep = cfg.get("min_chunks_to_keep", min_keep)
    started = time.monotonic()
    from ..store import sessions

    tok = resolve_tokenizer(None, None)
    tally = sessions.tally(())
    query: list = [None]

    def sized(group: list[dict]) -> tuple:
        """What stays in memory per chunk: its facts, each record's tokens, session and id, gist."""
        for r in group:
            meta = r.get("meta") or {}
            if r.get("kind") == "event" and isinstance(meta, dict) and meta.get("type") == SCORE_EVENT:
                query[0] = meta.get("query")  # the last score event names the query
        sessions.tally(group, tally)
        counts = count_records(tok, [dict(r) for r in group], reuse=True)
        tokens = sum(counts)
        stub = _stub(group, tokens, group[0].get("group"), None, None)
        saving = tokens - count_records(tok, [stub])[0]
        return facts(group, saving), counts, tokens

    enabled = cfg.get("cold_storage_enabled")
    store = ColdStorage(home.cold_storage_dir)
    days = cfg.get("recoverable_for_days")
    before = after = dropped = summarized = 0
    # Memory stays flat as the input grows: chunks wait in a temporary file (only their facts
    # stay in memory), and the output is written to another and copied out whole at the end,
    # so a failing drop prints nothing rather than half.
    with GroupSpool(sized) as spool, tempfile.TemporaryFile("w+", encoding="utf-8") as pending:
        spool.extend(iter_groups(InputRecords(file, from_, skip_invalid)))
        decisions = decide_facts([f for f, _, _ in spool.info], cutoff, keep_at, min_keep,
                                 cfg.get("summarize_medium_chunks"))
        if dry_run:
            rows = []
            for g, (f, _, tokens), d in zip(spool.groups(range(len(spool))), spool.info, decisions):
                if d.reason != "not_a_message" or g[0].get("kind") != "event":
                    rows.append({"chunk": g[0].get("group"), "session": g[0].get("session"), "decision": d.action,
                                 "reason": d.reason, "score": d.score, "tokens": tokens, "gist": gist(g, 60)})
            emit_listing(rows, table=table, as_json=False)
            return
        if not enabled and any(d.action == DROP for d in decisions):
            click.echo("ctx: cold_storage_enabled is false: nothing is dropped (dropping needs a place to "
                       "keep the chunks)", err=True)
        out = Writer(pending)
        for orig, (_, counts, tokens), d in zip(spool.groups(range(len(spool))), spool.info, decisions):
            g = [dict(r, tokens=n, tokenizer=tok.name) for r, n in zip(orig, counts)]
            before += tokens
            if d.action == DROP and enabled:
                session = g[0].get("session") or "default"
                chunk_id = g[0].get("group")
                entry = new_entry(session, chunk_id, orig, tokens, d.reason, d.score, query[0], days, gist(g, 80))
                path, chunk_id, redrop = store.write(entry)  # durable before the chunk leaves the stream
                stub = _stub(g, tokens, chunk_id, path, d.score)
                stub["tokens"] = count_records(tok, [stub])[0]
                stub["tokenizer"] = tok.name
                logs.append(home, "drops", {"event": "chunk_redropped" if redrop else "chunk_dropped",
                                            "chunk_id": chunk_id, "session_id": session,
                                            "reason": d.reason, "relevance_score": d.score, "threshold_used": cutoff,
                                            "tokens": 0 if redrop else tokens, "cold_storage_path": path,
                                            "query": query[0]})
                out.write(stub)
                after += stub["tokens"]
                dropped += 1
                continue
            if d.action == SUMMARIZE:
                for r in g:
                    R.add_flag(r, "summarize")
                summarized += 1
            out.write_all(g)
            after += tokens
        pending.seek(0)
        _copy_out(pending)
        total = len(spool)
    sessions.commit(home, tally, file)
    logs.append(home, "compaction", {
        "event": "relevance_drop", "trigger": "manual", "tokens_before": before, "tokens_after": after,
        "chunks_dropped": dropped, "chunks_summarized": summarized, "chunks_total": total,
        "query": query[0], "duration_s": round(time.monotonic() - started, 3),
        "config_used": f"relevance_cutoff={cutoff} relevance_keep={keep_at} min_chunks_to_keep={min_keep}"})
    note(f"ctx: dropped {dropped} of {total} chunks to cold storage, flagged {summarized} to "
               f"summarize; {before} -> {after} tokens")


def _copy_out(src) -> None:
    import shutil
    import sys

    from ..errors import PipeClosed

    try:
        shutil.copyfileobj(src, sys.stdout, 1 << 20)
        sys.stdout.flush()
    except BrokenPipeError:
        raise PipeClosed() from None


def _stub(group: list[dict], tokens: int, chunk_id: str, path: str | None, score) -> dict:
    session = group[0].get("session") or "default"
    ts = max((r["ts"] for r in group if r.get("ts")), default=None)
    return R.make("stub", id=f"stub-{chunk_id}", session=session, ts=ts, role="user",
                  content=stub_text(chunk_id, session, tokens, len(group), gist(group, 80)), group=chunk_id,
                  score=score, meta={"chunk_id": chunk_id, "tokens": tokens, "records": len(group),
                                     "cold_storage_path": path})


@click.command("drops")
@click.option("--session", metavar="ID", shell_complete=complete_session, help="Only this session.")
@click.option("--since", metavar="WHEN", help="Only drops since a duration ago (24h, 7d) or an ISO time.")
@click.option("--reason", metavar="R", help="Only this drop reason (e.g. low_relevance).")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Only the last N drops.")
@jq_option
@output_options
@home_option
def drops(session, since, reason, limit, jq_expr, table, as_json, table_fmt):
    """What was dropped, when and why (from logs/drops.jsonl).

    \b
    Examples:
      ctx drops --session abc --since 24h -t
      ctx drops -n 5
      ctx drops --jq .relevance_score | sort -n | uniq -c
    """
    home = get_home()
    if session:
        check_id(session, "session id")
    try:
        when = parse_since(since) if since else None
    except ValueError as e:
        raise UsageProblem(f"--since: {e}") from None
    rows = (ev for ev in logs.read(home, "drops", when)
            if (not session or ev.get("session_id") == session) and (not reason or ev.get("reason") == reason))
    if limit:
        import collections

        rows = collections.deque(rows, maxlen=limit)
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 columns=["timestamp", "session_id", "chunk_id", "reason", "relevance_score", "threshold_used",
                          "tokens"] if table else None)

