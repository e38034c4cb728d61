"""Format adapters: any supported agent transcript -> ctx records.

`open_records` is the one entry point every command uses, so each stage
accepts raw transcripts as well as ctx records (`--from auto` sniffs).
"""
from __future__ import annotations

import json
import os
from typing import Iterator

from ... import records as R
from ...core.groups import assign_groups
from ...errors import InputError
from ..jsonl import Source, iter_json_lines
from ...core.client_text import mark
from . import aider, anthropic, claude_code, cline, codex, copilot, gemini, openai, opencode, openhands
from .pairing import pair

# every format --from names (the one list every command's --from offers)
FORMATS = ("auto", "ctx", "claude-code", "codex", "copilot-cli", "gemini-cli", "opencode", "openhands", "cline",
           "openai", "anthropic", "swe-agent", "tau-bench", "aider")
SUPPORTED = ", ".join(FORMATS[1:])


def _json_loads(text: str):
    """json.loads where too deep, too long a number or NaN is a decode error like any other."""
    try:
        return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not JSON")))
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
    except ValueError as e:
        raise json.JSONDecodeError(str(e).split(";")[0], "", 0) from None


def _ctx(source: Source, *, skip_invalid=False, skipped=None, memo=None, **_) -> Iterator[dict]:
    """ctx records as they are (open_records' one validator checks them, at their line)."""
    for lineno, obj in iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped, memo=memo):
        if isinstance(obj, dict) and obj.get("group") is not None and not isinstance(obj["group"], str):
            # checked here: grouping (before the validator) would replace a falsy `{}` silently
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise InputError(source.name, lineno, f"group must be a string, got {type(obj['group']).__name__}",
                             hint="fix the line or pass --skip-invalid")
        yield obj


def _openai_lines(source: Source, *, skip_invalid=False, skipped=None, **_) -> Iterator[dict]:
    yield from openai.convert(iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped),
                              source_name=source.name, fmt="openai", session=_stem(source))


def _stem(source: Source) -> str:
    if source.path == "-":
        return "stdin"
    base = os.path.basename(source.path)
    for ext in (".jsonl", ".json", ".traj", ".md"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base or "session"


def _load_doc(source: Source):
    text = source.read_all()
    try:
        return _json_loads(text)
    except json.JSONDecodeError as e:
        raise InputError(source.name, e.lineno, f"invalid JSON: {e.msg} (column {e.colno})") from None


def _doc_records(doc, source: Source, fmt: str, keep_meta: bool = False) -> Iterator[dict]:
    name = source.name
    if fmt == "swe-agent":
        if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
            raise InputError(name, None, "not a SWE-agent trajectory (no `history` list)")
        traj = doc.get("trajectory") if isinstance(doc.get("trajectory"), list) else []
        actions = [t.get("action") if isinstance(t, dict) else None for t in traj]
        yield from openai.convert(((i + 1, m) for i, m in enumerate(doc["history"])), source_name=name,
                                  fmt="swe-agent", session=_stem(source), loc_key="index", actions=actions)
    elif fmt == "tau-bench":
        items = doc if isinstance(doc, list) else [doc]
        for k, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("traj"), list):
                raise InputError(name, None, f"item {k + 1}: not a tau-bench result (no `traj` list)")
            session = f"tau-bench-{item.get('task_id', k)}-{item.get('trial', 0)}"
            yield from openai.convert(((i + 1, m) for i, m in enumerate(item["traj"])), source_name=name,
                                      fmt="tau-bench", session=session, loc_key="index")
    elif fmt == "anthropic":
        if not (isinstance(doc, dict) and isinstance(doc.get("messages"), list)):
            raise InputError(name, None, "not an Anthropic Messages document (no `messages` list)")
        yield from anthropic.from_doc(doc, source_name=name, session=_stem(source))
    elif fmt == "ctx":
        items = doc if isinstance(doc, list) else [doc]
        for k, item in enumerate(items):
            reason = R.validate(item)
            if reason:
                raise InputError(name, None, f"item {k + 1}: {reason}")
            yield item
    elif fmt == "openai":
        if not openai.sniff_doc(doc):
            raise InputError(name, None, "not an OpenAI messages array")
        yield from openai.from_doc(doc, source_name=name, session=_stem(source))
    elif fmt == "gemini-cli":
        if not gemini.sniff_doc(doc):
            raise InputError(name, None, "not a Gemini CLI session (no sessionId, projectHash and messages list)")
        yield from gemini.from_doc(doc, source_name=name, session=_stem(source), keep_meta=keep_meta)
    elif fmt == "opencode":
        if not opencode.sniff_doc(doc):
            raise InputError(name, None, "not an opencode session export (no `info` and `messages` of {info, parts})")
        yield from opencode.from_doc(doc, source_name=name, session=_stem(source))
    elif fmt == "openhands":
        if not openhands.sniff_doc(doc):
            raise InputError(name, None, "not an OpenHands trajectory (a JSON array of actions and observations)")
        yield from openhands.from_doc(doc, source_name=name, session=_stem(source), keep_meta=keep_meta)
    elif fmt == "cline":
        if not (isinstance(doc, list) and all(isinstance(m, dict) for m in doc)):
            raise InputError(name, None, "not Cline's api_conversation_history.json (a JSON array of messages)")
        yield from cline.from_doc(doc, source_name=name, session=cline.session_of(source.path, _stem(source)))
    else:  # pragma: no cover - guarded by callers
        raise InputError(name, None, f"format {fmt} is not a JSON document format")


