"""Every example in the README and in `--help` runs, as written, against a temporary CTX_HOME
with the bundled transcript (a real Claude Code session). Examples that need a terminal, an
editor, a model file or another shell are listed below with the reason, and skipped explicitly."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import PY, ROOT
from ctxkit.cli import docgen

TRANSCRIPT = os.path.join(ROOT, "examples", "claude-code_spotter_491e126e_session.jsonl")
SESSION = "491e126e-1e71-469c-ade2-fcc8af567c74"

# --help examples that cannot run here, each with the reason.
NOT_RUN = {
    '$EDITOR "$(ctx config path)"': "opens an editor",
    '$EDITOR "$(ctx context path)"': "opens an editor",
    '"SessionStart": [{"hooks": [{"type": "command", "command": "ctx hook claude-code SessionStart"}]}]':
        "a settings.json fragment, not a command (examples/claude-code/settings.json is checked by the hook tests)",
    '*/5 * * * * $HOME/.local/bin/ctx -q maintain "$HOME/agent/session.jsonl" >> "$HOME/.ctx/maintain.log"':
        "a crontab line (tests/test_cron_example.py checks crontab lines)",
    "ctx compact s.jsonl --summarizer llama --gguf ~/models/Qwen3-1.7B-Q4_K_M.gguf": "needs a GGUF model file",
    'ctx completion zsh > "${fpath[1]}/_ctx"': "zsh syntax ($fpath)",
    "ctx man --install --prefix /usr/local # for every user (as root)": "writes outside the test's folders",
    "ctx store embed": "needs a PostgreSQL store with pgvector (tests/test_store_pg.py runs it against one)",
    "CTX_STORE_URL=postgresql://ctx_owner@localhost/ctx ctx store init": "needs a PostgreSQL server "
        "(tests/test_store_pg.py runs it against one)",
    "ctx store migrate --to postgresql://agents_a@db.example/ctx": "needs a PostgreSQL server "
        "(tests/test_store_pg.py runs it against one)",
    "ctx store migrate --to embedded --from postgresql://agents_a@db.example/ctx": "needs a PostgreSQL server "
        "(tests/test_store_pg.py runs it against one)",
}
# Examples that document a non-zero exit on purpose.
EXIT: dict[str, int] = {}


def _shim(bin_dir):
    """`ctx` on PATH runs this checkout's code (the worktree first on sys.path)."""
    os.makedirs(bin_dir, exist_ok=True)
    p = os.path.join(bin_dir, "ctx")
    with open(p, "w") as f:
        f.write(f'#!/bin/sh\nPYTHONPATH="{ROOT}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{PY}" -m ctxkit "$@"\n')
    os.chmod(p, 0o755)


def _env(root):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", HOME=str(root / "home"), CTX_HOME=str(root / "home" / ".ctx"), CTX_EMBEDDER="keyword",
               PATH=str(root / "bin") + os.pathsep + os.environ.get("PATH", ""), NO_COLOR="1", EDITOR="true",
               CTX_NO_TABLE="1")
    # the prepared tree is copied per group (its project folder would move): one fixed workspace
    env["CTX_WORKSPACE"] = env["CTX_HOME"] + "/workspace"
    return env


