"""Tenancy on the shared PostgreSQL store, tried as an attacker.

Two agent roles set up by the store's owner with `ctx store grant-sql` (projects A and B); agent B
drops real content (a real Claude Code transcript, scored and dropped by `ctx drop`, its vectors
made by MiniLM with `ctx store embed`) and a chunk with a word of its own; agent A then tries every
way in it can think of: temporary objects named as every catalog and ctx relation the functions
read (the list is taken from the functions' bodies, so a new function's reads are covered), every
ctx function called with B's project, SET ROLE and SET SESSION AUTHORIZATION to B, row_security
off, crafted project names, tsquery strings, terms and ids, the vector search with B's own stored
vector, leaky conditions on the view of its projects, the planner's statistics, and the ctx
commands themselves. Every attempt must show none of B's rows and answer for B exactly as for a
project that does not exist.

The store's owner is a role without SUPERUSER or BYPASSRLS that owns the database, as
docs/store.md sets one up (a superuser installs pgvector). Two stores: one this ctx made, and one
made by ctx before migration 105 (tests/fixtures/pg_schema_main_d05d119.py is the schema module of
main at d05d119, kept as it was), on which the issue's attack is shown to work, `ctx store check`
flags every function, and `ctx store migrate` fixes it.
"""
import importlib.util
import json
import re
import uuid

import pytest

from conftest import FIXTURES, ROOT, needs_pg, run

pytestmark = needs_pg

OWN_PG_SERVER = True  # their own databases and roles on the test server, whatever CTX_TEST_STORE says
OLD_SCHEMA = FIXTURES / "pg_schema_main_d05d119.py"
TRANSCRIPT = ROOT / "examples" / "claude-code_spotter_491e126e_session.jsonl"
B_WORD = "quokkanine"        # a word only B's chunks hold
SHARED_WORD = "bluefalcon"   # a word both projects' chunks hold
ENTRY_POINTS = {"ctx_term_counts", "ctx_keyword_match", "ctx_vector_match"}
NOWHERE = "proj-nowhere"     # a project no role has and no row names
# catalog relations a tenancy check could read, shadowed whether or not a function names them today
CATALOG = ("pg_roles", "pg_authid", "pg_class", "pg_namespace", "pg_auth_members", "pg_proc", "pg_database",
           "pg_extension")


def records(prefix, session, texts):
    return "".join(json.dumps({"v": 1, "kind": "message", "id": f"{prefix}{i}", "session": session,
                               "role": "user" if i % 2 == 0 else "assistant", "content": t,
                               "ts": f"2026-01-01T0{i}:00:00Z"}) + "\n" for i, t in enumerate(texts))


FILLER = " Some more words about it follow here to make the message longer than its stub would be." * 6
A_TEXTS = [f"alphafox notes on the {SHARED_WORD} migration" + FILLER, "pasta recipe: boil water" + FILLER,
           f"{SHARED_WORD} again, with the refresh_token flow" + FILLER, "weather in Paris" + FILLER,
           "keep this one about the JWT bug" + FILLER, "ok"]
B_TEXTS = [f"{B_WORD} {SHARED_WORD}: the deploy key rotation of project B" + FILLER,
           "what project B does next" + FILLER, "ok"]


class Env:
    """The environment a ctx command runs in as one role of the fleet."""

    def __init__(self, monkeypatch, home, tiktoken_cache=None):
        self.mp = monkeypatch
        self.home = home
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        if tiktoken_cache:
            monkeypatch.setenv("TIKTOKEN_CACHE_DIR", tiktoken_cache)

    def be(self, url, project):
        self.mp.setenv("CTX_STORE_URL", url)
        self.mp.setenv("CTX_STORE_PROJECT", project)
        self.mp.setenv("CTX_HOME", str(self.home / project))
        self.mp.setenv("CTX_WORKSPACE", str(self.home / project / "workspace"))


class Fleet:
    def __init__(self, cluster, old: bool):
        self.cluster, self.old = cluster, old
        tag = uuid.uuid4().hex[:8]
        self.db = f"tenancy_{tag}"
        self.owner, self.role = f"owner_{tag}", {"a": f"agent_a_{tag}", "b": f"agent_b_{tag}"}
        self.project = {"a": "proj-a", "b": "proj-b"}
        self.vector = cluster.has_vector()

    def url(self, who):
        if who == "owner":
            return self.cluster.url(self.db, self.owner, "pw-owner")
        return self.cluster.url(self.db, self.role[who], f"pw-{who}")

    def owner_sql(self, sql, args=None):
        import psycopg

        with psycopg.connect(self.url("owner"), autocommit=True) as c:
            cur = c.execute(sql, args)
            return cur.fetchall() if cur.description else None


