"""Shared click options and helpers: home, input, output format, jq."""
from __future__ import annotations

import functools
import sys
from typing import Iterable, Iterator

import click

from ..errors import UsageProblem
from ..io.adapters import FORMATS, open_records
from ..io.jsonl import Source, Writer, dumps
from ..io.tables import apply_jq, render_table, want_table
from ..store.home import Home


def get_home(ctx: click.Context | None = None) -> Home:
    ctx = ctx or click.get_current_context()
    root = ctx.find_root()
    root.meta.setdefault("ctx.home_override", None)
    home = root.meta.get("ctx.home")
    if home is None:
        from ..store import redaction

        home = Home(root.meta.get("ctx.home_override"))
        home.start = root.meta.get("ctx.cwd")
        home.check_links()
        root.meta["ctx.home"] = home
        redaction.configure(home)
        from ..store.backend import close_store

        root.call_on_close(lambda: close_store(home))  # a shared store's connection ends with the command
    elif root.meta.get("ctx.cwd") and root.meta["ctx.cwd"] != home.start:
        from ..store import redaction

        home.read_config_from(root.meta["ctx.cwd"])  # a hook's project: its own config.yaml
        redaction.configure(home)
    return home


def _set_home(ctx, param, value):
    if value:
        root = ctx.find_root()
        root.meta["ctx.home_override"] = value
        root.meta.pop("ctx.home", None)
    return value


home_option = click.option("--home", metavar="DIR", type=click.Path(file_okay=False), expose_value=False, callback=_set_home,
                           is_eager=True, help="The ctx home (default: $CTX_HOME or ~/.ctx).")


def input_options(f):
    """FILE argument ('-' or none = stdin), --from, --skip-invalid."""
    f = click.option("--skip-invalid", is_flag=True,
                     help="Skip invalid lines (stderr counts them).")(f)
    f = click.option("--from", "from_", type=click.Choice(FORMATS), default="auto", show_default=True,
                     help="Input format (auto: sniffed).")(f)
    f = click.argument("file", required=False, default="-", metavar="[FILE|-]",
                       type=click.Path(dir_okay=False, allow_dash=True))(f)
    return f


AGENT_TITLES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "copilot": "Copilot CLI"}


def project_session():
    """The newest agent transcript of the current project (services.discovery), said once on
    stderr, or None; its directory becomes the one the workspace is resolved from."""
    root = click.get_current_context().find_root()
    if "ctx.found_session" not in root.meta:
        from ..services.discovery import newest

        found = newest(root.meta.get("ctx.cwd"))
        root.meta["ctx.found_session"] = found
        if found is not None:
            note(f"ctx: reading this project's newest session, {AGENT_TITLES.get(found.agent, found.agent)} "
                 f"{found.session}: {found.path}")
            if found.cwd and not root.meta.get("ctx.cwd"):
                root.meta["ctx.session_cwd"] = found.cwd
    return root.meta["ctx.found_session"]


class InputRecords:
    """Records from FILE in any format, reporting skipped lines on stderr at the end."""

    def __init__(self, file: str, from_: str = "auto", skip_invalid: bool = False, keep_meta: bool = False,
                 memo=None, redact: bool = True):
        if file == "-" and sys.stdin.isatty():  # no FILE, nothing piped in: this project's newest session
            found = project_session()
            file = found.path if found else file
        self.source = Source(file)
        self.memo = memo  # io.seen.LineMemo: lines known clean come as Seen records
        self.skipped: list[int] = []
        self.from_ = from_
        self.skip_invalid = skip_invalid
        self.keep_meta = keep_meta
        self.redact = redact  # False: a reader that prints and keeps only numbers (io.adapters.open_records)

    def __iter__(self) -> Iterator[dict]:
        home = get_home()  # the home's config (redaction among it) is in force from here on
        self.source.max_chars = int(home.config.get("max_record_mb") * (1 << 20))
        try:
            yield from open_records(self.source, self.from_, keep_meta=self.keep_meta,
                                    skip_invalid=self.skip_invalid, skipped=self.skipped, memo=self.memo,
                                    redact=self.redact)
        finally:
            self.report()

    def report(self) -> None:
        for note in self.source.notes:
            click.echo(f"ctx: {note}", err=True)
        self.source.notes = []
        if self.skipped:
            n = len(self.skipped)
            click.echo(f"ctx: skipped {n} invalid line{'s' if n != 1 else ''} in {self.source.name} "
                       f"(first at line {self.skipped[0]})", err=True)
            self.skipped = []


