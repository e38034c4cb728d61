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
    PGPASSWORD or ~/.pgpass (libpq's PG* variables work) and ctx never prints it. The store's owner
    runs `ctx store init` once and `ctx store migrate` after upgrading ctx; `ctx store grant-sql ROLE
    PROJECT` prints the SQL for a login role that row-level security keeps to its project's rows;
    `ctx store migrate --to` moves a home's data in and out exactly; `ctx store check` also reports
    functions that would let one role read another's rows. On the shared store, memory (MEMORY.md, observations) is the project's, shared by the fleet;
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
    _apply_schema(url, "init")


def _apply_schema(url: str | None, command: str) -> None:
    pg = _pg(url)
    done = pg.init(note)
    for d in done:
        note(f"ctx store {command}: applied migration {d}")
    note(f"ctx store {command}: {pg.where} is at schema version {pg.schema_version()}")


@store.command("check")
@url_option
@jq_option
@output_options
@home_option
def check(url, jq_expr, table, as_json, table_fmt):
    """Reachability, server version, pgvector, schema version, this project's row counts, and
    the safety of the functions that run as the store's owner.

    Each function of the store's schema that runs as its owner (SECURITY DEFINER) with unsafe
    settings gets one line on stderr: no search_path of its own, one that does not end with
    pg_temp or names a schema other roles may create objects in, EXECUTE granted to PUBLIC, an
    owner that bypasses row-level security while other roles may run it, a role's name taken as
    an argument. Exits non-zero when the store is unreachable, its schema is missing or old, or
    any function is unsafe (`ctx store migrate`, run by the store's owner, fixes a store an older
    ctx made).

    \b
    Example:
      ctx store check --json
    """
    from ..store.backend import store_url
    from ..store.pg_security import owner_problem

    if not (url or store_url(get_home())):
        home = get_home()
        emit_listing([{"store": "embedded", "where": home.path, "chunks": home.cold_storage_chunks()}],
                     table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)
        return
    pg = _pg(url)
    info = pg.check()
    unsafe = pg.unsafe_functions() if info["schema_version"] else []
    info["unsafe_functions"] = len(unsafe)
    emit_listing([info], table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr)
    for line in unsafe:  # never silenced by --quiet: each is a finding
        click.echo(f"ctx store check: unsafe: {line}", err=True)
    problems, hints = [], []
    if info["schema_version"] != info["schema_wanted"]:
        problems.append(f"schema version {info['schema_version']}, this ctx needs {info['schema_wanted']}")
        hints.append("run `ctx store init`")
    if unsafe:
        problems.append(f"{len(unsafe)} function(s) that run as the store's owner are unsafe (listed above)")
        hints.append("run `ctx store migrate` as the store's owner")
        if owner_problem(unsafe):
            hints.append("give the store to an owner that is neither a superuser nor BYPASSRLS (docs/store.md, Roles)")
    if problems:
        raise CtxError(f"store {pg.where}: " + "; ".join(problems), hint="; ".join(hints))


@store.command("migrate")
@click.option("--to", "to", metavar="URL|embedded",
              help="postgresql://… to move this home's files there; `embedded` to bring a store's rows home. "
                   "Without it: bring the store's schema up to date.")
@click.option("--from", "from_", metavar="URL", help="With --to embedded: the store to read (default: the configured one).")
@url_option
@workspace_option
@home_option
def migrate(to, from_, url):
    """Bring a store's schema up to date, or copy everything between the embedded store and
    PostgreSQL, exactly and resumably.

    Without --to: apply the schema migrations the store (--url, else the configured one)
    lacks, as `ctx store init` does; run it as the store's owner after upgrading ctx (a store
    an older ctx made had functions that let one agent role read another project's rows).

    With --to: cold storage, logs, the session index, sessions' state with its archive (what
    left a kept section), the archived CONTEXT.md copies and `ctx maintain`'s state of the home,
    and the workspace's memory (MEMORY.md, observations/: the store project's memory on
    PostgreSQL). Chunks move as their exact bytes; what the destination already has is skipped,
    never overwritten (run it again to finish an interrupted move); progress goes to stderr.
    Exits non-zero when a chunk at the destination differs from the source.

    \b
    Examples:
      ctx store migrate --to postgresql://agents_a@db.example/ctx
      ctx store migrate --to embedded --from postgresql://agents_a@db.example/ctx
    """
    from ..store import pg_move

    if to is None:
        if from_:
            raise UsageProblem("--from goes with --to embedded; to bring a store's schema up to date, use --url")
        _apply_schema(url, "migrate")
        return
    if url:
        raise UsageProblem("--url names the store whose schema `ctx store migrate` brings up to date (without "
                           "--to); with --to, name the store with --to or --from")
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

    The store's owner runs it (the store must have had `ctx store migrate` or `init` of this ctx).
    The role gets its project's rows of ctx's tables and the search functions, which check its
    projects themselves; EXECUTE on every other ctx function is revoked from it and from PUBLIC.
    Where the owner owns the database, no role but the owner keeps TEMP (temporary objects) on it,
    and where it owns the schema, none but the owner may create objects there; elsewhere the SQL
    leaves them and a WARNING says so.

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
