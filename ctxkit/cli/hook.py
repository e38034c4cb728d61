"""ctx hook claude-code EVENT / ctx hook generic EVENT: ctxkit inside an agent's lifecycle.

Claude Code runs the command with the hook's JSON on stdin (session_id, transcript_path,
cwd, hook_event_name, and per event: source, prompt, trigger, custom_instructions). Context
for the model goes back as JSON {"hookSpecificOutput": {"hookEventName", "additionalContext"}}
(SessionStart, UserPromptSubmit). Hooks fail open: they never exit 2 (which would block
the user's prompt or Claude's stop); a problem is one line on stderr and exit 1.
"""
from __future__ import annotations

import json
import os
import sys

import click

from ..errors import InputError
from ..io.adapters import open_records
from ..io.jsonl import Source
from ..sources.workspace import ContextFile
from ..store import logs, sessions
from .common import note, get_home, get_workspace, home_option, workspace_option

# Every event in Claude Code's hooks reference; the ones ctx acts on are HANDLED, the rest are
# acknowledged (exit 0) so a settings file that wires them never blocks anything.
KNOWN = ("SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
         "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied", "Notification",
         "PreCompact", "PostCompact", "TeammateIdle", "TaskCompleted", "InstructionsLoaded", "ConfigChange",
         "Elicitation", "ElicitationResult", "WorktreeCreate", "WorktreeRemove", "CwdChanged", "FileChanged")
HANDLED = ("SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact", "Stop", "SubagentStop", "SessionEnd",
           "Notification")
EVENTS = HANDLED
CONTEXT_CAP = 10_000   # Claude Code's cap on additionalContext, in characters
TRANSCRIPT_MAX = 512 << 20


def canonical(name: str | None) -> str | None:
    """`stop`, `STOP`, `session_end` -> the reference's spelling; None when unknown."""
    if not name:
        return None
    key = name.replace("_", "").replace("-", "").lower()
    return next((e for e in KNOWN if e.lower() == key), None)


class FailOpen(click.Command):
    """A hook never exits 2 (that blocks the user's prompt or Claude's stop): a usage problem is
    one line on stderr and exit 0."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as e:
            click.echo(f"ctx hook: {e.format_message()} (ignored: hooks fail open)", err=True)
            ctx.exit(0)


def _records(transcript: str | None) -> list[dict]:
    if not transcript:
        return []
    if not os.path.exists(transcript):
        raise InputError(transcript, None, "transcript_path does not exist")
    if not os.path.isfile(transcript):
        raise InputError(transcript, None, "transcript_path is not a regular file")
    if os.path.getsize(transcript) > TRANSCRIPT_MAX:
        raise InputError(transcript, None, f"transcript is larger than {TRANSCRIPT_MAX >> 20} MB; not read")
    return list(open_records(Source(transcript)))


def _compact(home, records, force: bool, whole: bool = False):
    """whole: summarize everything but the newest group into CONTEXT.md (the window is about
    to be compacted or the session is over, so nothing needs to stay raw)."""
    from ..services.compaction import compact
    from .compact import options_from_config
    from .count import resolve_tokenizer
    from .status import resolve_budget

    opts = options_from_config(home.config, resolve_budget(None, None, None), force=force)
    if whole:
        opts.preserve_ratio = 0.0
    return compact(records, resolve_tokenizer(None, None), opts, home, get_workspace()).commit()


def usage(home, records) -> dict:
    """How full the live context is: the provider's own numbers when the transcript has them
    (after the last compaction boundary), else a count of the live records; says which."""
    from ..core.usage import live, model_of, provider_usage, window_for

    tokens, model, reported = provider_usage(records)
    window = window_for(model or model_of(records), home.config.get("context_window"), reported)
    if tokens is not None:
        return {"tokens": tokens, "window": window, "pct": tokens / window, "method": "provider-reported",
                "model": model}
    from ..backends.tokenizers import count_records
    from .count import resolve_tokenizer

    recs = live(records)
    total = sum(count_records(resolve_tokenizer(None, None), recs, reuse=True)) if recs else 0
    return {"tokens": total, "window": window, "pct": total / window, "method": "counted", "model": model}


def _state_path(home) -> str:
    return os.path.join(home.path, "hooks-state.json")


def _signature(transcript: str | None) -> list | None:
    if not transcript or not os.path.isfile(transcript):
        return None
    st = os.stat(transcript)
    return [st.st_size, st.st_mtime_ns]


def _seen(home, transcript: str | None) -> bool:
    """The transcript is the size and age it had when a Stop / SessionEnd last folded it in:
    nothing new (the cheap path that keeps Stop fast on a session that did not grow)."""
    sig = _signature(transcript)
    p = _state_path(home)
    if sig is None or not os.path.exists(p):
        return False
    try:
        return json.load(open(p, encoding="utf-8")).get(transcript) == sig
    except (ValueError, OSError):
        return False


def _remember(home, transcript: str | None) -> None:
    from ..store.atomic import atomic_write, locked

    sig = _signature(transcript)
    if sig is None:
        return
    p = _state_path(home)
    with locked(p):
        try:
            state = json.load(open(p, encoding="utf-8")) if os.path.exists(p) else {}
        except ValueError:
            state = {}
        state[transcript] = sig
        atomic_write(p, json.dumps(state, indent=1, sort_keys=True) + "\n")


def _cap(text: str, limit: int = CONTEXT_CAP) -> str:
    """Within Claude Code's additionalContext cap, cut at a line."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 40].rsplit("\n", 1)[0]
    return cut + "\n[… cut to fit the 10,000-character hook limit]"