def sh(cmd, cwd, env, timeout=300):
    return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A home and a working folder with what the examples name: abc.jsonl (session id abc…),
    s.jsonl, kept.jsonl after a drop, ~/agent, ~/.claude/projects/x/abc.jsonl, a Gemini CLI chat,
    an opencode.db, tools.json, notes."""
    root = tmp_path_factory.mktemp("examples")
    _shim(root / "bin")
    work, home = root / "work", root / "home"
    for d in (work, home / "agent", home / ".claude" / "projects" / "x", home / ".local" / "share" /
              "bash-completion" / "completions", home / ".config" / "fish" / "completions", home / "models"):
        d.mkdir(parents=True)
    text = open(TRANSCRIPT).read().replace(SESSION, "abc" + SESSION[3:])
    for p in (work / "abc.jsonl", work / "t.jsonl", home / ".claude" / "projects" / "x" / "abc.jsonl",
              home / "agent" / "session.jsonl"):
        p.write_text(text)
    fixtures = os.path.join(ROOT, "tests", "fixtures")
    chats = home / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(os.path.join(fixtures, "gemini-cli", "session-0.61.0-7f916d75.jsonl"), chats / "session-x.jsonl")
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    import sqlite3

    db = sqlite3.connect(home / ".local" / "share" / "opencode" / "opencode.db")
    db.executescript(open(os.path.join(fixtures, "opencode", "opencode_db.sql")).read())
    db.commit()
    db.close()
    (home / "agent" / "AGENTS.md").write_text("# Agents\n- Run the tests before a commit.\n- Use RS256.\n")
    (home / "agent" / "notes.md").write_text("# Notes\n- Run the tests before a commit.\n- Deploy on Fridays.\n")
    (work / "notes.md").write_text("LoRA training notes: rank 16, alpha 32.\n" * 20)
    (work / "messages.json").write_text(json.dumps([{"role": "user", "content": "hi"},
                                                    {"role": "assistant", "content": "hello"}]))
    (work / "run.traj").write_text(json.dumps({"trajectory": [{"thought": "Look first.", "action": "cat a.py",
                                                               "observation": "print(1/0)"}],
                                               "history": [{"role": "user", "content": "Fix a.py"}]}))
    tools = [{"type": "function", "function": {"name": "task_board", "description": "Show the task board.",
                                                "parameters": {"type": "object", "properties": {}}}}]
    (work / "tools.json").write_text(json.dumps(tools))
    env = _env(root)
    for cmd in ("ctx import abc.jsonl > s.jsonl",
                "git init -q && git add -A && git commit -qm 'the examples' && echo more >> notes.md",
                'mkdir -p "$CTX_HOME/workspace" && cp tools.json "$CTX_HOME/workspace/"',
                "ctx score s.jsonl --query 'create the beads' | ctx drop --cutoff 0.99 --keep 0.995 --min-keep 1 > kept.jsonl",
                "ctx status s.jsonl --log > /dev/null",
                "ctx compact s.jsonl --budget 4000 --force > /dev/null",
                "ctx recover --chunk-id c-0006 > /dev/null",
                "ctx observe s.jsonl > /dev/null"):
        p = sh(cmd, work, env)
        assert p.returncode == 0, (cmd, p.stderr)
    return root


def _fresh(prepared, tmp_path):
    """A copy of the prepared home and folder, so each group's examples start from the same state."""
    root = tmp_path / "r"
    shutil.copytree(prepared, root, symlinks=True)
    _shim(root / "bin")
    return root


def help_examples():
    """Per command (a group with its subcommands, in the order `--help` shows them), its examples."""
    by_cmd: dict[str, list[str]] = {}
    for path, cmd in docgen.commands():
        exs = by_cmd.setdefault(path[0], [])
        exs += [e for e in docgen.split_doc(cmd.help or "")[2] if e not in exs]
    return [pytest.param(name, exs, id=name) for name, exs in by_cmd.items() if exs]


@pytest.mark.parametrize("group,examples", help_examples())
def test_help_examples_run_as_written(group, examples, prepared, tmp_path):
    root = _fresh(prepared, tmp_path)
    env = _env(root)
    ran = 0
    for ex in examples:
        if ex in NOT_RUN:
            continue
        p = sh(ex, root / "work", env)
        assert p.returncode == EXIT.get(ex, 0), f"`{ex}` exited {p.returncode}:\n{p.stderr[-2000:]}"
        assert "Traceback" not in p.stderr, ex
        ran += 1
    if not ran:
        pytest.skip("every example of this command is listed in NOT_RUN: " +
                    "; ".join(f"{e}: {NOT_RUN[e]}" for e in examples))


