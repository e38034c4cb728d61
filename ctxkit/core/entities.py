"""Key entities (pure, deterministic): files, functions/classes, packages, @people, URLs."""
from __future__ import annotations

import re
from typing import Iterable

from .hygiene import PATH

URL = re.compile(r"https?://[^\s)>\]\"'`]+")
PERSON = re.compile(r"(?<![\w.])@([A-Za-z][\w-]{1,38})\b")
FUNC = re.compile(r"\b(?:def|fn|func|function)\s+([A-Za-z_]\w*)(\()?|\bclass\s+([A-Z]\w*)|`([A-Za-z_][\w.]*)\(\)`")
CODEY = re.compile(r"_|\d|[a-z][A-Z]")  # snake_case, digits, camelCase: a name, not an English word
ARITY = re.compile(r"^((?:[A-Z]\w*\.)*[a-z_]\w*[?!]?)/(\d)$")  # Elixir/Erlang name/arity
PKG = re.compile(r"\b(?:pip3? install|uv pip install|uv add|poetry add|npm (?:install|i)|yarn add|pnpm add|cargo add|"
                 r"go get|gem install)[ \t]+([^\n`;&|]+)"
                 r"|^[ \t]*(?:import[ \t]+([A-Za-z_]\w*)(?:\.[\w.]+)?(?:[ \t]+as[ \t]+\w+)?[ \t]*$"
                 r"|from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import[ \t])", re.M)
PKG_NAME = re.compile(r"^@?[a-z0-9][a-z0-9._-]*(?:/[a-z0-9._-]+)?$")
VALUE_FLAGS = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-t",
               "--target", "--upgrade-strategy", "--python", "-e", "--editable", "--prefix", "--root", "-f",
               "--find-links", "--registry"}
STDLIB = frozenset("""os sys re json time datetime math typing collections itertools functools pathlib subprocess
shutil io abc enum dataclasses logging argparse random string textwrap tempfile unittest copy glob hashlib base64
uuid contextlib threading asyncio queue struct decimal fractions statistics inspect types warnings traceback
signal socket http urllib email csv sqlite3 pickle operator heapq bisect array weakref gc platform getpass
__future__""".split())
# manifests: a file's name says how to read its dependencies
LINE_NO = re.compile(r"^[ \t]*\d+(?:→|\t)", re.M)  # `cat -n` / Claude Code Read prefixes
REQ_LINE = re.compile(r"^[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*(?:\[[^\]\n]*\])?[ \t]*(?:[=<>!~;]|$)", re.M)
MIX_DEP = re.compile(r"\{:([a-z_][a-z0-9_]*),\s*[\"~>=<]")
TOML_DEP = re.compile(r"^[ \t]*([A-Za-z0-9][A-Za-z0-9_-]*)[ \t]*=[ \t]*[\"{]", re.M)
GO_REQ = re.compile(r"^[ \t]*(?:require[ \t]+)?([a-z0-9.-]{1,200}\.[a-z]{2,20}/[\w./-]{1,300})[ \t]+v\d", re.M)
JS_IMPORT = re.compile(r"(?:\bfrom\s+|\brequire\(\s*|\bimport\s+)['\"]((?:@[\w.-]+/)?[\w.-]+)[^'\"]*['\"]")
RS_USE = re.compile(r"^[ \t]*(?:pub[ \t]+)?use[ \t]+([a-z_][a-z0-9_]*)::", re.M)
RS_LOCAL = {"crate", "self", "super", "std", "core", "alloc"}
CODE_ATTRS = {"moduledoc", "doc", "impl", "spec", "type", "callback", "behaviour", "property", "staticmethod",
              "classmethod", "dataclass", "override", "param", "return", "returns", "throws", "deprecated"}
CATEGORIES = ("files", "functions", "packages", "technologies", "concepts", "people", "urls")
# settings and manifest files are named bare ("edit settings.py", "the .env"): no directory needed
SETTINGS_FILE = re.compile(r"(?<![\w/.-])(\.env(?:\.[A-Za-z]+)?|[\w-]*(?:settings|config|conf)[\w-]*\."
                           r"(?:py|json|ya?ml|toml|ini|cfg|conf|js|ts)|pyproject\.toml|setup\.cfg|package\.json|"
                           r"tsconfig\.json|Dockerfile|docker-compose\.ya?ml|Cargo\.toml|mix\.exs|go\.mod)(?![\w-])(?!\.\w)")
