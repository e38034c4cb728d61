"""Scoring as a service: `ctx score` over a stream of any size, and the weights every scorer
uses (curation too). The records wait in a disk spool; per chunk only its signals (terms,
reads and writes, importance, BM25 statistics for the keyword embedder, the focus tracker's
operations) and, for an embedding model, its capped text stay in memory."""
from __future__ import annotations

import hashlib
from collections import Counter
from sys import intern
from dataclasses import dataclass

from .. import records as R
from ..core.drop import gist
from ..core.working_set import (ERROR_SPAN, FocusTracker, file_base, focus_of, found_paths, lean, reads_of, same_file,
                                 terms_of, turn_texts, with_open_errors)
from ..core.groups import iter_groups
from ..core.score import (SCORE_EVENT, Weights, explain_why, ages_from_times, chunk_text, chunk_time, score_chunk,
                          working_set)
from ..core.timeutil import iso, now, parse_ts
from ..errors import UsageProblem


def weights(cfg) -> Weights:
    return Weights(similarity=cfg.get("similarity_weight"), recency=cfg.get("recency_weight"),
                   importance=cfg.get("importance_weight"), half_life_hours=cfg.get("half_life_hours"),
                   working_set=cfg.get("working_set_weight"), superseded=cfg.get("superseded_weight"))


TERMS_CAP = 20_000  # characters of one record read for its terms
IN_PLAY_CAP = 400   # terms in play the score event carries (drop shrinks around them)


def score_event(query: str, embedder: str, when, focus=None, in_play=()) -> dict:
    meta = {"type": SCORE_EVENT, "query": query, "embedder": embedder, "now": iso(when)}
    if focus is not None:
        meta["focus"] = focus.explain()
        meta["in_play"] = sorted(in_play)[:IN_PLAY_CAP]
    return R.make("event", id=f"score-{iso(when)}", content="", flags=["score"], meta=meta)


def in_play_terms(event: dict | None) -> set[str]:
    """The working set a score event names (empty for older events)."""
    meta = (event or {}).get("meta") or {}
    return set(meta.get("in_play") or ())


def is_score_event(r: dict) -> bool:
    return r.get("kind") == "event" and isinstance(r.get("meta"), dict) and r["meta"].get("type") == SCORE_EVENT


@dataclass
class ScoreRun:
    query: str
    chunks: int
    newly_embedded: int
    focus: object = None
    rows: list | None = None      # with explain: one row per scored chunk
    reused: int = 0               # chunks whose signals came from the signal cache


QUERY_MODES = ("focus", "last-user")


def query_of(focus, query_from: str = "focus") -> str | None:
    """What a session is scored against, from its focus: "focus" (what the agent is doing:
    latest real request, open plan item, intention, files in play) or "last-user" (the newest
    request; the focus when it carries no content, such as "continue")."""
    if query_from == "last-user" and not focus.contentless and focus.latest:
        return focus.latest
    return focus.query() or None


def default_query(records) -> str | None:
    """The query `ctx score` takes by default, for an in-memory stream (curation uses it)."""
    return query_of(focus_of(records))


def chunk_terms(g: list[dict]) -> set[str]:
    """Everything a chunk names (its text, tool calls and results, thinking left out)."""
    parts = []
    for r in g:
        if "thinking" in R.flags(r) or "reasoning" in R.flags(r):
            continue
        if r.get("content"):
            parts.append(r["content"][:TERMS_CAP])
        for c in r.get("tool_calls") or ():
            parts.append(R.tool_call_text(c)[:TERMS_CAP])
    return terms_of("\n".join(parts))


SCORE_FIELDS = ("score", "score_parts")
# a cached chunk's entry: (newest ts of its non-event records, its newest ts, its terms, the paths
# it reads, the paths it writes whole, its importance, BM25 statistics of its text (None unless
# the keyword embedder), the focus tracker's operations, the paths its searches listed)
E_NEWEST, E_TIME, E_TERMS, E_READS, E_WRITES, E_IMPORTANCE, E_STATS, E_OPS, E_FOUND = range(9)


def line_memo(home):
    """The table of input lines known clean (io.seen) a warm `ctx score` skips reading again,
    tagged like the signal cache (the code's and the redaction settings' fingerprint)."""
    from ..io.seen import LineMemo

    return LineMemo(home.cache_dir, fingerprint(), SCORE_EVENT)