def _check_fmt(ctx, param, value):
    """An unknown --fmt is a usage error, never a silent fallback."""
    if value and value != "simple":
        from tabulate import tabulate_formats

        if value not in tabulate_formats:
            raise click.BadParameter(f"unknown table format {value!r} (known: {', '.join(sorted(tabulate_formats))})")
    return value


def output_options(f):
    f = click.option("--fmt", "table_fmt", default="simple", show_default=True, metavar="FORMAT", callback=_check_fmt,
                     help="Table format for -t: simple, github, grid, plain, ….")(f)
    f = click.option("--json", "as_json", is_flag=True, help="JSON (JSON lines for a listing).")(f)
    f = click.option("-t", "--table", is_flag=True, help="A table (the default on a terminal).")(f)
    return f


def _set_raw(ctx, param, value):
    ctx.meta["ctx.jq_raw"] = value
    return value


def jq_option(f):
    f = click.option("-r", "--raw-output", is_flag=True, expose_value=False, callback=_set_raw,
                     help="With --jq: strings unquoted (jq -r).")(f)
    return click.option("--jq", "jq_expr", metavar="EXPR", help="A jq filter for each item.")(f)


# One set of key names in everything ctx prints (README: "Output keys").
PUBLIC_KEYS = {"session": "session_id", "chunk": "chunk_id"}


def public(row: dict) -> dict:
    """A row with ctx's public key names (`session_id`, `chunk_id`), whatever the store calls them."""
    if not any(k in row for k in PUBLIC_KEYS):
        return row
    return {PUBLIC_KEYS.get(k, k) if PUBLIC_KEYS.get(k, k) not in row else k: v for k, v in row.items()}


# What a table shows first: the columns that answer the command's question; the rest give way.
# A table's headers are the JSON keys, word for word (`--json` and `--jq` use the names a person
# reads in the table).
TABLE_VIEWS = {
    "drops": ["chunk_id", "reason", "relevance_score", "tokens", "tokens_freed", "timestamp", "session_id", "event",
              "threshold_used"],
    "drop-plan": ["chunk_id", "decision", "reason", "score", "tokens", "frees", "gist", "session_id"],
    "explain": ["chunk_id", "score", "similarity", "recency", "importance", "working_set", "superseded", "why",
                "gist"],
    "context-health": ["timestamp", "pct_used", "current_tokens", "limit", "compaction_due",
                       "next_compaction_estimate", "session_id"],
    "top": ["chunk_id", "kind", "tokens", "tool", "age", "file", "share", "gist"],
    "agent-sessions": ["agent", "session_id", "modified", "window_pct", "window_tokens", "size", "model", "path"],
    "sessions": ["title", "session_id", "ago", "message_count", "status", "started", "last_activity", "records",
                 "cold_chunks", "agents", "primary_files", "tags"],
}


# Short codes a view's reader passes back to a command (`ctx drops --reason R`): never cut, like ids.
WHOLE_COLUMNS = {"top": {"file"}, "drops": {"reason"}, "drop-plan": {"decision", "reason"}}
# Columns that give way whole, in this order, before the others' values are cut: the gist (when why
# needs the room), a session id every row shares (so a narrow terminal still shows the tokens).
SPARE_COLUMNS = {"top": ("records", "ts", "gist", "share"), "agent-sessions": ("path", "model"), "explain": ("gist",), "drop-plan": ("gist", "session_id"), "drops": ("gist", "session_id")}


def table_view(name: str, rows: list[dict]) -> list[str] | None:
    """The columns of a named view: its columns first, then any other key the rows have."""
    if name not in TABLE_VIEWS:
        return None
    first = TABLE_VIEWS[name]
    rest = [k for k in dict.fromkeys(PUBLIC_KEYS.get(k, k) for r in rows for k in r) if k not in first]
    return first + rest