BARE_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")  # validate_token() in prose
TICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")  # `refresh_token`: a code name when snake/camel case
# Technologies named in prose (libraries, services, algorithms, formats), in their usual spelling;
# the key is matched as a whole word, without regard to case.
TECHNOLOGIES = {t.lower(): t for t in (
    "PyJWT", "JWT", "RS256", "HS256", "ES256", "OAuth", "OAuth2", "OpenID Connect", "SAML", "Redis", "Memcached",
    "PostgreSQL", "Postgres", "MySQL", "SQLite", "MongoDB", "Elasticsearch", "Kafka", "RabbitMQ", "Docker",
    "Kubernetes", "Terraform", "AWS", "GCP", "Azure", "Nginx", "GraphQL", "gRPC", "REST", "WebSocket", "React",
    "Vue", "Svelte", "Next.js", "Node.js", "Django", "Flask", "FastAPI", "SQLAlchemy", "Celery", "Phoenix", "Ecto",
    "Elixir", "Rust", "TypeScript", "Python", "Go", "PyTorch", "TensorFlow", "LoRA", "GGUF", "llama.cpp", "ONNX",
    "TLS", "SSL", "bcrypt", "argon2", "cryptography", "pytest", "Credo", "Dialyzer", "Tailwind", "Vite", "Webpack",
    "GitHub Actions", "Sentry", "Prometheus", "Grafana", "S3", "Stripe", "Supabase", "Firebase", "Tokio")}
TECH = re.compile(r"(?<![\w.-])(" + "|".join(sorted((re.escape(k) for k in TECHNOLOGIES), key=len, reverse=True))
                  + r")(?![\w-])", re.I)
# Concepts: multi-word technical ideas, found as written ("refresh tokens", "public key infrastructure").
CONCEPTS = ("refresh token", "access token", "public key infrastructure", "token rotation", "token expiry",
            "rate limiting", "connection pooling", "dependency injection", "idempotency", "caching", "cache invalidation",
            "pagination", "database migration", "schema migration", "race condition", "deadlock", "retry with backoff",
            "exponential backoff", "circuit breaker", "single sign-on", "two-factor authentication",
            "role-based access control", "session management", "key rotation", "signature verification",
            "blue-green deployment", "feature flag", "load balancing", "horizontal scaling", "event sourcing",
            "message queue", "context window", "prompt caching", "embedding", "vector search", "fine-tuning",
            "quantization", "static analysis", "type checking", "code coverage", "continuous integration",
            "memory leak", "garbage collection", "backpressure", "streaming", "serialization")
CONCEPT = re.compile(r"\b(" + "|".join(re.escape(c) for c in sorted(CONCEPTS, key=len, reverse=True)) + r")(s|es)?\b",
                     re.I)
# technologies that are plain English words count only when written as a name (capitalized or `ticked`)
TECH_WORDS = {"go", "rest", "rust", "python", "react", "vue", "streaming", "cryptography", "credo"}


def _file_ok(p: str) -> bool:
    """A path worth listing: anchored (/, ~/, ./, ../) or ending in a file name with an
    extension; `and/or`, `1/2`, `n/a`, `open/closed/blocked` are prose."""
    if p.startswith(("/", "~/", "./", "../")):
        return bool(re.search(r"[A-Za-z]", p))
    last = p.rstrip("/").rsplit("/", 1)[-1]
    return bool(re.search(r"[A-Za-z]", last)) and bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,6}$", last))


