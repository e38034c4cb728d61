"""The shared store's schema as numbered migrations, each recorded in ctx_schema_migrations.

`ctx store init` applies the missing ones under an advisory lock (several machines may run it
at once). Migrations 1 and 2 are the schema every store has (2: memory, observations, the
archive of what left a kept section of a session's state, and the maintain state); the vector table (pgvector, HNSW) is an
optional step recorded as version 101, applied when the extension can be installed; 102 adds the
term statistics keyword search ranks by (a store without them counts terms in the GIN index); 103
indexes the words by project and searches through functions every role's search can run on the
index (a store without it searches with plain queries); 104 does the same for the nearest
vectors, where pgvector is installed; 105 closes the tenancy escape of stores made before it (every
function pinned to pg_catalog, the store's schema and pg_temp last, names qualified, no function
that answers for a role it is given, EXECUTE for the search entry points only: docs/store.md, Roles).

Every function runs with `SET search_path = pg_catalog, SCHEMA, pg_temp` and names what it reads
with its schema: a function that runs as the store's owner (SECURITY DEFINER) with a path that let
the caller's temporary objects come first (PostgreSQL searches pg_temp first unless the path puts
it elsewhere) read whatever the caller put there: a temporary view named pg_roles made any role a
superuser in ctx's eyes. `pg_security.py` checks this on a live store.
"""
from __future__ import annotations

SCHEMA_VERSION = 2
VECTOR_DIM = 384          # all-MiniLM-L6-v2, the embedder ctx ships
TENANT_TABLES_V1 = ("ctx_chunks", "ctx_logs", "ctx_sessions", "ctx_state", "ctx_state_history")
TENANT_TABLES_V2 = ("ctx_memory", "ctx_observations", "ctx_archive", "ctx_context_archive", "ctx_runstate")
TENANT_TABLES = TENANT_TABLES_V1 + TENANT_TABLES_V2
SEQUENCES = ("ctx_logs_id_seq", "ctx_archive_id_seq")

# The search path of every ctx function: the catalog first (nothing shadows a built-in), the store's
# schema (only its owner creates objects there), temporary objects last (never before a real one).
PATH = "pg_catalog, {schema}, pg_temp"
# The search functions every agent role may run (grant-sql grants them); every other ctx function
# is run by the owner's functions and triggers only, never granted.
ENTRY_POINTS = ("ctx_term_counts", "ctx_keyword_match", "ctx_vector_match")
TENANCY_MIGRATION = 105

V1 = """
CREATE TABLE IF NOT EXISTS ctx_project_roles (
    role_name name NOT NULL, project text NOT NULL, PRIMARY KEY (role_name, project));
REVOKE ALL ON ctx_project_roles FROM PUBLIC;
{my_projects}

CREATE TABLE IF NOT EXISTS ctx_chunks (
    project text NOT NULL, session text NOT NULL, chunk_id text NOT NULL,
    raw text NOT NULL,                 -- the chunk entry exactly as the embedded store's file holds it
    records_hash text NOT NULL,
    ts text, dropped_at text, tokens integer, score double precision, reason text, prompt text,
    recoverable_until text, gist text, body text NOT NULL, bytes integer NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
    PRIMARY KEY (project, session, chunk_id));
CREATE INDEX IF NOT EXISTS ctx_chunks_tsv ON ctx_chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS ctx_chunks_id ON ctx_chunks (project, chunk_id);
CREATE INDEX IF NOT EXISTS ctx_chunks_dropped ON ctx_chunks (project, dropped_at);

CREATE TABLE IF NOT EXISTS ctx_logs (
    id bigserial PRIMARY KEY, project text NOT NULL, name text NOT NULL, line text NOT NULL,
    at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS ctx_logs_name ON ctx_logs (project, name, id);

CREATE TABLE IF NOT EXISTS ctx_sessions (
    project text NOT NULL, session text NOT NULL, entry jsonb NOT NULL, PRIMARY KEY (project, session));

CREATE TABLE IF NOT EXISTS ctx_state (
    project text NOT NULL, session text NOT NULL, version integer NOT NULL, body text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (project, session));
CREATE TABLE IF NOT EXISTS ctx_state_history (
    project text NOT NULL, session text NOT NULL, version integer NOT NULL, body text NOT NULL,
    saved_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (project, session, version));
"""