def _doc_candidates(doc) -> list[str]:
    """Every document format `doc` has the shape of, most specific first."""
    out = []
    if isinstance(doc, list) and doc and R.is_ctx_record(doc[0]):
        out.append("ctx")  # a JSON array of ctx records keeps its ids, sessions and timestamps
    if isinstance(doc, dict) and isinstance(doc.get("history"), list):
        out.append("swe-agent")
    if (isinstance(doc, dict) and isinstance(doc.get("traj"), list)) or \
            (isinstance(doc, list) and doc and isinstance(doc[0], dict) and isinstance(doc[0].get("traj"), list)):
        out.append("tau-bench")
    if anthropic.sniff_doc(doc):
        out.append("anthropic")
    if gemini.sniff_doc(doc):
        out.append("gemini-cli")
    if opencode.sniff_doc(doc):
        out.append("opencode")
    if openhands.sniff_doc(doc):
        out.append("openhands")
    if cline.sniff_doc(doc):
        out.append("cline")  # an array of Anthropic-style messages with Cline's own marks
    if openai.sniff_doc(doc) and not out:  # the plainest shape: only when no other format claims the document
        out.append("openai")
    return out


def _sniff_doc(doc, name: str = "input") -> str | None:
    """The document's format; a document with the shape of two says so instead of guessing."""
    found = _doc_candidates(doc)
    if len(found) > 1:
        raise InputError(name, None, f"ambiguous document: it could be {' or '.join(found)}",
                         hint=f"pass --from {found[0]} (or --from {found[1]})")
    return found[0] if found else None


def detect(source: Source) -> str:
    """Guess the format from the first non-blank line (peeks; consumes nothing)."""
    if opencode.is_sqlite(source.path):
        return "opencode-db"
    first = source.first_nonblank()
    if first is None:
        return "ctx"  # empty input: valid, yields nothing
    lineno, line = first
    if line.startswith("SQLite format 3\x00"):
        raise InputError(source.name, None, "an SQLite database (opencode.db?) is read from its path, not from a pipe",
                         hint="pass the file: ctx import ~/.local/share/opencode/opencode.db")
    if aider.sniff_text(line):
        return "aider"
    try:
        obj = _json_loads(line)
    except json.JSONDecodeError:
        stripped = line.lstrip()
        if stripped.startswith(("{", "[")):
            return "json-doc"
        raise InputError(source.name, lineno, "unrecognised input format",
                         hint=f"supported formats: {SUPPORTED}; pass --from to choose one") from None
    if R.is_ctx_record(obj):
        return "ctx"
    if copilot.sniff(obj):
        return "copilot-cli"
    if gemini.sniff_line(obj) and not isinstance(obj.get("messages"), list):
        return "gemini-cli"  # the metadata line of a JSONL session (a whole session on one line is a document)
    if claude_code.sniff(obj) or _claude_code_head(source, obj):
        return "claude-code"
    if codex.sniff(obj):
        return "codex"
    if openai.sniff_line(obj):
        return "openai-lines"
    if isinstance(obj, (dict, list)) and _doc_candidates(obj):
        return "json-doc"
    raise InputError(source.name, lineno, "unrecognised input format",
                     hint=f"supported formats: {SUPPORTED}; pass --from to choose one")