def emit_listing(rows: Iterable[dict], *, table: bool, as_json: bool, table_fmt: str = "simple",
                 jq_expr: str | None = None, columns: list[str] | None = None, view: str | None = None) -> None:
    """Print a listing: jq output, a table for people, or JSONL for machines. `view` names the
    table's column order and headers (TABLE_VIEWS)."""
    from ..store import redaction

    rows = (redaction.output(public(r)) if isinstance(r, dict) else r for r in rows)
    columns = [PUBLIC_KEYS.get(c, c) for c in columns] if columns else columns
    if table and as_json:
        raise UsageProblem("-t/--table and --json cannot be used together")
    from ..services.spool import OutputSpool

    if jq_expr:
        raw = click.get_current_context().meta.get("ctx.jq_raw", False)
        with OutputSpool() as w:  # a failing jq expression or a damaged row prints nothing
            for item in apply_jq(jq_expr, rows):
                w.write((item if raw and isinstance(item, str) else dumps(item)) + "\n")
        return
    if want_table(table, as_json):
        rows = list(rows)
        if view:
            columns = table_view(view, rows)
        click.echo(render_table(rows, columns, fmt=table_fmt, whole=WHOLE_COLUMNS.get(view, ()),
                                spare=SPARE_COLUMNS.get(view, ())))
        return
    with OutputSpool() as out:
        Writer(out).write_all(rows)


