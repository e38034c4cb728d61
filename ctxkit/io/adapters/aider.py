"""aider .aider.chat.history.md -> ctx records.

`# aider chat started at <datetime>` opens a session; `#### ` lines are user
input; `> ` lines are aider's own output (kept as events); everything else is
the assistant's reply.
"""
from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Iterator

from ... import records as R
from ...core.requests import clean_request
from ..jsonl import Source

FORMAT = "aider"
START = re.compile(r"^# aider chat started at (.+?)\s*$")
TOKENS = re.compile(r"Tokens:\s*([\d.,]+)(k?)\s+sent.*?([\d.,]+)(k?)\s+received", re.I)


def sniff_text(first_line: str) -> bool:
    return bool(START.match(first_line.strip()))


def _iso(text: str) -> str | None:
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), fmt).isoformat() + "Z"
        except ValueError:
            pass
    return None


def _num(n: str, k: str) -> int:
    v = float(n.replace(",", ""))
    return int(v * 1000) if k else int(v)


SR_START = re.compile(r"^<{5,9} SEARCH\s*$")
APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.+?)\s*$")
BEFORE_EDITS = re.compile(r"^Committing .+ before applying edits\.?\s*$")
RUNNING = re.compile(r"^Running (.+?)\s*$")
RUN_CMD = re.compile(r"^/(run|test)\s+(.+)$", re.S)
NO_MATCH = re.compile(r"^#{1,3} SearchReplaceNoExactMatch\b")     # aider's own report of a block that did not
NO_MATCH_END = re.compile(r"^The SEARCH section must exactly match")   # match, unquoted, up to its closing rule


def edit_paths(text: str) -> list[str]:
    """The file named before each SEARCH/REPLACE block (the line above, skipping a fence)."""
    lines = text.split("\n")
    out = []
    for i, ln in enumerate(lines):
        if SR_START.match(ln.strip()):
            j = i - 1
            while j >= 0 and lines[j].strip().startswith("```"):
                j -= 1
            cand = lines[j].strip().strip("`*") if j >= 0 else ""
            if re.fullmatch(r"[\w.~:/\\@+-]+", cand) and re.search(r"[./\\]", cand):
                out.append(cand)
    return out


def _call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def _same_path(a: str, b: str) -> bool:
    return a.replace("\\", "/").strip("./") == b.replace("\\", "/").strip("./")