def test_examples_that_are_not_run_still_exist():
    """NOT_RUN names real examples (a reworded one must be run, or listed again with its reason)."""
    every = {e for p in help_examples() for e in p.values[1]}
    assert set(NOT_RUN) <= every and set(EXIT) <= every


# -- the README ---------------------------------------------------------------------------------

FENCE = re.compile(r"(?:<!-- not run: (?P<why>[^>]*?) -->\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)\n```", re.S)


def readme_blocks():
    text = open(os.path.join(ROOT, "README.md")).read()
    return [(m.group("lang"), m.group("body"), m.group("why")) for m in FENCE.finditer(text)]


def test_readme_is_a_front_door():
    text = open(os.path.join(ROOT, "README.md")).read()
    assert len(text) <= 10_000
    assert "make run" in text and "make test" in text and "pip install" in text
    assert not re.search(r"seed 0\d\d", text, re.I)
    for lang, body, why in readme_blocks():  # every block runs, or says why not
        assert lang == "sh" or why, body


def test_readme_examples_run_as_written(tmp_path):
    _shim(tmp_path / "bin")
    work = tmp_path / "work"
    (work / "examples").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    shutil.copy(TRANSCRIPT, work / "examples")
    shutil.copytree(os.path.join(ROOT, "examples", "claude-code"), work / "examples" / "claude-code")
    env = _env(tmp_path)
    skipped = []
    for lang, body, why in readme_blocks():
        if why:
            skipped.append(why)
            continue
        for line in body.split("\n"):
            p = sh(line, work, env)
            assert p.returncode == 0, f"`{line}` exited {p.returncode}:\n{p.stderr[-2000:]}"
            assert "Traceback" not in p.stderr, line
    assert (work / ".codex" / "hooks.json").exists() and (work / "request.json").exists()  # ctx hook install codex
    assert json.load(open(work / "request.json"))["messages"]
    assert len(skipped) == 3  # make run/test, the wheel, the crontab: each says why


def test_no_seed_numbers_in_user_facing_text():
    """Help, man pages and docs name behaviour, never "seed 00N"."""
    pat = re.compile(r"seed 0\d\d|seeds? \d{3}", re.I)
    for folder in ("man", "docs"):
        for f in os.listdir(os.path.join(ROOT, folder)):
            text = open(os.path.join(ROOT, folder, f)).read()
            assert not pat.search(text), (folder, f, pat.search(text).group(0))
    for path, cmd in docgen.commands():
        assert not pat.search(docgen.help_text(path, cmd)), path


def test_man_pages_name_every_page_carry_subcommands_and_true_exit_codes():
    from ctxkit.cli.main import COMMANDS

    man = open(os.path.join(ROOT, "man", "ctx.1")).read()
    see = man.split(".SH SEE ALSO")[1]
    assert all(f"ctx\\-{n.replace('-', chr(92) + '-')} (1)" in see for n in COMMANDS)
    goal = open(os.path.join(ROOT, "man", "ctx-goal.1")).read()
    assert ".SS ctx goal list" in goal and "\\-\\-status" in goal
    hook = open(os.path.join(ROOT, "man", "ctx-hook.1")).read().split(".SH EXIT STATUS")[1].split(".SH ")[0]
    assert ".B 0" in hook and ".B 1" in hook and ".B 2" not in hook  # a hook never exits 2
    status = open(os.path.join(ROOT, "man", "ctx-status.1")).read()
    assert ".B 3\n" in status and ".B 3\n" not in open(os.path.join(ROOT, "man", "ctx-import.1")).read()


def test_regeneration_is_deterministic(tmp_path, monkeypatch):
    """The docs depend on the code only: not on the terminal, the home or the environment."""
    first = {**docgen.man_pages(), **docgen.doc_pages()}
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("CTX_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert {**docgen.man_pages(), **docgen.doc_pages()} == first
