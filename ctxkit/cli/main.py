"""The `ctx` entry point: a lazy command group, error handling, exit codes.

Subcommands are imported only when called, so `ctx --help` stays fast and
never pulls in torch, sentence-transformers, llama_cpp or git.
"""
from __future__ import annotations

import importlib
import os
import signal
import io
import sys

import click

from .. import __version__
from ..errors import CtxError, ExitStatus, PipeClosed

COMMANDS = {
    "import": ("ctxkit.cli.import_cmd", "import_cmd", "Convert an agent transcript to ctx records."),
    "export": ("ctxkit.cli.export_cmd", "export", "Turn records into an OpenAI or Anthropic request body."),
    "count": ("ctxkit.cli.count", "count", "Count tokens in records or plain text."),
    "status": ("ctxkit.cli.status", "status", "Show context usage against the budget."),
    "top": ("ctxkit.cli.top", "top", "List the biggest chunks: what is eating the window."),
    "truncate": ("ctxkit.cli.truncate", "truncate", "Cut records to a token budget, whole groups only."),
    "logs": ("ctxkit.cli.logs", "logs", "Show ctx's activity logs."),
    "score": ("ctxkit.cli.score", "score", "Score every chunk's relevance to a query."),
    "drop": ("ctxkit.cli.drop", "drop", "Move low-relevance chunks to cold storage, leaving stubs."),
    "drops": ("ctxkit.cli.drop", "drops", "Show what was dropped, when and why."),
    "cold-storage": ("ctxkit.cli.cold_storage", "cold_storage", "List, show, search, purge dropped chunks."),
    "recover": ("ctxkit.cli.recover", "recover", "Bring dropped chunks back, by id or by query."),
    "compact": ("ctxkit.cli.compact", "compact", "Summarize the older span into CONTEXT.md and a summary record."),
    "context": ("ctxkit.cli.context", "context", "Show and update CONTEXT.md, the working-state document."),
    "eval": ("ctxkit.cli.eval_cmd", "eval_cmd", "Probe what a compacted stream kept, and its compression."),
    "prompt": ("ctxkit.cli.prompt", "prompt", "Build a lean, layered, cache-friendly system prompt."),
    "tools": ("ctxkit.cli.tools_cmd", "tools", "List tool names; show one tool's schema on demand."),
    "memory": ("ctxkit.cli.memory", "memory", "Search MEMORY.md and observations for relevant snippets."),
    "time": ("ctxkit.cli.time_cmd", "time_cmd", "Now, the last interaction, and what the gap means."),
    "external": ("ctxkit.cli.external", "external", "Git changes and outside edits since the last session."),
    "dedupe": ("ctxkit.cli.dedupe", "dedupe", "Find duplicated passages across workspace files."),
    "session": ("ctxkit.cli.session", "session", "List, show and restore sessions."),
    "sessions": ("ctxkit.cli.sessions", "sessions", "List this project's agent transcripts and how full each is."),
    "hook": ("ctxkit.cli.hook", "hook", "Run ctxkit from Claude Code's (or any agent's) hooks."),
    "goal": ("ctxkit.cli.hot", "goal", "Add, start, complete and list goals in CONTEXT.md."),
    "decision": ("ctxkit.cli.hot", "decision", "Log a decision with its rationale."),
    "constraint": ("ctxkit.cli.hot", "constraint", "Add, remove and list session constraints."),
    "remember": ("ctxkit.cli.hot", "remember", "Pin a fact that compaction never removes."),
    "entities": ("ctxkit.cli.hot", "entities", "Extract files, functions, packages, people, URLs into CONTEXT.md."),
    "observe": ("ctxkit.cli.lifecycle", "observe", "Write an observation of a session and update CONTEXT.md."),
    "reflect": ("ctxkit.cli.lifecycle", "reflect", "Crystallize observations into MEMORY.md facts."),
    "maintain": ("ctxkit.cli.lifecycle", "maintain", "Apply the whole context policy in one idempotent pass."),
    "completion": ("ctxkit.cli.completion", "completion", "Print the shell completion script for bash, zsh or fish."),
    "man": ("ctxkit.cli.man", "man", "Show a man page, or install the pages where man finds them."),
    "examples": ("ctxkit.cli.man", "examples", "List the bundled examples, or print the path of one."),
    "stats": ("ctxkit.cli.stats", "stats", "Tuning statistics: drops, compaction, recovery, a suggested cutoff."),
    "config": ("ctxkit.cli.config_cmd", "config", "Show, create, locate and validate config.yaml."),
    "reset": ("ctxkit.cli.reset", "reset", "Delete logs, cold storage and caches."),
    "store": ("ctxkit.cli.store_cmd", "store", "Set up, check and move to a shared PostgreSQL store."),
}


# Other names a command answers to (seed 003's); not listed separately in --help.
ALIASES = {"health": "status"}


RAW_FLAGS = ("-r", "--raw-output")


def jq_raw_first(args: list[str]) -> list[str]:
    """`--jq -r EXPR` means `-r --jq EXPR` (as jq's own `jq -r EXPR`): without this, click would take
    `-r` as the expression. Nothing after `--` is touched."""
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return out + args[i:]
        if a == "--jq" and i + 2 < len(args) and args[i + 1] in RAW_FLAGS:
            out += [args[i + 1], a, args[i + 2]]
            i += 3
            continue
        out.append(a)
        i += 1
    return out


class Interrupted(Exception):
    """Ctrl-C while a command ran: click would print a blank line before its Abort; this ends in
    one line, `Error: aborted`, and 130."""