def listing_only(*, table: bool, as_json: bool, jq_expr: str | None, table_fmt: str, mode: str, prints: str) -> None:
    """A command that prints a record stream and, in one mode (`mode`), a listing: the listing's
    output flags without that mode are a usage error, never silently ignored."""
    given = [name for name, on in (("-t", table), ("--json", as_json), ("--jq", jq_expr),
                                   ("--fmt", table_fmt != "simple")) if on]
    if given:
        raise UsageProblem(f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with {mode}: {prints}")


def report_options(f):
    """The output options of a command that prints one result: -t/--fmt, --json, --jq EXPR [-r]."""
    return jq_option(output_options(f))


def emit_object(obj: dict, *, as_json: bool, jq_expr: str | None = None, human=None, table: bool = False,
                table_fmt: str = "simple") -> None:
    """One result: through --jq (jq's exit codes); for people (-t, or a terminal) `human()`, else a
    two-column table; piped or --json, one JSON object."""
    from ..store import redaction

    obj = redaction.output(public(obj))
    if table and as_json:
        raise UsageProblem("-t/--table and --json cannot be used together")
    if jq_expr:
        emit_listing([obj], table=False, as_json=False, jq_expr=jq_expr)
        return
    if not want_table(table, as_json):
        click.echo(dumps(obj))
        return
    if human is not None:
        human()
        return
    rows = [{"key": k, "value": v} for k, v in obj.items()]
    click.echo(render_table(rows, ["key", "value"], fmt=table_fmt))


def pass_home(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(get_home(), *args, **kwargs)
    return home_option(wrapper)


def _set_workspace(ctx, param, value):
    if value:
        ctx.find_root().meta["ctx.workspace"] = value
    return value


workspace_option = click.option("--workspace", metavar="DIR", type=click.Path(file_okay=False), expose_value=False, callback=_set_workspace,
                                help="Where CONTEXT.md is (default: $CTX_WORKSPACE, ./.ctx/, or the "
                                     "project's folder in the home).")


def get_workspace() -> str:
    """The one workspace resolution (sources.workspace.locate_workspace): --workspace,
    $CTX_WORKSPACE, else from the session's directory (a hook payload's cwd, the transcript's)
    where one is known, else from the current directory; said once on stderr when the session's
    directory decides something else than the shell's would."""
    from ..sources.workspace import locate_workspace, resolve_workspace

    root = click.get_current_context().find_root()
    flag, cwd, session_cwd = root.meta.get("ctx.workspace"), root.meta.get("ctx.cwd"), root.meta.get("ctx.session_cwd")
    ws = resolve_workspace(flag, get_home().path, cwd, session_cwd)
    if session_cwd and not root.meta.get("ctx.workspace_noted"):
        root.meta["ctx.workspace_noted"] = True
        shell, _ = locate_workspace(flag, get_home().path, cwd)
        if shell != ws:
            note(f"ctx: workspace {ws}: {locate_workspace(flag, get_home().path, cwd, session_cwd)[1]}")
    return ws


def use_session_cwd(file: str = "-", records: list | None = None) -> None:
    """The session's directory (the `cwd` its agent recorded in FILE, or in RECORDS already read)
    is where the workspace is resolved from, unless a hook or a found session set it."""
    root = click.get_current_context().find_root()
    if root.meta.get("ctx.cwd") or root.meta.get("ctx.session_cwd"):
        return
    from ..services.discovery import recorded_cwd

    import os

    cwd = recorded_cwd(records) if records is not None else \
        recorded_cwd(file) if file != "-" and os.path.isfile(file) else None   # never a pipe: it would be consumed
    if cwd:
        root.meta["ctx.session_cwd"] = cwd


def embedder_name(home, flag: str | None) -> str:
    """The embedder to use (flag, CTX_EMBEDDER, config, default; keyword when the default MiniLM is
    not installed, said once on stderr)."""
    from ..services.embedding import resolve_embedder

    name, notice = resolve_embedder(home.config, flag)
    root = click.get_current_context().find_root()
    if notice and not root.meta.get("ctx.embedder_noticed"):
        root.meta["ctx.embedder_noticed"] = True
        note(notice)
    return name


def note(message: str) -> None:
    """An informational line on stderr, its secrets redacted (it may echo the query); silenced by
    --quiet / CTX_QUIET=1 (errors never are)."""
    import os

    from ..store import redaction

    ctx = click.get_current_context(silent=True)
    if os.environ.get("CTX_QUIET", "") not in ("", "0") or (ctx is not None and ctx.find_root().meta.get("ctx.quiet")):
        return
    click.echo(redaction.text(message), err=True)


class Fraction(click.FloatRange):
    """A number in a closed range (click.FloatRange) that is finite: NaN compares false with both
    bounds, so click would let it through."""

    def convert(self, value, param, ctx):
        import math

        if not isinstance(value, float):
            try:
                v = float(str(value).strip())
            except ValueError:
                v = None
            if v is not None and not math.isfinite(v):
                self.fail(f"{value!r} is not a finite number", param, ctx)
        elif not math.isfinite(value):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(value, param, ctx)


class Share(click.ParamType):
    """A share of the budget, given as a fraction (0.5) or a percent (50 or 50%): both mean half.

    Values up to 1 are fractions, values above 1 (up to 100) percents."""

    name = "share"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        text = str(value).strip()
        pct = text.endswith("%")
        try:
            v = float(text.rstrip("%").strip())
        except ValueError:
            self.fail(f"{value!r} is not a share: give a fraction (0.5) or a percent (50 or 50%)", param, ctx)
        if pct or v > 1:
            v = v / 100
        if not 0 <= v <= 1:
            self.fail(f"{value!r} is out of range: a fraction 0-1 or a percent 0-100", param, ctx)
        return v


def known_sessions(home) -> set[str]:
    """Every session ctx knows of: the session index and cold storage."""
    from ..store import sessions

    known = set(sessions.load(home))
    try:
        from ..store.backend import open_store

        known |= {st["session"] for st in open_store(home).cold.stats()}
    except Exception:  # noqa: BLE001 - an unreadable cold-storage index must not hide the index's sessions
        pass
    return known


def resolve_session(home, given: str) -> str:
    """A session id from an exact id or a unique prefix of one; an ambiguous or unknown prefix is
    a usage error naming the candidates."""
    known = known_sessions(home)
    if given in known:
        return given
    hits = sorted(s for s in known if s.startswith(given))
    if len(hits) == 1:
        return hits[0]
    if hits:
        shown = ", ".join(hits[:10]) + (f", … ({len(hits)} in all)" if len(hits) > 10 else "")
        raise UsageProblem(f"--session {given!r} is ambiguous: {shown}")
    from ..store.cold import unsafe_id

    if unsafe_id(given):
        raise UsageProblem(f"unsafe session id {given!r}: an id is looked up, never opened as a path, and no "
                           f"session has one with '/' or '..' like it")
    raise UsageProblem(f"no session {given!r}", hint="ctx session list shows the known ones")


def session_prefix(ctx, param, value):
    """click callback: --session ID or a unique prefix of it."""
    return resolve_session(get_home(ctx), value) if value else value


def old_query_short(args: list[str], command: str) -> list[str]:
    """`-q TEXT` after a command that once took it for --query: read as --query this release, with a
    line on stderr; `-q` alone (or before another option) is --quiet, as everywhere else."""
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return out + args[i:]
        text = None
        if a == "-q" and i + 1 < len(args) and not args[i + 1].startswith("-"):
            text, i = args[i + 1], i + 2
        elif a.startswith("-q") and len(a) > 2 and not a.startswith("--"):
            text, i = a[2:], i + 1
        if text is None:
            out.append(a)
            i += 1
            continue
        click.echo(f"ctx: warning: `{command} -q TEXT` is the old spelling of --query; -q will mean --quiet "
                   f"after the command too (as before it, and in git) in the next release: write --query TEXT",
                   err=True)
        out += ["--query", text]
    return out


class OldQueryShort(click.Command):
    """A command whose --query was once also `-q` (score, recover, prompt build)."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, old_query_short(list(args), ctx.command_path.removeprefix("ctx ")))