def old_schema():
    spec = importlib.util.spec_from_file_location("pg_schema_before_105", OLD_SCHEMA)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(cluster, home, tiktoken_cache, old: bool) -> Fleet:
    """A store with its owner, agents A and B granted their projects, B's real drops and vectors."""
    import psycopg

    from ctxkit.store.cold import new_entry
    from ctxkit.store.pg import PgStore

    f = Fleet(cluster, old)
    with psycopg.connect(cluster.url(), autocommit=True) as su:  # the DBA: an owner role and its database
        su.execute(f"CREATE ROLE {f.owner} LOGIN CREATEROLE PASSWORD 'pw-owner'")
        su.execute(f"CREATE DATABASE {f.db} OWNER {f.owner}")
    if f.vector:
        with psycopg.connect(cluster.url(f.db), autocommit=True) as su:
            su.execute("CREATE EXTENSION vector")   # not a trusted extension: the DBA installs it
    with pytest.MonkeyPatch.context() as mp:
        env = Env(mp, home, tiktoken_cache)
        env.be(f.url("owner"), "owner")
        with psycopg.connect(f.url("owner"), autocommit=True) as c:
            if old:
                mod = old_schema()
                mod.migrate(c)
                grants = [mod.grant_sql(f.role[w], f.project[w]) for w in "ab"]
            else:
                res = run("store", "init")
                assert res.code == 0, res.stderr
                grants = [run("store", "grant-sql", f.role[w], f.project[w]).stdout for w in "ab"]
            for w, sql in zip("ab", grants):
                c.execute(sql)
                c.execute(f"ALTER ROLE {f.role[w]} PASSWORD 'pw-{w}'")
        for who, texts, query in (("b", None, "the colour of the sky"), ("a", A_TEXTS, "JWT bug")):
            env.be(f.url(who), f.project[who])
            if texts is None:   # B: a real transcript, scored and half of it dropped
                s = run("score", TRANSCRIPT, "--query", query, "--embedder", "keyword")
                d = run("drop", "--free", "0.5", input=s.stdout)
            else:
                s = run("score", "--query", query, "--embedder", "keyword", input=records("a", "s-a", texts))
                d = run("drop", "--min-keep", "1", "--cutoff", "0.6", "--keep", "0.7", input=s.stdout)
            assert s.code == 0 and d.code == 0, (s.stderr, d.stderr)
        b = PgStore(f.url("b"), f.project["b"])
        b.cold.write(new_entry("s-b-own", "c-b-own", [{"v": 1, "kind": "message", "id": "b1", "session": "s-b-own",
                                                       "role": "user", "content": B_TEXTS[0]}], 40, "low_relevance",
                               0.1, None, 30, f"{B_WORD} gist"))
        b.close()
        a = PgStore(f.url("a"), f.project["a"])
        a.cold.write(new_entry("s-a-own", "c-a-own", [{"v": 1, "kind": "message", "id": "a1", "session": "s-a-own",
                                                       "role": "user", "content": A_TEXTS[0]}], 40, "low_relevance",
                               0.1, None, 30, f"{SHARED_WORD} gist"))
        a.close()
        if f.vector:
            for who in "ba":
                env.be(f.url(who), f.project[who])
                e = run("store", "embed")
                assert e.code == 0 and "embedded" in e.stderr, e.stderr
    f.b_rows = f.owner_sql("SELECT session, chunk_id FROM ctx_chunks WHERE project = 'proj-b'")
    f.a_rows = f.owner_sql("SELECT session, chunk_id FROM ctx_chunks WHERE project = 'proj-a'")
    assert len(f.b_rows) >= 5 and len(f.a_rows) >= 2
    # B's fingerprints: anything of these in what A sees is a leak
    f.secrets = {B_WORD} | {s for s, _ in f.b_rows} | {c for _, c in f.b_rows if c not in {x for _, x in f.a_rows}}
    f.b_vector = (f.owner_sql("SELECT embedding::text FROM ctx_vectors WHERE project='proj-b' AND chunk_id='c-b-own'")
                  [0][0] if f.vector else None)
    f.tables = [t for (t,) in f.owner_sql(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'project' "
        "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relrowsecurity ORDER BY 1")]
    return f


