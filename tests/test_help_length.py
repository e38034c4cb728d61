"""Every command's --help says what a user needs (a short description, the options, an example or
two) and no more: the long explanation lives in docs/.

The limit, 350 words, is a screenful: `git commit -h` is 296 words (58 lines) and `jq --help` 271,
and 350 words of ctx's help (options included: the shared ones alone are about 60) fill about 50
lines at 100 columns. A --help over it was 1,003 words (`ctx compact`) and scrolled four screens
past its own options."""
import pytest

from ctxkit.cli import docgen

LIMIT = 350


def _helps():
    # `ctx --help` itself is the index: one line for each of its 35 commands
    return [pytest.param(" ".join(p), c, id=" ".join(p)) for p, c in docgen.commands()]


@pytest.mark.parametrize("name,cmd", _helps())
def test_no_help_is_over_the_limit(name, cmd):
    words = len(docgen.help_text(name.split() if name else [], cmd).split())
    assert words <= LIMIT, f"`ctx {name} --help` is {words} words (limit {LIMIT}): move the explanation to docs/"


def test_every_command_and_subcommand_takes_q_for_quiet():
    """-q is --quiet everywhere (git's convention), never a short flag of something else."""
    for path, cmd in docgen.commands():
        opts = {o: p for p in cmd.params for o in getattr(p, "opts", ())}
        assert "-q" in opts and opts["-q"].name == "quiet", " ".join(path)
