"""The shared store's schema as numbered migrations, each recorded in ctx_schema_migrations.

`ctx store init` applies the missing ones under an advisory lock (several machines may run it
at once). Migrations 1 and 2 are the schema every store has (2: memory, observations, the
archive of what left a kept section of a session's state, and the maintain state); the vector table (pgvector, HNSW) is an
optional step recorded as version 101, applied when the extension can be installed; 102 adds the
term statistics keyword search ranks by (a store without them counts terms in the GIN index); 103
indexes the words by project and searches through functions every role's search can run on the
index (a store without it searches with plain queries); 104 does the same for the nearest
vectors, where pgvector is installed.
"""
from __future__ import annotations

SCHEMA_VERSION = 2
VECTOR_DIM = 384          # all-MiniLM-L6-v2, the embedder ctx ships
TENANT_TABLES_V1 = ("ctx_chunks", "ctx_logs", "ctx_sessions", "ctx_state", "ctx_state_history")
TENANT_TABLES_V2 = ("ctx_memory", "ctx_observations", "ctx_archive", "ctx_context_archive", "ctx_runstate")
TENANT_TABLES = TENANT_TABLES_V1 + TENANT_TABLES_V2
SEQUENCES = ("ctx_logs_id_seq", "ctx_archive_id_seq")

V1 = """
CREATE TABLE IF NOT EXISTS ctx_project_roles (
    role_name name NOT NULL, project text NOT NULL, PRIMARY KEY (role_name, project));
REVOKE ALL ON ctx_project_roles FROM PUBLIC;

CREATE OR REPLACE FUNCTION ctx_may_access(p text, r name) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_catalog AS
    $$ SELECT EXISTS (SELECT 1 FROM {schema}.ctx_project_roles x WHERE x.role_name = r AND x.project = p) $$;

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

RLS = """
ALTER TABLE {t} ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS ctx_tenant ON {t};
CREATE POLICY ctx_tenant ON {t} USING (ctx_may_access(project, current_user))
    WITH CHECK (ctx_may_access(project, current_user));
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
CREATE OR REPLACE FUNCTION ctx_terms_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ctx_terms AS t (project, term, df)
        SELECT n.project, l.lexeme, COUNT(*) FROM new_rows n, unnest(n.tsv) l GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (project, term) DO UPDATE SET df = t.df + excluded.df;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION ctx_terms_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM ctx_terms t, (SELECT DISTINCT o.project, l.lexeme FROM old_rows o, unnest(o.tsv) l) g
        WHERE t.project = g.project AND t.term = g.lexeme ORDER BY t.project, t.term FOR UPDATE OF t;
    UPDATE ctx_terms t SET df = t.df - g.n
        FROM (SELECT o.project, l.lexeme, COUNT(*) AS n FROM old_rows o, unnest(o.tsv) l GROUP BY 1, 2) g
        WHERE t.project = g.project AND t.term = g.lexeme;
    RETURN NULL;
END $$;
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


