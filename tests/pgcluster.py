"""A throwaway PostgreSQL cluster for the shared-store tests: initdb + pg_ctl on a Unix socket in
a temporary folder (no TCP), run as the `postgres` user when the tests run as root.

Binaries: pgserver's bundled PostgreSQL 16 with pgvector when installed, else the machine's
(/usr/lib/postgresql/*/bin, or pg_ctl on PATH)."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path


def bin_dirs() -> list[tuple[str, str]]:
    """[(label, bindir)]: pgserver's first (it has pgvector), then the system's."""
    out = []
    import importlib.util

    spec = importlib.util.find_spec("pgserver")  # its binaries only; importing it needs a runtime dir
    if spec and spec.origin:
        d = Path(spec.origin).parent / "pginstall" / "bin"
        if (d / "pg_ctl").exists():
            out.append(("pgserver", str(d)))
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "pg_ctl")):
            out.append(("system", d))
    w = shutil.which("pg_ctl")
    if w and not any(os.path.dirname(w) == d for _, d in out):
        out.append(("path", os.path.dirname(w)))
    return out


def runnable(bindir: str) -> bool:
    """Whether the server's user can run these binaries (as root: `postgres`, who may not be able
    to enter a checkout under /root)."""
    if os.geteuid() != 0:
        return True
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        return False
    p = subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(bindir, "pg_ctl"), "--version"],
                       capture_output=True)
    return p.returncode == 0


def usable_bin_dirs() -> list[tuple[str, str]]:
    return [(label, d) for label, d in bin_dirs() if runnable(d)]


class Cluster:
    def __init__(self, bindir: str):
        self.bindir = bindir
        self.dir = tempfile.mkdtemp(prefix="ctx-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            import pwd

            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def _run(self, *args: str) -> None:
        cmd = [os.path.join(self.bindir, args[0]), *args[1:]]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self, settings: dict | None = None) -> "Cluster":
        """initdb and start; `settings`: more server settings (name -> value), as a benchmark sizes them."""
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "ctx", "--no-sync", "-E", "UTF8")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:  # the superuser by trust, others by password
            f.write("local all ctx trust\nlocal all all scram-sha-256\n")
        if self.as_postgres:
            subprocess.run(["chown", "postgres", os.path.join(self.data, "pg_hba.conf")], check=True)
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-o",
                  f"-k {self.dir} -c listen_addresses='' -c fsync=off -c max_connections=100"
                  + "".join(f" -c {k}={v}" for k, v in (settings or {}).items()), "start")
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, db: str = "postgres", user: str = "ctx", password: str | None = None) -> str:
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@/{db}?host={self.dir}"

    def new_db(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return name

    def has_vector(self) -> bool:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as c:
            return bool(c.execute("SELECT 1 FROM pg_available_extensions WHERE name='vector'").fetchone())