@pytest.fixture(scope="module")
def new_fleet(pg_cluster, tmp_path_factory, tiktoken_cache):
    return build(pg_cluster, tmp_path_factory.mktemp("tenancy-new"), tiktoken_cache, old=False)


@pytest.fixture(scope="module")
def old_fleet(pg_cluster, tmp_path_factory, tiktoken_cache):
    return build(pg_cluster, tmp_path_factory.mktemp("tenancy-old"), tiktoken_cache, old=True)


class Probe:
    """Agent A's connection: every statement's result or error, and every notice, kept."""

    def __init__(self, fleet):
        import psycopg

        self.f = fleet
        self.conn = psycopg.connect(fleet.url("a"), autocommit=True)
        self.notices: list[str] = []
        self.conn.add_notice_handler(lambda d: self.notices.append(f"{d.message_primary} {d.message_detail or ''}"))
        self.seen: list[tuple[str, str]] = []
        self.rowcount = -1

    def q(self, sql, args=None):
        import psycopg

        self.rowcount = -1
        try:
            cur = self.conn.execute(sql, args, prepare=False)
            rows = cur.fetchall() if cur.description else []
            self.rowcount = cur.rowcount
            self.seen.append((sql, repr(rows)))
            return rows
        except psycopg.Error as e:
            self.seen.append((sql, f"ERROR {e.sqlstate} {e}"))
            return e

    def leaks(self) -> list[str]:
        text = "\n".join(r for _, r in self.seen) + "\n" + "\n".join(self.notices)
        return sorted(s for s in self.f.secrets if s in text)

    def close(self):
        self.conn.close()


def is_error(x, sqlstate=None):
    import psycopg

    return isinstance(x, psycopg.Error) and (sqlstate is None or x.sqlstate == sqlstate)


def ctx_functions(p: Probe) -> list[tuple]:
    """(signature, name, argument names, argument types, returns a trigger) of every ctx function."""
    return p.q(r"""SELECT p.oid::regprocedure::text, p.proname, COALESCE(p.proargnames, '{}'),
                          ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t),
                          p.prorettype = 'trigger'::regtype
                   FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'public'::regnamespace
                     AND p.proname LIKE 'ctx\_%' ORDER BY 1""")


def call(p: Probe, fn, names, types, project, session=None, vector=None, tsq=SHARED_WORD, terms=None, trigger=False):
    """`fn` called with `project` as its project, and every other argument as an attacker sets it
    (by name where ctx's functions name it, else by type)."""
    by_name = {"p": ("%s", project), "sess": ("%s", session), "m": ("%s", "minilm"),
               "q": ("to_tsquery('simple', %s)", tsq), "rank_q": ("to_tsquery('simple', %s)", tsq),
               "excluded": ("to_tsquery('simple', %s)", None), "terms": ("%s::text[]", terms or [SHARED_WORD, B_WORD]),
               "cap": ("%s", 100), "scan": ("%s", 100), "lim": ("%s", 100), "v": ("%s::vector", vector),
               "r": ("%s::name", "agent_b")}
    by_type = {"text": ("%s", project), "tsquery": ("to_tsquery('simple', %s)", tsq), "integer": ("%s", 100),
               "text[]": ("%s::text[]", [SHARED_WORD, B_WORD]), "vector": ("%s::vector", vector),
               "name": ("%s::name", "agent_b")}
    parts, args = [], []
    for i, t in enumerate(types):
        sql, val = by_name.get(names[i] if i < len(names) else "", by_type.get(t, ("NULL", None)))
        parts.append(sql)
        if "%s" in sql:
            args.append(val)
    return p.q(f"SELECT {fn}()" if trigger else f"SELECT * FROM {fn}({', '.join(parts)})", args)


def same_answer(a, b) -> bool:
    """Two results alike: equal rows, or errors of one kind with one message."""
    if is_error(a) or is_error(b):
        return is_error(a) and is_error(b) and a.sqlstate == b.sqlstate and \
            str(a).replace(NOWHERE, "proj-b") == str(b).replace(NOWHERE, "proj-b")
    return a == b


