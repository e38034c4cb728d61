"""ctxkit inside an agent's lifecycle (Claude Code, Codex, … hooks, or any agent with a transcript).

One resolver (`resolve`) turns a hook payload into a Target: the session (the payload's
`session_id`, behind the agent's prefix: services/agents), the project (the repository root of
the payload's `cwd`), the project's workspace and the transcript. One handler per event works on that Target and returns
(context for the model, note for the user). State is keyed by session and by project: a
session's own CONTEXT.md lives in the session store, the project's workspace keeps its
Constraints and Pinned and the active session's state, and no project sees another's.

Hooks fail open and finish where Claude Code lets them: Stop and SessionEnd fold new turns in
incrementally (no model, no curation in line); curation, when due, runs in a detached worker
(`ctx hook curate`) that outlives the hook.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

from ..errors import InputError
from ..sources.workspace import ContextFile, project_root, resolve_workspace
from ..store import logs, sessions
from ..store.hook_state import read_state, update_state

CONTEXT_CAP = 10_000   # Claude Code's cap on additionalContext, in characters
COMPACTION_AGENT = "acompact"   # Claude Code's own compaction agent: its id / transcript name


@dataclass
class Target:
    """Who a hook call is about."""
    session: str | None
    project: str                     # repository root of the payload's cwd
    workspace: str                   # the project's workspace (CONTEXT.md, MEMORY.md, …)
    transcript: str | None = None
    cwd: str | None = None
    data: dict = field(default_factory=dict)
    ignored: dict = field(default_factory=dict)   # transcript lines skipped, by type
    agent: str | None = None         # the agent whose hook this is (services/agents), None: not a hook
    in_worker: bool = False          # running in the detached worker (a deferred event)


def resolve(home, data: dict, workspace_flag: str | None = None, agent=None) -> Target:
    """The one session/project resolver: hooks pass their payload and their agent (whose prefix
    keys the session: one agent's sessions never meet another's state); `status`, `context show`
    and `prompt build` pass {"cwd": the current directory, "session_id": --session or None}."""
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) and os.path.isdir(data["cwd"]) else os.getcwd()
    session = data.get("session_id") if isinstance(data.get("session_id"), str) and data["session_id"] else None
    if agent is not None:
        session = agent.session_key(session)
    return Target(session=session, project=project_root(cwd), workspace=resolve_workspace(workspace_flag, home.path, cwd),
                  transcript=data.get("transcript_path") or None, cwd=cwd, data=data,
                  agent=agent.name if agent is not None else None)


def session_for(home, target: Target, prefix: str | None) -> str | None:
    """--session PREFIX (a unique prefix of a known session), else the project's latest session."""
    if prefix:
        return sessions.resolve(home, prefix)
    rows = sessions.of_project(home, target.project)
    return rows[0]["session"] if rows else None


def records_of(path: str | None, ignored: dict | None = None, home=None, key: str | None = None,
               window: int | None = None) -> list[dict]:
    """A transcript's records; none when there is no transcript yet (Claude Code runs the first
    UserPromptSubmit before it writes the file). Bookkeeping lines are skipped and counted.
    With `home` and `key` (the session reading it), only the lines appended since that
    session's last read are parsed (services/transcripts). Whatever the transcript's size, a
    read is bounded: a huge one is read from its recent part (services/transcripts.WINDOW)."""
    from . import transcripts

    if not path or not os.path.exists(path):
        return []
    if not os.path.isfile(path):
        raise InputError(path, None, "transcript_path is not a regular file")
    if home is not None and key:
        mine: dict = {}
        try:
            recs, _ = transcripts.read(home, path, key, mine)
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - the cache is only a shortcut: read the file itself
            transcripts.forget(home, key)
        else:
            if ignored is not None:
                for k, v in mine.items():
                    ignored[k] = ignored.get(k, 0) + v
            return recs
    with open(path, "rb") as f:
        return transcripts.once(path, f, os.fstat(f.fileno()).st_size, transcripts.format_of(path), ignored,
                                window)[0]


def transcript_records(home, target: "Target") -> list[dict]:
    """The records of the hook's transcript, read incrementally per session."""
    return records_of(target.transcript, target.ignored, home,
                      target.session or (os.path.abspath(target.transcript) if target.transcript else None))


def tokenizer(home):
    from ..backends.tokenizers import LazyTokenizer

    return LazyTokenizer(home.config.get("tokenizer"), home.config.get("model") or None)


