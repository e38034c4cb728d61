"""What `ctx store check` says of the store's functions that run as their owner (SECURITY DEFINER).

Such a function is as safe as what it lets a caller choose. It is unsafe when:
- it has no search path of its own (it resolves names through the caller's, which the caller sets);
- its search path does not end with pg_temp (PostgreSQL then searches the caller's temporary
  objects first: a temporary view named pg_roles stood in for the catalog's);
- a role other than its owner may create objects in a schema on its path (one planted there
  stands in for what it names);
- every role (PUBLIC) may run it;
- its owner bypasses row-level security (a superuser, or BYPASSRLS) and roles other than the owner
  may run it: what it reads for them is then every tenant's, and a flaw in it is theirs to use
  (the tables' owner needs neither: row-level security does not apply to a table's owner);
- it takes a role's name and other roles may run it (it answers for roles other than the caller).

Read from the catalog, which every role may read: an agent's `ctx store check` sees what the
owner's does.
"""
from __future__ import annotations

FUNCTIONS = r"""
SELECT p.oid::pg_catalog.regprocedure::text, pg_catalog.pg_get_userbyid(p.proowner), p.proowner,
       o.rolsuper, o.rolbypassrls,
       (SELECT pg_catalog.substr(c, 13) FROM pg_catalog.unnest(p.proconfig) c
        WHERE c LIKE 'search\_path=%' LIMIT 1),
       ARRAY(SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END
             FROM pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
             LEFT JOIN pg_catalog.pg_roles g ON g.oid = a.grantee
             WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner AND NOT COALESCE(g.rolsuper, false)
             ORDER BY 1),
       ARRAY(SELECT pg_catalog.format_type(t, NULL) FROM pg_catalog.unnest(p.proargtypes) t)
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles o ON o.oid = p.proowner
WHERE p.prosecdef AND p.pronamespace = (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                        WHERE c.oid = pg_catalog.to_regclass('ctx_schema_migrations'))
ORDER BY 1
"""

# the roles other than `owner` (and superusers, who need no grant) that may create objects in a schema
WRITERS = """
SELECT ARRAY(SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END
             FROM pg_catalog.pg_namespace n
             CROSS JOIN LATERAL pg_catalog.aclexplode(COALESCE(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
             LEFT JOIN pg_catalog.pg_roles g ON g.oid = a.grantee
             WHERE n.nspname = %s AND a.privilege_type = 'CREATE' AND a.grantee NOT IN (n.nspowner, %s)
               AND NOT COALESCE(g.rolsuper, false)
             ORDER BY 1)
"""

ROLE_TYPES = ("name", "regrole")


def path_schemas(setting: str) -> list[str]:
    """The schemas of a search_path setting as PostgreSQL stores it (`pg_catalog, "My s", pg_temp`)."""
    out, cur, quoted, i = [], "", False, 0
    while i < len(setting):
        ch = setting[i]
        if ch == '"':
            if quoted and setting[i + 1:i + 2] == '"':
                cur += '"'
                i += 1
            else:
                quoted = not quoted
        elif ch == "," and not quoted:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


def findings(cur) -> list[str]:
    """One line per unsafe function of the store's schema: `name(args) (owner R): why; why`."""
    out = []
    for fn, owner, owner_oid, rolsuper, bypass, path, runners, argtypes in cur.execute(FUNCTIONS).fetchall():
        why = []
        if path is None:
            why.append("no search_path of its own: it resolves what it reads through the caller's (whose "
                       "temporary objects come first)")
        else:
            schemas = path_schemas(path)
            if not schemas or schemas[-1] != "pg_temp":
                why.append(f"search_path '{path}' does not end with pg_temp: the caller's temporary objects "
                           "are searched first")
            for s in schemas:
                name = owner if s == "$user" else s
                if name in ("pg_temp", "pg_catalog"):
                    continue
                writers = cur.execute(WRITERS, (name, owner_oid)).fetchone()[0]
                if writers:
                    why.append(f"schema {name} on its search_path: {', '.join(writers)} may create objects there")
        if "PUBLIC" in runners:
            why.append(f"EXECUTE granted to PUBLIC: every role runs it as {owner}")
        if (rolsuper or bypass) and runners:
            why.append(f"owned by {owner}, who bypasses row-level security ({'superuser' if rolsuper else 'BYPASSRLS'}),"
                       f" and {', '.join(runners)} may run it")
        role_args = [t for t in argtypes if t in ROLE_TYPES]
        if role_args and runners:
            why.append(f"takes a role ({', '.join(role_args)}) and {', '.join(runners)} may run it: it answers "
                       "for roles other than the caller")
        if why:
            out.append(f"{fn} (owner {owner}): " + "; ".join(why))
    return out


def owner_problem(lines: list[str]) -> bool:
    """Whether a finding is one a migration cannot fix (the owner's own attributes)."""
    return any("bypasses row-level security" in line for line in lines)
