"""ctx dedupe: the duplication map across workspace files (seed 001 §1)."""
from __future__ import annotations

import glob

import click

from ..core.dedupe import duplicates
from ..errors import InputError
from .common import Fraction, note, embedder_name, emit_listing, get_home, get_workspace, home_option, jq_option, output_options, workspace_option
from .count import resolve_tokenizer

DEFAULT_FILES = ("SOUL.md", "AGENTS.md", "MEMORY.md", "TOOLS.md", "USER.md")


@click.command("dedupe")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--threshold", type=Fraction(0, 1),
              help="Least similarity for a near duplicate (config: dedupe_threshold, 0.6).")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]),
              help="minilm finds paraphrases (cosine); keyword only copies (word-shingle overlap). Config: embedder.")
@jq_option
@output_options
@workspace_option
@home_option
def dedupe(files, threshold, embedder, jq_expr, table, as_json, table_fmt):
    """Exact and near-duplicate passages across files, with the tokens the copies waste per turn.

    One row per passage said more than once: `a` is its first place (keep it), `b` the
    next, `places` every place, `copies` how many extra. Only the copies count as waste,
    so the total never exceeds what the files hold.

    Without FILES: SOUL.md, AGENTS.md, MEMORY.md, TOOLS.md and USER.md in the workspace,
    MEMORY.md from where memory is kept (the workspace, or the shared store's project).

    \b
    Examples:
      ctx dedupe ~/agent/*.md -t
      ctx dedupe --jq 'select(.kind=="exact") | .b'
    """
    texts = []
    home = get_home()
    if not files:
        from ..sources.memory import workspace_texts
        from ..store.backend import memory_store

        texts = workspace_texts(get_workspace(), DEFAULT_FILES, memory_store(home, get_workspace()))
    limit = int(home.config.get("max_record_mb") * (1 << 20))
    for f in files:
        for p in sorted(glob.glob(f)) or [f]:
            try:
                with open(p, "rb") as fh:   # compared whole: a file past max_record_mb is refused, not held
                    raw = fh.read(limit + 1)
            except FileNotFoundError:
                raise InputError(p, None, "no such file") from None
            except IsADirectoryError:
                raise InputError(p, None, "is a directory, not a file") from None
            if len(raw) > limit:
                raise InputError(p, None, f"over max_record_mb ({limit / (1 << 20):g} MB): dedupe compares whole files",
                                 hint="raise max_record_mb in config.yaml")
            try:
                texts.append((p, raw.decode("utf-8")))
            except UnicodeDecodeError as e:
                raise InputError(p, raw.count(b"\n", 0, e.start) + 1, "invalid UTF-8 (is this a text file?)") from None
    tok = resolve_tokenizer(None, None)
    threshold = home.config.get("dedupe_threshold", threshold)
    name = embedder_name(home, embedder)
    similarity = None
    if name == "minilm":
        from ..services.embedding import cosine_matrix

        similarity = lambda ts: cosine_matrix(home, ts)  # noqa: E731
    rows = duplicates(texts, threshold, similarity)
    for r in rows:  # what the copies cost every turn (the first place is kept)
        r["tokens_wasted_per_turn"] = sum(tok.count(t) if sim >= 1.0 else int(tok.count(t) * sim)
                                          for t, sim in r.pop("copy_texts"))
    emit_listing(rows, table=table, as_json=as_json, table_fmt=table_fmt, jq_expr=jq_expr,
                 columns=["a", "b", "copies", "kind", "similarity", "tokens_wasted_per_turn", "text"]
                 if rows else None)
    if rows:
        total = sum(r["tokens_wasted_per_turn"] for r in rows)
        copies = sum(r["copies"] for r in rows)
        note(f"ctx: {len(rows)} passage(s) said more than once ({copies} extra cop{'ies' if copies != 1 else 'y'}), "
             f"about {total} tokens wasted per turn")