def measure(home, records: list[dict]) -> dict:
    """The one measure of "how full" (core.usage.seen_in, as `ctx status` leads with): what the
    model sees after the last compact boundary, by the provider's usage when it is fresh, else
    counted, against the model's window; with `due` (compaction_trigger_pct) and `curation_due`
    (curation_trigger_pct)."""
    from ..backends.tokenizers import count_records
    from ..core.usage import model_of, provider_usage, seen_in, window_for, window_measure

    _, model, reported = provider_usage(records)
    window = window_for(model or model_of(records), home.config.get("context_window"), reported)
    tokens, method = seen_in(records, lambda recs: count_records(tokenizer(home), recs, reuse=True))
    return {**window_measure(tokens, window, method, home.config.get("compaction_trigger_pct"),
                             home.config.get("curation_trigger_pct")), "model": model or model_of(records)}


# what ctx itself injected (SessionStart, UserPromptSubmit): an agent that keeps hook context in its
# transcript (Codex: a developer message) must not have ctx's own words folded back into its state
_INJECTED = re.compile(r"^(# Context\b|# Previous session in this project|# Working state\n|"
                       r"# Earlier context that matches this prompt\n|## Time\n|Context: \d+% of a [\d,]+-token window)")


def injected_by_ctx(rec: dict) -> bool:
    return rec.get("role") == "system" and isinstance(rec.get("content"), str) and bool(_INJECTED.match(rec["content"]))


def as_session(target: Target, records: list[dict]) -> list[dict]:
    """The transcript's main thread keyed by the payload's session_id (subagents keep theirs),
    without the context ctx injected."""
    records = [r for r in records if not injected_by_ctx(r)]
    if not target.session:
        return records
    return [dict(r, session=target.session) if r.get("session") and ".agent-" not in r["session"] else r
            for r in records]


def main_thread(target: Target, records: list[dict]) -> list[dict]:
    """The session's own records: a subagent's (SESSION.agent-ID), which some agents write into
    their parent's transcript (Copilot CLI), are its own state's, never the parent's."""
    if not target.session:
        return records
    return [r for r in records if ".agent-" not in str(r.get("session") or "")]


def fold(home, target: Target, records: list[dict], workspace: str | None = None):
    """Fold the transcript into the session's CONTEXT.md (incremental: groups an earlier run
    summarized are not read again); everything but the newest group is summarized, whatever
    it costs, so what CONTEXT.md says does not depend on token counts: they are counted
    approximately (about 4 characters a token) and no tokenizer loads in line (loading one
    takes most of a second)."""
    from ..backends.tokenizers import get_tokenizer
    from .compact_options import options_from_config
    from .compaction import compact

    if workspace is None:
        records = main_thread(target, as_session(target, records))
    cfg = home.config
    opts = options_from_config(cfg, max(1, cfg.get("max_tokens") - cfg.get("reserve_tokens")), force=True)
    opts.preserve_ratio = 0.0
    return compact(records, get_tokenizer("approx"), opts, home, workspace or target.workspace).commit()


# ---- hook state: what a session's hooks already did (transcript size, what was injected) ----

def _signature(path: str | None) -> list | None:
    if not path or not os.path.isfile(path):
        return None
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns]


def _seen(home, path: str | None) -> bool:
    """The transcript is the size and age it had when a hook last folded it in: nothing new."""
    sig = _signature(path)
    return sig is not None and read_state(home).get(path) == sig


def _remember(home, path: str | None) -> None:
    sig = _signature(path)
    if sig is not None:
        update_state(home, path, sig)


