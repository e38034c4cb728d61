"""ctx stats drops|compaction|recovery|suggest: the tuning workflow (seed 003), built in."""
from __future__ import annotations

from collections import Counter

import click

from ..core.timeutil import parse_since
from ..errors import CtxError, UsageProblem
from ..store import logs
from .common import emit_object, get_home, home_option, report_options

since_option = click.option("--since", metavar="WHEN", help="Only events since a duration ago (7d) or an ISO time.")
json_option = report_options  # -t/--fmt, --json, --jq EXPR [-r]


def _since(since):
    try:
        return parse_since(since) if since else None
    except ValueError as e:
        raise UsageProblem(f"--since: {e}") from None


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return round(v[lo] + (v[hi] - v[lo]) * (k - lo), 3)


def summary(values: list[float]) -> dict:
    return {"n": len(values), "sum": round(sum(values), 3), "mean": round(sum(values) / len(values), 3) if values
            else None, "p50": pct(values, 0.5), "p95": pct(values, 0.95)}


def histogram(values: list[float], bins: int = 10, width: int = 40) -> list[str]:
    """A text histogram of scores in [0, 1]."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    top = max(counts) or 1
    return [f"{i / bins:.1f}-{(i + 1) / bins:.1f} | {'#' * round(c / top * width)} {c}" for i, c in enumerate(counts)]


def _plot(path: str, values: list[float], title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CtxError("--plot needs matplotlib", hint="pip install matplotlib (an optional extra)") from None
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.hist(values, bins=20, range=(0, 1))
    ax.set_title(title)
    fig.savefig(path, dpi=100, bbox_inches="tight")


@click.group("stats")
def stats():
    """What ctx decided, counted: drop reasons, score histograms, token savings, a cutoff to try.

    \b
    Examples:
      ctx stats drops --since 7d
      ctx stats suggest
    """


@stats.command("drops")
@since_option
@json_option
@click.option("--plot", metavar="FILE.png", type=click.Path(dir_okay=False), help="Also draw the score histogram (needs matplotlib).")
@home_option
def drops(since, as_json, plot, jq_expr, table, table_fmt):
    """Drop reasons, the relevance-score histogram, tokens saved.

    \b
    Example:
      ctx stats drops --since 7d
    """
    evs = [logs.drop_event(e) for e in logs.read(get_home(), "drops", _since(since))]
    scores = [e["relevance_score"] for e in evs if isinstance(e.get("relevance_score"), (int, float))]
    d = {"drops": len(evs), "reasons": dict(Counter(e.get("reason") for e in evs)),
         "score": summary(scores), "tokens_saved": summary([e["tokens_freed"] if e["tokens_freed"] is not None else e.get("tokens") or 0
                                  for e in evs])}
    if plot:
        _plot(plot, scores, "relevance score of dropped chunks")

    def human():
        click.echo(f"drops: {d['drops']}")
        for r, n in sorted(d["reasons"].items(), key=lambda x: -x[1]):
            click.echo(f"  {r}: {n}")
        t = d["tokens_saved"]
        click.echo(f"tokens saved: sum {t['sum']:.0f}, mean {t['mean']}, p50 {t['p50']}, p95 {t['p95']}" if evs else
                   "tokens saved: 0")
        click.echo("relevance score at drop:")
        for line in histogram(scores):
            click.echo("  " + line)

    emit_object(d, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt, human=human)


@stats.command("compaction")
@since_option
@json_option
@home_option
def compaction(since, as_json, jq_expr, table, table_fmt):
    """Compaction runs: tokens before/after, savings, summarizers used, degradations.

    \b
    Example:
      ctx stats compaction --json | jq .saved
    """
    evs = [e for e in logs.read(get_home(), "compaction", _since(since)) if "tokens_before" in e]
    acted = [e for e in evs if e.get("event") in ("compaction_triggered", "compaction", "relevance_drop")]
    saved = [max(0, e["tokens_before"] - e.get("tokens_after", e["tokens_before"])) for e in acted]
    d = {"runs": len(evs), "acted": len(acted), "skipped": sum(1 for e in evs if e.get("event") == "compaction_skipped"),
         "events": dict(Counter(e.get("event") for e in evs)), "summarizers": dict(Counter(
             e.get("summarizer") for e in acted if e.get("summarizer"))),
         "degraded": sum(1 for e in evs if e.get("degraded")), "saved": summary(saved)}
    emit_object(d, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt, human=lambda: [
        click.echo(f"{k}: {_text(v)}") for k, v in d.items()])


def _text(v) -> str:
    """A value for people: counts as `a 3, b 1`, no Python reprs."""
    if isinstance(v, dict):
        return ", ".join(f"{k} {_text(x)}" for k, x in v.items() if x is not None) or "none"
    return "none" if v is None else str(v).lower() if isinstance(v, bool) else str(v)


@stats.command("recovery")
@since_option
@json_option
@home_option
def recovery(since, as_json, jq_expr, table, table_fmt):
    """Recoveries: by method, and the scores the recovered chunks had when dropped.

    \b
    Example:
      ctx stats recovery --since 30d
    """
    evs = list(logs.read(get_home(), "recovery", _since(since)))
    scores = [e["relevance_score_at_drop"] for e in evs if isinstance(e.get("relevance_score_at_drop"), (int, float))]
    d = {"recoveries": len(evs), "methods": dict(Counter(e.get("method") for e in evs)),
         "score_at_drop": summary(scores)}

    def human():
        click.echo(f"recoveries: {d['recoveries']}")
        for m, n in sorted(d["methods"].items(), key=lambda x: -x[1]):
            click.echo(f"  {m}: {n}")
        click.echo("score at drop: " + _text(d["score_at_drop"]))
        for line in histogram(scores):
            click.echo("  " + line)

    emit_object(d, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt, human=human)


@stats.command("suggest")
@since_option
@json_option
@home_option
def suggest(since, as_json, jq_expr, table, table_fmt):
    """Propose a relevance_cutoff from the logs: a recovered chunk was dropped wrongly.

    The suggestion is the highest cutoff below every wrongly dropped chunk's score
    (so none of them would have been dropped), kept within the observed drop scores.

    \b
    Example:
      ctx stats suggest
    """
    home = get_home()
    when = _since(since)
    drops_ = [e for e in logs.read(home, "drops", when) if isinstance(e.get("relevance_score"), (int, float))]
    recovered = {(e.get("session_id"), e.get("chunk_id")) for e in logs.read(home, "recovery", when)}
    wrong = [e["relevance_score"] for e in drops_ if (e.get("session_id"), e.get("chunk_id")) in recovered]
    current = home.config.get("relevance_cutoff")
    if not drops_:
        d = {"suggested_cutoff": current, "current_cutoff": current, "drops": 0, "wrong_drops": 0,
             "reason": "no drops logged yet: keep the current cutoff"}
    elif not wrong:
        d = {"suggested_cutoff": current, "current_cutoff": current, "drops": len(drops_), "wrong_drops": 0,
             "reason": "no dropped chunk had to be recovered: the cutoff is not too high"}
    else:
        cut = round(max(0.0, min(wrong) - 0.01), 2)
        d = {"suggested_cutoff": cut, "current_cutoff": current, "drops": len(drops_), "wrong_drops": len(wrong),
             "would_still_drop": sum(1 for e in drops_ if e["relevance_score"] <= cut),
             "reason": f"{len(wrong)} of {len(drops_)} drops were recovered later; the lowest scored "
                       f"{min(wrong):.3f}"}
    emit_object(d, as_json=as_json, jq_expr=jq_expr, table=table, table_fmt=table_fmt, human=lambda: click.echo(
        f"suggested relevance_cutoff: {d['suggested_cutoff']} (now {d['current_cutoff']})\n"
        f"based on {d['drops']} drops and {d['wrong_drops']} recoveries: {d['reason']}"))