class LazyGroup(click.Group):
    """click's documented lazy-loading group: import a command only when it is used."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, jq_raw_first(list(args)))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None

    def __init__(self, *args, lazy: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in ALIASES:
            ctx.meta["ctx.invoked_as"] = name  # `ctx health` also checks the store
        name = ALIASES.get(name, name)
        if name in self.lazy:
            mod, attr, _ = self.lazy[name]
            return with_quiet(getattr(importlib.import_module(mod), attr))
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        # Short help comes from the table above, so --help imports no subcommand module.
        rows = [(name, self.lazy[name][2] + (f" (also: {', '.join(a for a, n in ALIASES.items() if n == name)})"
                                             if name in ALIASES.values() else "")) for name in sorted(self.lazy)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _set_quiet(ctx, param, value):
    if value:
        ctx.meta["ctx.quiet"] = True  # click shares meta across the whole command line
    return value


QUIET_HELP = "No informational lines on stderr (CTX_QUIET=1)."


def with_quiet(cmd: click.Command) -> click.Command:
    """`-q/--quiet` means one thing wherever it stands, as in git (`git -q commit`, `git commit -q`):
    before the command or after it, on every command and subcommand."""
    if getattr(cmd, "ctx_quiet", False):
        return cmd
    cmd.ctx_quiet = True
    if not any(o in ("-q", "--quiet") for p in cmd.params for o in getattr(p, "opts", ())):
        at = next((i for i, p in enumerate(cmd.params) if p.name == "help"), len(cmd.params))
        cmd.params.insert(at, click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, is_eager=True,
                                           callback=_set_quiet, help=QUIET_HELP))
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            with_quiet(sub)
    return cmd


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _set_home(ctx, param, value):
    if value:
        ctx.meta["ctx.home_override"] = value
    return value


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="ctx")
@click.option("--home", metavar="DIR", type=click.Path(file_okay=False), expose_value=False, callback=_set_home, is_eager=True,
              help="The ctx home (default: $CTX_HOME or ~/.ctx).")
@click.option("-q", "--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
              help=QUIET_HELP)
@click.option("--traceback", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda c, p, v: c.meta.__setitem__("ctx.traceback", v),
              help="Show a full traceback on errors (also CTX_DEBUG=1).")
def cli():
    """Manage an LLM agent's context window from the outside.

    Every command reads JSONL (ctx records or a raw agent transcript) from a
    FILE or stdin and writes JSONL to stdout, so stages chain in a pipe.

    \b
    Examples:
      ctx import ~/.claude/projects/x/abc.jsonl > s.jsonl
      ctx count s.jsonl --model gpt-4o
      ctx status s.jsonl --budget 100000
      ctx truncate s.jsonl --budget 8000 --strategy middle_out | ctx count
      ctx logs context-health --since 24h --jq '.pct_used'

    Exit status: 0 ok, 1 error, 2 usage, 3 over threshold, 4 conflict, 5 --jq failed, 130 interrupted.
    """
    from ..store.home import check_home_dir

    given = click.get_current_context().meta.get("ctx.home_override")
    if given or os.environ.get("CTX_HOME"):  # before anything else reads or writes under it
        check_home_dir(os.path.abspath(os.path.expanduser(given or os.environ["CTX_HOME"])),
                       "--home" if given else "CTX_HOME")


def _want_traceback() -> bool:
    return os.environ.get("CTX_DEBUG", "") not in ("", "0") or "--traceback" in sys.argv


def _err(msg: str) -> None:
    """The one error line, its secrets redacted (a message may quote what the user typed)."""
    try:
        from ..store import redaction

        click.echo(f"Error: {redaction.text(msg)}", err=True)
    except Exception:  # pragma: no cover - stderr gone
        pass


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and map every outcome to one line on stderr and an exit code."""
    code: int = ExitStatus.OK
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate (half an emoji) prints as its JSON escape
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, io.UnsupportedOperation):
            pass
    try:
        rv = cli.main(args=argv, prog_name="ctx", standalone_mode=False)
        # In non-standalone mode click *returns* the code of an explicit Exit.
        if isinstance(rv, int) and not isinstance(rv, bool):
            code = rv
    except click.exceptions.Exit as e:
        code = e.exit_code
    except (click.Abort, Interrupted):
        _err("aborted")
        code = ExitStatus.INTERRUPTED
    except click.ClickException as e:
        from ..store import redaction

        e.message = redaction.text(e.message)  # a bad value quoted back may be a secret
        e.show()
        code = e.exit_code
    except CtxError as e:
        if _want_traceback():
            import traceback

            traceback.print_exc()
        _err(e.message + (f" (hint: {e.hint})" if e.hint else ""))
        code = e.exit_code
    except KeyboardInterrupt:
        code = ExitStatus.INTERRUPTED
    except (BrokenPipeError, PipeClosed):
        code = _broken_pipe()
    except OSError as e:
        if _want_traceback():
            import traceback

            traceback.print_exc()
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        _err(f"{where}{e.strerror or e}")
        code = ExitStatus.ERROR
    except Exception as e:  # noqa: BLE001 - last resort: one line, not a traceback
        if _want_traceback():
            import traceback

            traceback.print_exc()
        _err(f"internal error: {type(e).__name__}: {e} (rerun with --traceback or CTX_DEBUG=1)")
        code = ExitStatus.ERROR
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _broken_pipe()
    sys.exit(code)


def _broken_pipe() -> int:
    """`ctx ... | head`: the reader left; exit quietly like other Unix tools."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except Exception:  # pragma: no cover
        pass
    return ExitStatus.OK


if __name__ == "__main__":  # pragma: no cover
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