HEAD_LINES = 40  # how far detection looks past bookkeeping lines for a Claude Code record


def _claude_code_head(source: Source, obj) -> bool:
    """A Claude Code transcript may open with bookkeeping lines of any type (`last-prompt`,
    `mode`, `permission-mode`, `queue-operation`, types added by later releases): a first line
    with a `type` and Claude Code's `sessionId` is one, and so is a transcript whose first
    recognised line, within the first HEAD_LINES, is Claude Code's."""
    if not (isinstance(obj, dict) and isinstance(obj.get("type"), str)):
        return False
    if "sessionId" in obj and "role" not in obj:
        return True
    for line in source.peek_lines(HEAD_LINES)[1:]:
        try:
            o = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            return False
        if o is None:
            continue
        if claude_code.sniff(o):
            return True
        if not (isinstance(o, dict) and isinstance(o.get("type"), str)) or R.is_ctx_record(o):
            return False
    return False


def _note_usage(source: Source, rec: dict, bad: list[str]) -> None:
    """The first record of a source whose provider usage had fields left out, said on stderr."""
    if any("provider usage" in n for n in source.notes):
        return
    src = rec.get("source") if isinstance(rec.get("source"), dict) else {}
    line = src.get("line") if src.get("file") == source.name and isinstance(src.get("line"), int) else \
        getattr(source, "lineno", None)
    where = f"{source.name}:{line}" if line else source.name
    source.notes.append(f"{where}: ignored provider usage that is not a count ({', '.join(bad)}); "
                        f"the record is read without it (later ones alike, not noted again)")


def _checked(records: Iterator[dict], source: Source, skip_invalid: bool, skipped: list | None,
             memo=None, redact: bool = True) -> Iterator[dict]:
    """Every record an adapter produces passes the one validator; a source line of a shape the
    adapter cannot read (a number where text belongs, a string where an object does) is a clear
    FILE:LINE error, or with --skip-invalid a counted skip — never an internal error later.
    Records leave here redacted (config: redact): nothing ctx derives from them (entities, facts,
    titles, CONTEXT.md bullets) can carry a secret away from the words that gave it away.
    With a `memo` (io.seen), a line it knew clean arrives as a `Seen` record and passes as it is;
    a record the full way leaves unchanged is learned. `redact` False: records leave as they
    came, for a reader that prints and keeps nothing of them (a token total)."""
    from ...store import redaction
    from ..seen import Seen

    it = iter(records)
    while True:
        try:
            rec = next(it)
        except StopIteration:
            return
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as e:
            if isinstance(e, InputError):
                raise
            line = getattr(source, "lineno", None)
            if skip_invalid and skipped is not None and line is not None:
                skipped.append(line)  # a generator that raised cannot go on: the rest is skipped too
                return
            raise InputError(source.name, line, f"a record of an unexpected shape ({type(e).__name__}: {e})",
                             hint="use --skip-invalid to skip it, or --from to choose the format") from None
        if type(rec) is Seen:
            yield rec
            continue
        obj = rec
        if isinstance(rec, dict) and rec.get("usage") is not None:
            usage, bad = R.clean_usage(rec["usage"])
            if bad:   # provider usage that is not a count: left out with a note, never fatal
                rec = {k: v for k, v in rec.items() if k != "usage"}
                if usage:
                    rec["usage"] = usage
                _note_usage(source, rec, bad)
        rec = R.sanitize(rec)
        reason = R.validate(rec)
        if reason:
            src = rec.get("source") if isinstance(rec, dict) else None
            # an adapter's record names its own line in this file; a ctx record's `source` names another file
            line = src.get("line") if isinstance(src, dict) and src.get("file") == source.name else None
            line = line if isinstance(line, int) else getattr(source, "lineno", None)
            if skip_invalid:
                if skipped is not None:
                    skipped.append(line)
                continue
            raise InputError(source.name, line, reason)
        if not redact:
            yield rec
            continue
        red = redaction.record(rec)
        if memo is not None:
            memo.begin(red.get("session"))
            if red == rec:
                memo.learn(obj, red)
        yield red