def every_function_as_for_nowhere(p: Probe, fleet, label: str) -> None:
    """Every ctx function called with B's project answers as for a project nobody has: no rows,
    zeros, or the same error; A's entry points work for A (so the functions are really called)."""
    fns = ctx_functions(p)
    assert {n for _, n, *_ in fns} >= {"ctx_may_search", "ctx_term_counts", "ctx_keyword_match"}, fns
    for sig, name, names, types, trigger in fns:
        for sess in (None, fleet.b_rows[0][0]):
            for tsq in (SHARED_WORD, B_WORD, f"!{B_WORD}", f"{B_WORD}:*", "q:*"):
                got = call(p, sig.split("(")[0], names, types, "proj-b", sess, fleet.b_vector, tsq, trigger=trigger)
                none = call(p, sig.split("(")[0], names, types, NOWHERE, sess, fleet.b_vector, tsq, trigger=trigger)
                assert same_answer(got, none), (label, sig, sess, tsq, got, none)
                if is_error(got):   # a helper or trigger: the right to run it refused, for any project
                    assert name not in ENTRY_POINTS and got.sqlstate == "42501", (label, sig, got)
                elif name == "ctx_term_counts":
                    assert got == [([0, 0],)], (label, sig, got)
                else:
                    assert got == [], (label, sig, got)
        if name in ENTRY_POINTS:   # the caller's own project works
            mine = call(p, sig.split("(")[0], names, types, "proj-a", None, fleet.b_vector, SHARED_WORD)
            assert not is_error(mine) and mine and mine != [([0, 0],)], (label, sig, mine)
        else:   # the helpers and triggers are the owner's
            assert is_error(call(p, sig.split("(")[0], names, types, "proj-a", trigger=trigger), "42501"), (label, sig)


