"""The model summarizers' prose: where the work stands, what comes next and each step, rewritten.

The extractive summary is written first, within its budget (core.writeup). With `--summarizer
llama|openai`, the model then gets each of its Current work, Next step and Step sections, one
short prompt per section with exactly that section's bullets, and may rewrite it into a few
sentences. Each answer is checked (core.prose): a sentence that adds anything, a status it
flips, a path, commit hash, work item or error it drops, or prose longer than the bullets, and
that section keeps its bullets. Headings, order and budget never depend on the model: a model
that fails or runs out of time leaves the sections as they were.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core import context_md as C
from ..core.prose import MAX_INPUT_CHARS, PROSE_PROMPT, check, section_input

NOT_SHOWN = re.compile(r"^\(\d+ more not shown\b")


@dataclass
class ProseRun:
    rewritten: list = field(default_factory=list)   # section names now in prose
    fell_back: list = field(default_factory=list)   # (section name, reason)
    error: str | None = None                        # why the model stopped early, if it did
    completion_tokens: int = 0
    asked: list = field(default_factory=list)       # the sections put to the model, in order

    def note(self, model: str) -> str:
        """One line for stderr: how many sections fell back, and why."""
        total = len(self.rewritten) + len(self.fell_back)
        line = f"{model} rewrote {len(self.rewritten)} of {total} sections as prose"
        if self.fell_back:
            why = "; ".join(f"{n.split(':')[0]}: {r}" for n, r in self.fell_back[:4])
            more = f"; {len(self.fell_back) - 4} more" if len(self.fell_back) > 4 else ""
            line += f"; {len(self.fell_back)} kept their bullets ({why}{more})"
        if self.error:
            line += f"; the model stopped: {self.error[:200]}"
        return line


def prose_sections(ctx: C.Context) -> list[str]:
    return [n for n in ctx.sections if n in ("Current work", "Next step") or C.STEP.match(n)]


def rewrite(ctx: C.Context, model, timeout_s: float, count) -> ProseRun:
    """Rewrite ctx's Current work, Next step and Step sections in place where the model's prose
    passes the check and costs no more tokens than the bullets it replaces."""
    from ..store import redaction

    run = ProseRun()
    facts = "\n".join(x for x in (ctx.task, ctx.latest) if x)   # the request
    jobs = []   # (section, bullets, trailing notes, the bullets' tokens, prompt)
    for name in prose_sections(ctx):
        items = ctx.sections[name]
        bullets = [i.text for i in items if not NOT_SHOWN.match(i.text)]
        if not bullets:
            continue
        user = redaction.text(section_input(name, bullets))
        if len(user) > MAX_INPUT_CHARS:
            run.fell_back.append((name, "too long for one prompt"))
            continue
        cost = sum(count(i.render() + "\n") for i in items if not NOT_SHOWN.match(i.text))
        jobs.append((name, bullets, [i for i in items if NOT_SHOWN.match(i.text)], cost,
                     (PROSE_PROMPT, user, min(400, cost + 48))))
    if not jobs:
        return run
    run.asked = [j[0] for j in jobs]
    if timeout_s <= 0:
        run.error = "no time left within summary_timeout_s"
        answers = None
    else:
        answers = model.answer_each([j[-1] for j in jobs], timeout_s)
        run.error = answers.error
        run.completion_tokens = answers.completion_tokens
    for k, (name, bullets, notes, cost, _) in enumerate(jobs):
        text = answers.texts[k] if answers is not None else None
        if text is None:
            run.fell_back.append((name, "no answer"))
            continue
        got = check(text, bullets, facts + "\n" + name)   # the model saw the heading too
        if got.text is None:
            run.fell_back.append((name, got.reason))
            continue
        item = C.Item(text=got.text)
        if count(item.render() + "\n") > cost:
            run.fell_back.append((name, "longer than its bullets"))
            continue
        ctx.sections[name] = [item] + notes
        run.rewritten.append(name)
    return run
