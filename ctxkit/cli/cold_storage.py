"""ctx cold-storage list|show|search|purge|reindex|stats."""
from __future__ import annotations

import click

from .completion import complete_chunk, complete_session

from ..errors import UsageProblem
from ..io.jsonl import Writer
from ..services.cold import resolve_chunk, search_cold
from ..store.backend import ColdStore, open_store
from ..store.cold import check_id
from .common import note, embedder_name, emit_listing, get_home, home_option, jq_option, output_options, session_prefix

@click.group("cold-storage")
def cold_storage():
    """Inspect and manage dropped chunks (cold-storage/SESSION/CHUNK.jsonl).

    \b
    Examples:
      ctx cold-storage list -t
      ctx cold-storage search "refresh token" -n 5
      ctx cold-storage purge --expired -f
    """


def _store() -> ColdStore:
    return open_store(get_home()).cold


@cold_storage.command("list")
@click.option("--session", metavar="ID", shell_complete=complete_session, callback=session_prefix, help="Only this session.")
@click.option("--expired", is_flag=True, help="Only chunks past recoverable_until.")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Only the N most recent drops.")
@jq_option
@output_options
@home_option
def list_(session, expired, limit, jq_expr, table, as_json, table_fmt):
    """List stored chunks: session, chunk, tokens, score, reason, expiry.

    \b
    Example:
      ctx cold-storage list --session abc -t
    """
    if session:
        check_id(session, "session id")
    rows = [{k: r[k] for k in ("session", "chunk", "tokens", "score", "reason", "gist", "dropped_at", "expires")}
            for r in _store().rows(session, expired)]
    if limit:
        rows = sorted(rows, key=lambda r: r["dropped_at"] or "")[-limit:]
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)


@cold_storage.command("show")
@click.argument("chunk_id", shell_complete=complete_chunk)
@click.option("--session", metavar="ID", shell_complete=complete_session, callback=session_prefix, help="The chunk's session, when the id is in several.")
@click.option("--entry", is_flag=True, help="Print the whole stored entry (metadata + records) as one JSON object.")
@home_option
def show(chunk_id, session, entry):
    """Print a stored chunk's records (JSONL).

    \b
    Example:
      ctx cold-storage show c-0005 --session abc | ctx count
    """

    check_id(chunk_id, "chunk id")
    if session:
        check_id(session, "session id")
    store = _store()
    data = store.load(resolve_chunk(store, chunk_id, session)["path"])
    if entry:
        Writer().write(data)
    else:
        Writer().write_all(data["records"])


@cold_storage.command("search")
@click.argument("query")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=5, show_default=True, metavar="N",
              help="How many hits.")
@click.option("--session", metavar="ID", shell_complete=complete_session, callback=session_prefix, help="Only this session.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]), help="Config: embedder.")
@jq_option
@output_options
@home_option
def search(query, limit, session, embedder, jq_expr, table, as_json, table_fmt):
    """Find dropped chunks again: hybrid BM25 + embedding similarity.

    Keyword candidates come rarest terms first: the chunks holding the query's rarest terms are
    all ranked (while they number at most 2,000), then the chunks holding every other term, then
    any, at most 2,000 of each; so a common word does not rank every chunk of a large store, and
    below 2,000 matches the ranking is exact.

    \b
    Examples:
      ctx cold-storage search "refresh token" -n 5
      ctx cold-storage search "jwt" --embedder keyword --jq .chunk_id
    """
    if session:
        check_id(session, "session id")
    home = get_home()
    from .progress import progress_bar, spinner

    rows = search_cold(home, _store(), query, limit, session, embedder_name(home, embedder),
                       progress_bar, spinner)
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)


@cold_storage.command("purge")
@click.option("--expired", is_flag=True, help="Chunks past recoverable_until.")
@click.option("--session", metavar="ID", shell_complete=complete_session, callback=session_prefix, help="Every chunk of this session.")
@click.option("-f", "--force", is_flag=True, help="Really delete.")
@click.option("-n", "--dry-run", is_flag=True, help="List what would be deleted (on stdout); delete nothing.")
@home_option
def purge(expired, session, force, dry_run):
    """Delete chunks for good: the expired ones (nightly cron) or one session's.

    Like `git clean`: nothing is deleted without -f, and -n lists what would go.

    \b
    Examples:
      ctx cold-storage purge --expired -f
      ctx cold-storage purge --session abc -n
    """
    if not expired and not session:
        raise UsageProblem("say what to purge: --expired and/or --session ID")
    if force and dry_run:
        raise UsageProblem("-f/--force and -n/--dry-run cannot be used together")
    if not force and not dry_run:
        raise UsageProblem("refusing to delete without -f/--force", hint="-n/--dry-run lists what would go")
    if session:
        check_id(session, "session id")
    store = _store()
    rows = store.rows(session, expired)
    for r in rows:
        if dry_run:
            click.echo(f"would delete {r['session']}/{r['chunk']} ({r['tokens']} tokens)")
        else:
            store.delete(r["session"], r["chunk"], r["path"])
    note(f"ctx: {'would purge' if dry_run else 'purged'} {len(rows)} chunk(s)")


@cold_storage.command("reindex")
@home_option
def reindex():
    """Rebuild index.sqlite from the chunk files (the files are the source of truth).

    Works whatever state the index is in (a damaged one is set aside); an unreadable chunk
    file is moved to cold-storage/.quarantine/ and reported, not fatal.

    \b
    Example:
      ctx cold-storage reindex && ctx cold-storage stats -t
    """
    bad: list[str] = []
    n = _store().reindex(bad)
    for b in bad:
        click.echo(f"ctx: quarantined {b}", err=True)
    note(f"ctx: indexed {n} chunk(s)" + (f"; quarantined {len(bad)} unreadable file(s)" if bad else ""))


@cold_storage.command("stats")
@jq_option
@output_options
@home_option
def stats(jq_expr, table, as_json, table_fmt):
    """Chunks, tokens and bytes per session.

    \b
    Example:
      ctx cold-storage stats -t
    """
    emit_listing(_store().stats(), table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)