def score_stream(home, records, query: str | None, embedder_name: str, when, out, make_embedder,
                 query_from: str = "focus", explain: bool = False, memo=None) -> ScoreRun:
    """Write a score event, then every record with `score` and `score_parts` on each chunk's
    records, to `out`. `query` None: from `query_from`: "focus" (what the agent is doing:
    latest real request, open plan item, intention, files in play) or "last-user" (the newest
    request; the focus when it carries no content, such as "continue"). `when` None: the
    stream's newest time (so an idle session is not scored as if it had all become
    irrelevant), else the clock. `make_embedder(home, name, n)` builds the embedder (the CLI
    adds progress). With `explain`, `out` gets nothing and `rows` say why each chunk scored so.

    Rescoring is warm: what each chunk yields that does not depend on the query or the rest of
    the session (its terms, reads and writes, importance, BM25 statistics, what it tells the
    focus tracker) is cached by a hash of the chunk (store.signalcache), and a chunk found
    there is printed from its spooled lines without being parsed or redacted again. Only a
    chunk whose records redaction left unchanged is cached (so the cache holds nothing
    redaction would have removed, and a cached chunk needs no redaction); the cache is tagged
    with the code's and the redaction settings' fingerprint.

    `records` may hold `Seen` records (io.seen: input lines `memo` knew clean, read unparsed):
    they are parsed from their line only when a chunk's signals are not cached; `memo` keeps
    the lines of this run for the next (not with `explain`)."""
    import json

    from ..core.bm25 import doc_stats
    from ..io.seen import Seen
    from ..core.score import chunk_importance, chunk_score
    from ..io.jsonl import dumps
    from ..store import redaction, signalcache
    from .spool import LineSpool

    seen = {"newest": None}
    tracker = FocusTracker()
    df: Counter = Counter()
    keyword = embedder_name == "keyword"
    cache = {"path": None, "entries": {}, "fp": None}

    def info(g: list[dict], data: bytes) -> tuple:
        scorable = any(r.get("kind") == "message" for r in g)
        if not (scorable and keyword) and any(type(r) is Seen for r in g):
            g = full(data)
        if not scorable:
            _see(parse_ts(_newest_ts(g, events=False)))
            return (False, "", parse_ts(_newest_ts(g, events=True)), None, None, False)
        if cache["path"] is None:
            cache["path"] = signalcache.path_for(home.cache_dir, g[0].get("session"))
            cache["fp"] = fingerprint()
            cache["entries"] = signalcache.load(cache["path"], cache["fp"])
        key = hashlib.blake2b(data, digest_size=16).digest()
        e = cache["entries"].get(key)
        hit = e is not None and (not keyword or e[E_STATS] is not None)
        if hit:
            tracker.replay(e[E_OPS], len(spool_info))
        else:
            if type(g[0]) is Seen or any(type(r) is Seen for r in g):
                g = full(data)
            ops: list = []
            tracker.record = ops
            for r in g:
                tracker.feed(r)
            tracker.record = None
            reads, writes = reads_of(actions=tracker.actions)
            stats = None
            if keyword:   # interned: the cache then holds each distinct token once (a smaller, faster read)
                dl, tf = doc_stats(chunk_text(g))
                stats = (dl, {intern(t): n for t, n in tf.items()})
            e = (_newest_ts(g, events=False), _newest_ts(g, events=True), tuple(map(intern, chunk_terms(g))),
                 tuple(sorted(reads)), tuple(sorted(writes)), chunk_importance(g), stats, lean(ops),
                 found_paths(g))
        tracker.actions.clear()
        _see(parse_ts(e[E_NEWEST]))
        df.update(e[E_TERMS])
        if keyword:
            return (True, "", parse_ts(e[E_TIME]), e, key, hit)
        text = chunk_text(g)
        embed_early(text)   # a first run embeds while the stream is still coming
        return (True, text, parse_ts(e[E_TIME]), e, key, hit)

    def full(data: bytes) -> list[dict]:
        """The records of a chunk from its lines (what LineSpool.group reads back)."""
        return [json.loads(x) for x in data.decode("utf-8").split("\n")]

    def _see(t) -> None:
        if t is not None and (seen["newest"] is None or t > seen["newest"]):
            seen["newest"] = t

    from .embedding import early_run, embed_early, preload

    preload(home, embedder_name)   # a first run: MiniLM loads, and embeds, while the input is read
    with LineSpool(info) as spool, early_run():
        spool_info = spool.info
        tracker.resolve = lambda ref: turn_texts(spool.group(ref[0]))[ref[1]]
        spool.extend(_unscored(iter_groups(r for r in records if not is_score_event(r))))
        when = when or seen["newest"] or now()
        focus = with_open_errors(tracker.focus(), _tail(spool))
        if query is None:
            query = query_of(focus, query_from)
        scorable = [i for i, info_ in enumerate(spool.info) if info_[0]]
        if not scorable:   # nothing to score (an empty stream): what came in goes out, as jq would
            if not explain:
                for i in range(len(spool)):
                    out.write_all(spool.group(i))
            return ScoreRun(query or "", 0, 0, focus, [] if explain else None)
        if query is None:
            raise UsageProblem("no query: pass --query TEXT (the stream has no user message to take it from)")
        emb = make_embedder(home, embedder_name, len(scorable))
        if keyword and hasattr(emb, "similarities_of_stats"):
            sims = emb.similarities_of_stats(query, [spool.info[i][3][E_STATS] for i in scorable])
        else:
            texts = ((chunk_text(g) for g in spool.groups(scorable)) if keyword
                     else [spool.info[i][1] for i in scorable])
            sims = emb.similarities(query, texts)
            del texts
        if getattr(emb, "_bar", None):
            emb._bar.close()
        w = weights(home.config)
        ages = ages_from_times([spool.info[i][2] for i in scorable], when)
        in_play = focus.terms()
        sup = superseded([(spool.info[i][3][E_READS], spool.info[i][3][E_WRITES], spool.info[i][3][E_FOUND])
                          for i in scorable])
        by_chunk = {}
        for k, (i, sim, age) in enumerate(zip(scorable, sims, ages)):
            by_chunk[i] = (sim, age, working_set(spool.info[i][3][E_TERMS], in_play, df), sup[k])
        rows = [] if explain else None
        keep: dict = {}       # the entries the cache keeps: chunks redaction leaves unchanged
        if not explain:
            out.write(score_event(query, embedder_name, when, focus, _worth_keeping(in_play, df)))
        for i in range(len(spool)):
            _, _, _, e, key, hit = spool.info[i]
            if i not in by_chunk:
                if not explain:
                    out.write_all(spool.group(i))
                continue
            sim, age, ws, sp = by_chunk[i]
            score, parts = chunk_score(sim, age, e[E_IMPORTANCE], w, ws, sp)
            if explain:
                g = spool.group(i)
                for r in g:
                    r["score"], r["score_parts"] = score, dict(parts)
                rows.append(_explain_row(g, w, sorted(t for t in e[E_TERMS] if t in in_play),
                                         e[E_READS] if sp else ()))
                continue
            if hit:   # redaction left these very records unchanged before: print them as spooled
                tail = _score_tail(score, parts)
                for line in spool.lines(i):
                    out.write_line(line[:-1] + tail)
                keep[key] = e
                continue
            clean = True
            for r in spool.group(i):
                r["score"], r["score_parts"] = score, dict(parts)
                red = redaction.output(r)
                clean = clean and red == r
                out.write_line(dumps(red))
            if clean:
                keep[key] = e
        if not explain and cache["path"] and keep.keys() != cache["entries"].keys():
            try:
                signalcache.save(cache["path"], cache["fp"], keep)
            except OSError:
                pass   # a cache: the next run finds the signals again
        if not explain and memo is not None:
            memo.save()
    chunks_embedded = getattr(emb, "encoded", 0) - getattr(emb, "query_encoded", 0)   # not the query
    return ScoreRun(query, len(scorable), chunks_embedded, focus, rows, sum(1 for i in scorable if spool.info[i][5]))


