"""Compaction as a service: used by `ctx compact`, the agent hooks and `ctx maintain`.

Selection -> summarizer ladder (model -> extractive -> truncate) -> anchored merge into
CONTEXT.md (locked, atomic) -> a summary record in place of the span -> a compaction.jsonl
event. Never exits having silently done nothing: every run says what it did and logs it.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from ..backends.tokenizers import annotate
from ..core import context_md as C
from ..core.compact import fold_tool_head, fold_tool_tail, is_compaction_summary, select, summary_record
from ..core.requests import latest_request
from ..core.groups import iter_groups
from ..core.model_output import parse_output, verify
from ..core.score import chunk_text
from ..core.timeutil import now_iso
from ..sources.workspace import ContextFile
from ..store.session_state import may_replace_workspace, state_file, with_workspace_sections
from ..store import logs

TEMPLATE_SECTIONS = ("Goals", "Decisions", "Constraints", "Pinned", "Facts", "Pending", "Errors", "Files")


@dataclass
class Options:
    budget: int
    trigger_pct: float
    preserve_ratio: float
    summarizer: str = "extractive"
    force: bool = False
    dry_run: bool = False
    target_tokens: int = 500
    model_path: str | None = None
    timeout_s: float = 120.0
    openai: dict = field(default_factory=dict)
    progress: object = None   # callable(tokens, seconds) for model progress on stderr
    window_due: bool = False  # no --budget/--max-tokens: a transcript with provider usage is due by its window
    context_window: int = 0   # config's context_window (0: from the model named in the transcript)
    task: str | None = None   # the session's first request, when the caller saw it (windowed runs)
    latest: str | None = None  # ... and its latest
    prose: bool = True        # a model summarizer may rewrite Current work, Next step and Steps as prose


@dataclass
class Report:
    acted: bool
    reason: str
    tokens_before: int = 0
    tokens_after: int = 0
    seen_before: int = 0    # what the model sees (core.usage.seen_in): after the last compaction boundary
    seen_after: int = 0
    groups_total: int = 0
    groups_summarized: int = 0
    summarizer: str | None = None
    degraded: str | None = None
    discarded_bullets: int = 0
    kept_bullets: int = 0
    tokens_per_s: float | None = None
    duration_s: float = 0.0
    context_path: str | None = None
    context: C.Context | None = None
    records: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    pending: list = field(default_factory=list)   # state writes, run by commit() after the output
    config_used: str = ""                         # seed 003: the knobs this run acted on
    model_seconds: float = 0.0                    # time the model has used (within summary_timeout_s)
    model_down: bool = False                      # the model could not be reached or run: not asked again
    prose: object = None                          # services.prose.ProseRun: sections the model rewrote

    def defer(self, fn) -> None:
        self.pending.append(fn)

    def commit(self) -> "Report":
        """Persist what the run decided (CONTEXT.md, the session store, the log). Callers write
        their output first: a command that fails before that leaves no half state."""
        while self.pending:
            self.pending.pop(0)()
        return self

    def event(self) -> dict:
        d = {"event": "compaction_triggered" if self.acted else "compaction_skipped", "trigger": self.reason,
             "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
             "seen_before": self.seen_before, "seen_after": self.seen_after,
             "groups_total": self.groups_total, "groups_summarized": self.groups_summarized,
             "chunks_summarized": self.groups_summarized, "chunks_dropped": 0, "summarizer": self.summarizer,
             "duration_s": round(self.duration_s, 3), "context_md": self.context_path,
             "config_used": self.config_used}
        if self.degraded:
            d["degraded"] = self.degraded
        if self.discarded_bullets or self.kept_bullets:
            d["model_bullets_kept"] = self.kept_bullets
            d["model_bullets_discarded"] = self.discarded_bullets
        if self.tokens_per_s is not None:
            d["tokens_per_s"] = self.tokens_per_s
        if self.prose is not None:
            d["prose_sections"] = len(self.prose.rewritten)
            d["prose_fallbacks"] = len(self.prose.fell_back)
        return d



# a fenced code block: fences that open and close a line (a "```" inside a sentence opens none)
BLOCK = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)

def _model_summarizer(opts: Options):
    if opts.summarizer == "llama":
        from ..backends.summarizers import IsolatedLlama

        return IsolatedLlama(opts.model_path, progress=opts.progress)
    from ..backends.summarizers import OpenAISummarizer

    o = opts.openai
    return OpenAISummarizer(o.get("base_url", ""), o.get("model", ""), o.get("api_key"))


FULL_BUDGET = 60_000   # CONTEXT.md keeps everything the state holds; what is injected is its condensed view


def to_context(r) -> C.Context:
    """The engine's rendered sections as CONTEXT.md's grammar (one analysis, two renderings)."""
    return C.Context(task=r.task, latest=r.latest if r.latest != r.task else "",
                     sections={name: [C.Item(text=ln.text, done=ln.done) for ln in lines] for name, lines in r.sections})


def engine(records: list[dict], budget: int, tok, raw_ids: set | None = None):
    """The compaction engine's summary of `records` within `budget` tokens; `raw_ids`: the ids of the records
    that follow the summary as they were."""
    from ..compaction import state_of, summarize

    recs = [r for r in records if not is_compaction_summary([r])]
    raw_from = next((i for i, r in enumerate(recs) if raw_ids and r.get("id") in raw_ids), -1)
    if _last_state[0] is not records or _last_state[1] != len(records):
        _last_state[:] = [records, len(records), state_of(recs)]   # CONTEXT.md and the summary read the same records
    return summarize(_last_state[2], max(50, budget), tok.count, raw_from=raw_from)


_last_state: list = [None, 0, None]    # (records, how many, their state) of the last engine call


def summarize_span(span: list[dict], all_records: list[dict], opts: Options, report: Report,
                   tok=None) -> tuple[C.Context, C.Context | None]:
    """(the full state for CONTEXT.md, the model's verified bullets or None).

    The ladder: model (gets the engine's state, its bullets verified and gated) -> extractive -> truncate;
    each fallback is recorded. Where the work stands, files, errors and checks are never left to a model."""
    try:
        summ = engine(all_records, FULL_BUDGET, tok)
        facts = to_context(summ.rendered)
        from .observe import situation

        facts.sections.update(situation(all_records, summ.state).sections)  # seed 000's Now, Recent, External
    except Exception as e:  # noqa: BLE001 - last rung: keep going with truncation
        report.degraded = f"extractive failed: {type(e).__name__}: {str(e)[:200]}; truncated"
        report.summarizer = "truncate"
        return C.Context(task=latest_request(all_records)), None
    if opts.summarizer in ("llama", "openai"):
        started = time.monotonic()
        try:
            model_ctx = model_bullets(span, all_records, opts, report, tok)
            merged = C.Context(task=facts.task, latest=facts.latest,
                               sections={k: list(v) for k, v in facts.sections.items()})
            for name in ("Decisions", "Facts"):
                merged.sections[name] = C.merge_items(model_ctx.sections.get(name, []),
                                                      facts.sections.get(name, []), cap=40)
            report.summarizer = opts.summarizer
            return merged, model_ctx
        except Exception as e:  # noqa: BLE001 - any model failure degrades, never aborts
            from ..errors import CtxError

            report.degraded = f"{opts.summarizer} failed: {str(e)[:200]}; used extractive"
            # unreachable, crashed or not installed: not asked again for prose (too slow: it may still fit)
            report.model_down = isinstance(e, CtxError) and type(e).__name__ != "SummarizerTimeout"
        finally:
            report.model_seconds += time.monotonic() - started
    report.summarizer = "extractive"
    return facts, None


def model_bullets(span: list[dict], all_records: list[dict], opts: Options, report: Report, tok) -> C.Context:
    """Extract, then abstract: the model reads the engine's state (about 2k tokens) and writes concise
    Decisions and Facts; every bullet is verified against the span and gated."""
    from ..core.hygiene import gate

    source = "\n".join(chunk_text([r]) for r in span)
    brief_in = model_input(engine(all_records, 2000, tok).rendered)
    # half the time limit at most: the prose of where the work stands (rewrite_prose) comes after
    gen = _model_summarizer(opts).generate(brief_in, opts.timeout_s / 2)
    report.tokens_per_s = gen.tokens_per_s
    merged = C.Context()
    for text in gen.texts:
        v = verify(parse_output(text), source)
        report.kept_bullets += v.kept
        report.discarded_bullets += v.discarded
        merged = C.merge(merged, v.ctx)
    for name in ("Decisions", "Facts"):
        kept, rejected = gate([i.text for i in merged.sections.get(name, [])])
        report.discarded_bullets += len(rejected)
        report.kept_bullets -= len(rejected)
        merged.sections[name] = [C.Item(text=t) for t in kept]
    if report.kept_bullets <= 0:
        raise RuntimeError("no bullet of the model's survived verification")
    return merged


def model_input(r, cap_chars: int = 7000) -> str:
    """What the model reads: the engine's sections as plain lines (about 2k tokens)."""
    lines = [f"Task: {r.task}"]
    if r.latest:
        lines.append(f"Latest request: {r.latest}")
    for name, items in r.sections:
        lines.append(f"{name}:")
        lines += [f"- {ln.text}" for ln in items]
    text = "\n".join(lines)
    return text[:cap_chars].rsplit("\n", 1)[0] if len(text) > cap_chars else text


def expand_stubs(span: list[dict], home=None) -> list[dict]:
    """A dropped chunk's stub stands for records that are still in cold storage: summarize those,
    so the artifact trail and errors of dropped chunks reach CONTEXT.md too. The chunk is found
    by its ids in this home's cold storage; a stub's `cold_storage_path` is never trusted."""
    if home is None or not any(r.get("kind") == "stub" for r in span):
        return span
    from ..errors import CtxError
    from ..store.backend import open_store

    store = open_store(home).cold
    out = []
    for r in span:
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        cid = meta.get("chunk_id") if r.get("kind") == "stub" else None
        if isinstance(cid, str) and cid:
            try:
                found = store.find(cid, r.get("session"))
                if len(found) == 1:
                    out.extend(store.load(found[0]["path"]).get("records") or [r])
                    continue
            except CtxError:
                pass
        out.append(r)
    return out


def compact(records: list[dict], tok, opts: Options, home, workspace: str) -> Report:
    started = time.monotonic()
    records = list(annotate(tok, records, reuse=True))
    groups = list(iter_groups(records))
    total = sum(r.get("tokens") or 0 for r in records)
    rep = Report(acted=False, reason="", tokens_before=total, tokens_after=total, groups_total=len(groups),
                 config_used=f"budget={opts.budget} compaction_trigger_pct={opts.trigger_pct} "
                             f"recent_preserve_ratio={opts.preserve_ratio} summary_target_tokens={opts.target_tokens} "
                             f"summarizer={opts.summarizer}")
    # the one measure `ctx status` leads with (core.usage.seen_in): what the model sees after the last
    # compaction boundary, by the provider's usage when fresh, else counted
    from ..core.usage import is_boundary, model_of, provider_usage, seen_in, window_for

    seen, how = seen_in(records, lambda recs: [r.get("tokens") or 0 for r in recs])
    rep.seen_before = rep.seen_after = seen
    pct, of = (seen / opts.budget if opts.budget else 1.0), f"the budget {opts.budget} ({how})"
    if opts.window_due:  # no budget of the user's own: over the model's window
        _, model, reported = provider_usage(records)
        window = window_for(model or model_of(records), opts.context_window, reported)
        pct, of = seen / window, f"the model's {window}-token window ({how})"
    if not opts.force and pct < opts.trigger_pct:
        rep.reason = f"not due: {pct:.1%} of {of} is below the {opts.trigger_pct:.0%} trigger"
        rep.records = records
        return _finish(rep, home, started, opts)
    rep.reason = "forced" if opts.force and pct < opts.trigger_pct else "token_threshold"
    session = next((r.get("session") for r in records if r.get("session")), None)
    wfile = ContextFile(workspace)
    workspace_ctx = wfile.read()
    sfile = state_file(home, session) if session else None
    # this session's own state: the session store, else the workspace file when it is this session's
    existing = sfile.read() if sfile is not None and sfile.exists() else \
        (workspace_ctx if workspace_ctx.state.get("session") == session else C.Context())
    skip = -1
    if existing.state.get("session") == session and existing.state.get("through"):
        through = existing.state["through"]
        for i, g in enumerate(groups):
            if any(r.get("id") == through for r in g):
                skip = i
    sel = fold_tool_head(groups, fold_tool_tail(groups, select(groups, opts.budget, opts.preserve_ratio, skip), skip), skip)
    span_idx = [i for i in sel.summarize if not is_compaction_summary(groups[i])]
    # groups an earlier run summarized (up to CONTEXT.md's `through`): represented by the summary
    covered = [i for i in range(skip + 1) if i not in sel.protected and not is_compaction_summary(groups[i])
               and not all(r.get("kind") == "event" for r in groups[i])]
    if not span_idx and not covered:
        rep.reason += "; nothing to summarize: every group fits the preserved window or is protected"
        rep.records = records
        return _finish(rep, home, started, opts)
    through = existing.state.get("through")
    analyzed = expand_stubs([r for r in records if r.get("kind") != "event"], home)   # what the engine reads
    model_ctx = None
    if span_idx:
        span = expand_stubs([r for i in span_idx for r in groups[i]], home)
        new_ctx, model_ctx = summarize_span(span, analyzed, opts, rep, tok)
        base = existing if (existing.task or existing.sections) else C.Context()
        if not new_ctx.task and opts.task:
            new_ctx.task = opts.task  # a windowed run: the first request was in an earlier window
        elif existing.task and new_ctx.task != existing.task and \
                (_after_agents_summary(analyzed) or is_follow_up(new_ctx.task)):
            # the agent compacted its own history, or the span opens with "keep going" (a resumed
            # session): its requests continue the work the session's state already names (they are
            # the latest request, not a new task)
            if new_ctx.task and not new_ctx.latest:
                new_ctx.latest = new_ctx.task
            new_ctx.task = existing.task
        if opts.latest and not new_ctx.latest:
            new_ctx.latest = opts.latest
        through = groups[max(span_idx)][-1].get("id")

        def change(cur: C.Context) -> C.Context:
            merged = _replace(cur if (cur.task or cur.sections) else base, new_ctx)
            if session:
                merged.state["session"] = session
            if through:
                merged.state["through"] = through
            return merged

        rep.context = change(existing)
    else:
        rep.summarizer = "none (already summarized in CONTEXT.md)"
        rep.context = existing
        if session and not opts.dry_run and workspace_ctx.state.get("session") != session and \
                may_replace_workspace(workspace_ctx, session):
            rep.defer(lambda: setattr(rep, "context", save_state(home, workspace, session, existing, rep)))
    ts = now_iso()
    meta = {"summarizer": rep.summarizer, "groups_summarized": len(span_idx) + len(covered), "through": through}
    if rep.degraded:
        meta["degraded"] = rep.degraded
    drop = set(span_idx) | set(covered) | {i for i, g in enumerate(groups) if is_compaction_summary(g)}
    last = max(set(span_idx) | set(covered), default=-1)
    # an agent's own compaction boundary inside the summarized span goes with it: ctx's summary takes
    # its place, and a boundary left after it would hide that summary from what the model sees (core.usage)
    drop |= {i for i, g in enumerate(groups) if i < last and any(is_boundary(r) for r in g)}
    tail = any(i > last and i not in drop and not all(r.get("kind") == "event" for r in g)
               for i, g in enumerate(groups))
    prose = None
    if opts.summarizer in ("llama", "openai") and opts.prose and not rep.model_down:
        def prose(ctx: C.Context, count) -> None:
            rewrite_prose(ctx, count, opts, rep)
    out: list[dict] = []
    at = None   # where the summary goes: in place of the first summarized group
    raw_cap = max(60, int(opts.budget * opts.preserve_ratio) // 12)
    for i, g in enumerate(groups):
        if i in drop:
            if at is None:
                at = len(out)
            continue
        if at is not None and i not in sel.protected and _big_output(g, raw_cap):
            out.append(_stub_to_cold(g, home, tok, opts, rep))  # kept raw, but never a dump
            continue
        out.extend(g)
    at = 0 if at is None else at
    fit_tail(out, at, opts, home, tok, rep)
    kept_tokens = sum(r.get("tokens") or 0 for r in out)
    target = summary_budget(opts, kept_tokens)
    raw_ids = {r.get("id") for r in out[at:] if r.get("id")}
    summ = build_summary(analyzed, model_ctx, session, ts, meta, tok, target, task=opts.task or "",
                         workspace_ctx=workspace_ctx, latest=opts.latest, tail=out[at:] if tail else [], prose=prose,
                         raw_ids=raw_ids)
    summ["meta"]["summarizer"] = rep.summarizer   # the model may have rewritten sections as prose
    if rep.degraded:
        summ["meta"]["degraded"] = rep.degraded
    out.insert(at, summ)
    over_budget_note(out, summ, opts, rep)
    if span_idx and not opts.dry_run:
        new_state = rep.context
        rep.defer(lambda: setattr(rep, "context", save_state(home, workspace, session, new_state, rep)))
    rep.acted = True
    rep.groups_summarized = len(span_idx)
    rep.records = out
    rep.tokens_after = sum(r.get("tokens") or 0 for r in out)
    rep.seen_after = seen_in(out, lambda recs: [r.get("tokens") or 0 for r in recs])[0]
    return _finish(rep, home, started, opts)


def _big_output(group: list[dict], cap: int) -> bool:
    """A group kept raw after the summary whose tool output is too big to paste (a file dump,
    a long listing): it goes to cold storage and a stub stands in its place."""
    return any(r.get("role") == "tool" and (r.get("tokens") or 0) > cap for r in group)


def _stub_to_cold(group: list[dict], home, tok, opts: Options, rep: Report) -> dict:
    from ..backends.tokenizers import count_records
    from ..core.drop import gist
    from ..store.backend import open_store
    from .dropping import stub, to_cold

    tokens = sum(r.get("tokens") or 0 for r in group)
    path = None
    chunk_id = group[0].get("group") or group[0].get("id") or "chunk"
    if not opts.dry_run and home is not None:
        store = open_store(home).cold
        path, chunk_id, _ = to_cold(home, store, group, tokens, "compaction_tail_output", None, None, None,
                                    home.config.get("recoverable_for_days"), gist(group, 80))
    s = stub(group, tokens, chunk_id, path, None)
    s["tokens"], s["tokenizer"] = count_records(tok, [s])[0], tok.name
    rep.notes.append(f"a large tool output kept after the summary went to cold storage as chunk {chunk_id}")
    return s


def compact_stream(records, tok, opts: Options, home, workspace: str, window_bytes: int):
    """(Report, SessionTally) for a record stream of any size. The records wait in a disk spool;
    a stream up to `window_bytes` is compacted in one pass, a bigger one window by window
    (`compact_windows`), so memory stays one window's."""
    from ..core.requests import request_text
    from ..store import sessions
    from .spool import GroupSpool

    tally = sessions.tally(())
    latest: list = [None]

    def seen(g: list[dict]) -> None:
        sessions.tally(g, tally)
        for r in g:
            latest[0] = (request_text(r) if r.get("role") == "user" else None) or latest[0]

    with GroupSpool(seen) as spool:
        spool.extend(iter_groups(records))
        if spool.bytes <= window_bytes:
            return compact([r for g in spool.groups(range(len(spool))) for r in g], tok, opts, home,
                           workspace), tally
        first = next(iter(tally.sessions.values()), {}).get("title") or None
        opts.task, opts.latest = first, latest[0]
        return compact_windows(_windows(spool, window_bytes), tok, opts, home, workspace), tally


def _windows(spool, size: int):
    """The spooled groups as windows of about `size` bytes, in order; the last window is
    counted from the end, so it always holds at least `size` bytes of the newest groups."""
    n = len(spool)
    start_last, acc = n, 0
    while start_last > 0 and acc < size:
        start_last -= 1
        acc += spool.size(start_last)
    i = 0
    while i < start_last:
        j, acc = i, 0
        while j < start_last and acc < size:
            acc += spool.size(j)
            j += 1
        yield [r for g in spool.groups(range(i, j)) for r in g]
        i = j
    yield [r for g in spool.groups(range(start_last, n)) for r in g]


def compact_windows(windows, tok, opts: Options, home, workspace: str) -> Report:
    """Compaction of a stream too big to hold: `windows` yields its records in consecutive
    whole-group windows, the last holding at least the recent tail compaction keeps raw. Each earlier
    window is carried on as its digest (every record, a tool's output cut to its head and tail, which
    keep what the engine reads of it: the verdict lines, the error lines), so the last window's
    compaction derives its state from the whole session; memory is one window plus the digests."""
    carried: list[dict] = []
    before = 0
    windows = iter(windows)
    cur = next(windows, [])
    for nxt in windows:
        before += sum(r.get("tokens") or tok.count(str(r.get("content") or "")) for r in cur)
        carried.extend(digest(r) for r in cur)
        cur = nxt
    rep = compact(carried + cur, tok, opts, home, workspace)
    if carried:  # the whole stream's figures, not the digests'
        rep.tokens_before += before - sum(r.get("tokens") or 0 for r in carried)
        rep.notes.append("compacted in windows (the input was over compact_window_mb)")
    return rep


DIGEST_HEAD, DIGEST_TAIL = 1500, 1500   # characters of a tool's output an earlier window keeps


def digest(r: dict) -> dict:
    """A record as an earlier window carries it: a tool's output (or a long text) cut to its head and tail."""
    text = r.get("content")
    if not isinstance(text, str) or len(text) <= DIGEST_HEAD + DIGEST_TAIL or r.get("role") == "user":
        return r
    out = dict(r, content=text[:DIGEST_HEAD] + "\n[…]\n" + text[-DIGEST_TAIL:])
    out.pop("tokens", None)
    return out


def summary_budget(opts: Options, kept_tokens: int) -> int:
    """The summary fills what compaction freed, up to summary_target_tokens, and never less than
    its floor: what is kept raw (a pinned prompt, the newest records) does not starve it."""
    return max(summary_floor(opts), min(opts.target_tokens, opts.budget - kept_tokens))


MIN_SUMMARY_TOKENS = 120
SUMMARY_FLOOR_SHARE = 0.3   # of the budget, guaranteed to the summary (at most summary_target_tokens)


def summary_floor(opts: Options) -> int:
    return max(MIN_SUMMARY_TOKENS, min(opts.target_tokens, int(opts.budget * SUMMARY_FLOOR_SHARE)))


def fit_tail(out: list[dict], at: int, opts: Options, home, tok, rep: Report) -> None:
    """The records kept raw after the summary leave the summary its floor: while they would not,
    their longest messages (a final report, a long answer) are condensed in place, largest first,
    to the start of each of their sections, never below the raw share of the budget, the whole
    message first going to cold storage (`ctx recover` brings it back). Pinned records stay whole."""
    from ..backends.tokenizers import count_records
    from ..core.shorten import condense_to

    excess = sum(r.get("tokens") or 0 for r in out) + summary_floor(opts) - opts.budget
    if excess <= 0:
        return
    least = max(MIN_SUMMARY_TOKENS, int(opts.budget * opts.preserve_ratio))
    long = sorted((k for k in range(at, len(out)) if _condensable(out[k]) and (out[k].get("tokens") or 0) > least),
                  key=lambda k: -(out[k].get("tokens") or 0))
    for k in long:
        if excess <= 0:
            break
        rec = out[k]
        n = rec.get("tokens") or 0
        # the note that says where the whole is goes on top of the condensed text: its cost comes off
        note = tok.count(f"\n\n[ctx condensed this message to the start of each section: kept {n} of {n} tokens. "
                         f"Whole message: ctx recover --chunk-id {rec.get('group') or rec.get('id') or 'chunk'} "
                         f"--session {rec.get('session') or 'default'}]")
        goal = max(least, n - excess) - note - 8
        body = BLOCK.sub("[code block cut]", rec["content"])  # code goes first
        body = body[:goal * 16]  # condensing costs a count per line: a giant message is cut first
        text, cut = condense_to(body, goal, tok.count)
        if not cut:
            continue
        chunk_id, path = rec.get("group") or rec.get("id") or "chunk", None
        if not opts.dry_run and home is not None:
            from ..core.drop import gist
            from ..store.backend import open_store
            from .dropping import to_cold

            path, chunk_id, _ = to_cold(home, open_store(home).cold, [rec], n, "compaction_tail_message", None,
                                        None, None, home.config.get("recoverable_for_days"), gist([rec], 80))
        session = rec.get("session") or "default"
        new = dict(rec, content=text + f"\n\n[ctx condensed this message to the start of each section: kept "
                                       f"{tok.count(text)} of {n} tokens. Whole message: ctx recover --chunk-id "
                                       f"{chunk_id} --session {session}]")
        meta = dict(rec["meta"]) if isinstance(rec.get("meta"), dict) else {}
        meta["condensed"] = {"chunk_id": chunk_id, "tokens": n, "cold_storage_path": path}
        new["meta"] = meta
        new["tokens"] = count_records(tok, [new])[0]
        excess -= n - new["tokens"]
        out[k] = new
        rep.notes.append(f"a long message kept after the summary was condensed ({n} -> {new['tokens']} tokens) so "
                         f"the summary keeps its share of the budget; the whole is in cold storage as chunk {chunk_id}")


def _condensable(rec: dict) -> bool:
    from .. import records as R

    return rec.get("kind") == "message" and rec.get("role") == "assistant" and isinstance(rec.get("content"), str) \
        and not R.is_protected(rec)


def over_budget_note(out: list[dict], summ: dict, opts: Options, rep: Report) -> None:
    """Say so, on the one-line report, when the output is over the budget: pinned records (a
    system or developer prompt) are never cut, and the summary keeps its floor."""
    from .. import records as R

    total = sum(r.get("tokens") or 0 for r in out)
    if total <= opts.budget:
        return
    pinned = sum(r.get("tokens") or 0 for r in out if r.get("kind") != "summary" and R.is_protected(r))
    if pinned > opts.budget - (summ.get("tokens") or 0):
        rep.notes.append(f"over budget: {total} tokens written against {opts.budget}: the pinned records (system "
                         f"or developer prompts, pinned or important messages) alone take {pinned} tokens and are "
                         f"never cut; the summary was still given up to {summary_floor(opts)} tokens")
    else:
        rep.notes.append(f"over budget: {total} tokens written against {opts.budget} (the summary's floor is "
                         f"{summary_floor(opts)} tokens; the newest records are kept raw)")


def save_state(home, workspace: str, session, ctx: C.Context, rep: Report) -> C.Context:
    """Write the session's state to the session store, and to the workspace CONTEXT.md when that
    is this session's (or nobody's yet). Returns what was written."""
    wfile = ContextFile(workspace)
    if session:
        sfile = state_file(home, session)
        saved = sfile.update(lambda cur: _replace(cur, ctx))
        if may_replace_workspace(wfile.read(), session):
            rep.context_path = wfile.path
            return wfile.update(lambda cur: with_workspace_sections(_replace(cur, saved), cur))
        rep.context_path = sfile.path
        rep.notes.append(f"the workspace CONTEXT.md belongs to another session and was left as it was; "
                         f"this session's state is in {sfile.path} (`ctx session restore {session}` "
                         f"makes it current)")
        return saved
    rep.context_path = wfile.path
    return wfile.update(lambda cur: _replace(cur, ctx))


def is_follow_up(text: str) -> bool:
    from ..compaction.analyze.requests import is_follow_up as follow_up

    return bool(text) and follow_up(text)


def _after_agents_summary(span: list[dict]) -> bool:
    """The span opens with the agent's own compaction summary (not ctx's) before any request."""
    from ..core.requests import request_text

    for r in span:
        if r.get("kind") == "summary":
            return "compaction" not in (r.get("flags") or ())
        if request_text(r):
            return False
    return False


def _replace(cur: C.Context, new: C.Context) -> C.Context:
    from .observe import NOW_LABELS

    out = C.Context(version=cur.version, updated=cur.updated, state=dict(new.state), task=new.task,
                    sections={k: list(v) for k, v in new.sections.items()}, latest=new.latest)
    if "Now" in new.sections:  # a Now line the state does not derive (written by hand) stays
        out.sections["Now"] += [i for i in cur.sections.get("Now", []) if not i.text.startswith(NOW_LABELS)]
    # sections written by hand or by other verbs since (goals, pinned, …) are kept
    for k, v in cur.sections.items():
        if k not in out.sections:
            out.sections[k] = list(v)
    return out


def workspace_tokens(ctx: C.Context | None, count) -> int:
    if ctx is None:
        return 0
    return sum(count(i.render() + "\n") for n in ("Goals", "Constraints", "Pinned") for i in ctx.sections.get(n, []))


AFTER = "\n\n## After this summary\n- The most recent records follow as they were."
AFTER_STUB = ("\n\n## After this summary\n- The most recent records follow as they were (a large tool output among "
              "them is cut short; `ctx recover` brings it back).")


def _after(tail: list[dict]) -> str:
    """What follows the summary: the records kept raw, and whether one of them stands for a cut output."""
    if not tail:
        return ""
    cut_short = any(r.get("kind") == "stub" or "ctx recover" in str(r.get("content") or "") for r in tail)
    return AFTER_STUB if cut_short else AFTER


def build_summary(records: list[dict], model_ctx, session, ts: str, meta: dict, tok, target: int, task: str = "",
                  workspace_ctx: C.Context | None = None, latest: str | None = None, tail: list[dict] | None = None,
                  prose=None, raw_ids: set | None = None) -> dict:
    """The summary record: the engine's state of `records` written to fill `target` tokens (the header
    included); a model's verified bullets take up to a fifth of it; `prose(ctx, count)`, when given, may
    then rewrite sections in place within the tokens they already had."""
    from ..backends.tokenizers import count_records
    from ..store import redaction

    count = tok.count
    header = count_records(tok, [summary_record(C.Context(task="x"), session, ts, meta)])[0]
    after = _after(tail or [])   # the records kept raw follow: say so, so they read as the latest turns
    room = max(50, target - header - workspace_tokens(workspace_ctx, count) - (count(after) if after else 0))
    model_room = room // 5 if model_ctx is not None else 0
    try:
        s = engine(records, room - model_room, tok, raw_ids)
        ctx = to_context(s.rendered)
        if s.state.env.cwd:
            meta = dict(meta, cwd=s.state.env.cwd)
    except Exception as e:  # noqa: BLE001 - the last rung: the request alone, and the log says why
        ctx = C.Context(task=latest_request(records))
        meta = dict(meta, degraded=f"extractive failed: {type(e).__name__}: {str(e)[:200]}; truncated")
    if task and not ctx.task:
        ctx.task = task                 # a windowed run: the first request was seen in an earlier window
    if latest and not ctx.latest and latest != ctx.task:
        ctx.latest = latest
    if model_ctx is not None:
        left = model_room
        for name in ("Decisions", "Facts"):
            kept = []
            for it in model_ctx.sections.get(name, []):
                c = count(it.render() + "\n")
                if c <= left:
                    kept.append(it)
                    left -= c
            if kept:
                ctx.sections[name] = kept
    if prose is not None:
        prose(ctx, count)
    if workspace_ctx is not None:  # workspace-level state (goals, constraints, pinned) rides along
        for name in ("Goals", "Constraints", "Pinned"):
            if workspace_ctx.sections.get(name):
                ctx.sections[name] = C.merge_items(ctx.sections.get(name, []), workspace_ctx.sections[name], cap=0)
    summ = summary_record(ctx, session, ts, meta)
    if after:
        summ["content"] += after
    summ["content"] = redaction.text(summ["content"])  # it goes to a model
    n = count_records(tok, [summ])[0]
    summ["tokens"], summ["tokenizer"] = n, tok.name
    return summ


def rewrite_prose(ctx: C.Context, count, opts: Options, rep: Report) -> None:
    """The model rewrites the summary's Current work, Next step and Step sections as prose where
    it can do so faithfully (services.prose); the rest keep their bullets, and stderr says why."""
    from .prose import rewrite

    started = time.monotonic()
    try:
        run = rewrite(ctx, _model_summarizer(opts), opts.timeout_s - rep.model_seconds, count)
    except Exception as e:  # noqa: BLE001 - the bullets stay; the run goes on
        rep.notes.append(f"{opts.summarizer}: no section rewritten as prose: {str(e)[:200]}")
        return
    finally:
        rep.model_seconds += time.monotonic() - started
    rep.prose = run
    if run.rewritten or run.fell_back:
        rep.notes.append(run.note(opts.summarizer))
    if run.rewritten and rep.summarizer != opts.summarizer:
        rep.summarizer = opts.summarizer
        if rep.degraded and "survived verification" in rep.degraded:
            rep.degraded = f"{opts.summarizer}: no Decisions/Facts bullet survived verification (extractive ones used)"


def _finish(rep: Report, home, started: float, opts: Options) -> Report:
    rep.duration_s = time.monotonic() - started
    if not opts.dry_run:
        rep.defer(lambda: logs.append(home, "compaction", rep.event()))
    return rep

