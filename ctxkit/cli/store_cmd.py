"""ctx store init|check|migrate|grant-sql|embed: the shared PostgreSQL store."""
from __future__ import annotations

import click

from ..errors import CtxError, UsageProblem
from .common import (emit_listing, get_home, get_workspace, home_option, jq_option, note, output_options,
                     workspace_option)


@click.group("store")
def store():
    """The store ctx keeps its data in: files under $CTX_HOME (the default) or a shared PostgreSQL.

    Set `store: postgresql://USER@HOST/DB?sslmode=verify-full` in config.yaml (or CTX_STORE_URL) and
    `store_project` (or CTX_STORE_PROJECT) on every machine of a project; the password comes from
    PGPASSWORD or ~/.pgpass (libpq's PG* variables work) and ctx never prints it. The database's owner
    runs `ctx store init` once; `ctx store grant-sql ROLE PROJECT` prints the SQL for a login role that
    row-level security keeps to its project's rows; `ctx store migrate` moves a home's data in and out
    exactly. On the shared store, memory (MEMORY.md, observations) is the project's, shared by the fleet;
    the workspace's own files (CONTEXT.md, AGENTS.md, SOUL.md, …) stay local. Step by step: docs/store.md.

    \b
    Examples:
      ctx store check
      ctx store grant-sql agents_a project-a > grant.sql
    """


def _pg(url: str | None):
    from ..store.backend import is_postgres_url, open_store, store_project, store_url

    home = get_home()
    url = url or store_url(home)
    if not url:
        raise UsageProblem("no shared store configured: set CTX_STORE_URL or `store` in config.yaml, or pass --url")
    if not is_postgres_url(url):
        raise UsageProblem("the store URL must be a postgresql:// URL")
    if url == store_url(home):
        return open_store(home)
    from ..store.pg import PgStore

    return PgStore(url, store_project(home), home)


url_option = click.option("--url", metavar="URL", help="The PostgreSQL store (default: CTX_STORE_URL or `store`).")


@store.command("init")
@url_option
@home_option
def init(url):
    """Create or upgrade the schema (numbered migrations recorded in ctx_schema_migrations).

    Safe to run again and from several machines at once. Installs pgvector when the server
    has it and the role may (else semantic search ranks keyword candidates exactly).

    \b
    Example:
      CTX_STORE_URL=postgresql://ctx_owner@localhost/ctx ctx store init
    """
    pg = _pg(url)
    done = pg.init(note)
    for d in done:
        note(f"ctx store init: applied migration {d}")
    note(f"ctx store init: {pg.where} is at schema version {pg.schema_version()}")


@store.command("check")
@url_option
@jq_option
@output_options
@home_option
def check(url, jq_expr, table, as_json, table_fmt):
    """Reachability, server version, pgvector, schema version, and this project's row counts.

    Exits non-zero when the store is unreachable or its schema is missing or old.

    \b
    Example:
      ctx store check --json
    """
    from ..store.backend import store_url

    if not (url or store_url(get_home())):
        home = get_home()
        emit_listing([{"store": "embedded", "where": home.path, "chunks": home.cold_storage_chunks()}],
                     table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)
        return
    pg = _pg(url)
    info = pg.check()
    emit_listing([info], table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)
    if info["schema_version"] != info["schema_wanted"]:
        raise CtxError(f"store {pg.where}: schema version {info['schema_version']}, this ctx needs "
                       f"{info['schema_wanted']}", hint="run `ctx store init`")


@store.command("migrate")
@click.option("--to", "to", required=True, metavar="URL|embedded",
              help="postgresql://… to move this home's files there; `embedded` to bring a store's rows home.")
@click.option("--from", "from_", metavar="URL", help="With --to embedded: the store to read (default: the configured one).")
@workspace_option
@home_option
def migrate(to, from_):
    """Copy everything between the embedded store and PostgreSQL, exactly and resumably.

    Cold storage, logs, the session index, sessions' state with its archive (what left a
    kept section), the archived CONTEXT.md copies and `ctx maintain`'s state of the home, and
    the workspace's memory (MEMORY.md, observations/: the store project's memory on PostgreSQL).
    Chunks move as their exact bytes; what the destination already has is skipped, never
    overwritten (run it again to finish an interrupted move); progress goes to stderr.
    Exits non-zero when a chunk at the destination differs from the source.

    \b
    Examples:
      ctx store migrate --to postgresql://agents_a@db.example/ctx
      ctx store migrate --to embedded --from postgresql://agents_a@db.example/ctx
    """
    from ..store import pg_move

    home = get_home()
    if to == "embedded":
        pg = _pg(from_)
        pg.require_schema()
        rep = pg_move.to_embedded(home, pg, note, get_workspace())
    else:
        pg = _pg(to)
        pg.require_schema()
        rep = pg_move.to_pg(home, pg, note, get_workspace())
    if rep.differs:
        raise CtxError(f"{len(rep.differs)} item(s) differ at the destination and were left as they are, "
                       f"first: {rep.differs[0]}")


@store.command("grant-sql")
@click.argument("role")
@click.argument("project")
@click.option("--schema", default="public", show_default=True, help="The schema `ctx store init` used.")
def grant_sql(role, project, schema):
    """Print the SQL giving login ROLE the rows of PROJECT and nothing else (row-level security).

    \b
    Example:
      ctx store grant-sql agents_a project-a > grant.sql
    """
    from ..store.pg_schema import grant_sql as sql

    click.echo(sql(role, project, schema), nl=False)


@store.command("embed")
@click.option("--batch", type=click.IntRange(min=1), default=256, show_default=True, help="Chunks per round.")
@url_option
@home_option
def embed(batch, url):
    """Fill the store's vector index (pgvector) for chunks that have no vector yet.

    \b
    Example:
      ctx store embed
    """
    from ..services.embedding import make_embedder

    pg = _pg(url)
    if not pg.has_vectors():
        raise CtxError(f"store {pg.where} has no vector index (pgvector is not installed there)")
    emb = None
    n = 0
    while True:
        rows = pg.cold.missing_vectors("minilm", batch)
        if not rows:
            break
        emb = emb or make_embedder(get_home(), "minilm", batch)
        vecs = emb.embed([t for _, _, t in rows])
        n += pg.cold.put_vectors("minilm", [(s, c, v) for (s, c, _), v in zip(rows, vecs)])
        note(f"ctx store embed: {n} chunk(s)")
    note(f"ctx store embed: {n} chunk(s) embedded")