def manifest_packages(path: str, text: str) -> list[str]:
    """Dependencies named in a manifest (by its file name) or imported by a source file."""
    name = path.rsplit("/", 1)[-1].lower()
    text = LINE_NO.sub("", text)
    if name == "package.json":
        import json

        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return []
        return [k for sec in ("dependencies", "devDependencies", "peerDependencies")
                for k in (data.get(sec) or {}) if isinstance(data, dict)]
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        return [m.group(1) for m in REQ_LINE.finditer(text) if not m.group(1).startswith("-")]
    if name == "mix.exs":
        return MIX_DEP.findall(text)
    if name in ("cargo.toml", "pyproject.toml"):
        out, on = [], False
        for line in text.splitlines():
            head = line.strip()
            if head.startswith("["):
                on = "dependencies" in head
                continue
            m = TOML_DEP.match(line) if on else None
            if m and m.group(1) not in ("python",):
                out.append(m.group(1))
            if name == "pyproject.toml" and on is False:
                for dep in re.findall(r"^\s*\"([A-Za-z0-9][A-Za-z0-9._-]*)", line):
                    out.append(dep)  # PEP 621 `dependencies = [ "x>=1", ...]` lists
        return out
    if name == "go.mod":
        return GO_REQ.findall(text)
    if name.endswith(".py"):
        return [p for m in PKG.finditer(text) for p in (m.group(2) or m.group(3),) if p and p not in STDLIB]
    if name.endswith((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")):
        return [m for m in JS_IMPORT.findall(text) if not m.startswith(".")]
    if name.endswith(".rs"):
        return [m for m in RS_USE.findall(text) if m not in RS_LOCAL]
    return []


def _call_paths(recs: list[dict]) -> dict:
    """tool_call id -> the file path its arguments name (to read a manifest from its result)."""
    import json

    out = {}
    for r in recs:
        for c in r.get("tool_calls") or ():
            if not isinstance(c, dict):
                continue
            args = (c.get("function") or {}).get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except (ValueError, RecursionError):
                    args = {}
            if isinstance(args, dict):
                p = next((args[k] for k in ("file_path", "path", "filename") if isinstance(args.get(k), str)), None)
                if p:
                    out[c.get("id")] = p
    return out


def extract(records: Iterable[dict]) -> dict[str, list[str]]:
    recs = list(records)
    out: dict[str, list[str]] = {c: [] for c in CATEGORIES}

    def add(cat, v):
        v = v.strip().rstrip(".,;:")
        same = {x.lower() for x in out[cat]} if cat in ("packages", "technologies") else out[cat]
        if v and (v.lower() if cat in ("packages", "technologies") else v) not in same:
            out[cat].append(v)

    def add_path(p):
        m = ARITY.match(p)
        if m:
            add("functions", p)
        elif _file_ok(p):
            add("files", p)

    from ..compaction import state_of

    st = state_of(list(recs))
    for p in [f.path for f in st.files] + list(st.reads):
        add("files", p)
    reads = _call_paths(recs)
    for r in recs:
        if r.get("role") == "tool":
            path = reads.get(r.get("tool_call_id"))
            if path and isinstance(r.get("content"), str):  # a manifest or source file read: its packages
                for pkg in manifest_packages(path, r["content"][:200_000]):
                    add("packages", pkg)
            continue  # otherwise tool output (file contents, listings) names too much
        if {"thinking", "reasoning"} & set(r.get("flags") or ()):
            continue
        text = r.get("content") or ""
        if not isinstance(text, str):
            continue
        for m in URL.finditer(text):
            if len(m.group(0)) > len("https://") + 3:
                add("urls", m.group(0))
        no_urls = URL.sub(" ", text)
        for m in PERSON.finditer(re.sub(r"```.*?```|`[^`]*`", " ", no_urls, flags=re.S)):
            if m.group(1).lower() not in CODE_ATTRS:
                add("people", "@" + m.group(1))
        for m in FUNC.finditer(no_urls):
            name, paren, cls, called = m.groups()
            if name and (paren or CODEY.search(name)):
                add("functions", name)
            elif cls or called:
                add("functions", cls or called)
        for m in PKG.finditer(no_urls):
            if m.group(1):
                words = m.group(1).split()
                skip = False
                for w in words:
                    if skip:
                        skip = False
                        continue
                    if w.startswith("-"):
                        skip = w in VALUE_FLAGS
                        continue
                    w = re.split(r"[=<>~^\[]|(?<=.)@", w)[0]
                    if PKG_NAME.match(w):
                        add("packages", w)
                    else:
                        break  # prose after the command
            elif (m.group(2) or m.group(3)) and (m.group(2) or m.group(3)) not in STDLIB:
                add("packages", m.group(2) or m.group(3))
        for m in PATH.finditer(no_urls):
            if "/" in m.group(0):
                add_path(m.group(0))
        for m in SETTINGS_FILE.finditer(no_urls):
            add("files", m.group(1))
        for m in BARE_CALL.finditer(no_urls):
            name = m.group(1)
            if CODEY.search(name) or "." in name:
                add("functions", name)
        for m in TICKED.finditer(no_urls):
            name = m.group(1)
            if CODEY.search(name) and not name.isupper() and name.lower() not in TECHNOLOGIES:
                add("functions", name)
        for m in TECH.finditer(no_urls):
            word = m.group(1)
            canon = TECHNOLOGIES[word.lower()]
            named = word[0].isupper() or f"`{word}`" in no_urls or \
                re.match(r"\s+(package|library|module|crate|gem)\b", no_urls[m.end():])
            if word.lower() in TECH_WORDS and not named:
                continue
            add("technologies", canon)
            if canon.lower() in ("pyjwt", "redis", "cryptography", "bcrypt", "argon2", "sqlalchemy", "celery",
                                 "pytest", "fastapi", "flask", "django", "onnx"):
                add("packages", canon)
        for m in CONCEPT.finditer(no_urls):
            add("concepts", m.group(1).lower() + ("s" if m.group(2) and not m.group(1).endswith("s") else ""))
    return out