def session_context(home, cwd: str | None, source: str = "startup", session: str | None = None) -> str:
    """What the model gets at session start, by `source`: startup / resume / compact get the
    active session's condensed state, the time block and outside changes; clear starts fresh
    (only workspace-level Constraints and Pinned, and the time)."""
    from ..core.context_md import Context
    from ..core.context_view import condensed
    from ..sources.external import git_changes, modified_files, summary_lines
    from ..store.session_state import WORKSPACE_SECTIONS
    from .count import resolve_tokenizer
    from .external import last_session_time
    from .time_cmd import time_facts

    parts = []
    cf = ContextFile(get_workspace())
    ctx = cf.read() if cf.exists() else None
    if ctx is not None and source == "clear":
        ctx = Context(sections={k: ctx.sections[k] for k in WORKSPACE_SECTIONS if ctx.sections.get(k)})
    if ctx is not None and (ctx.task or any(ctx.sections.values())):
        body = condensed(ctx, home.config.get("context_view_tokens"), resolve_tokenizer(None, None).count)
        title = "# Context (restored after compaction)" if source == "compact" else "# Context"
        parts.append(title + "\n" + body)
    tf = time_facts(home)
    block = tf["block"]
    if ctx is None or source == "clear":  # no state to review: say so, never point at a file that is not there
        block = [x if not x.startswith("Hint:") else "Hint: No saved working state; ask what to work on."
                 for x in block]
    parts.append("## Time\n" + "\n".join(f"- {x}" for x in block))
    if source != "compact":
        when = last_session_time(home)
        ch = git_changes(cwd or os.getcwd(), when)
        if ch.get("repo"):
            parts.append("## External\n" + "\n".join(f"- {x}" for x in summary_lines(ch, modified_files(
                get_workspace(), when))[:8]))
    return _cap("\n\n".join(parts))


def recall(home, prompt: str, session: str | None, limit: int = 3) -> list[dict]:
    """Cold chunks and memory bullets that match the user's prompt (keyword scores, no model
    load: a hook must answer fast), strongest first."""
    from ..core.requests import clean_request
    from ..store.cold import ColdStorage

    q = clean_request(prompt or "") or ""
    if len(q.split()) < 2:
        return []
    hits = []
    try:
        from ..core.bm25 import normalized

        store = ColdStorage(home.cold_storage_dir)
        if os.path.exists(store.index_path):
            rows = store.candidates(q, None, 20)
            scores = normalized([r[4] for r in rows]) if rows else []
            for (sess, chunk, gist, _text, _rank), sc in zip(rows, scores):
                hits.append({"score": round(sc, 3), "text": gist, "source": f"cold:{sess}/{chunk}",
                             "recover": f"ctx recover --chunk-id {chunk} --session {sess}"})
    except Exception:  # noqa: BLE001 - recall is a bonus; it never fails the hook
        pass
    try:
        from ..sources.memory import search
        from .score import make_embedder

        found, _ = search(get_workspace(), q, limit, 0.0, make_embedder(home, "keyword", 0))
        for h in found:
            hits.append({"score": h.get("score", 0), "text": h.get("snippet", ""), "source": h.get("source", "")})
    except Exception:  # noqa: BLE001 - recall is a bonus; it never fails the hook
        pass
    hits.sort(key=lambda h: -(h["score"] or 0))
    return hits[:limit]


