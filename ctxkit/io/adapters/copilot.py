"""GitHub Copilot CLI session events (`~/.copilot/session-state/<id>/events.jsonl`) -> ctx records.

Every line is one event `{type, data, id, timestamp, parentId}` (github/copilot-sdk,
nodejs/src/generated/session-events.ts). Read: `user.message` (its `transformedContent`, what
the model saw: the prompt in `<current_datetime>` / `<system_reminder>` wrappers, which import
marks as the client's), `assistant.message` (text, `reasoningText`, `toolRequests`),
`tool.execution_complete` (the result the model got, or the error), `system.message`,
`system.notification`, `session.compaction_complete` (Copilot's own summary), and the session's
cwd, branch and model. Events of a subagent (`agentId`) become the session
`SESSION.agent-AGENT`. Hooks, permissions, turn markers and the rest are events with --keep-meta.
"""
from __future__ import annotations

import re
from typing import Iterator

from ... import records as R
from ...errors import InputError
from ..jsonl import Source, iter_json_lines
from .common import Place, Turn, call, text_of, ts_of, usage

FORMAT = "copilot-cli"
EVENT_TYPE = re.compile(r"^[a-z_]+(?:\.[a-z_]+)+$")
KNOWN_PREFIXES = ("session.", "user.", "assistant.", "tool.", "hook.", "system.", "permission.", "subagent.",
                  "skill.", "abort", "model.", "mcp.", "command.", "pending_messages.", "elicitation.",
                  "user_input.", "sampling.", "external_tool.", "exit_plan_mode.", "auto_mode_switch.")


def sniff(obj: object) -> bool:
    """An event line: a dotted `type` of Copilot's families and a `data` object."""
    return isinstance(obj, dict) and isinstance(obj.get("type"), str) and EVENT_TYPE.match(obj["type"]) is not None \
        and obj["type"].startswith(KNOWN_PREFIXES) and isinstance(obj.get("data"), dict) and "role" not in obj


def session_of(path: str, fallback: str) -> str:
    """The session a file is of before its `session.start` says: `session-state/<id>/events.jsonl`."""
    import os

    if path and path != "-" and os.path.basename(path) == "events.jsonl":
        return os.path.basename(os.path.dirname(os.path.abspath(path))) or fallback
    return fallback