def cap(text: str, limit: int = CONTEXT_CAP) -> str:
    """Within Claude Code's additionalContext cap, cut at a line."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 40].rsplit("\n", 1)[0]
    return cut + "\n[… cut to fit the 10,000-character hook limit]"


# ---- the agent's own compactions: the state handed back once per compaction ----

HANDOVER_WINDOW = 15.0   # seconds: a hand-over this recent belongs to the start or prompt running beside it


def compactions(target: Target, records: list[dict]) -> int:
    """How many times the agent compacted the session so far: its own summaries and boundaries
    in the transcript (the main thread's)."""
    from ..core.usage import is_boundary

    return sum(1 for r in main_thread(target, records) if is_boundary(r))


def last_compaction(target: Target, records: list[dict]) -> str | None:
    """The id of the agent's newest compaction in sight (the main thread's), None when none is."""
    from ..core.usage import is_boundary

    return next((str(r.get("id")) for r in reversed(main_thread(target, records)) if is_boundary(r) and r.get("id")),
                None)


def _handover(home, target: Target, change) -> dict:
    """Read and change the session's hand-over record ({n, by, at, pending}) under the hook state's
    lock (an agent may run SessionStart and UserPromptSubmit at once: Copilot CLI does):
    `change(current) -> new record or None` (None: leave it); the current record."""
    from ..store.hook_state import change_state

    return change_state(home, f"handover:{target.session}", change)


def _recent(rec: dict) -> bool:
    return time.time() - float(rec.get("at") or 0) < HANDOVER_WINDOW


def start_hands_over(home, target: Target) -> bool:
    """SessionStart (resume, compact) is about to give the model the session's state: it covers
    every compaction so far. It does not count them (the transcript may be mid-rewrite as the
    client starts: Gemini CLI resets it before it loads the resumed conversation): the next
    prompt hook takes the count it finds as covered. False when the prompt hook running beside
    it has just handed the state back (then the start leaves the state out: it is in the
    prompt's context)."""
    if not target.session:
        return True
    now = round(time.time(), 3)

    def change(cur):
        if cur.get("by") == "prompt" and _recent(cur):
            return None
        return {"n": int(cur.get("n") or 0), "by": "start", "at": now, "pending": True}

    cur = _handover(home, target, change)
    return not (cur.get("by") == "prompt" and _recent(cur))


def restore_after_compaction(home, target: Target, records: list[dict]) -> str | None:
    """The session's state when the agent compacted since the model was last given it and no
    SessionStart said so (Gemini CLI's /compress and its automatic compression, Copilot CLI's
    /compact inside a session): once per compaction, else None. An agent that starts the
    session again after it compacts (Claude Code, Codex: SessionStart compact) gets it there."""
    if not target.session or not records or not _restores_at_prompt(target.agent):
        return None
    n = compactions(target, records)
    last = last_compaction(target, records)
    now = round(time.time(), 3)
    claimed = []

    def change(cur):
        if cur.get("pending") and _recent(cur):   # the start before this prompt handed it over
            return {"n": max(n, int(cur.get("n") or 0)), "by": "start", "at": cur.get("at"), "pending": False,
                    "last": last}
        # a huge transcript is read from its recent part (services/transcripts): fewer compactions may
        # be in sight than were counted before; a newest one that is not the one handed back is new
        if n > int(cur.get("n") or 0) or (last and cur.get("last") and last != cur["last"]):
            claimed.append(n)
            return {"n": max(n, int(cur.get("n") or 0) + 1), "by": "prompt", "at": now, "last": last}
        if last and not cur.get("last") and n <= int(cur.get("n") or 0):
            return dict(cur, last=last)   # the newest compaction handed back, known by its id from now on
        return None

    _handover(home, target, change)
    if not claimed:
        return None
    if not _seen(home, target.transcript):
        fold(home, target, records)
        _remember(home, target.transcript)
    state = own_state(home, target)
    if state is None or not (state.task or any(state.sections.values())):
        return None
    body = _condensed(home, state)
    update_state(home, f"injected:{target.session}", _digest(body))
    logs.append(home, "compaction", {"event": "state_restored_after_compaction", "session": target.session,
                                     "agent": target.agent, "compactions": n})
    return "# Context (this session's state, restored after compaction)\n" + body


def _restores_at_prompt(agent: str | None) -> bool:
    from . import agents

    try:
        return agent is not None and not agents.get(agent).start_after_compaction
    except KeyError:
        return False


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# ---- whose state ----

def own_state(home, target: Target):
    """The session's own CONTEXT.md (the session store, else the workspace's when it is this
    session's), with the project's Constraints and Pinned; None when it has none."""
    from ..store.session_state import state_file, with_workspace_sections

    ws = ContextFile(target.workspace)
    ws_ctx = ws.read() if ws.exists() else None
    if not target.session:
        return ws_ctx
    sf = state_file(home, target.session)
    if sf.exists():
        own = sf.read()
        return with_workspace_sections(own, ws_ctx) if ws_ctx is not None else own
    if ws_ctx is not None and ws_ctx.state.get("session") == target.session:
        return ws_ctx
    return None


def _has_state(home, target: Target) -> bool:
    from ..store.session_state import state_file

    return bool(target.session) and state_file(home, target.session).exists()


def project_sections(target: Target):
    """The project's Constraints and Pinned (what every session of the project starts with)."""
    from ..core.context_md import Context
    from ..store.session_state import WORKSPACE_SECTIONS

    ws = ContextFile(target.workspace)
    if not ws.exists():
        return None
    cur = ws.read()
    ctx = Context(sections={k: cur.sections[k] for k in WORKSPACE_SECTIONS if cur.sections.get(k)})
    return ctx if ctx.sections else None


def previous_session(home, target: Target):
    """(entry, state) of the project's most recent other session that left state, or None."""
    from ..store.session_state import state_file

    for e in sessions.of_project(home, target.project):
        sid = e.get("session")
        if not sid or sid == target.session or ".agent-" in sid:
            continue
        sf = state_file(home, sid)
        if sf.exists():
            ctx = sf.read()
            if ctx.task or any(ctx.sections.values()):
                return e, ctx
    ws = ContextFile(target.workspace)  # the project's own file: its active session's state
    if ws.exists():
        ctx = ws.read()
        sid = ctx.state.get("session")
        if sid != target.session and (ctx.task or ctx.latest):
            return {"session": sid or "unknown", "last_activity": ctx.updated}, ctx
    return None


def _condensed(home, ctx, share: float = 1.0, lead: tuple = ()) -> str:
    from ..core.context_view import condensed

    return condensed(ctx, max(80, int(home.config.get("context_view_tokens") * share)), tokenizer(home).count,
                     lead)


def _register(home, target: Target, records: list[dict] | None = None) -> None:
    """The session is in the index with its project (and its records' tally when there are any)."""
    if not target.session:
        return
    if records:
        sessions.touch(home, [r for r in as_session(target, records) if r.get("session") == target.session],
                       target.transcript)
    sessions.mark(home, target.session, project=target.project, workspace=target.workspace,
                  source=os.path.abspath(target.transcript) if target.transcript else None, agent=target.agent)


# ---- one handler per event ----

def session_start(home, target: Target) -> tuple[str | None, str | None]:
    """resume / compact: the session's own state; startup / clear: a new session's (the project's
    Constraints and Pinned; at startup also the project's previous session, labelled)."""
    from ..sources.external import git_changes, modified_files, summary_lines
    from .awareness import last_session_time, time_facts

    source = str(target.data.get("source") or "startup")
    when = last_session_time(home)
    recs = transcript_records(home, target) if source != "startup" else None
    _register(home, target, recs)
    parts = []
    # no session id (a generic agent): the project's state is its own
    # (a startup whose session already has state of its own is that session again)
    own = source in ("resume", "compact") or (source != "clear" and (not target.session or _has_state(home, target)))
    state = own_state(home, target) if own else project_sections(target)
    has = state is not None and (state.task or any(state.sections.values()))
    if has and (not own or start_hands_over(home, target)):
        title = {"compact": "# Context (this session's state, restored after compaction)",
                 "resume": "# Context (this session's state)"}.get(source, "# Context (this project)" if
                                                                   target.session else "# Context")
        parts.append(title + "\n" + _condensed(home, state))
    if source == "startup" and target.session and not own:
        prev = previous_session(home, target)
        if prev is not None:
            e, ctx = prev
            other = e.get("agent") if e.get("agent") not in (None, target.agent) else None
            parts.append(f"# Previous session in this project ({_agent_title(other) + ' ' if other else ''}"
                         f"session {_short(e)}, last active "
                         f"{e.get('last_activity') or e.get('seen_at') or 'unknown'}; not this session's task: "
                         f"ask before continuing it)\n" + _condensed(home, ctx, 0.5, lead=("Now", "Recent")))
    block = time_facts(home, project=target.project)["block"]
    if source != "startup":  # resumed, compacted or cleared: another session's topic is not this one's business
        block = [x for x in block if not x.startswith("Last session:")]
    if not parts and not has:  # no state to review: say so, never point at a file that is not there
        block = [x if not x.startswith("Hint:") else "Hint: No saved working state; ask what to work on."
                 for x in block]
    parts.append("## Time\n" + "\n".join(f"- {x}" for x in block))
    if source != "compact":
        ch = git_changes(target.cwd or os.getcwd(), when)
        if ch.get("repo"):
            parts.append("## External\n" + "\n".join(
                f"- {x}" for x in summary_lines(ch, modified_files(target.workspace, when))[:8]))
    return cap("\n\n".join(parts)), None


def _short(entry: dict) -> str:
    """A session's id as people read it: its first 8 characters after the agent's prefix."""
    from . import agents

    sid = str(entry.get("session") or "unknown")
    try:
        prefix = agents.get(entry["agent"]).session_prefix if entry.get("agent") else ""
    except Exception:  # noqa: BLE001 - a label only
        prefix = ""
    return sid[:len(prefix) + 8] if sid.startswith(prefix) else sid[:8]


def _agent_title(name: str) -> str:
    from . import agents

    try:
        return agents.get(name).title
    except Exception:  # noqa: BLE001 - a label only
        return name


def recall(home, workspace: str, prompt: str, limit: int = 3, sessions_of: set | None = None) -> list[dict]:
    """Cold chunks and memory bullets that match the user's prompt (keyword scores, no model
    load: a hook must answer fast), strongest first. A hit's score is its keyword score (scaled
    to the best hit, as `ctx cold-storage search` ranks) times the share of the prompt's terms it
    contains, so the best of weak matches is not taken for a strong one. `sessions_of`: only cold
    chunks of these sessions (and their subagents): one project never recalls another's."""
    from ..core.bm25 import coverage
    from ..core.requests import clean_request
    from ..store.backend import open_store

    q = clean_request(prompt or "") or ""
    if len(q.split()) < 2:
        return []
    hits = []
    try:
        from .cold import FTS_CANDIDATES, keyword_scores

        store = open_store(home).cold
        index = getattr(store, "index_path", None)  # an embedded index is not created just to find nothing
        if index is None or os.path.exists(index):
            rows = [r for r in store.candidates(q, None, FTS_CANDIDATES)
                    if sessions_of is None or str(r[0]).split(".agent-")[0] in sessions_of]
            kw = keyword_scores(rows)
            for sess, chunk, gist, text, _rank in rows[:20]:  # best first: the share is counted on a few
                hits.append({"score": round(kw[(sess, chunk)] * coverage(q, text or gist or ""), 3), "text": gist,
                             "source": f"cold:{sess}/{chunk}",
                             "recover": f"ctx recover --chunk-id {chunk} --session {sess}"})
    except Exception:  # noqa: BLE001 - recall is a bonus; it never fails the hook
        pass
    try:
        from ..sources.memory import search
        from ..store.backend import memory_store
        from .embedding import make_embedder

        found, _ = search(memory_store(home, workspace), q, limit, 0.0, make_embedder(home, "keyword", 0))
        for h in found:
            text = h.get("snippet", "")
            hits.append({"score": round((h.get("score") or 0) * coverage(q, text), 3), "text": text,
                         "source": h.get("source", "")})
    except Exception:  # noqa: BLE001 - recall is a bonus; it never fails the hook
        pass
    hits.sort(key=lambda h: -(h["score"] or 0))
    return hits[:limit]


def user_prompt_submit(home, target: Target) -> tuple[str | None, str | None]:
    """Usage from the one measure; after the agent compacted with no SessionStart to say so, the
    session's state, once per compaction; when due, fold the session in and inject its working
    state once per change; recall what matches the prompt. Works before the transcript exists."""
    recs = transcript_records(home, target)
    u = measure(home, recs)
    logs.append(home, "context-health", {"session": target.session, "pct_used": round(u["pct"], 4),
                                          "tokens": u["tokens"], "window": u["window"], "method": u["method"],
                                          "hook": "UserPromptSubmit", "compaction_due": u["due"],
                                          "skipped_lines": target.ignored or None})
    restored = restore_after_compaction(home, target, recs)
    parts = [restored] if restored else []
    if u["due"] and recs and not restored:
        if not _seen(home, target.transcript):
            fold(home, target, recs)
            _remember(home, target.transcript)
        state = own_state(home, target)
        if state is not None and (state.task or any(state.sections.values())):
            body = _condensed(home, state)
            digest = _digest(body)
            key = f"injected:{target.session}"
            if read_state(home).get(key) != digest:  # once per change, not on every prompt
                parts.append("# Working state\n" + body)
                update_state(home, key, digest)
    mine = {e.get("session") for e in sessions.of_project(home, target.project)} | {target.session}
    hits = [h for h in recall(home, target.workspace, target.data.get("prompt", ""), sessions_of=mine)
            if h["score"] >= home.config.get("hook_recall_min_score")]
    if hits:
        parts.append("# Earlier context that matches this prompt\n" + "\n".join(
            f"- {h['text']} ({h['source']}" + (f"; `{h['recover']}`" if h.get("recover") else "") + ")"
            for h in hits))
    if not parts and not u["due"]:
        return None, None  # nothing to add: say nothing
    head = f"Context: {u['pct']:.0%} of a {u['window']:,}-token window ({u['tokens']:,} tokens, {u['method']})."
    return cap("\n\n".join([head] + parts)), None


def pre_compact(home, target: Target) -> tuple[str | None, str | None]:
    """The session folded in (CONTEXT.md written) before the agent compacts; the context returned
    is the verified state as instructions for the agent's summary (services/steering), which
    the agents that take them print (Claude Code)."""
    from .steering import steering_text

    recs = transcript_records(home, target)
    _register(home, target, recs)
    rep = fold(home, target, recs) if recs else None
    _remember(home, target.transcript)
    if target.data.get("custom_instructions"):
        logs.append(home, "compaction", {"event": "precompact_instructions", "session": target.session,
                                         "custom_instructions": target.data["custom_instructions"],
                                         "trigger": target.data.get("trigger")})
    steer = steering_text(own_state(home, target))
    if steer:
        logs.append(home, "compaction", {"event": "compaction_steered", "session": target.session,
                                         "agent": target.agent, "chars": len(steer)})
    return steer or None, f"ctx: CONTEXT.md written before compaction ({rep.groups_summarized if rep else 0} groups)"


def post_compact(home, target: Target) -> tuple[str | None, str | None]:
    logs.append(home, "compaction", {"event": "claude_compacted", "session": target.session,
                                     "trigger": target.data.get("trigger")})
    return None, None


def stop(home, target: Target) -> tuple[str | None, str | None]:
    """The incremental fold, in line; curation when due goes to a detached worker."""
    if _seen(home, target.transcript):
        return None, None  # nothing new since the last run: the cheap path
    recs = transcript_records(home, target)
    _register(home, target, recs)
    rep = fold(home, target, recs) if recs else None
    _remember(home, target.transcript)
    spawned = spawn_curation(home, target) if recs and measure(home, recs)["curation_due"] else False
    extra = "; curation started in the background" if spawned else ""
    return None, f"ctx: CONTEXT.md updated ({rep.groups_summarized if rep else 0} new groups){extra}"


def subagent_stop(home, target: Target) -> tuple[str | None, str | None]:
    """The subagent's own transcript, folded into its own state (SESSION.agent-ID) and recorded
    under its parent; the parent's state is left as it is. Claude Code's compaction agent (no
    transcript of its own, or an `acompact` id) costs nothing. An agent that writes a subagent's
    events into its parent's transcript (Copilot CLI: agent_transcript_path is transcript_path)
    has the subagent's records read from it, and the parent's next hook still reads the file."""
    from ..store.session_state import state_file

    agent = str(target.data.get("agent_id") or "")
    path = target.data.get("agent_transcript_path")
    if not target.session or agent.startswith(COMPACTION_AGENT) or COMPACTION_AGENT in os.path.basename(path or "") \
            or not path or not os.path.isfile(path):
        return None, None
    shared = bool(target.transcript) and os.path.abspath(path) == os.path.abspath(target.transcript)
    if not shared and _seen(home, path):
        return None, None
    sub = f"{target.session}.agent-{agent or 'unknown'}"
    recs = records_of(path, target.ignored, home, sub)
    if shared:
        recs = [r for r in recs if str(r.get("session") or "").endswith(f".agent-{agent}")]
        if not recs:
            return None, None
    recs = [dict(r, session=sub) for r in recs]
    sf = state_file(home, sub)
    rep = None
    if recs and hasattr(sf, "workspace"):  # the embedded session store: its folder is its workspace
        rep = fold(home, target, recs, workspace=sf.workspace)
    elif recs:  # the shared store keeps the state; the fold's workspace copy is scratch, never the project's
        import shutil
        import tempfile

        scratch = tempfile.mkdtemp(prefix="ctx-subagent-")
        try:
            rep = fold(home, target, recs, workspace=scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if not shared:
        _remember(home, path)
    sessions.add_subagent(home, target.session, agent, {
        "type": target.data.get("agent_type") or None, "transcript": os.path.abspath(path),
        "state": sf.path if sf.exists() else None, "records": len(recs),
        "last_message": (str(target.data.get("last_assistant_message") or "")[:200]) or None})
    n = rep.groups_summarized if rep else 0
    return None, f"ctx: subagent {agent} recorded under session {target.session[:8]} ({n} groups)"


def session_end(home, target: Target) -> tuple[str | None, str | None]:
    """Fold what is new, archive the session's state, mark it ended; its content goes to cold
    storage in the detached worker."""
    if not _seen(home, target.transcript):
        recs = transcript_records(home, target)
        _register(home, target, recs)
        if recs:
            fold(home, target, recs)
        _remember(home, target.transcript)
    else:
        _register(home, target)
    end_session(home, target)
    if target.session or target.transcript:  # a resumed session reads its transcript afresh
        from . import transcripts

        transcripts.forget(home, target.session or os.path.abspath(target.transcript))
    if target.transcript and os.path.isfile(target.transcript):
        if target.in_worker:   # already detached (a deferred SessionEnd): cold storage here
            curate_now(home, target.transcript, target.session, ended=True)
        else:
            spawn_curation(home, target, ended=True)
    return None, "ctx: session state archived"


def notification(home, target: Target) -> tuple[str | None, str | None]:
    logs.append(home, "context-health", {"session": target.session, "hook": "Notification",
                                          "message": str(target.data.get("message", ""))[:200]})
    return None, None


def end_session(home, target: Target) -> None:
    """The session's state is archived and the index says it ended."""
    from ..store.session_state import archive_context, state_file

    sf = state_file(home, target.session) if target.session else None
    if sf is not None and sf.exists():
        src = sf
    else:   # the workspace's CONTEXT.md, unless another session's state is what it holds
        ws = ContextFile(target.workspace)
        owner = ws.read().state.get("session") if ws.exists() else None
        src = ws if not (target.session and owner and owner != target.session) else None
    dest = archive_context(home, src) if src is not None else None
    logs.append(home, "compaction", {"event": "session_archived", "session": target.session, "archive": dest})
    if target.session:
        sessions.mark(home, target.session, status="ended", archive=dest)


HANDLERS = {"SessionStart": session_start, "UserPromptSubmit": user_prompt_submit, "PreCompact": pre_compact,
            "PostCompact": post_compact, "Stop": stop, "SubagentStop": subagent_stop, "SessionEnd": session_end,
            "Notification": notification}


def handle(event: str, home, target: Target) -> tuple[str | None, str | None]:
    """Do the event's work; return (context for the model, note for the user)."""
    fn = HANDLERS.get(event)
    out = fn(home, target) if fn else (None, None)
    if target.ignored and event != "UserPromptSubmit":  # that one's health event counts them already
        logs.append(home, "context-health", {"session": target.session, "hook": event,
                                              "skipped_transcript_lines": dict(target.ignored)})
    return out


CATCH_UP = {"Stop": 3.0, "SubagentStop": 3.0, "SessionEnd": 5.0}   # seconds a hook waits for the transcript


def wait_for_transcript(home, agent, lifecycle: str, data: dict) -> bool:
    """For an agent that writes its transcript behind its hooks, wait (a little, polling) until the
    transcript holds everything up to this hook, so that the turn just finished is folded in; False
    when it did not catch up in time (the hook goes on with what is there, and the log says so)."""
    path = data.get("transcript_path")
    limit = CATCH_UP.get(lifecycle)
    if agent is None or agent.caught_up is None or not limit or not isinstance(path, str) or not os.path.isfile(path):
        return True
    import time

    t0 = time.monotonic()
    while not agent.caught_up(path, data):
        if time.monotonic() - t0 >= limit:
            logs.append(home, "context-health", {"session": data.get("session_id"), "hook": lifecycle,
                                                  "transcript_behind": path, "waited_s": limit})
            return False
        time.sleep(0.05)
    waited = time.monotonic() - t0
    if waited > 0.05:
        logs.append(home, "context-health", {"session": data.get("session_id"), "hook": lifecycle,
                                              "transcript_caught_up_after_s": round(waited, 2)})
    return True


def spawn_deferred(home, agent_name: str, event: str, data: dict, workspace: str | None) -> None:
    """Run hook EVENT of AGENT again in a detached worker (`ctx hook AGENT EVENT --in-worker`, the
    payload on its stdin): for an event the agent gives too little time (Codex's SessionEnd)."""
    cmd = [sys.executable, "-m", "ctxkit", "--home", home.path, "hook", agent_name, event, "--in-worker"]
    if workspace:
        cmd += ["--workspace", workspace]
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) and os.path.isdir(data["cwd"]) else None
    with open(os.devnull, "ab") as dn_out:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=dn_out, stderr=dn_out, start_new_session=True,
                             env=env, close_fds=True, cwd=cwd)
        try:
            p.stdin.write(json.dumps(data).encode("utf-8", "surrogatepass"))
        finally:
            p.stdin.close()
    logs.append(home, "curation", {"event": "hook_deferred", "agent": agent_name, "hook": event,
                                   "session": data.get("session_id")})


