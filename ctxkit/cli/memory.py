"""ctx memory search: semantic search over MEMORY.md and observations."""
from __future__ import annotations

import shlex

import click

from ..sources.memory import search
from ..store import logs
from .common import Fraction, embedder_name, emit_listing, get_home, get_workspace, home_option, jq_option, output_options, workspace_option
from .count import resolve_tokenizer


def memory_search(query: str, k: int, min_score: float, embedder: str | None, log: bool = True,
                  include_cold: bool = False):
    from .score import make_embedder

    from ..store.backend import memory_store

    home = get_home()
    name = embedder_name(home, embedder)
    mem = memory_store(home, get_workspace())
    emb = make_embedder(home, name, 0)
    hits, total = search(mem, query, k, min_score, emb)
    if include_cold:
        from ..store.backend import open_store
        from ..services.cold import search_cold

        cold = [{"snippet": r["gist"], "source": f"cold:{r['session']}/{r['chunk']}", "score": r["score"],
                 "chunk_id": r["chunk"], "session_id": r["session"],
                 "recover": f"ctx recover --chunk-id {shlex.quote(r['chunk'])} --session {shlex.quote(r['session'])}"}
                for r in search_cold(home, open_store(home).cold, query, k, None, name)
                if r["score"] >= min_score and r["score"] > 0]
        total += len(cold)
        hits = sorted(hits + cold, key=lambda h: -h["score"])[:k]
    if log:
        from ..sources.memory import snippets
        from ..store.countcache import CountCache

        counts = CountCache(home, resolve_tokenizer(None, None))  # unchanged snippets: no tokenizer load
        all_tokens = sum(counts.count(s["snippet"]) for s in snippets(mem))
        hit_tokens = sum(counts.count(h["snippet"]) for h in hits)
        try:
            counts.save()
        except OSError:
            pass  # a cache: counted again next time
        logs.append(home, "curation", {"event": "memory_search", "query": query, "hits_found": len(hits),
                                       "total_hits_before_curation": total,
                                       "token_savings": all_tokens - hit_tokens, "embedder": name})
    return hits


@click.group("memory")
def memory():
    """Long-term memory: MEMORY.md bullets and observations/*.md, retrieved on demand.

    On the embedded store they are files in the workspace; on a shared PostgreSQL store
    (CTX_STORE_URL) they are the project's rows, shared by every machine of the fleet.

    \b
    Example:
      ctx memory search "LoRA training" -n 5
    """


@memory.command("search")
@click.argument("query")
@click.option("-n", "--limit", "--k", "k", type=click.IntRange(min=1), default=5, show_default=True, metavar="N",
              help="How many snippets (--k is the old name).")
@click.option("--min-score", type=Fraction(0, 1), default=0.0, show_default=True, help="Least score.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]), help="Config: embedder.")
@click.option("--include-cold", is_flag=True, help="Also search dropped chunks in cold storage (source cold:SESSION/CHUNK).")
@jq_option
@output_options
@workspace_option
@home_option
def search_cmd(query, k, min_score, embedder, include_cold, jq_expr, table, as_json, table_fmt):
    """Snippets relevant to QUERY with their source file:line and score.

    \b
    Examples:
      ctx memory search "LoRA training" -n 5 -t
      ctx memory search "deploy" --embedder keyword --jq .snippet -r
      ctx memory search "refresh token" --include-cold --jq .recover -r
    """
    hits = memory_search(query, k, min_score, embedder, include_cold=include_cold)
    emit_listing(hits, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 columns=["score", "chunk_id", "snippet", "source", "session_id"])