# MEMORY.md (one versioned document per project), observations (one row per observation file),
# what left a kept section of a session's state (the embedded store's archive/SECTION.md), the
# copies `ctx context archive` and session ends make ($CTX_HOME/archive/), and the per-session
# state of `ctx maintain` (maintain-state.json), each with a version checked on update
V2 = """
CREATE TABLE IF NOT EXISTS ctx_memory (
    project text NOT NULL PRIMARY KEY, version integer NOT NULL, body text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS ctx_observations (
    project text NOT NULL, name text NOT NULL, session text, body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (project, name));
CREATE TABLE IF NOT EXISTS ctx_archive (
    id bigserial PRIMARY KEY, project text NOT NULL, session text NOT NULL, section text NOT NULL,
    item text NOT NULL, at timestamptz NOT NULL DEFAULT now(), UNIQUE (project, session, section, item));
CREATE TABLE IF NOT EXISTS ctx_context_archive (
    project text NOT NULL, name text NOT NULL, body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (project, name));
CREATE TABLE IF NOT EXISTS ctx_runstate (
    project text NOT NULL, name text NOT NULL, key text NOT NULL, version integer NOT NULL,
    value jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (project, name, key));
"""

# The projects of the role running a query (current_user: in a view, unlike in a SECURITY DEFINER
# function, that is the caller): each role reads its own rows of ctx_project_roles and no other
# (security_barrier: no condition of the caller's, a failing cast for one, sees another role's row
# first). Row-level security reads it once per query (an InitPlan), not once per row.
MY_PROJECTS = """
CREATE OR REPLACE VIEW {schema}.ctx_my_projects WITH (security_barrier) AS
    SELECT x.project FROM {schema}.ctx_project_roles x WHERE x.role_name = CURRENT_USER;
REVOKE ALL ON {schema}.ctx_my_projects FROM PUBLIC;
GRANT SELECT ON {schema}.ctx_my_projects TO PUBLIC;
"""

RLS = """
ALTER TABLE {schema}.{t} ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS ctx_tenant ON {schema}.{t};
CREATE POLICY ctx_tenant ON {schema}.{t}
    USING (project = ANY (ARRAY(SELECT m.project FROM {schema}.ctx_my_projects m)))
    WITH CHECK (project = ANY (ARRAY(SELECT m.project FROM {schema}.ctx_my_projects m)));
"""

VECTORS = """
CREATE TABLE IF NOT EXISTS ctx_vectors (
    project text NOT NULL, session text NOT NULL, chunk_id text NOT NULL, model text NOT NULL,
    embedding vector({dim}) NOT NULL,
    PRIMARY KEY (project, session, chunk_id, model),
    FOREIGN KEY (project, session, chunk_id) REFERENCES ctx_chunks ON DELETE CASCADE);
CREATE INDEX IF NOT EXISTS ctx_vectors_hnsw ON ctx_vectors USING hnsw (embedding vector_cosine_ops);
"""


