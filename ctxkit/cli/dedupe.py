"""ctx dedupe: the duplication map across workspace files (seed 001 §1)."""
from __future__ import annotations

import glob
import os

import click

from ..core.dedupe import duplicates
from ..errors import InputError
from .common import note, emit_listing, get_home, get_workspace, home_option, jq_option, output_options, workspace_option
from .count import resolve_tokenizer

DEFAULT_FILES = ("SOUL.md", "AGENTS.md", "MEMORY.md", "TOOLS.md", "USER.md")


@click.command("dedupe")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--threshold", type=click.FloatRange(0, 1),
              help="Least similarity for a near duplicate (config: dedupe_threshold, 0.6).")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]),
              help="minilm finds paraphrases (cosine); keyword only copies (word-shingle overlap). Config: embedder.")
@jq_option
@output_options
@workspace_option
@home_option
def dedupe(files, threshold, embedder, jq_expr, table, as_json, table_fmt):
    """Exact and near-duplicate passages across files, with the tokens each wastes per turn.

    Without FILES: SOUL.md, AGENTS.md, MEMORY.md, TOOLS.md and USER.md in the workspace.

    \b
    Examples:
      ctx dedupe ~/agent/*.md -t
      ctx dedupe --jq 'select(.kind=="exact") | .b'
    """
    if not files:
        ws = get_workspace()
        files = [p for p in (os.path.join(ws, f) for f in DEFAULT_FILES) if os.path.exists(p)]
    texts = []
    for f in files:
        for p in sorted(glob.glob(f)) or [f]:
            try:
                with open(p, encoding="utf-8") as fh:
                    texts.append((p, fh.read()))
            except FileNotFoundError:
                raise InputError(p, None, "no such file") from None
    tok = resolve_tokenizer(None, None)
    home = get_home()
    threshold = home.config.get("dedupe_threshold", threshold)
    name = home.config.get("embedder", embedder)
    similarity = None
    if name == "minilm":
        from ..services.embedding import cosine_matrix

        similarity = lambda ts: cosine_matrix(home, ts)  # noqa: E731
    rows = duplicates(texts, threshold, similarity)
    for r in rows:
        r["tokens_wasted_per_turn"] = tok.count(r["text"]) if r["kind"] == "exact" else \
            int(tok.count(r["text"]) * r["similarity"])
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 columns=["a", "b", "kind", "similarity", "tokens_wasted_per_turn", "text"] if rows else None)
    if rows:
        total = sum(r["tokens_wasted_per_turn"] for r in rows)
        note(f"ctx: {len(rows)} duplicate passage(s), about {total} tokens wasted per turn")
