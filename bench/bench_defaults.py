"""How the auto-recover and dedupe defaults were chosen (issue 13: "defaults that fire on a
paraphrase, measured on the corpus").

auto_recover_min_score: 15 questions written by hand as paraphrases of 15 chunks of the
fa812bfe corpus session (few words shared with the chunk). Each question's similarity to its
own chunk (should recover) and to every other chunk of the session (should not) is measured
with the configured MiniLM engine; the table gives recall and false recoveries per threshold.

dedupe threshold: 12 instruction lines with a hand-written paraphrase each (what duplicated
SOUL/AGENTS/MEMORY lines look like) against every other pair; the same table for the
similarity `ctx dedupe` uses.

    cd bench && ../.venv/bin/python run_all.py defaults
"""
from __future__ import annotations

import json
import os
import sys

from _common import CORPUS, ROOT, SMOKE

sys.path.insert(0, str(ROOT))

SESSION = "claude-code_spotter_fa812bfe_session.jsonl"
QUESTIONS = {
    "c-0013": "make every hook endpoint refresh when the session was last seen",
    "c-0025": "the compiler flagged an alias as unused although it is used, so the full module name went inline",
    "c-0031": "what did the strict static analysis report for the registry service",
    "c-0037": "close the first subtask after the whole suite went green, then push",
    "c-0043": "summary of what was built for the first subtask: the ETS-backed process tracking lifecycle",
    "c-0055": "plan for syncing a single conversation on demand instead of all of them",
    "c-0061": "the database migration that adds a unique identity so messages can be upserted",
    "c-0067": "how does the sync job locate the jsonl file for a given session id",
    "c-0073": "generate the resource migrations with the framework's code generator",
    "c-0079": "why a repeated sync doubles the messages: the generated uuid never matches the upsert key",
    "c-0109": "the last subtask: push live activity over pubsub to the dashboard and session pages",
    "c-0121": "add a column to the sessions table saying whether each one is running",
    "c-0127": "show the state in the breadcrumb and ignore the terminal's scroll events",
    "c-0153": "which javascript files reference stylesheets",
    "c-0159": "the last commit lists fewer changed files than expected",
}
OFF_TOPIC = ["how do I bake sourdough bread", "book a flight to Lisbon next Tuesday", "what is the capital of Peru",
             "configure an nginx reverse proxy with ssl", "train a LoRA adapter on a 3B model",
             "python asyncio gather with a timeout", "postgres autovacuum settings for a busy table",
             "kubernetes pod stuck in crashloop backoff", "write a haiku about autumn",
             "rust borrow checker lifetime error in a closure"]
DEDUPE = [
    ("Never push directly to the main branch.", "Do not commit straight onto main; always use a branch."),
    ("Ask before deleting any file in the repository.", "Get confirmation first whenever a file would be removed."),
    ("Run the full test suite before every commit.", "Before committing, make sure all tests have been run."),
    ("Marco prefers concise answers without preamble.", "Keep replies short and skip the introductions for Marco."),
    ("Use pytest, not unittest, for new tests.", "New tests are written with pytest rather than unittest."),
    ("The deploy script lives in scripts/deploy.sh.", "scripts/deploy.sh is where deployment is scripted."),
    ("Answer in English unless Marco writes German.", "Reply in English, switching to German only if Marco does."),
    ("Never fabricate command output or file contents.", "Do not invent the output of commands or what files contain."),
    ("Prefer editing existing files to creating new ones.", "Change the files that exist rather than adding new files."),
    ("Secrets go in the vault, never in the repository.", "Keep credentials in the vault and out of the repo."),
    ("Staging DB is read-only on Fridays.", "On Fridays the staging database cannot be written to."),
    ("Write commit messages in the imperative mood.", "Commit messages use the imperative: 'Add', not 'Added'."),
]


def sweep(pos: list[float], neg: list[float], thresholds) -> list[dict]:
    rows = []
    for t in thresholds:
        tp = sum(p >= t for p in pos)
        fp = sum(n >= t for n in neg)
        rows.append({"threshold": t, "recall": round(tp / len(pos), 3), "false_fires": fp,
                     "false_rate": round(fp / len(neg), 4)})
    return rows


def main() -> None:
    from ctxkit.backends.embedders import get_embedder
    from ctxkit.core.dedupe import jaccard, shingles
    from ctxkit.core.groups import iter_groups
    from ctxkit.core.score import chunk_text
    from ctxkit.io.adapters import open_records
    from ctxkit.io.jsonl import Source
    import numpy as np

    recs = list(open_records(Source(str(CORPUS / SESSION))))
    chunks = {g[0].get("group"): chunk_text(g) for g in iter_groups(recs)
              if g[0].get("group") and any(r.get("kind") == "message" for r in g)}
    if SMOKE:  # the asked-about chunks and a few others: enough to run every line once
        chunks = {k: v for i, (k, v) in enumerate(chunks.items()) if k in QUESTIONS or i < 20}
    emb = get_embedder("minilm")
    ids = list(chunks)
    m = np.asarray(emb.embed([chunks[i] for i in ids]))
    pos, neg = [], []
    for cid, q in QUESTIONS.items():
        sims = m @ np.asarray(emb.embed([q])[0])
        for i, s in zip(ids, sims):
            (pos if i == cid else neg).append(float(s))
    for row in sweep(pos, neg, [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6]):
        print(json.dumps({"bench": "defaults", "knob": "auto_recover_min_score (every chunk over it)", **row}))
    # the rule ctx uses: only the best-matching cold chunk, and only when over the floor
    tops = []
    for cid, q in QUESTIONS.items():
        sims = m @ np.asarray(emb.embed([q])[0])
        k = int(np.argmax(sims))
        tops.append((ids[k] == cid, float(sims[k])))
    off = [float(np.max(m @ np.asarray(emb.embed([q])[0]))) for q in OFF_TOPIC]
    for t in (0.3, 0.35, 0.4, 0.45, 0.5):
        print(json.dumps({"bench": "defaults", "knob": "auto_recover_min_score (best match only)", "threshold": t,
                          "recall": round(sum(ok and s >= t for ok, s in tops) / len(tops), 3),
                          "wrong_chunk": sum((not ok) and s >= t for ok, s in tops),
                          "off_topic_fires": sum(s >= t for s in off), "off_topic_queries": len(off)}))
    a = [x for x, _ in DEDUPE]
    b = [y for _, y in DEDUPE]
    ea, eb = np.asarray(emb.embed(a)), np.asarray(emb.embed(b))
    cos = ea @ eb.T
    pos = [float(cos[i, i]) for i in range(len(a))]
    neg = [float(cos[i, j]) for i in range(len(a)) for j in range(len(b)) if i != j]
    neg += [float(x) for i, row in enumerate(ea @ ea.T) for j, x in enumerate(row) if i < j]
    for row in sweep(pos, neg, [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8]):
        print(json.dumps({"bench": "defaults", "knob": "dedupe (minilm cosine)", **row}))
    jpos = [jaccard(shingles(x), shingles(y)) for x, y in DEDUPE]
    jneg = [jaccard(shingles(a[i]), shingles(b[j])) for i in range(len(a)) for j in range(len(b)) if i != j]
    for row in sweep(jpos, jneg, [0.1, 0.2, 0.3, 0.6]):
        print(json.dumps({"bench": "defaults", "knob": "dedupe (3-word shingle jaccard)", **row}))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