# How many of a project's chunks hold each lexeme (keyword search ranks the rarest terms first,
# core.keyword_tiers: a lookup here, where counting in the GIN index costs as much as the term is
# common). Kept by statement triggers on ctx_chunks; lexemes are taken in order, so concurrent
# drops wait for each other's rows but never deadlock.
TERMS = """
CREATE TABLE IF NOT EXISTS ctx_terms (
    project text NOT NULL, term text NOT NULL, df bigint NOT NULL, PRIMARY KEY (project, term));
{functions}
DROP TRIGGER IF EXISTS ctx_terms_add ON ctx_chunks;
CREATE TRIGGER ctx_terms_add AFTER INSERT ON ctx_chunks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ctx_terms_add();
DROP TRIGGER IF EXISTS ctx_terms_remove ON ctx_chunks;
CREATE TRIGGER ctx_terms_remove AFTER DELETE ON ctx_chunks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ctx_terms_remove();
INSERT INTO ctx_terms (project, term, df)
    SELECT c.project, l.lexeme, COUNT(*) FROM ctx_chunks c, unnest(c.tsv) l GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (project, term) DO NOTHING;
"""
# The triggers run as the role that stores or purges a chunk (its own project's terms, under
# row-level security); a trigger needs no EXECUTE right, so no role is granted them.
TERMS_FUNCTIONS = """
CREATE OR REPLACE FUNCTION {schema}.ctx_terms_add() RETURNS trigger LANGUAGE plpgsql SET search_path = {path} AS $$
BEGIN
    INSERT INTO {schema}.ctx_terms AS t (project, term, df)
        SELECT n.project, l.lexeme, COUNT(*) FROM new_rows n, pg_catalog.unnest(n.tsv) l GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (project, term) DO UPDATE SET df = t.df + excluded.df;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION {schema}.ctx_terms_add() FROM PUBLIC;
CREATE OR REPLACE FUNCTION {schema}.ctx_terms_remove() RETURNS trigger LANGUAGE plpgsql SET search_path = {path} AS $$
BEGIN
    PERFORM 1 FROM {schema}.ctx_terms t,
                   (SELECT DISTINCT o.project, l.lexeme FROM old_rows o, pg_catalog.unnest(o.tsv) l) g
        WHERE t.project = g.project AND t.term = g.lexeme ORDER BY t.project, t.term FOR UPDATE OF t;
    UPDATE {schema}.ctx_terms t SET df = t.df - g.n
        FROM (SELECT o.project, l.lexeme, COUNT(*) AS n FROM old_rows o, pg_catalog.unnest(o.tsv) l GROUP BY 1, 2) g
        WHERE t.project = g.project AND t.term = g.lexeme;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION {schema}.ctx_terms_remove() FROM PUBLIC;
"""


