"""One output contract, kept by every command and checked here over the whole click tree.

Every leaf command is classified: a reporting command (a listing or a report) must print JSON or
JSONL when piped, take --json, -t, --fmt and --jq EXPR with -r, refuse an unknown --fmt, and put
its errors on stderr with a non-zero exit and nothing on stdout. Every other command is listed in
NOT_REPORTING with what it prints instead, so a new command cannot slip past unclassified.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import PY, ROOT, ctx_subprocess_env, run
from ctxkit.cli import docgen

TRANSCRIPT = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")

NOT_REPORTING = {
    "cold-storage purge": "an action; what it deletes goes to stderr",
    "cold-storage reindex": "an action",
    "cold-storage show": "the chunk's records (JSONL) or, with --entry, its JSON entry",
    "completion": "a shell script",
    "config init": "an action; prints the path it wrote",
    "config get": "one value, as git config prints it (a list as JSON)",
    "config set": "an action; prints the file and the value it wrote",
    "config path": "a path",
    "config validate": "a check: ok or an error",
    "constraint add": "an action", "constraint remove": "an action",
    "context archive": "an action; prints the archive's path (and, with --title, the memory entry's)", "context clear": "an action",
    "context path": "a path",
    "context show": "a document: markdown (as cat would), --json/--jq for the structured view",
    "context update": "an action (--json prints the new state)",
    "count": "a number, as ttok and wc print (--json for the object; -t N truncates, as ttok)",
    "decision log": "an action",
    "drop": "a record stream (--dry-run -t shows the decisions)",
    "entities": "an action (--print prints JSON)",
    "export": "one JSON request body",
    "goal add": "an action; prints the new goal's id", "goal complete": "an action", "goal start": "an action",
    "hook claude-code": "the hook protocol's JSON", "hook generic": "text for an agent's prompt",
    "hook codex": "the hook protocol's JSON",
    "hook install": "an action; --dry-run prints a unified diff, --plugin the files it wrote",
    "hook uninstall": "an action; --dry-run prints a unified diff",
    "hook curate": "nothing: the detached worker the hooks start",
    "import": "a record stream", "maintain": "JSONL events",
    "man": "a man page (through man -l); --path prints a path; --install/--uninstall print the folder", "observe": "the observation's path",
    "recover": "a record stream", "remember": "an action", "reset": "an action (a list on stderr)",
    "score": "a record stream", "session restore": "a record stream",
    "tools show": "one tool's JSON schema", "truncate": "a record stream",
    "store embed": "an action; progress on stderr", "store grant-sql": "SQL for psql",
    "store init": "an action; the migrations applied go to stderr", "store migrate": "an action; progress on stderr",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory, test_store_url):
    """A home with something in every log, cold storage, CONTEXT.md, goals, a tools registry, and a
    git repository to look at (with CTX_TEST_STORE=pg: a store project of its own)."""
    root = tmp_path_factory.mktemp("contract")
    home, work = root / "home", root / "work"
    work.mkdir()
    env = {"CTX_HOME": str(home), "CTX_WORKSPACE": str(home / "workspace"), "CTX_EMBEDDER": "keyword"}
    if test_store_url:
        env.update(CTX_STORE_URL=test_store_url, CTX_STORE_PROJECT=f"contract-{root.name}")
    s = str(work / "s.jsonl")

    def ok(*args, **kw):
        r = run(*args, env=env, **kw)
        assert r.code == 0, (args, r.stderr)
        return r

    (work / "s.jsonl").write_text(ok("import", TRANSCRIPT).stdout)
    # the project's Claude Code session, where Claude Code keeps it (`ctx sessions` finds it)
    env["CLAUDE_CONFIG_DIR"] = str(root / "claude")
    kept = root / "claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", os.path.realpath(work))
    kept.mkdir(parents=True)
    shutil.copy(TRANSCRIPT, kept / "491e126e-1e71-469c-ade2-fcc8af567c74.jsonl")
    scored = ok("score", s, "--query", "create the beads").stdout
    ok("drop", "--cutoff", "0.9", "--keep", "0.95", "--min-keep", "1", input=scored)
    ok("status", s, "--log")
    (work / "c.jsonl").write_text(ok("compact", s, "--budget", "4000", "--force").stdout)
    ok("recover", "--chunk-id", json.loads(ok("drops", "-n", "1").stdout)["chunk_id"])
    ok("observe", s)
    ok("goal", "add", "Ship the beads")
    ok("constraint", "add", "Use mix tasks only")
    os.makedirs(home / "workspace", exist_ok=True)
    (home / "workspace" / "tools.json").write_text(json.dumps([{"type": "function", "function": {
        "name": "task_board", "description": "Show the task board.", "parameters": {"type": "object"}}}]))
    (work / "a.md").write_text("Run the tests before every commit.\nDeploy on Fridays.\n")
    (work / "b.md").write_text("Run the tests before every commit.\nNever deploy on Mondays.\n")
    git = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run("git init -q && git add -A && git commit -qm one", shell=True, cwd=work, env=git, check=True)
    return {"root": root, "home": home, "work": work, "env": env, "s": s}


def reporting_args(w) -> dict[str, list[str]]:
    """How to run each reporting command so that it has something to report."""
    s, work = w["s"], str(w["work"])
    return {
        "cold-storage list": [], "cold-storage search": ["beads"], "cold-storage stats": [],
        "compact": [s, "--dry-run", "--budget", "4000"], "config show": [], "constraint list": [],
        "dedupe": [f"{work}/a.md", f"{work}/b.md"], "drops": [], "examples": [], "eval": [s, "--candidate", f"{work}/c.jsonl"],
        "external": ["--repo", work, "--since", "30d"], "goal list": [], "logs": ["context-health"],
        "memory search": ["beads", "--include-cold"], "prompt build": ["--explain"], "reflect": [],
        "session list": [], "session show": ["491e126e"], "sessions": [work], "stats compaction": [], "stats drops": [], "stats recovery": [],
        "stats suggest": [], "status": [s], "store check": [], "time": [], "tools list": [], "top": [s],
    }


def leaves():
    import click

    return [" ".join(p) for p, c in docgen.commands() if not isinstance(c, click.Group)]


def is_reporting(name: str) -> bool:
    cmd = dict((" ".join(p), c) for p, c in docgen.commands())[name]
    return {"jq_expr", "as_json", "table", "table_fmt"} <= {p.name for p in cmd.params}


def test_every_command_is_classified(world):
    args = reporting_args(world)
    for name in leaves():
        assert (name in args) != (name in NOT_REPORTING), f"classify `ctx {name}` (reporting or not, and why)"
        if name in args:
            assert is_reporting(name), f"`ctx {name}` lacks one of --json, -t, --fmt, --jq"


REPR = re.compile(r"(^|:\s|\s{2}|\|\s)(True|False|None)(\s{2}|\s*$|\s*\|)", re.M)


def _json_lines(text: str) -> list:
    return [json.loads(line) for line in text.split("\n") if line.strip()]


REPORTING = sorted(n for n in leaves() if n not in NOT_REPORTING)


@pytest.mark.parametrize("name", REPORTING)
def test_reporting_command_keeps_the_contract(name, world):
    env, argv = world["env"], name.split() + reporting_args(world)[name]
    piped = run(*argv, env=env)
    assert piped.code == 0, piped.stderr
    rows = _json_lines(piped.stdout)  # JSON or JSONL when piped, nothing else on stdout
    assert rows, f"`ctx {name}` printed nothing to check"
    as_json = _json_lines(run(*argv, "--json", env=env).stdout)
    assert [sorted(r) if isinstance(r, dict) else r for r in as_json] == \
        [sorted(r) if isinstance(r, dict) else r for r in rows]  # the same keys, piped or --json
    table = run(*argv, "-t", env=env)
    assert table.code == 0 and table.stdout.strip(), table.stderr
    with pytest.raises(ValueError):
        _json_lines(table.stdout)  # -t is for people
    assert not REPR.search(table.stdout), REPR.search(table.stdout).group(0)
    assert run(*argv, "-t", "--fmt", "github", env=env).code == 0
    for jq in (["--jq", ".", "-r"], ["-r", "--jq", "."], ["--jq", "-r", "."]):
        out = run(*argv, *jq, env=env)
        assert out.code == 0 and _json_lines(out.stdout), (jq, out.stderr)
    bad = run(*argv, "-t", "--fmt", "nosuchfmt", env=env)
    assert bad.code == 2 and bad.stdout == "" and "nosuchfmt" in bad.stderr
    both = run(*argv, "-t", "--json", env=env)
    assert both.code == 2 and both.stdout == "" and both.stderr.startswith("Error")
    broken = run(*argv, "--jq", "][", env=env)
    assert broken.code == 2 and broken.stdout == "" and broken.stderr


def test_raw_strings_and_the_goal_list_idiom(world):
    env = world["env"]
    for args in (["--status", "pending", "--jq", "-r", ".goal_id"], ["--status", "pending", "--jq", ".goal_id", "-r"],
                 ["--status", "pending", "-r", "--jq", ".goal_id"]):
        out = run("goal", "list", *args, env=env)
        assert out.code == 0 and out.stdout.strip() == "g-001", (args, out.stderr)


def test_errors_go_to_stderr_with_a_non_zero_exit(world, tmp_path):
    env = world["env"]
    outside = run("external", "--repo", str(tmp_path), env=env)
    assert outside.code == 1 and outside.stdout == "" and "not in a git repository" in outside.stderr
    missing = run("status", str(tmp_path / "nope.jsonl"), env=env)
    assert missing.code == 1 and missing.stdout == "" and "nope.jsonl" in missing.stderr
    assert run("stats", "drops", "--since", "yesterdayish", env=env).stdout == ""
    dry = run("compact", world["s"], "--dry-run", env=env)
    assert "None" not in dry.stdout and "False" not in dry.stdout and json.loads(dry.stdout)["context_md"] is None


def test_session_prefix_everywhere(world):
    env = world["env"]
    sid = json.loads(run("session", "list", env=env).stdout.split("\n")[0])["session_id"]
    for args in (["drops", "--session", sid[:6]], ["cold-storage", "list", "--session", sid[:6]],
                 ["cold-storage", "search", "beads", "--session", sid[:6]]):
        out = run(*args, env=env)
        assert out.code == 0 and _json_lines(out.stdout), (args, out.stderr)
        assert {r["session_id"] for r in _json_lines(out.stdout)} == {sid}
    assert json.loads(run("session", "show", sid[:8], env=env).stdout)["session_id"] == sid
    unknown = run("drops", "--session", "zz-nothing", env=env)
    assert unknown.code == 2 and unknown.stdout == "" and "zz-nothing" in unknown.stderr  # an unknown id: usage


def test_session_prefix_that_is_ambiguous_lists_the_candidates(tmp_path):
    env = {"CTX_HOME": str(tmp_path / "h")}
    text = open(TRANSCRIPT).read()
    for sid in ("abc-one", "abc-two"):
        f = tmp_path / f"{sid}.jsonl"
        f.write_text(text.replace("491e126e-1e71-469c-ade2-fcc8af567c74", sid))
        assert run("status", str(f), "--log", env=env).code == 0
    out = run("drops", "--session", "abc", env=env)
    assert out.code == 2 and out.stdout == "" and "abc-one" in out.stderr and "abc-two" in out.stderr
    assert run("drops", "--session", "abc-t", env=env).code == 0


@pytest.mark.skipif(not shutil.which("script"), reason="script(1) not installed")
def test_on_a_terminal_reports_are_for_people(world, tmp_path):
    """On a real TTY (script(1)), at 80 columns: tables or text, never JSON, and tables fit."""
    env = {**ctx_subprocess_env(world["home"]), **world["env"], "CTX_EMBEDDER": "keyword", "COLUMNS": "80",
           "LINES": "50"}
    args = reporting_args(world)
    for name in REPORTING:
        cmd = " ".join([PY, "-m", "ctxkit", name] + [f"'{a}'" for a in args[name]])
        p = subprocess.run(["script", "-qec", f"stty cols 80 rows 50; {cmd}", "/dev/null"], env=env,
                           capture_output=True, text=True, timeout=120, cwd=world["work"])
        text = p.stdout.replace("\r", "")
        assert p.returncode == 0 and text.strip(), (name, text[-500:])
        first = text.strip().split("\n")[0]
        assert not first.startswith("{"), (name, first)
        if name in ("drops", "session list", "logs", "cold-storage list", "memory search", "goal list"):
            assert max(len(line) for line in text.split("\n")) <= 80, (name, text)
    drops = subprocess.run(["script", "-qec", f"stty cols 80 rows 50; {PY} -m ctxkit drops", "/dev/null"],
                           env=env, capture_output=True, text=True, timeout=120).stdout
    head = drops.replace("\r", "").split("\n")[0].split()
    # what, why, how much it freed: headers as --json names them
    assert head[:5] == ["chunk_id", "reason", "relevance_score", "tokens", "tokens_freed"], head


# Reports whose -t form is text for people (lines, or a breakdown table of their own), not a table of
# their JSON's keys; each with what it prints instead.
TEXT_REPORTS = {
    "status": "a breakdown by part (each part's name is a JSON key) and lines about the budget",
    "time": "the Time block's lines", "external": "the External block's lines",
    "reflect": "one line: facts added, skipped", "compact": "the --dry-run plan in lines",
    "stats compaction": "lines", "stats drops": "lines", "stats recovery": "lines", "stats suggest": "lines",
}


def _github_table(text: str) -> list[list[str]] | None:
    lines = [ln for ln in text.split("\n") if ln.startswith("|")]
    if len(lines) < 2:
        return None
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if not set(ln) <= set("|-: ")]


@pytest.mark.parametrize("name", REPORTING)
def test_table_headers_are_the_json_keys(name, world):
    """What a person reads in a table's header is what --json and --jq call it (no `score` for
    `relevance_score`, no `cutoff` for `threshold_used`)."""
    env = {**world["env"], "COLUMNS": "2000"}  # nothing hidden for want of width
    argv = name.split() + reporting_args(world)[name]
    rows = [r for r in _json_lines(run(*argv, "--json", env=env).stdout) if isinstance(r, dict)]
    table = _github_table(run(*argv, "-t", "--fmt", "github", env=env).stdout)
    if name in TEXT_REPORTS:
        assert table is None or name == "status", f"`ctx {name} -t` is a table now: check its headers here"
        return
    assert rows and table, f"`ctx {name}`: no rows or no table to compare"
    head, body = table[0], table[1:]
    keys = {k for r in rows for k in r}
    if head == ["key", "value"] and "key" not in keys:  # one object, as a two-column table
        assert {b[0] for b in body} <= keys and len(rows) == 1
        return
    assert set(head) <= keys, f"`ctx {name} -t` headers that are not JSON keys: {set(head) - keys}"


def test_drops_table_at_80_columns_shows_the_tokens(world):
    """A narrow terminal gives up the gist and the session id (every row's the same) before the
    numbers a person reads drops for."""
    out = run("drops", "-t", env={**world["env"], "COLUMNS": "80"}).stdout
    lines = out.split("\n")
    assert max(len(ln) for ln in lines) <= 80
    assert {"chunk_id", "reason", "relevance_score", "tokens", "tokens_freed"} <= set(lines[0].split())
    assert "session_id" in out.split("hidden to fit 80 columns")[1]  # named in the last line
