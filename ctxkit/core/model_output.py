"""Turn a model's summary into a verified Context (pure).

Accepts JSON ({task, decisions, facts, pending, errors}) or the markdown template. Thinking
and chat-template tokens are stripped, meta-commentary is rejected, and every bullet whose
paths, numbers or identifiers do not occur in the source span is discarded and counted.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .context_md import Context, Item
from .hygiene import clean, is_meta, unsupported

PROMPT = """Rewrite the notes below as a JSON object with two lists: decisions and facts.
Rules:
1. Each item is one short sentence stating a decision (with its reason) or a fact about the code
2. Copy file paths, names, numbers and commands EXACTLY as written in the notes
3. Use only what the notes say; skip anything unclear
4. No "I", no "Let me", no commentary
5. ONLY output the JSON object"""

SCHEMA = {
    "type": "object",
    "properties": {
        "decisions": {"type": "array", "items": {"type": "string"}, "maxItems": 6},
        "facts": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    },
    "required": ["decisions", "facts"],
}
SECTIONS = {"decisions": "Decisions", "facts": "Facts", "pending": "Pending", "errors": "Errors"}


@dataclass
class Verified:
    ctx: Context
    kept: int = 0
    discarded: int = 0
    reasons: list = field(default_factory=list)


def parse_output(text: str) -> dict:
    """The model's answer as {task, decisions, ...}; JSON first, the markdown template second."""
    text = clean(text)
    m = re.search(r"\{.*\}", text, re.S)
    if m:
        try:
            obj = json.loads(m.group(0))
            if isinstance(obj, dict):
                return obj
        except (ValueError, RecursionError):
            pass
    out: dict = {"task": "", **{k: [] for k in SECTIONS}}
    current = None
    names = {v.lower(): k for k, v in SECTIONS.items()}
    for line in text.split("\n"):
        h = re.match(r"^#+\s*(\w+)", line)
        if h:
            current = "task" if h.group(1).lower() == "task" else names.get(h.group(1).lower())
            continue
        item = re.sub(r"^\s*[-*]\s*(\[[ xX]\]\s*)?", "", line).strip()
        if not item or current is None:
            continue
        if current == "task":
            out["task"] = (out["task"] + " " + item).strip()
        else:
            out[current].append(item)
    return out


def verify(obj: dict, source: str) -> Verified:
    ctx = Context()
    v = Verified(ctx)

    def ok(text: str) -> bool:
        if not text or len(text) < 3:
            return False
        if is_meta(text) or re.search(r"</?think|<\|", text, re.I):
            v.discarded += 1
            v.reasons.append(("meta", text[:80]))
            return False
        missing = unsupported(text, source)
        if missing:
            v.discarded += 1
            v.reasons.append(("unsupported", text[:80], missing[:3]))
            return False
        v.kept += 1
        return True

    task = obj.get("task")
    if isinstance(task, str):
        t = " ".join(clean(task).split())
        if ok(t):
            ctx.task = t[:200]
    for key, name in SECTIONS.items():
        vals = obj.get(key)
        if not isinstance(vals, list):
            continue
        items = []
        seen = set()
        for x in vals[:10]:
            if not isinstance(x, str):
                continue
            t = " ".join(clean(x).split())[:200]
            if t.lower() in seen:
                continue
            seen.add(t.lower())
            if ok(t):
                items.append(Item(text=t, done=False if name == "Pending" else None))
        ctx.sections[name] = items
    return v