# Keyword search that reads a project's own matches, through its index, for every role:
# - one GIN index over (project, words): a search meets only its project's matches (with the words
#   alone indexed, a store of several projects had the planner AND the words' bitmap with a
#   bitmap of the project's every row from a btree index, 50-80 ms at 1M chunks, for each term);
# - the words (tsv) kept in the row (STORAGE MAIN, not the TOAST table): a search reads them for
#   every chunk it ranks and every phrase it checks;
# - the searches as SECURITY DEFINER functions that check the login role's access to the project
#   themselves, before anything else: under row-level security the planner uses an index only for
#   leakproof operators, and tsvector's @@ is not one, so an agent role's search read every row of
#   the table. Another project's name gets what a project that does not exist gets (no rows,
#   zeros), whatever it holds.
#   ctx_term_counts: chunks holding each term (the term statistics for a word, the index up to
#   `cap` for a phrase such as refresh_token); ctx_keyword_match: the first `scan` chunks
#   matching `q` (and not `excluded`, in `sess` when given), the best `lim` by ts_rank(rank_q),
#   with their gist and text (no row of it then passes the row-level security check, a function
#   call per row, again).
#   Their queries are planned for the values given (EXECUTE), as a search's own query would be.
# - ctx_may_search: whether the login role (session_user: inside a SECURITY DEFINER function
#   current_user is the owner) may search project p: its own projects in ctx_project_roles, every
#   project for a role that bypasses row-level security or is a member of the tables' owner. It
#   answers for the caller only, and only the search functions run it.
# - how they match the project (ctx_project_match, volatile for its EXPLAIN): in the index by
#   project, or, for a project holding a third of the rows or more (the planner's estimate), through the words' entries alone
#   with the project checked per row: the project's own entries in the index are then about as
#   many as the table's rows, and reading them (8 ms per million) costs more than the few other
#   projects' rows among the words' matches.
SEARCH = """
CREATE INDEX IF NOT EXISTS ctx_chunks_words ON ctx_chunks USING gin ((ARRAY[project]), tsv);
DROP INDEX IF EXISTS ctx_chunks_tsv;
ALTER TABLE ctx_chunks ALTER COLUMN tsv SET STORAGE MAIN;
{functions}
"""
SEARCH_FUNCTIONS_SQL = """
CREATE OR REPLACE FUNCTION {schema}.ctx_may_search(p text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {path} AS $$
    SELECT EXISTS (SELECT 1 FROM {schema}.ctx_project_roles x WHERE x.role_name = SESSION_USER AND x.project = p)
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                   WHERE r.rolname = SESSION_USER AND (r.rolsuper OR r.rolbypassrls))
        OR pg_catalog.pg_has_role(SESSION_USER, (SELECT c.relowner FROM pg_catalog.pg_class c
                                                 WHERE c.oid = {chunks}::pg_catalog.regclass), 'MEMBER') $$;
REVOKE ALL ON FUNCTION {schema}.ctx_may_search(text) FROM PUBLIC;
CREATE OR REPLACE FUNCTION {schema}.ctx_project_match(p text) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = {path} AS $$
DECLARE
    plan json;
    total real;
BEGIN
    SELECT c.reltuples INTO total FROM pg_catalog.pg_class c WHERE c.oid = {chunks}::pg_catalog.regclass;
    EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM {schema}.ctx_chunks WHERE project = %L', p)
        INTO plan;
    IF total > 0 AND (plan->0->'Plan'->>'Plan Rows')::real * 3 >= total THEN
        RETURN '(c.project = $1) IS TRUE';
    END IF;
    RETURN 'ARRAY[c.project] @> ARRAY[$1]';
END $$;
REVOKE ALL ON FUNCTION {schema}.ctx_project_match(text) FROM PUBLIC;
CREATE OR REPLACE FUNCTION {schema}.ctx_term_counts(p text, terms text[], cap integer) RETURNS bigint[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {path} AS $$
DECLARE
    t text;
    n bigint;
    out bigint[] := '{{}}';
    allowed boolean := {schema}.ctx_may_search(p);
    matching text;
BEGIN
    IF allowed THEN
        matching := {schema}.ctx_project_match(p);
    END IF;
    FOREACH t IN ARRAY terms LOOP
        n := 0;
        IF NOT allowed THEN
            NULL;
        ELSIF t !~ '_' THEN
            SELECT COALESCE(MAX(s.df), 0) INTO n FROM {schema}.ctx_terms s WHERE s.project = p AND s.term = t;
        ELSE
            EXECUTE 'SELECT COUNT(*) FROM (SELECT FROM {schema}.ctx_chunks c WHERE ' || matching
                    || ' AND c.tsv @@ pg_catalog.to_tsquery(''simple'', pg_catalog.quote_literal($2)) LIMIT $3) x'
                INTO n USING p, t, cap;
        END IF;
        out := out || n;
    END LOOP;
    RETURN out;
END $$;
REVOKE ALL ON FUNCTION {schema}.ctx_term_counts(text, text[], integer) FROM PUBLIC;
CREATE OR REPLACE FUNCTION {schema}.ctx_keyword_match(p text, q tsquery, excluded tsquery, sess text, rank_q tsquery,
                                             scan integer, lim integer)
    RETURNS TABLE (session text, chunk_id text, gist text, body text, rank real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 200 SET search_path = {path} AS $$
DECLARE
    matching text;
BEGIN
    IF NOT {schema}.ctx_may_search(p) THEN
        RETURN;
    END IF;
    matching := 'SELECT c.session, c.chunk_id, c.tsv FROM {schema}.ctx_chunks c WHERE '
                || {schema}.ctx_project_match(p) || ' AND c.tsv @@ $2';
    IF excluded IS NOT NULL THEN
        matching := matching || ' AND NOT c.tsv @@ $3';
    END IF;
    IF sess IS NOT NULL THEN
        matching := matching || ' AND c.session = $4';
    END IF;
    RETURN QUERY EXECUTE 'SELECT c.session, c.chunk_id, c.gist, c.body, m.rank FROM (SELECT m.session, m.chunk_id, '
        '(-pg_catalog.ts_rank(m.tsv, $5, 1))::real AS rank FROM (' || matching || ' LIMIT $6) m ORDER BY 3, 1, 2 '
        'LIMIT $7) m JOIN {schema}.ctx_chunks c ON c.project = $1 AND c.session = m.session '
        'AND c.chunk_id = m.chunk_id ORDER BY m.rank, c.session, c.chunk_id'
        USING p, q, excluded, sess, rank_q, scan, lim;
END $$;
REVOKE ALL ON FUNCTION {schema}.ctx_keyword_match(text, tsquery, tsquery, text, tsquery, integer, integer) FROM PUBLIC;
"""
SEARCH_FUNCTIONS = ("ctx_term_counts(text, text[], integer)",
                    "ctx_keyword_match(text, tsquery, tsquery, text, tsquery, integer, integer)")