# ---- the detached worker: curation (and, at session end, cold storage) outside the hook ----

def spawn_curation(home, target: Target, ended: bool = False) -> bool:
    """Start `ctx hook curate` detached (its own session, no terminal): it survives the hook and
    Claude Code's exit. False when the transcript is missing."""
    if not target.transcript or not os.path.isfile(target.transcript):
        return False
    cmd = [sys.executable, "-m", "ctxkit", "--home", home.path, "hook", "curate", "--transcript", target.transcript,
           "--workspace", target.workspace]
    if target.session:
        cmd += ["--session", target.session]
    if ended:
        cmd.append("--ended")
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    from ..store import worker

    with open(os.devnull, "rb") as dn_in, open(os.devnull, "ab") as dn_out, worker.open_log(home) as err:
        subprocess.Popen(cmd, stdin=dn_in, stdout=dn_out, stderr=err, start_new_session=True, env=env,
                         close_fds=True, cwd=target.cwd or None)  # its stderr: logs/worker.log
    logs.append(home, "curation", {"event": "curation_started", "session": target.session, "ended": ended})
    return True


def curate_now(home, transcript: str, session: str | None, ended: bool = False) -> dict | None:
    """The worker's job: seed 003's post-response curation when usage is at curation_trigger_pct
    (the chunks least relevant to what the agent is doing, as `ctx score` scores them by
    default, go to cold storage); at session end, the
    session's content goes to cold storage whole."""
    if ended:   # the whole session, streamed group by group (a huge transcript is never held)
        from ..io.adapters import open_records
        from ..io.jsonl import Source

        if not os.path.isfile(transcript):
            return None
        return to_cold_storage(home, open_records(Source(transcript)), session)
    from .transcripts import KEEP

    recs = records_of(transcript, window=KEEP)   # the worker has time: what a hook keeps at most, not less
    if not recs:
        return None
    if not measure(home, recs)["curation_due"]:
        return None
    from .curation import curate
    from .scoring import default_query

    q = default_query(recs)
    if not q:
        return None

    return curate(home, home.config, recs, q, tokenizer(home))


