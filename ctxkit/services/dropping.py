"""Dropping as a service: `ctx drop` over a stream, and the one way a chunk goes to cold
storage (also used by seed 003's curation). A chunk is written and fsynced to cold storage,
and logged, before its stub can leave the stream."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import records as R
from ..backends.tokenizers import count_records
from ..core import shrink as S
from ..core.drop import DROP, KEEP, SHRINK, SUMMARIZE, Decision, decide_facts, decide_shrink, facts, gist, plan_budget, stub_text
from ..core.groups import iter_groups
from ..errors import InputError
from ..store import logs
from ..store.backend import ColdStore, open_store
from ..store.cold import new_entry


def to_cold(home, store: ColdStore, orig: list[dict], tokens: int, reason: str, score, query, cutoff,
            days: int, what: str, log_redrop: bool = True, log: bool = True) -> tuple[str, str, bool]:
    """Store one chunk (its records as they came) and log it: (path, chunk id, was a re-drop).
    `log` False: the caller logs it (log_drop) once it knows what the chunk's stub or shrunk form
    freed, before that form leaves the stream."""
    session = orig[0].get("session") or "default"
    entry = new_entry(session, orig[0].get("group"), orig, tokens, reason, score, query, days, what)
    path, chunk_id, redrop = store.write(entry)  # durable before the chunk leaves the stream
    if log and (log_redrop or not redrop):
        log_drop(home, session, chunk_id, path, reason, score, cutoff, tokens, query, redrop)
    return path, chunk_id, redrop


def log_drop(home, session: str, chunk_id: str, path: str, reason: str, score, cutoff, tokens: int, query,
             redrop: bool = False, freed: int | None = None, shrunk: bool = False) -> None:
    """One line of drops.jsonl: `tokens` the chunk's whole size (what cold storage holds, 0 for a
    re-drop), `tokens_freed` what leaving it out of the stream freed (the chunk minus its stub or
    its shrunk form; null where the caller does not know), `event` chunk_shrunk for a shrink;
    `threshold_used` null when no threshold decided (a --free or --to-tokens run)."""
    logs.append(home, "drops", {"event": "chunk_redropped" if redrop else "chunk_shrunk" if shrunk else "chunk_dropped",
                                "chunk_id": chunk_id, "session_id": session, "reason": reason,
                                "relevance_score": score, "threshold_used": cutoff,
                                "tokens": 0 if redrop else tokens, "tokens_freed": freed,
                                "cold_storage_path": path, "query": query})


def stub(group: list[dict], tokens: int, chunk_id: str, path: str | None, score, sizing: bool = False) -> dict:
    """The stub that stands for a dropped chunk. `sizing`: only to count what dropping would save, never
    written: its names skip the check against the chunk's secrets (the most of `ctx drop`'s own time,
    run for every chunk), which can only leave a name out of the stub that is written."""
    from ..store import redaction

    session = group[0].get("session") or "default"
    ts = max((r["ts"] for r in group if r.get("ts")), default=None)
    found = S.names_of(group, tokens)
    names = tuple(found) if sizing else redaction.names(found, group)
    return R.make("stub", id=f"stub-{chunk_id}", session=session, ts=ts, role="user",
                  content=stub_text(chunk_id, session, tokens, len(group), gist(group, 80), names), group=chunk_id,
                  score=score, meta={"chunk_id": chunk_id, "tokens": tokens, "records": len(group),
                                     "cold_storage_path": path})


def shrunk_chunk(orig: list[dict], terms, rx, chunk_id: str, path: str | None) -> list[dict]:
    """The chunk with its large outputs shrunk; what the notes name holds no secret of the output."""
    from ..store import redaction

    session = orig[0].get("session") or "default"
    found = S.shrink_group(orig, terms, rx)
    found = [(i, S.Shrunk(sh.text, sh.kept, sh.total, redaction.names(sh.names, [orig[i]]))) for i, sh in found]
    return S.apply(orig, found, chunk_id, session, path)


@dataclass
class DropRun:
    before: int = 0
    after: int = 0
    dropped: int = 0
    shrunk: int = 0
    summarized: int = 0
    total: int = 0
    query: str | None = None
    disabled: bool = False          # cold storage is off and something would have been dropped
    rows: list = field(default_factory=list)   # with dry_run: one decision per chunk
    tally: object = None
    duration_s: float = 0.0
    target: int | None = None       # with a budget: the tokens it asked to free
    in_reach: bool = True           # with a budget: the chunks it may touch hold that many
    hidden: int = 0                 # tokens before the stream's last compaction boundary (not in the window)
    hidden_after: int = 0           # of those, what the output keeps

    @property
    def seen(self) -> tuple[int, int]:
        """(before, after) counted from the last compaction boundary on: what the model sees."""
        return self.before - self.hidden, self.after - self.hidden_after


@dataclass
class Budget:
    """How much to free: a share of the stream's tokens, or down to a token count."""
    free: float | None = None
    to_tokens: int | None = None

    def target(self, before: int) -> int:
        if self.to_tokens is not None:
            return max(0, before - self.to_tokens)
        return int(round((self.free or 0.0) * before))