def handle(event: str, data: dict, home) -> tuple[str | None, str | None]:
    """Do the event's work; return (context for the model, note for the user)."""
    transcript = data.get("transcript_path")
    session = data.get("session_id")
    if event == "SessionStart":
        recs = _records(transcript) if transcript and os.path.isfile(transcript) else []
        if recs:
            sessions.touch(home, recs, transcript)
        return session_context(home, data.get("cwd"), str(data.get("source") or "startup"), session), None
    if event == "Notification":
        logs.append(home, "context-health", {"session": session, "hook": event,
                                              "message": str(data.get("message", ""))[:200]})
        return None, None
    if event == "PostCompact":
        logs.append(home, "compaction", {"event": "claude_compacted", "session": session,
                                         "trigger": data.get("trigger")})
        return None, None
    if event in ("Stop", "SessionEnd", "SubagentStop") and _seen(home, transcript):
        if event == "SessionEnd":
            _end_session(home, session)
        return None, None  # nothing new since the last run: the cheap path
    recs = _records(transcript)
    if event == "UserPromptSubmit":
        u = usage(home, recs)
        trigger = home.config.get("compaction_trigger_pct")
        due = u["pct"] >= trigger
        logs.append(home, "context-health", {"session": session, "pct_used": round(u["pct"], 4),
                                              "tokens": u["tokens"], "window": u["window"], "method": u["method"],
                                              "hook": event, "compaction_due": due})
        compacted = _compact(home, recs, force=False).acted if due else False
        hits = [h for h in recall(home, data.get("prompt", ""), session)
                if h["score"] >= home.config.get("hook_recall_min_score")]
        if not (due or compacted or hits):
            return None, None  # nothing to add: say nothing
        parts = [f"Context: {u['pct']:.0%} of a {u['window']:,}-token window "
                 f"({u['tokens']:,} tokens, {u['method']})."]
        cf = ContextFile(get_workspace())
        if (due or compacted) and cf.exists():
            from ..core.context_view import condensed
            from .count import resolve_tokenizer

            parts.append("# Working state\n" + condensed(cf.read(), home.config.get("context_view_tokens"),
                                                          resolve_tokenizer(None, None).count))
        if hits:
            parts.append("# Earlier context that matches this prompt\n" + "\n".join(
                f"- {h['text']} ({h['source']}" + (f"; `{h['recover']}`" if h.get("recover") else "") + ")"
                for h in hits))
        return _cap("\n\n".join(parts)), None
    if event == "PreCompact":
        rep = _compact(home, recs, force=True, whole=True)
        if data.get("custom_instructions"):
            logs.append(home, "compaction", {"event": "precompact_instructions", "session": session,
                                             "custom_instructions": data["custom_instructions"],
                                             "trigger": data.get("trigger")})
        return None, f"ctx: CONTEXT.md written before compaction ({rep.groups_summarized} groups)"
    if event in ("Stop", "SubagentStop", "SessionEnd"):
        sessions.touch(home, recs, transcript)
        curated = _curate(home, recs) if event == "Stop" else None
        rep = _compact(home, recs, force=True, whole=True)
        _remember(home, transcript)
        if event == "SessionEnd":
            _end_session(home, session)
        extra = (f"; curation moved {curated['drops_triggered']} chunks to cold storage"
                 if curated and curated["drops_triggered"] else "")
        return None, f"ctx: CONTEXT.md updated ({rep.groups_summarized} new groups){extra}"
    return None, None


def _curate(home, recs: list[dict]) -> dict | None:
    """Seed 003's post-response curation: at curation_trigger_pct of the window, the chunks least
    relevant to the latest request go to cold storage (see services.curation)."""
    from ..core.extract import latest_request
    from ..services.curation import curate
    from .count import resolve_tokenizer

    if usage(home, recs)["pct"] < home.config.get("curation_trigger_pct"):
        return None
    q = latest_request(recs)
    return curate(home, home.config, recs, q, resolve_tokenizer(None, None)) if q else None