def _tail(spool) -> list[dict]:
    """The stream's last ERROR_SPAN message records, read back from the spool (newest chunks only)."""
    out: list = []
    for k in range(len(spool) - 1, -1, -1):
        if not spool.info[k][0]:   # no message in it
            continue
        out[:0] = [r for r in spool.group(k) if r.get("kind") == "message"]
        if len(out) >= ERROR_SPAN:
            return out[-ERROR_SPAN:]
    return out


def _score_tail(score: float, parts: dict) -> str:
    """`,"score":…,"score_parts":{…}}`: what `dumps` adds to a record's line when these two fields
    are set last (floats print as JSON does, by repr)."""
    from ..io.jsonl import dumps

    if type(score) is not float or any(type(v) is not float for v in parts.values()):
        return f',"score":{dumps(score)},"score_parts":{dumps(parts)}}}'
    return ',"score":%r,"score_parts":{%s}}' % (score, ",".join(f'"{k}":{v!r}' for k, v in parts.items()))


def _unscored(groups):
    """Chunks with messages lose the score fields an earlier run wrote (they are written anew,
    and a chunk hashes the same however it was scored before)."""
    for g in groups:
        if any(k in r for r in g for k in SCORE_FIELDS) and any(r.get("kind") == "message" for r in g):
            g = [{k: v for k, v in r.items() if k not in SCORE_FIELDS} if _has_score(r) else r for r in g]
        yield g