# The nearest vectors the same way (migration 104, with pgvector): under row-level security an
# agent role's query did not use the HNSW index either (it ranked every vector of the project).
# The caller's settings (hnsw.ef_search, an iterative scan, enable_indexscan off for an exact
# ranking) hold inside the function. Its path has pgvector's schema too, where that is another
# (its distance operator).
VECTOR_SEARCH = """
CREATE OR REPLACE FUNCTION {schema}.ctx_vector_match(p text, m text, v vector, sess text, lim integer)
    RETURNS TABLE (session text, chunk_id text, gist text, body text, similarity double precision)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 200 SET search_path = {vector_path} AS $$
DECLARE
    nearest text := 'SELECT x.project, x.session, x.chunk_id, x.embedding <=> $3 AS dist FROM {schema}.ctx_vectors x '
                    'WHERE x.project = $1 AND x.model = $2';
BEGIN
    IF NOT {schema}.ctx_may_search(p) THEN
        RETURN;
    END IF;
    IF sess IS NOT NULL THEN
        nearest := nearest || ' AND x.session = $4';
    END IF;
    RETURN QUERY EXECUTE 'SELECT c.session, c.chunk_id, c.gist, c.body, 1 - n.dist FROM (' || nearest
        || ' ORDER BY x.embedding <=> $3 LIMIT $5) n JOIN {schema}.ctx_chunks c ON c.project = n.project '
        'AND c.session = n.session AND c.chunk_id = n.chunk_id ORDER BY n.dist' USING p, m, v, sess, lim;
END $$;
REVOKE ALL ON FUNCTION {schema}.ctx_vector_match(text, text, vector, text, integer) FROM PUBLIC;
"""
VECTOR_FUNCTIONS = ("ctx_vector_match(text, text, vector, text, integer)",)

# EXECUTE on ctx's functions: PUBLIC's revoked from every one, and every other role's from all but
# the entry points (grant-sql of an older ctx granted ctx_may_search and ctx_may_access).
REVOKE_EXECUTE = r"""
DO $$
DECLARE
    f pg_catalog.regprocedure;
    g pg_catalog.oid;
BEGIN
    FOR f, g IN SELECT p.oid::pg_catalog.regprocedure, a.grantee FROM pg_catalog.pg_proc p
            CROSS JOIN LATERAL pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
            WHERE p.pronamespace = {schema_lit}::pg_catalog.regnamespace AND p.proname LIKE 'ctx\_%'
              AND a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner
              AND (a.grantee = 0 OR {others}p.proname <> ALL ({entry_points}))
    LOOP
        EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM %s', f,
            CASE WHEN g = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g)) END);
    END LOOP;
END $$;
"""


def _lock(cur) -> None:
    cur.execute("SELECT pg_advisory_xact_lock(hashtextextended('ctx store schema', 0))")