def drop_stream(home, records, tok, cutoff: float, keep_at: float, min_keep: int, out, dry_run: bool = False,
                budget: Budget | None = None, shrink: bool = True, whole: bool = False) -> DropRun:
    """Decide and apply KEEP / DROP / SHRINK / SUMMARIZE for every chunk of `records`, writing
    the kept records, shrunk chunks and stubs to `out` (a Writer). With a `budget`, the cut
    comes from the score distribution (core.drop.plan_budget); otherwise from the cutoff and
    keep thresholds. Only what follows the stream's last compaction boundary is touched (what the
    model sees), unless `whole`. Memory stays flat: the chunks wait in a disk spool, only their facts in
    memory."""
    from ..store import sessions
    from ..core.usage import is_boundary
    from .scoring import in_play_terms, is_score_event
    from .spool import GroupSpool

    cfg = home.config
    if hasattr(tok, "prefetch"):
        tok.prefetch()   # the BPE tables load while the input comes (behind `ctx score`, most of a second)
    run = DropRun(tally=sessions.tally(()))
    started = time.monotonic()
    play = {"terms": set(), "rx": None, "n": 0, "boundary": None}

    def sized(group: list[dict]) -> tuple:
        """What stays in memory per chunk: its facts, each record's tokens, and their sum."""
        for r in group:
            if is_score_event(r):
                run.query = r["meta"].get("query")  # the last score event names the query
                play["terms"] = in_play_terms(r)
                play["rx"] = S._matcher(play["terms"])
        sessions.tally(group, run.tally)
        if any(is_boundary(r) for r in group):
            play["boundary"] = play["n"]   # what precedes it is compacted away (core.usage)
        play["n"] += 1
        if any(r.get("kind") == "message" for r in group):
            run.total += 1   # the chunks `ctx score` scores: both commands count the same thing
        counts = count_records(tok, [dict(r) for r in group], reuse=True)
        tokens = sum(counts)
        saving = tokens - count_records(tok, [stub(group, tokens, group[0].get("group"), None, None, sizing=True)])[0]
        shrink_saving = 0
        if shrink and group and group[0].get("group"):
            found = S.shrink_group(group, play["terms"], play["rx"])
            if found:
                small = S.apply(group, found, group[0]["group"], group[0].get("session") or "default", None)
                shrink_saving = max(0, tokens - sum(count_records(tok, small)))
        return facts(group, saving, shrink_saving), counts, tokens

    enabled = cfg.get("cold_storage_enabled")
    threshold = None if budget is not None else cutoff   # what the log says decided: no threshold under a budget
    store = open_store(home).cold
    days = cfg.get("recoverable_for_days")
    with GroupSpool(sized) as spool:
        spool.extend(iter_groups(records))
        chunk_facts = [f for f, _, _ in spool.info]
        run.hidden = sum(t for _, _, t in spool.info[:play["boundary"] or 0])
        if any(f.message for f in chunk_facts) and all(f.score is None for f in chunk_facts if f.message):
            source = getattr(getattr(records, "source", None), "name", None) or "input"
            raise InputError(source, None, "the input is not scored: run `ctx score` first",
                             hint="ctx score FILE | ctx drop")   # before anything is written
        # what the model sees: the chunks from the last compaction boundary on (`whole`: all of them)
        first = 0 if whole else play["boundary"] or 0
        live = chunk_facts[first:]
        if budget is not None:
            run.target = budget.target(sum(t for _, _, t in spool.info[first:]))
            plan = plan_budget(live, run.target, min_keep, keep_at)
            decisions, run.in_reach = plan.decisions, plan.in_reach
        elif shrink:
            decisions = decide_shrink(live, cutoff, keep_at, min_keep, cfg.get("summarize_medium_chunks"))
        else:
            decisions = decide_facts(live, cutoff, keep_at, min_keep, cfg.get("summarize_medium_chunks"))
        decisions = [Decision(KEEP, "compacted_away", f.score) for f in chunk_facts[:first]] + list(decisions)
        run.disabled = not enabled and any(d.action in (DROP, SHRINK) for d in decisions)
        for i, (orig, (f, counts, tokens), d) in enumerate(zip(spool.groups(range(len(spool))), spool.info,
                                                              decisions)):
            if i == (play["boundary"] or 0):
                run.hidden_after = run.after   # what the stream keeps before its last boundary
            if dry_run:
                frees = max(0, f.saving or 0) if d.action == DROP and enabled else \
                    f.shrink_saving if d.action == SHRINK and enabled else 0
                run.before += tokens
                run.after += tokens - frees
                run.dropped += d.action == DROP and enabled
                run.shrunk += d.action == SHRINK and enabled
                run.summarized += d.action == SUMMARIZE
                if d.reason != "not_a_message" or orig[0].get("kind") != "event":
                    run.rows.append({"chunk_id": orig[0].get("group"), "session_id": orig[0].get("session"),
                                     "decision": d.action, "reason": d.reason, "score": d.score, "tokens": tokens,
                                     "frees": frees, "gist": gist(orig, 60)})
                continue
            g = [dict(r, tokens=n, tokenizer=tok.name) for r, n in zip(orig, counts)]
            run.before += tokens
            if d.action == DROP and enabled:
                path, chunk_id, redrop = to_cold(home, store, orig, tokens, d.reason, d.score, run.query, threshold,
                                                 days, gist(g, 80), log=False)
                s = stub(g, tokens, chunk_id, path, d.score)
                s["tokens"], s["tokenizer"] = count_records(tok, [s])[0], tok.name
                log_drop(home, orig[0].get("session") or "default", chunk_id, path, d.reason, d.score, threshold,
                         tokens, run.query, redrop, tokens - s["tokens"])
                out.write(s)
                run.after += s["tokens"]
                run.dropped += 1
                continue
            if d.action == SHRINK and enabled:
                path, chunk_id, redrop = to_cold(home, store, orig, tokens, d.reason, d.score, run.query, threshold,
                                                 days, gist(g, 80), log=False)
                small = shrunk_chunk(orig, play["terms"], play["rx"], chunk_id, path)
                counts2 = count_records(tok, small)
                for r, n in zip(small, counts2):
                    r["tokens"], r["tokenizer"] = n, tok.name
                log_drop(home, orig[0].get("session") or "default", chunk_id, path, d.reason, d.score, threshold,
                         tokens, run.query, redrop, tokens - sum(counts2), shrunk=True)
                out.write_all(small)
                run.after += sum(counts2)
                run.shrunk += 1
                continue
            if d.action == SUMMARIZE:
                for r in g:
                    R.add_flag(r, "summarize")
                run.summarized += 1
            out.write_all(g)
            run.after += tokens
    run.duration_s = round(time.monotonic() - started, 3)
    return run


def commit(home, run: DropRun, source: str | None, cutoff: float, keep_at: float, min_keep: int) -> None:
    """Once every chunk is in cold storage, before the output goes out: the session index and the
    compaction log."""
    from ..store import sessions

    sessions.commit(home, run.tally, source)
    logs.append(home, "compaction", {
        "event": "relevance_drop", "trigger": "manual", "tokens_before": run.before, "tokens_after": run.after,
        "chunks_dropped": run.dropped, "chunks_shrunk": run.shrunk, "chunks_summarized": run.summarized, "chunks_total": run.total,
        "query": run.query, "duration_s": run.duration_s,
        "config_used": f"relevance_cutoff={cutoff} relevance_keep={keep_at} min_chunks_to_keep={min_keep}"})