def shadow_everything(p: Probe, fleet, catalog_only: bool = False) -> list[str]:
    """Temporary relations (and functions) named as everything ctx's functions read: the names
    taken from their bodies, plus the catalog's role and ownership relations. Each holds what
    would let A in: every boolean true, every owner and member A, every project B's. With
    `catalog_only`, the catalog's alone (ctx's own tables then still hold B's rows)."""
    body = p.q(r"SELECT string_agg(p.prosrc, ' ') FROM pg_catalog.pg_proc p "
               r"WHERE p.pronamespace = 'public'::regnamespace "
               r"AND p.proname LIKE 'ctx\_%'")[0][0]
    words = sorted(set(re.findall(r"[a-z_][a-z0-9_]*", body.lower())) | set(CATALOG) | {"ctx_project_roles",
                                                                                          "ctx_my_projects"})
    rels = p.q("SELECT c.relname, n.nspname FROM pg_catalog.pg_class c "
               "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
               "WHERE c.relname = ANY(%s) AND n.nspname IN ('pg_catalog', 'public') AND c.relkind IN ('r', 'v', 'p') "
               "AND (n.nspname = 'pg_catalog' OR NOT %s) ORDER BY 1", [words, catalog_only])
    me = p.q("SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user")[0][0]
    shadowed = []
    for rel, ns in rels:
        cols = p.q("SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a "
                   "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                   [f"{ns}.{rel}"])
        made = p.q(f'CREATE TEMP TABLE "{rel}" AS SELECT * FROM {ns}."{rel}"')
        if is_error(made):   # not readable (pg_authid, ctx_project_roles): the same columns, empty
            made = p.q(f'CREATE TEMP TABLE "{rel}" (' + ", ".join(f'"{c}" {t}' for c, t in cols) + ")")
        assert not is_error(made), (rel, made)
        p.q(f'INSERT INTO pg_temp."{rel}" DEFAULT VALUES')
        sets = []
        for c, t in cols:
            if t == "boolean":
                sets.append(f'"{c}" = true')
            elif t in ("oid", "regrole") and (c.endswith("owner") or c in ("member", "roleid", "grantor", "datdba")):
                sets.append(f'"{c}" = {me}')
            elif c in ("rolname", "role_name", "usename"):
                sets.append(f'"{c}" = current_user')
            elif c == "project":
                sets.append(f"\"{c}\" = 'proj-b'")
        if sets:
            assert not is_error(p.q(f'UPDATE pg_temp."{rel}" SET ' + ", ".join(sets))), rel
        # readable by the functions' owner too (a superuser reads it anyway), or a function reading it fails
        # with "permission denied" instead of letting A in
        assert not is_error(p.q(f'GRANT SELECT ON pg_temp."{rel}" TO PUBLIC')), rel
        shadowed.append(rel)
    for fn in ("pg_has_role", "ctx_may_search", "ctx_may_access"):   # never searched in pg_temp; tried anyway
        for args in ("name, oid, text", "text", "text, name"):
            p.q(f"CREATE FUNCTION pg_temp.{fn}({args}) RETURNS boolean LANGUAGE sql AS 'SELECT true'")
    p.q("SET search_path = pg_temp, public, pg_catalog")
    return shadowed


def crafted(p: Probe, fleet) -> None:
    """Crafted project names, tsquery strings, terms and ids: nothing of B, and A's own project
    answered from A's rows only."""
    for project in ("proj-b' OR 'x'='x", "proj-b'--", "proj-%", "%", "_roj-b", "proj-b ", " proj-b", "PROJ-B",
                    "{proj-a,proj-b}", "proj-a') OR ('1'='1", "proj-a\\", "proj-a'; SELECT 1; --", "proj-b\t",
                    "proj-a' UNION SELECT session, chunk_id, gist, body, 0 FROM ctx_chunks --"):
        assert p.q("SELECT * FROM ctx_keyword_match(%s, to_tsquery('simple', %s), NULL, NULL, "
                   "to_tsquery('simple', %s), 100, 100)", [project, SHARED_WORD, SHARED_WORD]) == [], project
        assert p.q("SELECT ctx_term_counts(%s, %s::text[], 100)", [project, [SHARED_WORD, B_WORD, "a_b"]]) \
            == [([0, 0, 0],)], project
    a_sessions = {s for s, _ in fleet.a_rows}
    for tsq in (f"!{B_WORD}", B_WORD, f"{B_WORD}:*", "q:*", f"{SHARED_WORD} | {B_WORD}", f"!({SHARED_WORD})",
                f"{SHARED_WORD} <-> {B_WORD}", "!!!a"):
        for sess in (None, fleet.b_rows[0][0], "s-a' OR 1=1 --", "s-a-own"):
            rows = p.q("SELECT session, chunk_id FROM ctx_keyword_match('proj-a', to_tsquery('simple', %s), NULL, %s, "
                       "to_tsquery('simple', %s), 1000, 1000)", [tsq, sess, tsq])
            assert is_error(rows) or {s for s, _ in rows} <= a_sessions, (tsq, sess, rows)
    terms = [B_WORD, SHARED_WORD, f"{B_WORD}_{SHARED_WORD}", "x') OR ('1'='1", "a_b' | 'quokkanine", "_", "%",
             f"{B_WORD}:*", "refresh_token", "quokka&nine"]
    truth = fleet.owner_sql("SELECT ctx_term_counts('proj-a', %s::text[], 100)", [terms])[0][0]
    assert p.q("SELECT ctx_term_counts('proj-a', %s::text[], 100)", [terms]) == [(truth,)]
    assert truth[0] == 0 and truth[1] >= 1


def vectors(p: Probe, fleet) -> None:
    if not fleet.vector:
        return
    for project in ("proj-b", NOWHERE):
        for sess in (None, "s-b-own"):
            assert p.q("SELECT * FROM ctx_vector_match(%s, 'minilm', %s::vector, %s, 50)",
                       [project, fleet.b_vector, sess]) == [], (project, sess)
    near = p.q("SELECT session, chunk_id FROM ctx_vector_match('proj-a', 'minilm', %s::vector, NULL, 50)",
               [fleet.b_vector])
    assert near and {r for r in near} <= set(fleet.a_rows), near   # B's own vector finds A's nearest only
    assert p.q("SELECT * FROM ctx_vector_match('proj-a', 'minilm', %s::vector, 's-b-own', 50)",
               [fleet.b_vector]) == []
    assert p.q("SELECT count(*) FROM public.ctx_vectors WHERE project = 'proj-b'") == [(0,)]


def roles_and_settings(p: Probe, fleet) -> None:
    for stmt in (f"SET ROLE {fleet.role['b']}", f"SET SESSION AUTHORIZATION {fleet.role['b']}",
                 f"SET ROLE {fleet.owner}", f"SET SESSION AUTHORIZATION {fleet.owner}"):
        assert is_error(p.q(stmt), "42501"), stmt
    assert p.q("SELECT current_user, session_user") == [(fleet.role["a"], fleet.role["a"])]
    assert not is_error(p.q("SET row_security = off"))
    for t in fleet.tables:   # plain queries now fail rather than filter: never B's rows
        assert is_error(p.q(f"SELECT count(*) FROM public.{t}"), "42501"), t
    assert p.q("SELECT * FROM ctx_keyword_match('proj-b', to_tsquery('simple', %s), NULL, NULL, "
               "to_tsquery('simple', %s), 100, 100)", [SHARED_WORD, SHARED_WORD]) == []
    assert p.q("SELECT ctx_term_counts('proj-b', %s::text[], 100)", [[SHARED_WORD, B_WORD]]) == [([0, 0],)]
    p.q("RESET row_security")


def plain_sql(p: Probe, fleet) -> None:
    """Hand-written SQL on the tables, the mapping and the statistics."""
    for t in fleet.tables:
        assert p.q(f"SELECT count(*) FROM public.{t} WHERE project <> 'proj-a'") == [(0,)], t
        for stmt in (f"UPDATE public.{t} SET project = project WHERE project = 'proj-b'",
                     f"DELETE FROM public.{t} WHERE project = 'proj-b'"):
            res = p.q(stmt)
            assert is_error(res, "42501") or (res == [] and p.rowcount == 0), (stmt, res, p.rowcount)
    assert is_error(p.q("INSERT INTO ctx_logs (project, name, line) VALUES ('proj-b', 'drops', '{}')"), "42501")
    assert is_error(p.q("UPDATE ctx_chunks SET project = 'proj-b' WHERE project = 'proj-a'"), "42501")
    assert is_error(p.q("SELECT * FROM ctx_project_roles"), "42501")
    assert is_error(p.q("INSERT INTO ctx_project_roles VALUES (current_user, 'proj-b')"), "42501")
    assert p.q("SELECT * FROM ctx_my_projects") == [("proj-a",)]
    for cond in ("project::int = 0", "1/(ascii(project) - 112) = 1", "project::date IS NULL"):  # errors that quote a row
        err = p.q(f"SELECT * FROM ctx_my_projects WHERE {cond}")
        assert "proj-b" not in str(err), (cond, err)
    assert is_error(p.q("SELECT ctx_may_access('proj-b', %s)", [fleet.role["b"]]))   # no such oracle left
    assert p.q(r"SELECT count(*) FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'public'::regnamespace "
               r"AND p.proname LIKE 'ctx\_%' AND 'name'::regtype = ANY(p.proargtypes)") == [(0,)]
    fleet.owner_sql("ANALYZE")
    stats = p.q("SELECT tablename, attname, most_common_vals::text, histogram_bounds::text FROM pg_stats "
                "WHERE schemaname = 'public'")
    assert "proj-b" not in str(stats) and not any(t.startswith("ctx_chunks") for t, *_ in stats), stats


def commands_as_a(fleet, monkeypatch, tmp_path) -> None:
    """ctx itself, run as A with B's project configured: nothing to list, find or recover."""
    env = Env(monkeypatch, tmp_path)
    env.be(fleet.url("a"), "proj-b")
    s, c = fleet.b_rows[0]
    for args in (("cold-storage", "list", "--json"), ("drops", "--json"),
                 ("cold-storage", "search", f"{B_WORD} {SHARED_WORD}", "--embedder", "keyword", "--json"),
                 ("memory", "search", B_WORD, "--embedder", "keyword", "--include-cold", "--json")):
        res = run(*args)   # nothing found; a command that logs what it did may not write B's log either
        assert res.stdout.strip() == "" and (res.code == 0 or "row-level security" in res.stderr), (args, res)
        assert not any(x in res.stderr for x in fleet.secrets), res.stderr
    if fleet.vector:
        res = run("cold-storage", "search", f"{B_WORD} deploy key rotation", "--embedder", "minilm", "--json")
        assert res.code == 0 and res.stdout.strip() == "", res.stdout
    rec, nowhere = run("recover", "--chunk-id", c, "--session", s), run("recover", "--chunk-id", c, "--session", "s-x")
    assert rec.code == nowhere.code != 0 and rec.stdout == nowhere.stdout == "", rec   # as for a session nobody has
    assert rec.stderr.replace(s, "S") == nowhere.stderr.replace("s-x", "S"), (rec.stderr, nowhere.stderr)
    rec, nowhere = run("recover", "--chunk-id", "c-b-own"), run("recover", "--chunk-id", "c-x-own")
    assert rec.code == nowhere.code != 0 and rec.stderr.replace("c-b-own", "C") == nowhere.stderr.replace("c-x-own", "C")
    chk = run("store", "check", "--json")   # an agent's check reads the catalog as the owner's does
    assert chk.code == 0 and json.loads(chk.stdout)["unsafe_functions"] == 0, chk.stderr
    assert json.loads(chk.stdout)["chunks"] == 0


def attack(fleet, monkeypatch, tmp_path, temp: bool) -> None:
    """The whole battery as agent A; with `temp`, first with every name shadowed by a temporary object."""
    before = fleet.owner_sql("SELECT md5(string_agg(raw, '' ORDER BY session, chunk_id)), count(*) FROM ctx_chunks "
                             "WHERE project = 'proj-b'")
    p = Probe(fleet)
    try:
        every_function_as_for_nowhere(p, fleet, "plain")
        crafted(p, fleet)
        vectors(p, fleet)
        roles_and_settings(p, fleet)
        plain_sql(p, fleet)
        assert p.leaks() == [], p.leaks()   # nothing of B in any result, error or notice
    finally:
        p.close()
    for catalog_only in ((True, False) if temp else ()):   # a new session each: its own temporary objects
        p = Probe(fleet)
        try:
            shadowed = shadow_everything(p, fleet, catalog_only)
            assert {"pg_roles", "pg_class", "pg_namespace", "pg_auth_members"} <= set(shadowed), shadowed
            assert catalog_only or {"ctx_chunks", "ctx_project_roles", "ctx_terms"} <= set(shadowed), shadowed
            every_function_as_for_nowhere(p, fleet, f"shadowed {shadowed}")
            crafted(p, fleet)
            vectors(p, fleet)
            roles_and_settings(p, fleet)
            assert p.leaks() == [], p.leaks()
        finally:
            p.close()
    commands_as_a(fleet, monkeypatch, tmp_path)
    assert fleet.owner_sql("SELECT md5(string_agg(raw, '' ORDER BY session, chunk_id)), count(*) FROM ctx_chunks "
                           "WHERE project = 'proj-b'") == before   # B's rows as they were


def test_two_agent_roles_see_nothing_of_each_other(new_fleet, monkeypatch, tmp_path):
    f = new_fleet
    p = Probe(f)
    try:   # grant-sql revoked TEMP (the owner owns the database): the first step fails
        assert is_error(p.q("CREATE TEMP VIEW pg_roles AS SELECT session_user::name AS rolname, true AS rolsuper, "
                            "true AS rolbypassrls"), "42501")
    finally:
        p.close()
    # where ctx does not own the database every role keeps TEMP: the functions must hold anyway
    f.owner_sql(f"GRANT TEMPORARY ON DATABASE {f.db} TO {f.role['a']}")
    attack(f, monkeypatch, tmp_path, temp=True)
    env = Env(monkeypatch, tmp_path)   # and each agent still finds its own
    for who, word in (("a", SHARED_WORD), ("b", B_WORD)):
        env.be(f.url(who), f.project[who])
        hits = run("cold-storage", "search", word, "--embedder", "keyword", "--json")
        assert hits.code == 0 and hits.stdout.strip(), hits.stderr
    env.be(f.url("owner"), "owner")
    chk = run("store", "check", "--json")
    assert chk.code == 0 and json.loads(chk.stdout)["unsafe_functions"] == 0, chk.stderr


def test_a_store_made_before_migration_105_is_flagged_and_fixed_by_migrate(old_fleet, monkeypatch, tmp_path):
    f = old_fleet
    p = Probe(f)
    try:   # the transcript, on the store the previous ctx made: it leaks
        assert p.q("SELECT count(*) FROM ctx_chunks WHERE project = 'proj-b'") == [(0,)]
        assert not is_error(p.q("CREATE TEMP VIEW pg_roles AS SELECT session_user::name AS rolname, "
                                "true AS rolsuper, true AS rolbypassrls"))
        p.q("GRANT SELECT ON pg_roles TO PUBLIC")   # the owner is no superuser here: A lets it read the view
        assert p.q("SELECT ctx_may_search('proj-b')") == [(True,)]
        got = p.q("SELECT session, chunk_id FROM ctx_keyword_match('proj-b', to_tsquery('simple', %s), NULL, NULL, "
                  "to_tsquery('simple', %s), 100, 100)", [B_WORD, B_WORD])
        assert ("s-b-own", "c-b-own") in got
        assert p.q("SELECT ctx_may_access('proj-b', %s)", [f.role["b"]]) == [(True,)]
        assert p.leaks()
    finally:
        p.close()
    p = Probe(f)
    try:   # the generic shadowing of the battery below finds the hole by itself
        shadow_everything(p, f, catalog_only=True)
        got = p.q("SELECT session, chunk_id FROM ctx_keyword_match('proj-b', to_tsquery('simple', %s), NULL, NULL, "
                  "to_tsquery('simple', %s), 100, 100)", [B_WORD, B_WORD])
        assert ("s-b-own", "c-b-own") in got and p.leaks()
    finally:
        p.close()
    env = Env(monkeypatch, tmp_path)
    env.be(f.url("owner"), "owner")
    res = run("store", "check")
    assert res.code == 1 and "unsafe" in res.stderr and "ctx store migrate" in res.stderr, res.stderr
    flagged = {m.group(1) for m in re.finditer(r"ctx store check: unsafe: (ctx_\w+)\(", res.stderr)}
    definer = {n for (n,) in f.owner_sql(r"SELECT proname FROM pg_proc WHERE prosecdef AND proname LIKE 'ctx\_%'")}
    assert flagged == definer and {"ctx_may_access", "ctx_may_search", "ctx_keyword_match"} <= flagged, res.stderr
    assert "does not end with pg_temp" in res.stderr and "takes a role (name)" in res.stderr
    assert "EXECUTE granted to PUBLIC" in res.stderr
    # this ctx's grant-sql refuses a store that still has the hole
    import psycopg

    with pytest.raises(psycopg.Error, match="lacks migration 105"):
        f.owner_sql(run("store", "grant-sql", "agent_late", "proj-c").stdout)
    env.be(f.url("a"), "proj-a")
    refused = run("store", "migrate")   # an agent may not change the schema
    assert refused.code == 1 and ("must be owner" in refused.stderr or "permission denied" in refused.stderr), \
        refused.stderr
    env.be(f.url("owner"), "owner")
    mig = run("store", "migrate")
    assert mig.code == 0 and "applied migration 105" in mig.stderr, mig.stderr
    again = run("store", "migrate")
    assert again.code == 0 and "applied" not in again.stderr, again.stderr
    chk = run("store", "check", "--json")
    assert chk.code == 0 and json.loads(chk.stdout)["unsafe_functions"] == 0, chk.stderr
    # the old grants of the agents still work for what they need; TEMP stays theirs (the old
    # grant-sql left it): the functions hold against it
    attack(f, monkeypatch, tmp_path, temp=True)
    env.be(f.url("b"), "proj-b")
    d = run("drop", "--min-keep", "0", "--cutoff", "0.9", "--keep", "0.95",
            input=run("score", "--query", "x", "--embedder", "keyword", input=records("n", "s-b-new", B_TEXTS)).stdout)
    assert d.code == 0, d.stderr
    hits = run("cold-storage", "search", B_WORD, "--embedder", "keyword", "--json")
    assert hits.code == 0 and "s-b-new" in hits.stdout and "s-b-own" in hits.stdout, hits.stdout


def test_a_superuser_owned_store_is_flagged_once_agents_may_run_its_functions(pg_cluster, pg_url):
    """The functions run as their owner: a superuser (or BYPASSRLS) owner turns any flaw in them
    into every tenant's rows, and more. Flagged as soon as an agent may run them."""
    import psycopg

    assert run("store", "check").code == 0          # no agent yet: nobody but the owner runs them
    role = "agent_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(run("store", "grant-sql", role, "proj-s").stdout)
    res = run("store", "check")
    assert res.code == 1 and "bypasses row-level security (superuser)" in res.stderr, res.stderr
    assert "neither a superuser nor BYPASSRLS" in res.stderr
    lines = [x for x in res.stderr.splitlines() if x.startswith("ctx store check: unsafe:")]
    assert {x.split("unsafe: ")[1].split("(")[0] for x in lines} >= {"ctx_term_counts", "ctx_keyword_match"}


def test_search_path_settings_are_read_as_postgresql_writes_them():
    from ctxkit.store.pg_security import path_schemas

    assert path_schemas("pg_catalog, public, pg_temp") == ["pg_catalog", "public", "pg_temp"]
    assert path_schemas('pg_catalog, "My ""odd"", schema", pg_temp') == ["pg_catalog", 'My "odd", schema', "pg_temp"]
    assert path_schemas('"$user", public') == ["$user", "public"]
    assert path_schemas("") == []