def _step(conn, version: int, name: str, apply) -> bool:
    """An optional migration in its own transaction under the schema lock, unless another machine
    applied it meanwhile; `apply(cur)` returns False where it does not apply (yet)."""
    with conn.transaction():
        cur = conn.cursor()
        _lock(cur)
        cur.execute("SELECT 1 FROM ctx_schema_migrations WHERE version = %s", (version,))
        if cur.fetchone() is not None or apply(cur) is False:
            return False
        cur.execute("INSERT INTO ctx_schema_migrations (version, name) VALUES (%s, %s)", (version, name))
        return True


def _names(cur) -> dict:
    """What the templates name: the store's schema (the owner's current one) as an identifier and as
    literals, and the functions' search path."""
    schema, schema_lit, chunks = cur.execute(
        "SELECT quote_ident(current_schema()), quote_literal(quote_ident(current_schema())), "
        "quote_literal(quote_ident(current_schema()) || '.ctx_chunks')").fetchone()
    if "'" in schema or "$" in schema:
        from ..errors import CtxError

        raise CtxError(f"schema {schema}: ctx's functions cannot name a schema with ' or $ in its name",
                       hint="create the store in a schema with a plain name")
    return {"schema": schema, "schema_lit": schema_lit, "chunks": chunks, "path": PATH.format(schema=schema)}


def _vector_path(cur, names: dict) -> str:
    """The search path of the vector search: pgvector's schema (its distance operator) after the
    store's, where that is another."""
    row = cur.execute("SELECT quote_ident(n.nspname) FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
                      "ON n.oid = e.extnamespace WHERE e.extname = 'vector'").fetchone()
    if not row or row[0] in (names["schema"], "pg_catalog"):
        return names["path"]
    return f"pg_catalog, {names['schema']}, {row[0]}, pg_temp"


def revoke_execute(names: dict, role: str | None = None) -> str:
    """SQL revoking EXECUTE on ctx's functions from PUBLIC, and on all but the entry points from
    `role` (every role other than the owner when None)."""
    entry = "ARRAY[" + ", ".join(f"'{f}'" for f in ENTRY_POINTS) + "]::pg_catalog.name[]"
    others = "" if role is None else f"a.grantee = '{role}'::pg_catalog.regrole AND "
    return REVOKE_EXECUTE.format(schema_lit=names["schema_lit"], entry_points=entry, others=others)


def harden(cur, names: dict) -> None:
    """Migration 105 on a store made before it: the projects' view and the policies reading it,
    no ctx_may_access(text, name) (it answered for any role it was given), every function that
    exists made again pinned and qualified, and EXECUTE for the entry points only."""
    s = names["schema"]
    cur.execute(MY_PROJECTS.format(**names))
    for t in TENANT_TABLES + ("ctx_vectors", "ctx_terms"):
        if cur.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{s}.{t}",)).fetchone()[0]:
            cur.execute(RLS.format(t=t, **names))
    cur.execute(f"DROP FUNCTION IF EXISTS {s}.ctx_may_access(text, name)")

    def has(fn: str) -> bool:
        return cur.execute("SELECT to_regproc(%s) IS NOT NULL", (f"{s}.{fn}",)).fetchone()[0]
    if has("ctx_terms_add") or has("ctx_terms_remove"):
        cur.execute(TERMS_FUNCTIONS.format(**names))
    if has("ctx_keyword_match") or has("ctx_may_search") or has("ctx_term_counts"):
        cur.execute(SEARCH_FUNCTIONS_SQL.format(**names))
    if has("ctx_vector_match"):
        cur.execute(VECTOR_SEARCH.format(**names, vector_path=_vector_path(cur, names)))
    cur.execute(revoke_execute(names))