def _end_session(home, session: str | None) -> None:
    """Seed 003's session end: the session's state is archived and the index says it ended."""
    from ..store.session_state import archive_context, state_file

    if session:
        sf = state_file(home, session)
        dest = archive_context(home, sf) if sf.exists() else archive_context(home, ContextFile(get_workspace()))
    else:
        dest = archive_context(home, ContextFile(get_workspace()))
    logs.append(home, "compaction", {"event": "session_archived", "session": session, "archive": dest})
    if session:
        sessions.mark(home, session, status="ended", archive=dest)


@click.group("hook")
def hook():
    """Run ctxkit from an agent's hooks (Claude Code, or any agent with a transcript file).

    \b
    Examples (.claude/settings.json, see examples/claude-code/settings.json):
      "SessionStart": [{"hooks": [{"type": "command", "command": "ctx hook claude-code SessionStart"}]}]
      ctx hook generic SessionEnd --transcript ~/agent/session.jsonl
    """


@hook.command("claude-code", cls=FailOpen)
@click.argument("event", required=False)
@workspace_option
@home_option
def claude_code(event):
    """Handle a Claude Code hook: read its JSON on stdin, answer as the protocol expects.

    EVENT may be left out (it is read from hook_event_name) and is matched without regard to
    case. SessionStart injects the active session's condensed state by `source`;
    UserPromptSubmit reports usage from the provider's own numbers, compacts when due and
    recalls what matches the prompt; PreCompact writes CONTEXT.md before Claude's compaction;
    Stop, SubagentStop and SessionEnd fold new turns in (nothing to do when the transcript
    did not grow); SessionEnd archives the session. Other events are acknowledged. A hook
    never exits 2.

    \b
    Example:
      echo '{"hook_event_name":"SessionStart","transcript_path":"t.jsonl","cwd":"."}' | ctx hook claude-code
    """
    raw = sys.stdin.read() if not sys.stdin.isatty() else ""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as e:
        raise InputError("stdin", e.lineno, f"hook input is not JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise InputError("stdin", None, "hook input must be a JSON object")
    from ..records import hook_payload

    data = hook_payload(data)  # wrong-typed fields are left out (hooks fail open), never an internal error
    name = canonical(event or data.get("hook_event_name"))
    if name is None:
        note(f"ctx hook: unknown event {event or data.get('hook_event_name')!r}; nothing done "
             f"(known: {', '.join(HANDLED)})")
        return
    if name not in HANDLED:
        return  # an event ctx has no work for: acknowledged
    if data.get("cwd") and os.path.isdir(data["cwd"]) and not os.environ.get("CTX_WORKSPACE"):
        local = os.path.join(data["cwd"], ".ctx")
        if os.path.isdir(local):
            click.get_current_context().find_root().meta.setdefault("ctx.workspace", local)
    context, msg = handle(name, data, get_home())
    if context and name in ("SessionStart", "UserPromptSubmit"):
        from ..store import redaction

        context = redaction.text(context)
        click.echo(json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}))
    elif msg:
        note(msg)


@hook.command("generic", cls=FailOpen)
@click.argument("event")
@click.option("--transcript", metavar="FILE", type=click.Path(dir_okay=False), help="The session transcript (any format ctx import reads).")
@click.option("--session", metavar="ID", help="Session id, for the logs.")
@workspace_option
@home_option
def generic(event, transcript, session):
    """The same lifecycle for any agent: context for the model is printed as plain text.

    \b
    Example:
      ctx hook generic SessionStart --transcript ~/agent/session.jsonl >> system_prompt.txt
    """
    name = canonical(event)
    if name not in HANDLED:
        note(f"ctx hook: unknown event {event!r}; nothing done (known: {', '.join(HANDLED)})")
        return
    context, msg = handle(name, {"transcript_path": transcript, "session_id": session, "cwd": os.getcwd(),
                                 "source": "startup"}, get_home())
    if context:
        from ..store import redaction

        click.echo(redaction.text(context))
    if msg:
        note(msg)