# Keyword search that reads a project's own matches, through its index, for every role:
# - one GIN index over (project, words): a search meets only its project's matches (with the words
#   alone indexed, a store of several projects had the planner AND the words' bitmap with a
#   bitmap of the project's every row from a btree index, 50-80 ms at 1M chunks, for each term);
# - the words (tsv) kept in the row (STORAGE MAIN, not the TOAST table): a search reads them for
#   every chunk it ranks and every phrase it checks;
# - the searches as SECURITY DEFINER functions that check the login role's access to the project
#   themselves: under row-level security the planner uses an index only for leakproof operators,
#   and tsvector's @@ is not one, so an agent role's search read every row of the table.
#   ctx_term_counts: chunks holding each term (the term statistics for a word, the index up to
#   `cap` for a phrase such as refresh_token); ctx_keyword_match: the first `scan` chunks
#   matching `q` (and not `excluded`, in `sess` when given), the best `lim` by ts_rank(rank_q),
#   with their gist and text (no row of it then passes the row-level security check, a function
#   call per row, again).
#   Their queries are planned for the values given (EXECUTE), as a search's own query would be.
# - how they match the project (ctx_project_match, volatile for its EXPLAIN): in the index by
#   project, or, for a project holding a third of the rows or more (the planner's estimate), through the words' entries alone
#   with the project checked per row: the project's own entries in the index are then about as
#   many as the table's rows, and reading them (8 ms per million) costs more than the few other
#   projects' rows among the words' matches.
SEARCH = """
CREATE INDEX IF NOT EXISTS ctx_chunks_words ON ctx_chunks USING gin ((ARRAY[project]), tsv);
DROP INDEX IF EXISTS ctx_chunks_tsv;
ALTER TABLE ctx_chunks ALTER COLUMN tsv SET STORAGE MAIN;
CREATE OR REPLACE FUNCTION ctx_may_search(p text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_catalog AS $$
    SELECT ctx_may_access(p, session_user)
        OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = session_user AND (r.rolsuper OR r.rolbypassrls))
        OR pg_has_role(session_user, (SELECT relowner FROM pg_class WHERE oid = 'ctx_chunks'::regclass), 'MEMBER') $$;
CREATE OR REPLACE FUNCTION ctx_project_match(p text) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_catalog AS $$
DECLARE
    plan json;
    total real;
BEGIN
    SELECT c.reltuples INTO total FROM pg_class c WHERE c.oid = 'ctx_chunks'::regclass;
    EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM ctx_chunks WHERE project = %L', p) INTO plan;
    IF total > 0 AND (plan->0->'Plan'->>'Plan Rows')::real * 3 >= total THEN
        RETURN '(c.project = $1) IS TRUE';
    END IF;
    RETURN 'ARRAY[c.project] @> ARRAY[$1]';
END $$;
CREATE OR REPLACE FUNCTION ctx_term_counts(p text, terms text[], cap integer) RETURNS bigint[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_catalog AS $$
DECLARE
    t text;
    n bigint;
    out bigint[] := '{{}}';
    allowed boolean := ctx_may_search(p);
    matching text := ctx_project_match(p);
BEGIN
    FOREACH t IN ARRAY terms LOOP
        n := 0;
        IF NOT allowed THEN
            NULL;
        ELSIF t !~ '_' THEN
            SELECT COALESCE(MAX(s.df), 0) INTO n FROM ctx_terms s WHERE s.project = p AND s.term = t;
        ELSE
            EXECUTE 'SELECT COUNT(*) FROM (SELECT FROM ctx_chunks c WHERE ' || matching
                    || ' AND c.tsv @@ to_tsquery(''simple'', quote_literal($2)) LIMIT $3) x' INTO n USING p, t, cap;
        END IF;
        out := out || n;
    END LOOP;
    RETURN out;
END $$;
CREATE OR REPLACE FUNCTION ctx_keyword_match(p text, q tsquery, excluded tsquery, sess text, rank_q tsquery,
                                             scan integer, lim integer)
    RETURNS TABLE (session text, chunk_id text, gist text, body text, rank real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 200 SET search_path = {schema}, pg_catalog AS $$
DECLARE
    matching text := 'SELECT c.session, c.chunk_id, c.tsv FROM ctx_chunks c WHERE ' || ctx_project_match(p)
                     || ' AND c.tsv @@ $2';
BEGIN
    IF NOT ctx_may_search(p) THEN
        RETURN;
    END IF;
    IF excluded IS NOT NULL THEN
        matching := matching || ' AND NOT c.tsv @@ $3';
    END IF;
    IF sess IS NOT NULL THEN
        matching := matching || ' AND c.session = $4';
    END IF;
    RETURN QUERY EXECUTE 'SELECT c.session, c.chunk_id, c.gist, c.body, m.rank FROM (SELECT m.session, m.chunk_id, '
        '(-ts_rank(m.tsv, $5, 1))::real AS rank FROM (' || matching || ' LIMIT $6) m ORDER BY 3, 1, 2 LIMIT $7) m '
        'JOIN ctx_chunks c ON c.project = $1 AND c.session = m.session AND c.chunk_id = m.chunk_id '
        'ORDER BY m.rank, c.session, c.chunk_id' USING p, q, excluded, sess, rank_q, scan, lim;
END $$;
"""
SEARCH_FUNCTIONS = ("ctx_may_search(text)", "ctx_term_counts(text, text[], integer)",
                    "ctx_keyword_match(text, tsquery, tsquery, text, tsquery, integer, integer)")