def migrate(conn, note=None) -> list[str]:
    """Apply what is missing; return what was applied (names)."""
    done: list[str] = []
    with conn.transaction():
        cur = conn.cursor()
        _lock(cur)
        cur.execute("CREATE TABLE IF NOT EXISTS ctx_schema_migrations (version integer PRIMARY KEY, "
                    "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        cur.execute("SELECT version FROM ctx_schema_migrations")
        have = {v for (v,) in cur.fetchall()}
        names = _names(cur)
        if 1 not in have:
            cur.execute(V1.format(my_projects=MY_PROJECTS.format(**names)))
            for t in TENANT_TABLES_V1:
                cur.execute(RLS.format(t=t, **names))
            cur.execute("INSERT INTO ctx_schema_migrations (version, name) VALUES (1, 'chunks, logs, sessions, "
                        "state, row-level security')")
            done.append("1: chunks, logs, sessions, state, row-level security")
        if 2 not in have:
            cur.execute(V2)
            for t in TENANT_TABLES_V2:
                cur.execute(RLS.format(t=t, **names))
            cur.execute("INSERT INTO ctx_schema_migrations (version, name) VALUES (2, 'memory, observations, "
                        "state archive, context archive, maintain state')")
            done.append("2: memory, observations, state archive, context archive, maintain state")

    def vectors(cur):
        cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
        cur.execute(VECTORS.format(dim=VECTOR_DIM))
        cur.execute(RLS.format(t="ctx_vectors", **names))

    def terms(cur):
        cur.execute("LOCK TABLE ctx_chunks IN SHARE ROW EXCLUSIVE MODE")  # no drop between count and trigger
        cur.execute(TERMS.format(functions=TERMS_FUNCTIONS.format(**names)))
        cur.execute(RLS.format(t="ctx_terms", **names))

    def search(cur):
        if note:
            n = cur.execute("SELECT COUNT(*) FROM ctx_chunks").fetchone()[0]
            if n > 100_000:
                note(f"ctx: indexing the words of {n} chunks by project (drops wait until it is done)")
        cur.execute(SEARCH.format(functions=SEARCH_FUNCTIONS_SQL.format(**names)))

    def vector_search(cur):
        if not cur.execute("SELECT to_regclass('ctx_vectors') IS NOT NULL").fetchone()[0]:
            return False   # no pgvector (yet): a later init applies it
        cur.execute(VECTOR_SEARCH.format(**names, vector_path=_vector_path(cur, names)))

    if 101 not in have:
        try:
            if _step(conn, 101, "pgvector: chunk vectors with an HNSW index", vectors):
                done.append("101: pgvector chunk vectors (HNSW)")
        except Exception as e:  # no pgvector on this server, or no right to install it: optional
            import psycopg

            if not isinstance(e, psycopg.Error):
                raise
            if note:
                note("ctx: pgvector is not available on this server: semantic search will rank the keyword "
                     "candidates exactly (no vector index)")
    for version, name, apply in ((102, "term statistics for keyword search", terms),
                                 (103, "keyword search by project, for every role", search),
                                 (104, "vector search for every role", vector_search),
                                 (TENANCY_MIGRATION, "functions pinned to their schema, no role oracle, "
                                  "EXECUTE for the search entry points only", lambda cur: harden(cur, names))):
        if version not in have and _step(conn, version, name, apply):
            done.append(f"{version}: {name}")
    return done


def grant_sql(role: str, project: str, schema: str = "public") -> str:
    """The SQL that gives a login role its project's rows and nothing else."""
    import re

    from ..errors import UsageProblem

    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", role):
        raise UsageProblem(f"role {role!r}: use a plain lower-case SQL name (letters, digits, _)")
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
        raise UsageProblem(f"schema {schema!r}: use a plain lower-case SQL name (letters, digits, _)")
    proj = project.replace("'", "''")
    s = schema
    tables = ", ".join(f"{s}.{t}" for t in TENANT_TABLES)
    names = {"schema": s, "schema_lit": f"'{s}'"}
    search = ", ".join(f"{s}.{f}" for f in SEARCH_FUNCTIONS)
    vector = ", ".join(f"{s}.{f}" for f in VECTOR_FUNCTIONS)
    return f"""-- run as the store's owner (the role that ran `ctx store init`)
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM {s}.ctx_schema_migrations WHERE version = {TENANCY_MIGRATION}) THEN
  RAISE EXCEPTION 'ctx: this store lacks migration {TENANCY_MIGRATION} (its functions let one role read another''s '
    'rows): run `ctx store migrate` as its owner first'; END IF; END $$;
CREATE ROLE {role} LOGIN;            -- then: \\password {role}  (or use certificates / pg_hba.conf)
GRANT USAGE ON SCHEMA {s} TO {role};
GRANT SELECT ON {s}.ctx_schema_migrations TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {role};
-- the vector table exists only where pgvector is installed
DO $$ BEGIN IF pg_catalog.to_regclass('{s}.ctx_vectors') IS NOT NULL THEN
  EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON {s}.ctx_vectors TO {role}'; END IF; END $$;
-- the term statistics keyword search reads (kept by triggers as chunks come and go)
DO $$ BEGIN IF pg_catalog.to_regclass('{s}.ctx_terms') IS NOT NULL THEN
  EXECUTE 'GRANT SELECT, INSERT, UPDATE ON {s}.ctx_terms TO {role}'; END IF; END $$;
GRANT USAGE ON SEQUENCE {", ".join(f"{s}.{q}" for q in SEQUENCES)} TO {role};
-- ctx's functions: no role runs them by default (EXECUTE revoked from PUBLIC), and this role runs
-- the search entry points only, which check its login role's projects themselves (row-level
-- security keeps an index from a plain query); the helpers they call are run by the owner alone
{revoke_execute(names, role).strip()}
DO $$ BEGIN IF pg_catalog.to_regproc('{s}.ctx_keyword_match') IS NOT NULL THEN
  EXECUTE 'GRANT EXECUTE ON FUNCTION {search} TO {role}'; END IF; END $$;
DO $$ BEGIN IF pg_catalog.to_regproc('{s}.ctx_vector_match') IS NOT NULL THEN
  EXECUTE 'GRANT EXECUTE ON FUNCTION {vector} TO {role}'; END IF; END $$;
-- temporary objects: agents need none. Revoked from every role (PUBLIC) where the role running this
-- owns the database; elsewhere a WARNING says so (ctx's functions read no temporary object anyway)
DO $$ BEGIN
  IF (SELECT d.datdba FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
     = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
    EXECUTE pg_catalog.format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC, {role}', pg_catalog.current_database());
  ELSE
    RAISE WARNING 'ctx: % does not own database %, so every role keeps TEMP there (ctx''s functions read no '
      'temporary object); its owner may run: REVOKE TEMPORARY ON DATABASE % FROM PUBLIC',
      CURRENT_USER, pg_catalog.current_database(), pg_catalog.current_database();
  END IF; END $$;
-- objects in the store's schema: its owner alone creates them (PUBLIC's CREATE, the default before
-- PostgreSQL 15, revoked where the role running this owns the schema; elsewhere a WARNING says so)
DO $$ BEGIN
  IF pg_catalog.has_schema_privilege('public', '{s}', 'CREATE') THEN
    IF pg_catalog.pg_has_role(CURRENT_USER, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                             WHERE n.nspname = '{s}'), 'USAGE') THEN
      EXECUTE 'REVOKE CREATE ON SCHEMA {s} FROM PUBLIC';
    ELSE
      RAISE WARNING 'ctx: every role may create objects in schema {s}; its owner may run: '
        'REVOKE CREATE ON SCHEMA {s} FROM PUBLIC';
    END IF;
  END IF; END $$;
INSERT INTO {s}.ctx_project_roles (role_name, project) VALUES ('{role}', '{proj}') ON CONFLICT DO NOTHING;
-- the agent's machines then set: CTX_STORE_URL=postgresql://{role}@HOST/DB?sslmode=verify-full
--                                CTX_STORE_PROJECT={project}
"""