def run_worker(home, transcript: str, session: str | None, ended: bool = False):
    """The detached worker's job (`ctx hook curate`): curation when due, cold storage at session
    end. A failure is never silent: curation.jsonl gets a `curation_failed` event with the
    reason, `ctx status`/`ctx health` show it until a later run succeeds, and the error itself
    goes on to the worker's stderr (logs/worker.log)."""
    from ..core.timeutil import now_iso
    from ..store import worker

    try:
        result = curate_now(home, transcript, session, ended)
    except Exception as e:
        reason = " ".join(str(e).split())[:500] or type(e).__name__
        hint = getattr(e, "hint", None)
        event = {"event": "curation_failed", "session": session, "ended": ended, "reason": reason,
                 "error": type(e).__name__, "log": worker.log_path(home)}
        if hint:
            event["hint"] = str(hint)[:300]
        try:
            worker.record_failure(home, {"timestamp": now_iso(), **event})
        except OSError:
            pass
        try:
            logs.append(home, "curation", event)
        except Exception:  # a config that does not load: the failure record above and the log say it
            pass
        raise
    worker.clear_failure(home)
    return result


def to_cold_storage(home, recs, session: str | None) -> dict:
    """Every group of an ended session, stored durably in cold storage (re-drops are not logged
    again), so `ctx recover` and recall find it later."""
    from ..backends.tokenizers import count_records
    from ..core.drop import gist
    from ..core.groups import iter_groups
    from ..store.backend import open_store
    from .dropping import to_cold

    if not home.config.get("cold_storage_enabled"):
        return {"chunks": 0}
    store = open_store(home).cold
    tok = tokenizer(home)
    stored = 0
    for g in iter_groups(recs):
        if not g or not any(r.get("kind") == "message" for r in g):
            continue
        n = sum(count_records(tok, g, reuse=True))
        _, _, redrop = to_cold(home, store, g, n, "session_end", None, None, None,
                               home.config.get("recoverable_for_days"), gist(g, 80), log_redrop=False)
        stored += 0 if redrop else 1
    logs.append(home, "compaction", {"event": "session_to_cold_storage", "session": session, "chunks": stored})
    return {"chunks": stored}
