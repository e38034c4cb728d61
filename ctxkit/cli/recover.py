"""ctx recover: bring dropped chunks back, exactly, by id or by query."""
from __future__ import annotations

import click

from .completion import complete_chunk, complete_session

from ..core.splice import splice_stream, stubs
from ..errors import CtxError, InputError, UsageProblem
from ..io.adapters import open_records
from ..io.jsonl import Source, Writer, dumps
from ..store.atomic import atomic_writer, locked
from ..store.backend import ColdStore, open_store
from ..store.cold import check_id
from ..services.cold import log_recovery, resolve_chunk, search_cold
from .common import Fraction, OldQueryShort, note, embedder_name, get_home, home_option, session_prefix


@click.command("recover", cls=OldQueryShort)
@click.option("--chunk-id", metavar="ID", shell_complete=complete_chunk, help="The chunk to bring back (from a stub or ctx drops).")
@click.option("--session", metavar="ID", shell_complete=complete_session, callback=session_prefix, help="The chunk's session, when the id is in several.")
@click.option("--query", metavar="TEXT", help="Bring back the chunks that best match TEXT.")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="With --query: how many.")
@click.option("--min-score", type=Fraction(0, 1), default=0.0, show_default=True,
              help="With --query: the least match score to recover.")
@click.option("--embedder", type=click.Choice(["minilm", "keyword"]), help="With --query (config: embedder).")
@click.option("--into", "into", metavar="FILE", type=click.Path(dir_okay=False),
              help="Replace the chunk's stub in FILE (atomically, under a lock) instead of printing.")
@home_option
def recover(chunk_id, session, query, limit, min_score, embedder, into):
    """Print a dropped chunk's original records exactly, or splice them back into a file.

    A chunk already spliced back into FILE is left as it is, and stderr says so (exit 0).

    \b
    Examples:
      ctx recover --chunk-id c-0005 > back.jsonl
      ctx recover --chunk-id c-0005 --into kept.jsonl
      ctx recover --query "dialyzer setup" --limit 3 --min-score 0.4
    """
    if bool(chunk_id) == bool(query):
        raise UsageProblem("give exactly one of --chunk-id or --query")
    home = get_home()
    store = open_store(home).cold
    if session:
        check_id(session, "session id")
    picked: list[tuple[dict, float | None]] = []
    if chunk_id:
        check_id(chunk_id, "chunk id")
        hit = resolve_chunk(store, chunk_id, session)
        picked.append((store.load(hit["path"]), None))
        method = "id"
    else:
        name = embedder_name(home, embedder)
        from .progress import progress_bar, spinner

        for row in search_cold(home, store, query, limit, session, name, progress_bar, spinner):
            if row["score"] >= min_score:
                picked.append((store.load(store.find(row["chunk"], row["session"])[0]["path"]), row["score"]))
        if not picked:
            raise CtxError(f"nothing in cold storage matches {query!r} with score >= {min_score}")
        method = "query"
    if into:
        _splice_into(home, into, picked, method, query)
        return
    out = Writer()
    for entry, score in picked:
        out.write_all(entry["records"])
        _logged(log_recovery(home, entry, method, query, score))


def _logged(failed: str | None) -> None:
    if failed:
        note(f"ctx: warning: the recovery is not logged ({failed})")


def _splice_into(home, path: str, picked, method: str, query) -> None:
    import hashlib
    import os

    # the lock lives in the home, not beside the user's file (no F.lock left in their folder)
    # a link is written through: its target gets the spliced records (atomically), the link stays
    real = os.path.realpath(path)
    lock = os.path.join(home.path, "locks", hashlib.sha256(real.encode("utf-8", "surrogatepass")).hexdigest()[:32])
    with locked(lock):
        have: set = set()

        def noting(recs):   # the ids already in FILE, gathered as it streams
            for r in recs:
                have.add((r.get("session"), r.get("id")))
                yield r

        present = set(stubs(noting(open_records(Source(path), "ctx"))))
        back, todo = [], []
        for entry, score in picked:
            key = (entry["chunk_id"], entry["session_id"])
            if key in present:
                todo.append((entry, score))
                continue
            ids = {(r.get("session"), r.get("id")) for r in entry["records"]}
            if ids and ids <= have:  # recovered before: its records are there, its stub is gone
                back.append(entry)
                continue
            raise CtxError(f"{path}: no stub for chunk {entry['chunk_id']} of session {entry['session_id']}; "
                           f"nothing changed", hint="print the records instead: leave out --into")
        del have
        if todo:   # FILE read again as it streams, the chunks spliced in, written beside it and renamed
            chunks = [(e["chunk_id"], e["session_id"], e["records"]) for e, _ in todo]
            with atomic_writer(real) as write:
                for r in splice_stream(open_records(Source(path), "ctx"), chunks):
                    write(dumps(r) + "\n")
    for entry in back:
        note(f"ctx: chunk {entry['chunk_id']} is already back in {path} (recovered before); nothing to do")
    for entry, score in todo:
        _logged(log_recovery(home, entry, method, query, score, into=path))
        note(f"ctx: recovered {entry['chunk_id']} ({len(entry['records'])} records) into {path}")