# The nearest vectors the same way (migration 104, with pgvector): under row-level security an
# agent role's query did not use the HNSW index either (it ranked every vector of the project).
# The caller's settings (hnsw.ef_search, an iterative scan, enable_indexscan off for an exact
# ranking) hold inside the function.
VECTOR_SEARCH = """
CREATE OR REPLACE FUNCTION ctx_vector_match(p text, m text, v vector, sess text, lim integer)
    RETURNS TABLE (session text, chunk_id text, gist text, body text, similarity double precision)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 200 SET search_path = {schema}, pg_catalog AS $$
DECLARE
    nearest text := 'SELECT x.project, x.session, x.chunk_id, x.embedding <=> $3 AS dist FROM ctx_vectors x '
                    'WHERE x.project = $1 AND x.model = $2';
BEGIN
    IF NOT ctx_may_search(p) THEN
        RETURN;
    END IF;
    IF sess IS NOT NULL THEN
        nearest := nearest || ' AND x.session = $4';
    END IF;
    RETURN QUERY EXECUTE 'SELECT c.session, c.chunk_id, c.gist, c.body, 1 - n.dist FROM (' || nearest
        || ' ORDER BY x.embedding <=> $3 LIMIT $5) n JOIN ctx_chunks c ON c.project = n.project '
        'AND c.session = n.session AND c.chunk_id = n.chunk_id ORDER BY n.dist' USING p, m, v, sess, lim;
END $$;
"""
VECTOR_FUNCTIONS = ("ctx_vector_match(text, text, vector, text, integer)",)


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
        schema = cur.execute("SELECT quote_ident(current_schema())").fetchone()[0]
        if 1 not in have:
            cur.execute(V1.format(schema=schema))
            for t in TENANT_TABLES_V1:
                cur.execute(RLS.format(t=t))
            cur.execute("INSERT INTO ctx_schema_migrations (version, name) VALUES (1, 'chunks, logs, sessions, "
                        "state, row-level security')")
            done.append("1: chunks, logs, sessions, state, row-level security")
        if 2 not in have:
            cur.execute(V2)
            for t in TENANT_TABLES_V2:
                cur.execute(RLS.format(t=t))
            cur.execute("INSERT INTO ctx_schema_migrations (version, name) VALUES (2, 'memory, observations, "
                        "state archive, context archive, maintain state')")
            done.append("2: memory, observations, state archive, context archive, maintain state")

    def vectors(cur):
        cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
        cur.execute(VECTORS.format(dim=VECTOR_DIM))
        cur.execute(RLS.format(t="ctx_vectors"))

    def terms(cur):
        cur.execute("LOCK TABLE ctx_chunks IN SHARE ROW EXCLUSIVE MODE")  # no drop between count and trigger
        cur.execute(TERMS)
        cur.execute(RLS.format(t="ctx_terms"))

    def search(cur):
        if note:
            n = cur.execute("SELECT COUNT(*) FROM ctx_chunks").fetchone()[0]
            if n > 100_000:
                note(f"ctx: indexing the words of {n} chunks by project (drops wait until it is done)")
        cur.execute(SEARCH.format(schema=schema))

    def vector_search(cur):
        if not cur.execute("SELECT to_regclass('ctx_vectors') IS NOT NULL").fetchone()[0]:
            return False   # no pgvector (yet): a later init applies it
        cur.execute(VECTOR_SEARCH.format(schema=schema))

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
                                 (104, "vector search for every role", vector_search)):
        if version not in have and _step(conn, version, name, apply):
            done.append(f"{version}: {name}")
    return done


def grant_sql(role: str, project: str, schema: str = "public") -> str:
    """The SQL that gives a login role its project's rows and nothing else."""
    import re

    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", role):
        from ..errors import UsageProblem

        raise UsageProblem(f"role {role!r}: use a plain lower-case SQL name (letters, digits, _)")
    proj = project.replace("'", "''")
    tables = ", ".join(TENANT_TABLES)
    return f"""-- run as the store's owner (the role that ran `ctx store init`)
CREATE ROLE {role} LOGIN;            -- then: \\password {role}  (or use certificates / pg_hba.conf)
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT ON ctx_schema_migrations TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {role};
-- the vector table exists only where pgvector is installed
DO $$ BEGIN IF to_regclass('ctx_vectors') IS NOT NULL THEN
  EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON ctx_vectors TO {role}'; END IF; END $$;
-- the term statistics keyword search reads (kept by triggers as chunks come and go)
DO $$ BEGIN IF to_regclass('ctx_terms') IS NOT NULL THEN
  EXECUTE 'GRANT SELECT, INSERT, UPDATE ON ctx_terms TO {role}'; END IF; END $$;
-- keyword search (it checks the login role's projects itself: row-level security keeps an index from it)
DO $$ BEGIN IF to_regproc('ctx_keyword_match') IS NOT NULL THEN
  EXECUTE 'GRANT EXECUTE ON FUNCTION {", ".join(SEARCH_FUNCTIONS)} TO {role}'; END IF; END $$;
DO $$ BEGIN IF to_regproc('ctx_vector_match') IS NOT NULL THEN
  EXECUTE 'GRANT EXECUTE ON FUNCTION {", ".join(VECTOR_FUNCTIONS)} TO {role}'; END IF; END $$;
GRANT USAGE ON SEQUENCE {", ".join(SEQUENCES)} TO {role};
GRANT EXECUTE ON FUNCTION ctx_may_access(text, name) TO {role};
INSERT INTO ctx_project_roles (role_name, project) VALUES ('{role}', '{proj}') ON CONFLICT DO NOTHING;
-- the agent's machines then set: CTX_STORE_URL=postgresql://{role}@HOST/DB?sslmode=verify-full
--                                CTX_STORE_PROJECT={project}
"""