def _has_score(r: dict) -> bool:
    return any(k in r for k in SCORE_FIELDS)


def _newest_ts(g: list[dict], events: bool) -> str | None:
    """The `ts` text of the chunk's newest record (events left out unless `events`)."""
    best = raw = None
    for r in g:
        if not events and r.get("kind") == "event":
            continue
        t = parse_ts(r.get("ts"))
        if t is not None and (best is None or t > best):
            best, raw = t, r["ts"]
    return raw


_CODE_FP: list = []


def fingerprint() -> str:
    """What the signal cache depends on: the code that finds the signals (this package's core,
    this module, the stores and records), and the redaction in force (its code and vendored rules)."""
    import importlib.util
    import os

    if not _CODE_FP:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256()
        files = [os.path.join(root, "core", f) for f in sorted(os.listdir(os.path.join(root, "core")))
                 if f.endswith(".py")]
        files += [os.path.join(root, *p) for p in (("services", "scoring.py"), ("services", "spool.py"),
                                                   ("store", "redaction.py"), ("store", "signalcache.py"),
                                                   ("records.py",), ("io", "jsonl.py"), ("io", "seen.py"),
                                                   ("io", "adapters", "__init__.py"),
                                                   ("rules", "gitleaks", "gitleaks.json"))]  # the secret rules
        for f in files:
            with open(f, "rb") as fh:
                h.update(f.encode() + b"\0" + fh.read())
        _CODE_FP.append(h.hexdigest())
    from ..store import redaction

    r = redaction.active()
    if r is None:
        red = "off"
    else:
        ds = "no-ds"
        if r.use_ds and importlib.util.find_spec("detect_secrets") is not None:
            from importlib.metadata import PackageNotFoundError, version

            try:
                ds = "ds-" + version("detect-secrets")
            except PackageNotFoundError:
                ds = "ds"
        red = repr((sorted(p.pattern for p in r.extra), ds))
    return _CODE_FP[0] + ":" + hashlib.sha256(red.encode("utf-8", "surrogatepass")).hexdigest()


def signals(groups: list[list[dict]]) -> tuple[list[float], list[float]]:
    """(working set, superseded) of each chunk of an in-memory stream, as `score_stream` finds them."""
    tracker = FocusTracker()
    df: Counter = Counter()
    terms = []
    for g in groups:
        for r in g:
            tracker.feed(r)
        t = frozenset(chunk_terms(g))
        df.update(t)
        terms.append(t)
    tail = [r for g in groups for r in g if r.get("kind") == "message"][-ERROR_SPAN:]
    in_play = with_open_errors(tracker.focus(), tail).terms()
    return [working_set(t, in_play, df) for t in terms], superseded([(*reads_of(g), found_paths(g)) for g in groups])


def _worth_keeping(in_play: set, df: Counter) -> set:
    """The terms in play a shrunk output should keep lines for: those some chunk names."""
    return {t for t in in_play if df.get(t)}


def superseded(chunks) -> list[float]:
    """Per chunk (its read paths, its whole-file writes[, the paths its searches listed]): 1.0
    when every file it read was read again or written whole by a later chunk; a search that
    read nothing is 1.0 when a later chunk read or wrote a file it listed (it served to find
    that file, which the later chunk now shows); otherwise 0.0."""
    last_touch: dict = {}
    by_name: dict = {}
    for k, (reads, writes, *_) in enumerate(chunks):
        for p in (*reads, *writes):
            last_touch[p] = k
    for p, k in last_touch.items():
        by_name.setdefault(file_base(p), []).append(p)
    out = []
    for k, (reads, _, *rest) in enumerate(chunks):
        if reads:
            out.append(1.0 if all(last_touch.get(p, k) > k for p in reads) else 0.0)
            continue
        found = rest[0] if rest else ()
        opened = any(last_touch[t] > k for f in found for t in by_name.get(file_base(f), ()) if same_file(f, t))
        out.append(1.0 if opened else 0.0)
    return out


def _explain_row(g: list[dict], w: Weights, hits: list[str], read: tuple) -> dict:
    """One chunk's score, its signals and why (its largest contributions, in words); the weights
    are the run's, said once (core.score.weights_line)."""
    p = g[0].get("score_parts") or {}
    return {"chunk_id": g[0].get("group"), "score": g[0].get("score"),
            "similarity": p.get("similarity"), "recency": p.get("recency"), "importance": p.get("importance"),
            "working_set": p.get("working_set"), "superseded": p.get("superseded"),
            "why": explain_why(p, w, hits, read), "gist": gist(g, 60)}