def open_records(source: Source, fmt: str = "auto", *, keep_meta: bool = False,
                 skip_invalid: bool = False, skipped: list | None = None,
                 ignored: dict | None = None, memo=None, redact: bool = True) -> Iterator[dict]:
    """Records from `source` in any supported format, validated, with atomic groups assigned.
    `ignored` counts a Claude Code transcript's bookkeeping lines by type (skipped, never fatal).
    `memo` (io.seen.LineMemo): ctx JSONL lines it knows clean come as `Seen` records, unparsed.
    `redact` False only for a caller that neither prints nor keeps anything of the records but
    numbers (`ctx count`'s total, `ctx status`): they count the text as the model reads it."""
    return _checked(_open_records(source, fmt, keep_meta=keep_meta, skip_invalid=skip_invalid, skipped=skipped,
                                  ignored=ignored, memo=memo), source, skip_invalid, skipped, memo, redact)


def _open_records(source: Source, fmt: str = "auto", *, keep_meta: bool = False,
                  skip_invalid: bool = False, skipped: list | None = None,
                  ignored: dict | None = None, memo=None) -> Iterator[dict]:
    if fmt not in FORMATS:
        raise InputError(source.name, None, f"unknown format {fmt!r}", hint=f"supported formats: {SUPPORTED}")
    kw = dict(keep_meta=keep_meta, skip_invalid=skip_invalid, skipped=skipped)
    kind = detect(source) if fmt == "auto" else fmt
    if kind == "ctx":
        first = source.first_nonblank()
        if first is not None and first[1].lstrip().startswith("["):
            return assign_groups(_doc_records(_load_doc(source), source, "ctx"))
        return assign_groups(_ctx(source, memo=memo, **kw))
    if kind == "claude-code":
        return _adapted(claude_code.parse(source, ignored=ignored, **kw))
    if kind == "codex":
        return _adapted(codex.parse(source, **kw))
    if kind == "copilot-cli":
        return _adapted(copilot.parse(source, session=copilot.session_of(source.path, _stem(source)), **kw))
    if kind == "aider":
        return _adapted(aider.parse(source))
    if kind in ("opencode-db", "opencode") and opencode.is_sqlite(source.path):
        return _adapted(opencode.from_db(source.path))
    if kind == "gemini-cli" and _is_jsonl(source):
        return _adapted(gemini.parse(source, session=_stem(source), **kw))
    if kind == "anthropic":
        first = source.first_nonblank()
        try:
            head = _json_loads(first[1]) if first is not None else None
        except json.JSONDecodeError:
            head = None
        if isinstance(head, dict) and "role" in head and "messages" not in head:
            return _adapted(anthropic.convert(
                iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped), source_name=source.name,
                session=_stem(source), loc_key="line"))
    if kind == "openai-lines":
        return _adapted(_openai_lines(source, **kw))
    if kind == "openai":
        first = source.first_nonblank()
        if first is not None:
            try:
                obj = _json_loads(first[1])
                if openai.sniff_line(obj):
                    return _adapted(_openai_lines(source, **kw))
            except json.JSONDecodeError:
                pass
    doc = _load_doc(source)
    dfmt = _sniff_doc(doc, source.name) if kind in ("json-doc", "auto") else kind
    if dfmt is None:
        raise InputError(source.name, None, "unrecognised JSON document",
                         hint=f"supported formats: {SUPPORTED}; pass --from to choose one")
    if dfmt == "ctx":
        return assign_groups(_doc_records(doc, source, dfmt))
    return _adapted(_doc_records(doc, source, dfmt, keep_meta=keep_meta))


def _adapted(records: Iterator[dict]) -> Iterator[dict]:
    """An adapter's records paired (pairing.pair), the client's own text marked
    (core.client_text.mark), and grouped."""
    return assign_groups(mark(r) for r in pair(records))


def _is_jsonl(source: Source) -> bool:
    """A Gemini CLI session as JSONL: its first line is the metadata alone, not the whole session."""
    first = source.first_nonblank()
    if first is None:
        return False
    try:
        head = _json_loads(first[1])
    except json.JSONDecodeError:
        return False
    return isinstance(head, dict) and not isinstance(head.get("messages"), list)
