"""Compaction as a service: used by `ctx compact`, the agent hooks and `ctx maintain`.

Selection -> summarizer ladder (model -> extractive -> truncate) -> anchored merge into
CONTEXT.md (locked, atomic) -> a summary record in place of the span -> a compaction.jsonl
event. Never exits having silently done nothing: every run says what it did and logs it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..backends.tokenizers import annotate
from ..core import context_md as C
from ..core.compact import is_compaction_summary, select, summary_record
from ..core.extract import latest_request, summarize
from ..core.groups import iter_groups
from ..core.model_output import parse_output, verify
from ..core.score import chunk_text
from ..core.timeutil import now_iso
from ..sources.workspace import ContextFile
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


@dataclass
class Report:
    acted: bool
    reason: str
    tokens_before: int = 0
    tokens_after: int = 0
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

    def event(self) -> dict:
        d = {"event": "compaction" if self.acted else "compaction_skipped", "trigger": self.reason,
             "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
             "groups_total": self.groups_total, "groups_summarized": self.groups_summarized,
             "chunks_summarized": self.groups_summarized, "summarizer": self.summarizer,
             "duration_s": round(self.duration_s, 3), "context_md": self.context_path}
        if self.degraded:
            d["degraded"] = self.degraded
        if self.discarded_bullets or self.kept_bullets:
            d["model_bullets_kept"] = self.kept_bullets
            d["model_bullets_discarded"] = self.discarded_bullets
        if self.tokens_per_s is not None:
            d["tokens_per_s"] = self.tokens_per_s
        return d


def _model_summarizer(opts: Options):
    if opts.summarizer == "llama":
        from ..backends.summarizers import LlamaSummarizer

        return LlamaSummarizer(opts.model_path)
    from ..backends.summarizers import OpenAISummarizer

    o = opts.openai
    return OpenAISummarizer(o.get("base_url", ""), o.get("model", ""), o.get("api_key"))


def summarize_span(span: list[dict], all_records: list[dict], opts: Options, report: Report) -> C.Context:
    """The ladder: model (verified) -> extractive -> truncate; each fallback is recorded."""
    source = "\n".join(chunk_text([r]) for r in span)
    if opts.summarizer in ("llama", "openai"):
        try:
            gen = _model_summarizer(opts).generate(source, opts.timeout_s)
            report.tokens_per_s = gen.tokens_per_s
            merged = C.Context()
            for text in gen.texts:
                v = verify(parse_output(text), source)
                report.kept_bullets += v.kept
                report.discarded_bullets += v.discarded
                merged = C.merge(merged, v.ctx)
            if report.kept_bullets == 0:
                raise RuntimeError("no bullet of the model's survived verification")
            merged.task = merged.task or latest_request(all_records)
            # the deterministic parts are never left to a model: the artifact trail, and the
            # error lines taken from failed tool results, join whatever the model kept
            facts = summarize(span, task_from=all_records)
            merged.sections["Errors"] = C.merge_items(facts.sections.get("Errors", []),
                                                      merged.sections.get("Errors", []))
            merged.sections["Files"] = facts.sections["Files"]
            report.summarizer = opts.summarizer
            return merged
        except Exception as e:  # noqa: BLE001 - any model failure degrades, never aborts
            report.degraded = f"{opts.summarizer} failed: {str(e)[:200]}; used extractive"
    try:
        ctx = summarize(span, task_from=all_records)
        report.summarizer = "extractive"
        return ctx
    except Exception as e:  # noqa: BLE001 - last rung: keep going with truncation
        report.degraded = (report.degraded + "; " if report.degraded else "") + \
            f"extractive failed: {str(e)[:200]}; truncated"
        report.summarizer = "truncate"
        return C.Context(task=latest_request(all_records))


def expand_stubs(span: list[dict]) -> list[dict]:
    """A dropped chunk's stub stands for records that are still in cold storage: summarize those,
    so the artifact trail and errors of dropped chunks reach CONTEXT.md too."""
    import json
    import os

    out = []
    for r in span:
        path = (r.get("meta") or {}).get("cold_storage_path") if r.get("kind") == "stub" else None
        if path and os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as f:
                    out.extend(json.loads(f.read()).get("records") or [r])
                continue
            except (OSError, ValueError):
                pass
        out.append(r)
    return out


def compact(records: list[dict], tok, opts: Options, home, workspace: str) -> Report:
    started = time.monotonic()
    records = list(annotate(tok, records, reuse=True))
    groups = list(iter_groups(records))
    total = sum(r.get("tokens") or 0 for r in records)
    rep = Report(acted=False, reason="", tokens_before=total, tokens_after=total, groups_total=len(groups))
    pct = total / opts.budget if opts.budget else 1.0
    if not opts.force and pct < opts.trigger_pct:
        rep.reason = f"not due: {pct:.1%} of {opts.budget} is below the {opts.trigger_pct:.0%} trigger"
        rep.records = records
        return _finish(rep, home, started, opts)
    rep.reason = "forced" if opts.force and pct < opts.trigger_pct else "token_threshold"
    cfile = ContextFile(workspace)
    rep.context_path = cfile.path
    existing = cfile.read()
    session = next((r.get("session") for r in records if r.get("session")), None)
    skip = -1
    if existing.state.get("session") == session and existing.state.get("through"):
        through = existing.state["through"]
        for i, g in enumerate(groups):
            if any(r.get("id") == through for r in g):
                skip = i
    sel = select(groups, opts.budget, opts.preserve_ratio, skip)
    span_idx = [i for i in sel.summarize if not is_compaction_summary(groups[i])]
    # groups an earlier run summarized (up to CONTEXT.md's `through`): represented by the summary
    covered = [i for i in range(skip + 1) if i not in sel.protected and not is_compaction_summary(groups[i])
               and not all(r.get("kind") == "event" for r in groups[i])]
    if not span_idx and not covered:
        rep.reason += "; nothing to summarize: every group fits the preserved window or is protected"
        rep.records = records
        return _finish(rep, home, started, opts)
    through = existing.state.get("through")
    if span_idx:
        span = expand_stubs([r for i in span_idx for r in groups[i]])
        new_ctx = summarize_span(span, records, opts, rep)
        base = existing
        if not cfile.exists():  # no CONTEXT.md: anchor on the stream's last compaction summary, if any
            prev = [g for g in groups if is_compaction_summary(g)]
            if prev:
                body = prev[-1][0].get("content", "").split("---\n", 1)[-1]
                try:
                    base = C.parse(body)
                except C.ContextFormatError:
                    base = C.Context()
        through = groups[max(span_idx)][-1].get("id")

        def change(cur: C.Context) -> C.Context:
            merged = C.merge(cur if cfile.exists() else base, new_ctx)
            if session:
                merged.state["session"] = session
            if through:
                merged.state["through"] = through
            return merged

        rep.context = change(existing) if opts.dry_run else cfile.update(change)
    else:
        rep.summarizer = "none (already summarized in CONTEXT.md)"
        rep.context = existing
    summary_ctx = C.Context(task=rep.context.task, sections={k: list(v) for k, v in rep.context.sections.items()
                                                             if k in TEMPLATE_SECTIONS})
    ts = now_iso()
    meta = {"summarizer": rep.summarizer, "groups_summarized": len(span_idx) + len(covered), "through": through}
    if rep.degraded:
        meta["degraded"] = rep.degraded
    summ = fit_summary(summary_ctx, session, ts, meta, tok, opts.target_tokens)
    out: list[dict] = []
    placed = False
    drop = set(span_idx) | set(covered) | {i for i, g in enumerate(groups) if is_compaction_summary(g)}
    for i, g in enumerate(groups):
        if i in drop:
            if not placed:
                out.append(summ)
                placed = True
            continue
        out.extend(g)
    if not placed:
        out.insert(0, summ)
    rep.acted = True
    rep.groups_summarized = len(span_idx)
    rep.records = out
    rep.tokens_after = sum(r.get("tokens") or 0 for r in out)
    return _finish(rep, home, started, opts)


TRIM_ORDER = (("Facts", 3), ("Pending", 3), ("Decisions", 3), ("Goals", 3), ("Constraints", 3), ("Errors", 5))


def fit_summary(ctx: C.Context, session, ts: str, meta: dict, tok, target: int) -> dict:
    """The summary record, trimmed toward `target` tokens: the oldest bullets go first, from
    the least to the most vital section (Errors last, never below 5); the Files trail and the
    Task are never cut."""
    from ..backends.tokenizers import count_records

    for name, floor in TRIM_ORDER + ((None, 0),):
        while True:
            summ = summary_record(ctx, session, ts, meta)
            n = count_records(tok, [summ])[0]
            if n <= target or name is None or len(ctx.sections.get(name, [])) <= floor:
                break
            ctx.sections[name] = ctx.sections[name][1:]
        if n <= target:
            break
    summ["tokens"], summ["tokenizer"] = n, tok.name
    return summ


def _finish(rep: Report, home, started: float, opts: Options) -> Report:
    rep.duration_s = time.monotonic() - started
    if not opts.dry_run:
        logs.append(home, "compaction", rep.event())
    return rep