def parse(source: Source, *, session: str, keep_meta: bool = False, skip_invalid: bool = False,
          skipped: list | None = None, **_) -> Iterator[dict]:
    place = Place()
    main = Turn()
    agents: dict[str, Turn] = {}   # a subagent's own turn, by agentId
    cwd = branch = model = None

    def turn_of(agent) -> Turn:
        return main if not agent else agents.setdefault(agent, Turn())

    def route(agent, recs) -> Iterator[dict]:
        """A subagent's finished records wait until no call of the main agent waits."""
        for r in recs:
            yield from (main.other(r) if agent else iter([r]))

    for lineno, ev in iter_json_lines(source, skip_invalid=skip_invalid, skipped=skipped, live=True):
        if not (isinstance(ev, dict) and isinstance(ev.get("type"), str) and isinstance(ev.get("data"), dict)):
            if skip_invalid:
                if skipped is not None:
                    skipped.append(lineno)
                continue
            raise InputError(source.name, lineno, "expected a Copilot CLI event {type, data, id, timestamp}")
        typ, d = ev["type"], ev["data"]
        agent = ev.get("agentId") if isinstance(ev.get("agentId"), str) else None
        sess = f"{session}.agent-{agent}" if agent else session
        src = {"format": FORMAT, "file": source.name, "line": lineno}
        ts = ts_of(ev.get("timestamp"))
        eid = str(ev.get("id") or R.derive_id("cp", lineno, ev))

        if typ in ("session.start", "session.resume"):
            if typ == "session.start" and isinstance(d.get("sessionId"), str) and d["sessionId"]:
                session = sess = d["sessionId"]
            ctx = d.get("context") if isinstance(d.get("context"), dict) else {}
            cwd = ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else cwd
            branch = ctx.get("branch") if isinstance(ctx.get("branch"), str) else branch
            model = d.get("selectedModel") if isinstance(d.get("selectedModel"), str) else model
        elif typ == "session.model_change" and isinstance(d.get("newModel"), str):
            model = d["newModel"]

        if typ == "user.message":
            text = d.get("transformedContent") if isinstance(d.get("transformedContent"), str) else d.get("content")
            rec = R.make("message", id=eid, session=sess, ts=ts, role="user", content=text_of(text), source=src)
            # a skill's hidden prompt, another agent's, autopilot's "continue" (the task a parent hands
            # its subagent is that subagent's own request, as in Claude Code's subagent transcripts)
            handed = bool(agent) and str(d.get("source") or "").startswith("agent-")
            if (d.get("source") and not handed) or d.get("isAutopilotContinuation"):
                R.add_flag(rec, "meta")
            place.stamp(rec, cwd=cwd, branch=branch)
            t = turn_of(agent)
            yield from route(agent, [*t.flush(), rec])
            continue
        if typ == "system.message":
            role = "system"
            rec = R.make("message", id=eid, session=sess, ts=ts, role=role, content=text_of(d.get("content")),
                         source=src)
            yield from route(agent, [*turn_of(agent).flush(), rec]) if agent else main.other(rec)
            continue
        if typ == "assistant.message":
            t = turn_of(agent)
            calls = [call(q.get("toolCallId"), q.get("name"), q.get("arguments"))
                     for q in d.get("toolRequests") or () if isinstance(q, dict) and q.get("toolCallId")]
            m = d.get("model") if isinstance(d.get("model"), str) else model
            rec = R.make("message", id=str(d.get("messageId") or eid), session=sess, ts=ts, role="assistant",
                         content=text_of(d.get("content")), tool_calls=calls, source=src)
            place.stamp(rec, model=m)
            before = []
            if isinstance(d.get("reasoningText"), str) and d["reasoningText"].strip():
                before.append(R.make("message", id=f"{rec['id']}#thinking", session=sess, ts=ts, role="assistant",
                                     content=d["reasoningText"], flags=["thinking"], source=src))
            if calls:
                yield from route(agent, t.start(rec, before))
            else:
                yield from route(agent, [*t.flush(), *before, rec])
            continue
        if typ == "tool.execution_complete":
            tid = d.get("toolCallId")
            ok = d.get("success") is not False
            res = d.get("result") if isinstance(d.get("result"), dict) else {}
            err = d.get("error") if isinstance(d.get("error"), dict) else {}
            text = text_of(res.get("content")) if ok else str(err.get("message") or res.get("content") or "")
            rec = R.make("message", id=eid, session=sess, ts=ts, role="tool", tool_call_id=str(tid or ""),
                         content=text, source=src, flags=None if ok else ["error"])
            t = turn_of(agent)
            if t.has_call(tid):
                t.result(rec)
                if not t.waiting():
                    yield from route(agent, t.flush())
            else:  # a result of no call we saw (a tool the user ran): pairing keeps its text as user text
                yield from route(agent, [*t.flush(), rec])
            continue
        if typ in ("subagent.completed", "subagent.failed"):  # the subagent's last turn is whole
            for a in [agent] if agent in agents else list(agents):
                yield from route(a, agents.pop(a).flush())
        if typ == "system.notification":
            rec = R.make("message", id=eid, session=sess, ts=ts, role="user", content=text_of(d.get("content")),
                         source=src, flags=["meta"])
            yield from main.other(rec)
            continue
        if typ == "session.compaction_complete" and d.get("success") and isinstance(d.get("summaryContent"), str):
            rec = R.make("summary", id=eid, session=sess, ts=ts, role="user", content=d["summaryContent"],
                         source=src, flags=["compact_summary"],
                         meta={k: d[k] for k in ("trigger", "preCompactionTokens", "postCompactionTokens",
                                                 "messagesRemoved") if isinstance(d.get(k), (str, int))} or None)
            yield from main.other(rec)
            continue
        if typ == "assistant.usage":  # not persisted by the releases seen so far; read if it is
            u = usage(input_total=d.get("inputTokens"), cache_read=d.get("cacheReadTokens"),
                      cache_write=d.get("cacheWriteTokens"), output=d.get("outputTokens"))
            if u:
                ev_rec = R.make("event", id=eid, session=sess, ts=ts, content="", source=src, flags=["usage"],
                                usage=u, meta={"model": d["model"]} if isinstance(d.get("model"), str) else None)
                yield from main.other(ev_rec)
            continue
        if keep_meta:
            yield from main.other(R.make("event", id=eid, session=sess, ts=ts, content="", source=src,
                                         meta={"type": typ}))
    for a in list(agents):
        yield from route(a, agents.pop(a).flush())
    yield from main.flush()