def parse(source: Source, **_: object) -> Iterator[dict]:
    """Every action aider recorded becomes a tool call with its result: SEARCH/REPLACE edits
    (answered by `> Applied edit to X`), commits (`> Commit abc1234 msg`) and runs (`/run`,
    `> Running …`, with the output that follows). The raw text stays in `content`."""
    session, ts, n = "aider", None, 0
    kind, buf, start_line = None, [], 0
    in_fence = False
    no_match = False                # inside aider's unquoted report of a SEARCH block that did not match
    turn: dict | None = None        # the assistant record whose edits may still be applied
    run_cmd: str | None = None      # a /run typed by the user, waiting for its output

    def src():
        return {"format": FORMAT, "file": source.name, "line": start_line}

    def close_turn():
        nonlocal turn
        if turn is not None:
            yield turn
        turn = None

    def output(text: str, rid: str):
        """`> ` lines: answer the turn's edits, add commits and runs, keep the rest as an event."""
        nonlocal turn, run_cmd
        results, rest = [], []
        lines = text.split("\n")
        if run_cmd is not None:  # the user's /run: this whole block is its output
            turn = R.make("message", id=f"{rid}-run", session=session, ts=ts, role="assistant", content="",
                          source=src(), flags=["synthesized"], tool_calls=[_call(f"{rid}-run", "shell", command=run_cmd)])
            results.append(R.make("message", id=f"{rid}-out", session=session, ts=ts, role="tool",
                                  tool_call_id=f"{rid}-run", name="shell", content=text, source=src()))
            run_cmd = None
            lines = []
        k = 0
        i = 0
        while i < len(lines):
            ln = lines[i]
            k += 1
            m_apply, m_commit, m_run = APPLIED.match(ln), COMMIT.match(ln), RUNNING.match(ln)
            if m_apply or m_commit or m_run:
                if turn is None:
                    turn = R.make("message", id=f"{rid}-actions", session=session, ts=ts, role="assistant",
                                  content="", source=src(), flags=["synthesized"], tool_calls=[])
                calls = turn.setdefault("tool_calls", [])
            if m_apply:
                path = m_apply.group(1)
                answered = {r["tool_call_id"] for r in results}
                call = next((c for c in calls if json.loads(c["function"]["arguments"]).get("path") is not None
                             and _same_path(json.loads(c["function"]["arguments"])["path"], path)
                             and c["id"] not in answered), None)
                if call is None:
                    call = _call(f"{rid}-edit-{k}", "edit", path=path)
                    calls.append(call)
                results.append(R.make("message", id=f"{rid}-r{k}", session=session, ts=ts, role="tool",
                                      tool_call_id=call["id"], name="edit", content=ln, source=src()))
            elif m_commit:
                cid = f"{rid}-commit-{k}"
                dirty = i > 0 and BEFORE_EDITS.match(lines[i - 1].strip())    # the user's own changes, committed first
                calls.append(_call(cid, "aider_commit", hash=m_commit.group(1), message=m_commit.group(2),
                                   **({"before_edits": True} if dirty else {})))
                results.append(R.make("message", id=f"{rid}-r{k}", session=session, ts=ts, role="tool",
                                      tool_call_id=cid, name="aider_commit", content=ln, source=src()))
            elif m_run:
                cid = f"{rid}-run-{k}"
                body = []
                while i + 1 < len(lines) and not (APPLIED.match(lines[i + 1]) or COMMIT.match(lines[i + 1])
                                                   or RUNNING.match(lines[i + 1])):
                    i += 1
                    body.append(lines[i])
                calls.append(_call(cid, "shell", command=m_run.group(1)))
                results.append(R.make("message", id=f"{rid}-r{k}", session=session, ts=ts, role="tool",
                                      tool_call_id=cid, name="shell", content="\n".join(body).strip(), source=src()))
            else:
                rest.append(ln)
            i += 1
        if results:
            yield from close_turn()
            yield from results
        rest_text = "\n".join(rest).strip()
        if rest_text:
            m = TOKENS.search(rest_text)
            usage = {"input_tokens": _num(m.group(1), m.group(2)),
                     "output_tokens": _num(m.group(3), m.group(4))} if m else None
            yield R.make("event", id=rid, session=session, ts=ts, role="system", content=rest_text,
                         source=src(), flags=["tool_output"] + (["usage"] if usage else []), usage=usage)

    def emit():
        nonlocal kind, buf, n, turn, run_cmd
        text = "\n".join(buf).strip("\n")
        if kind and text.strip():
            n += 1
            rid = f"{session}-{n:05d}"
            if kind == "user":
                yield from close_turn()
                m = RUN_CMD.match(text.strip())
                run_cmd = m.group(2).strip() if m else None
                yield R.make("message", id=rid, session=session, ts=ts, role="user", content=text, source=src(),
                             flags=None if clean_request(text) else ["meta"])
            elif kind == "assistant":
                yield from close_turn()
                calls = [_call(f"{rid}-edit-{k}", "edit", path=p) for k, p in enumerate(edit_paths(text), 1)]
                turn = R.make("message", id=rid, session=session, ts=ts, role="assistant", content=text,
                              source=src(), tool_calls=calls)
            else:
                yield from output(text, rid)
        kind, buf = None, []

    for lineno, raw in enumerate(source.lines(), 1):
        line = raw.rstrip("\n")
        m = START.match(line)
        if m:
            yield from emit()
            yield from close_turn()
            run_cmd, no_match = None, False
            ts = _iso(m.group(1))
            session = "aider-" + re.sub(r"[^0-9A-Za-z]+", "", m.group(1))[:14]
            continue
        if no_match or NO_MATCH.match(line) and not (kind == "assistant" and in_fence):
            this, no_match = "output", not NO_MATCH_END.match(line)    # aider's words, not the model's
        elif kind == "assistant" and in_fence:
            this = "assistant"
        elif line.startswith("#### "):
            this = "user"
            line = line[5:]
        elif line.startswith("> ") or line.rstrip() == ">":
            this = "output"
            line = line[2:] if line.startswith("> ") else line[1:]
        elif not line.strip() and kind in ("user", "output"):
            continue
        else:
            this = "assistant"
        if this != kind:
            yield from emit()
            kind, start_line, in_fence = this, lineno, False
        if this == "assistant" and line.lstrip().startswith("```"):
            in_fence = not in_fence
        buf.append(line.rstrip() if this != "assistant" else line)
    yield from emit()
    yield from close_turn()
