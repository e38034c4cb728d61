import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
if not CORPUS.exists():  # CI clones main with shared/ beside it
    CORPUS = Path(os.environ.get("CTX_CORPUS", ROOT / "examples"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# the transcripts to parametrize over: files only (the examples/ fallback also holds folders), then
# the other agents' samples in formats/ (named `formats/FILE`)
CORPUS_FILES = (sorted(p.name for p in CORPUS.iterdir() if p.is_file() and p.name != "SOURCES.md")
                + sorted(f"formats/{p.name}" for p in (CORPUS / "formats").glob("*") if p.is_file())) \
    if CORPUS.is_dir() else []


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiktoken-cache")
    return str(d)


# CTX_TEST_STORE=pg: every test runs against a real PostgreSQL store (tests/pgcluster.py starts a
# throwaway server on a Unix socket for the whole run; each test gets its own store project, so no
# test sees another's rows). Tests of the embedded store's own files are marked `embedded_only`.
TEST_STORE = os.environ.get("CTX_TEST_STORE", "embedded")
if TEST_STORE not in ("embedded", "pg"):
    raise pytest.UsageError(f"CTX_TEST_STORE={TEST_STORE!r}: use embedded or pg")


def pytest_configure(config):
    config.addinivalue_line("markers", "embedded_only: the test checks the embedded store's own files "
                                       "(skipped when CTX_TEST_STORE=pg)")


def pg_missing() -> str | None:
    """Why no PostgreSQL server can be started for the tests here, or None when one can."""
    from pgcluster import bin_dirs, usable_bin_dirs

    if usable_bin_dirs():
        return None
    return ("no PostgreSQL binaries (pg_ctl/initdb) on this machine" if not bin_dirs() else
            "PostgreSQL binaries exist, but running as root there is no `postgres` user who can run them")


# the tests of the shared store itself (they start a server, and choose the store per test)
needs_pg = pytest.mark.skipif(pg_missing() is not None, reason=str(pg_missing()))


def pytest_collection_modifyitems(config, items):
    if TEST_STORE != "pg":
        return
    if pg_missing():  # as the PostgreSQL tests do: skipped, said once
        for item in items:
            item.add_marker(pytest.mark.skip(reason=f"CTX_TEST_STORE=pg: {pg_missing()}"))
        return
    skip = pytest.mark.skip(reason="checks the embedded store's files (CTX_TEST_STORE=pg)")
    for item in items:
        if item.get_closest_marker("embedded_only"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL server (tests/pgcluster.py) for the whole run: the store of
    CTX_TEST_STORE=pg and the shared store's own tests; every user of it takes a new database."""
    if pg_missing():
        pytest.skip(pg_missing())
    from pgcluster import Cluster, usable_bin_dirs

    c = Cluster(usable_bin_dirs()[0][1]).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def test_store_url(request):
    """The PostgreSQL store every test uses when CTX_TEST_STORE=pg (None otherwise)."""
    if TEST_STORE != "pg":
        return None
    c = request.getfixturevalue("pg_cluster")
    url = c.url(c.new_db())
    from ctxkit.store.pg import PgStore

    s = PgStore(url, "init")
    s.init()
    s.close()
    return url


@pytest.fixture
def pg_url(pg_cluster, monkeypatch):
    """A new database on the test server, initialised (`ctx store init`) and made this test's store
    (CTX_STORE_URL; the project is `default` unless the test sets CTX_STORE_PROJECT)."""
    url = pg_cluster.url(pg_cluster.new_db())
    monkeypatch.setenv("CTX_STORE_URL", url)
    res = run("store", "init")
    assert res.code == 0, res.stderr
    return url


@pytest.fixture(autouse=True)
def ctx_home(tmp_path, monkeypatch, tiktoken_cache, test_store_url, request):
    home = tmp_path / "ctx-home"
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", tiktoken_cache)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for k in list(os.environ):
        if k.startswith("CTX_") and k not in ("CTX_HOME",):
            monkeypatch.delenv(k)
    # One fixed workspace for tests that look for CONTEXT.md there; tests of the per-project
    # default (tests/test_hook_sessions.py, tests/e2e) remove it.
    monkeypatch.setenv("CTX_WORKSPACE", str(home / "workspace"))
    if test_store_url and not getattr(request.module, "OWN_PG_SERVER", False):
        import uuid

        monkeypatch.setenv("CTX_STORE_URL", test_store_url)
        monkeypatch.setenv("CTX_STORE_PROJECT", "t-" + uuid.uuid4().hex[:12])
    return home


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def records(self):
        return [json.loads(line) for line in self.stdout.split("\n") if line.strip()]

    def json(self):
        return json.loads(self.stdout)


def run(*args, input=None, env=None) -> Result:
    """Run `ctx ARGS` in-process through the real entry point (error handling included)."""
    from ctxkit.cli.main import main

    runner = CliRunner()
    with runner.isolation(input=input, env=env) as (out, err, _):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace")
    return Result(code, stdout, stderr)


def memory_docs(home, workspace=None) -> dict[str, str]:
    """What the configured store holds as memory ({"MEMORY.md": text, "observations/NAME": text}):
    the workspace's files on the embedded store, the project's rows on PostgreSQL."""
    from ctxkit.store.backend import close_store, memory_store
    from ctxkit.store.home import Home

    h = Home(str(home))
    try:
        return dict(memory_store(h, str(workspace or Path(home) / "workspace")).documents())
    finally:
        close_store(h)


def put_memory(workspace, memory: str | None = None, observations: dict | None = None) -> None:
    """Seed a workspace's memory where the configured store keeps it: MEMORY.md and
    observations/NAME files on the embedded store, the project's rows on PostgreSQL."""
    from ctxkit.store.backend import close_store, memory_store
    from ctxkit.store.home import Home

    h = Home()
    try:
        m = memory_store(h, str(workspace))
        if memory is not None:
            m.update_memory(lambda _: memory)
        for name, text in (observations or {}).items():
            m.write_observation(name, text)
    finally:
        close_store(h)


def stored_text(where) -> str | None:
    """The text ctx stored at `where`, a path it printed: a file, or on PostgreSQL a locator
    (postgresql:PROJECT/archive/NAME, …/observations/NAME, …/MEMORY.md, …/sessions/ID/CONTEXT.md,
    …/SESSION/CHUNK);
    None when there is none."""
    where = str(where)
    if not where.startswith("postgresql:"):
        return open(where, encoding="utf-8").read() if os.path.exists(where) else None
    import psycopg

    project, rest = where[len("postgresql:"):].split("/", 1)
    if rest == "MEMORY.md":
        q, args = "SELECT body FROM ctx_memory WHERE project=%s", (project,)
    elif rest.startswith("observations/"):
        q, args = "SELECT body FROM ctx_observations WHERE project=%s AND name=%s", (project, rest.split("/", 1)[1])
    elif rest.startswith("archive/"):
        q, args = "SELECT body FROM ctx_context_archive WHERE project=%s AND name=%s", (project, rest.split("/", 1)[1])
    elif rest.startswith("sessions/") and rest.endswith("/CONTEXT.md"):
        q, args = "SELECT body FROM ctx_state WHERE project=%s AND session=%s", (project, rest[9:-11])
    else:  # a cold-storage chunk: postgresql:PROJECT/SESSION/CHUNK
        session, chunk = rest.rsplit("/", 1)
        q, args = "SELECT raw FROM ctx_chunks WHERE project=%s AND session=%s AND chunk_id=%s", (project, session, chunk)
    with psycopg.connect(os.environ["CTX_STORE_URL"]) as c:
        row = c.execute(q, args).fetchone()
    return row[0] if row else None


def stored_sessions(home) -> list[str]:
    """The sessions that have stored state (their CONTEXT.md in the session store)."""
    if os.environ.get("CTX_STORE_URL"):
        import psycopg

        with psycopg.connect(os.environ["CTX_STORE_URL"]) as c:
            return [s for (s,) in c.execute("SELECT session FROM ctx_state WHERE project=%s ORDER BY session",
                                            (os.environ.get("CTX_STORE_PROJECT", "default"),)).fetchall()]
    return sorted(p.parent.name for p in (Path(home) / "sessions").glob("*/CONTEXT.md"))


def stored_archives(home) -> list[str]:
    """The CONTEXT.md copies `ctx context archive` and session ends made."""
    if os.environ.get("CTX_STORE_URL"):
        import psycopg

        with psycopg.connect(os.environ["CTX_STORE_URL"]) as c:
            return [n for (n,) in c.execute("SELECT name FROM ctx_context_archive WHERE project=%s ORDER BY name",
                                            (os.environ.get("CTX_STORE_PROJECT", "default"),)).fetchall()]
    return sorted(p.name for p in (Path(home) / "archive").glob("*.md"))


def session_index(home=None) -> dict:
    """The session index of whichever store is configured."""
    from ctxkit.store import sessions
    from ctxkit.store.backend import close_store
    from ctxkit.store.home import Home

    h = Home(str(home) if home else None)
    try:
        return sessions.load(h)
    finally:
        close_store(h)


def log_events(name: str) -> list[dict]:
    """The `name` log's events, from whichever store is configured (through `ctx logs`)."""
    res = run("logs", name, "--json")
    assert res.code == 0, res.stderr
    return [json.loads(x) for x in res.stdout.splitlines() if x.strip()]


def corpus(name: str) -> str:
    matches = sorted(CORPUS.glob(name))
    if not matches:
        pytest.skip(f"corpus file {name} not available")
    return str(matches[0])


@pytest.fixture
def ctx():
    return run


def ctx_subprocess_env(home) -> dict:
    env = dict(os.environ)
    env["CTX_HOME"] = str(home)
    env["CTX_WORKSPACE"] = str(Path(home) / "workspace")
    env["PYTHONPATH"] = str(ROOT)
    return env


PY = sys.executable


def pytest_terminal_summary(terminalreporter):
    """The end-to-end tests' one summary line per real client (tests/e2e/clients.report)."""
    clients = sys.modules.get("clients")
    for line in getattr(clients, "SUMMARIES", ()):
        terminalreporter.write_line(line)
