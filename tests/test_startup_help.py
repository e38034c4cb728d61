"""Fast start (no heavy imports) and --help on every command."""
import json
import subprocess

import pytest

from conftest import PY, ROOT, corpus, ctx_subprocess_env, run
from ctxkit.cli.main import COMMANDS, cli

HEAVY = ("torch", "sentence_transformers", "llama_cpp", "git", "transformers", "numpy", "onnxruntime")

PROBE = """
import json, sys
from ctxkit.cli.main import main
sys.argv = ["ctx"] + json.loads(sys.argv[1])
try:
    main()
except SystemExit:
    pass
heavy = [m for m in %r if m in sys.modules]
sys.stderr.write("HEAVY=" + json.dumps(heavy) + "\\n")
""" % (HEAVY,)


@pytest.mark.parametrize("args", [["--help"], ["status", "{file}"], ["count", "{file}"], ["status", "--help"]])
def test_fast_commands_import_nothing_heavy(args, tmp_path):
    path = corpus("claude-code_spotter_491e126e_session.jsonl")
    argv = [a.format(file=path) for a in args]
    p = subprocess.run([PY, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True,
                       env=ctx_subprocess_env(tmp_path / "h"), cwd=ROOT, timeout=120)
    heavy = json.loads(p.stderr.rsplit("HEAVY=", 1)[1])
    assert heavy == []


def _all_commands():
    import click

    out = []
    for name in COMMANDS:
        cmd = cli.get_command(None, name)
        out.append([name])
        if isinstance(cmd, click.Group):
            out.extend([name, sub] for sub in cmd.commands)
    return out


@pytest.mark.parametrize("path", _all_commands(), ids=lambda p: " ".join(p))
def test_every_command_has_help_with_example(path):
    res = run(*path, "--help")
    assert res.code == 0
    assert res.stdout.startswith("Usage: ctx ")
    text = res.stdout
    import click

    cmd = cli.get_command(None, path[0])
    if not isinstance(cmd, click.Group) or len(path) > 1:
        assert "ctx " in text.split("Usage:", 1)[1].split("\n", 2)[2], "an example pipeline in --help"


def test_short_help_table_matches_commands():
    for name, (_, _, short) in COMMANDS.items():
        cmd = cli.get_command(None, name)
        assert cmd.name == name
        assert short.rstrip(".").lower() in (cmd.help or "").lower().replace("\n", " ") or short


def test_version():
    assert run("--version").stdout.startswith("ctx, version ")
