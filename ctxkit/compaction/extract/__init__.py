"""One pass: ctx records -> typed events.

User messages become requests (the one definition in `core.requests`), answers and interruptions;
assistant prose becomes `Said`; every tool call, paired with its result, goes to the dialect of the
transcript's format (then the generic dialect); every shell command is split into its simple
commands and each is read by the tool and tracker entries (a test run, a commit, a `bd close`).
Knowledge of agents, tools and trackers comes only through the registry.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace

from ...core.requests import CONFIRMATION, REMINDER, request_text
from ..registry import dialects_for, entries
from ..model import (Answer, Call, Change, CheckRun, Command, Commit, Interrupt, Place, Push, Question, Rejected,
                     Request, Said, Skill, Stage, Summary, Verdict)
from .failures import key_lines, looks_failed, strip_reminders
from .patch import changes as patch_changes
from .shell import is_filtered, segments

INTERRUPT = re.compile(r"^\s*\[Request interrupted by user")
# a SEARCH/REPLACE edit block written into the reply (aider, Cline): code, not the agent's words
EDIT_BLOCK = re.compile(r"^<{5,9} SEARCH[^\n]*\n.*?^>{5,9} REPLACE[^\n]*$", re.M | re.S)
COMMAND_NAME = re.compile(r"<command-name>\s*/?([\w:.-]+)\s*</command-name>")
REJECTED = re.compile(r"^(?:The user doesn't want to (?:proceed|take this action)|User rejected|"
                      r"Permission to use \S+ has been denied|\[Request interrupted by user for tool use\])", re.I)
TAIL_CHARS = 60000


def call_args(call: dict):
    """A call's arguments: a dict when they are a JSON object, else the raw text."""
    fn = call.get("function") or {}
    raw = fn.get("arguments", call.get("arguments", ""))
    if isinstance(raw, (dict, list)):
        return raw
    if not isinstance(raw, str) or not raw:
        return {}
    try:
        v = json.loads(raw)
        return v if isinstance(v, dict) else raw
    except (ValueError, RecursionError):
        return raw


def events(records: list[dict]) -> list:
    """The events of `records`, in order (each `at` is the index of its record in `records`)."""
    results: dict[str, tuple[int, dict]] = {}
    for i, r in enumerate(records):
        if r.get("role") == "tool" and r.get("tool_call_id"):
            results[r["tool_call_id"]] = (i, r)
    out: list = []
    memo: dict = {}
    place: dict = {}
    asked = False
    for i, r in enumerate(records):
        kind, role = r.get("kind"), r.get("role")
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        ts = r.get("ts") if isinstance(r.get("ts"), str) else None
        new_place = {k: meta.get(m) for k, m in (("cwd", "cwd"), ("branch", "branch"), ("model", "model"))
                     if isinstance(meta.get(m), str) and meta.get(m) and meta.get(m) != place.get(k)}
        if new_place:
            place.update(new_place)
            out.append(Place(i, ts=ts, **new_place))
        if kind == "summary":
            if r.get("content") and "compact_boundary" not in (r.get("flags") or ()):
                out.append(Summary(i, text=r["content"], by="ctx" if "compaction" in (r.get("flags") or ()) else
                                   (r.get("source") or {}).get("format") or "agent", ts=ts))
            continue
        if kind != "message":
            continue
        text = r.get("content") if isinstance(r.get("content"), str) else ""
        if role == "user":
            if INTERRUPT.match(text):
                out.append(Interrupt(i, ts=ts))
                continue
            req = request_text(r)
            if req:
                m = COMMAND_NAME.search(text)
                out.append(Request(i, text=req, queued="queued" in (r.get("flags") or ()), command=m.group(1) if m else None,
                                   ts=ts))
                asked = False
            elif asked and text.strip() and "meta" not in (r.get("flags") or ()) and CONFIRMATION.match(text.strip()):
                out.append(Answer(i, text=text.strip()[:200], ts=ts))
                asked = False
            elif "meta" in (r.get("flags") or ()) and out and isinstance(out[-1], Request) and out[-1].command:
                out.append(Skill(i, name=out[-1].command, text=text[:4000], ts=ts))
            continue
        if role != "assistant" or "thinking" in (r.get("flags") or ()):
            continue
        calls = r.get("tool_calls") or ()
        said = EDIT_BLOCK.sub(" ", REMINDER.sub(" ", text)).strip() if text else ""
        if said:
            out.append(Said(i, text=said, before_action=bool(calls), ts=ts))
            asked = said.rstrip().endswith("?") and not calls
        fmt = (r.get("source") or {}).get("format")
        for c in calls:
            if not isinstance(c, dict):
                continue
            j, res = results.get(c.get("id"), (-1, None))
            result = res.get("content") if res is not None and isinstance(res.get("content"), str) else None
            flags = (res.get("flags") or ()) if res is not None else ()
            if "missing_result" in flags:
                result = None
            call = Call(at=i, name=str((c.get("function") or {}).get("name") or c.get("name") or ""), args=call_args(c),
                        result=strip_reminders(result) if result else result, error="error" in flags,
                        id=str(c.get("id") or ""), ts=ts, result_at=j, meta=meta, text=said, running="running" in flags)
            evs = read_call(call, fmt, memo)
            out.extend(evs)
            if any(isinstance(e, Question) for e in evs):
                asked = True
    return out


def read_call(call: Call, fmt: str | None, memo: dict) -> list:
    """The events of one tool call: its dialect's reading, shell commands refined by the tool entries."""
    if call.result and REJECTED.match(call.result):
        return [Rejected(call.at, tool=call.name, reason=call.result.split("\n", 1)[0][:300], ts=call.ts)]
    got = None
    for d in dialects_for(fmt):
        if "*" in d.formats:
            alias = next((getattr(x, "aliases", {}).get(call.name) for x in dialects_for(fmt)
                          if getattr(x, "aliases", None) and call.name in x.aliases), None)
            got = d.read(call, memo, kind=alias)
        else:
            got = d.read(call, memo)
        if got is not None:
            break
    out: list = []
    if call.running:            # the client answered before the command ended: it runs on
        got = [replace(e, running=True, failed=False) if isinstance(e, Command) else e for e in got or ()]
    if call.result is None:     # no result recorded: what the command did is not known
        got = [replace(e, no_result=True, failed=False) if isinstance(e, Command) and not e.running else e
               for e in got or ()]
    for e in got or ():
        if getattr(e, "action", None) == "patch":
            out.extend(Change(**{**c.__dict__, "note": call.text}) for c in patch_changes(e.new, e.at, ok=e.ok, ts=e.ts))
        elif isinstance(e, Change) and not e.note and call.text:
            out.append(Change(**{**e.__dict__, "note": call.text}))
        elif isinstance(e, Command):     # a file a command changed carries the words the call came with
            out.extend(Change(**{**x.__dict__, "note": call.text}) if isinstance(x, Change) and not x.note and call.text
                       else x for x in refine(e))
        else:
            out.append(e)
    return out


def refine(cmd: Command) -> list:
    """A shell command and what it was: check runs, commits, work-item moves, file changes."""
    output = cmd.output or ""
    segs = segments(cmd.command)
    failed = cmd.failed or (cmd.exit is None and looks_failed(output) and not cmd.running)
    if failed and cmd.exit == 1 and _found_nothing(segs):
        failed = False      # grep, rg, ag: status 1 means no match, not a failure
    lines = key_lines(output) if failed else ()
    cmd = replace(cmd, output=output, failed=failed, error_lines=lines)
    out: list = [cmd]
    runs: list[tuple] = []
    tools = entries("trackers") + entries("tools")
    for seg in segs:
        if seg.op_before == "|" or not seg.argv:
            continue
        for entry in tools:
            if getattr(entry, "kind", "") == "file" or not entry.match(seg.argv):
                continue
            for e in entry.read(seg.argv, cmd, seg):
                if isinstance(e, CheckRun):
                    e = CheckRun(**{**e.__dict__, "command": shown(segs, seg)})
                    runs.append((seg, e, getattr(entry, "judge_by_output", False)))
                else:
                    out.append(e)
            break
        for entry in tools:
            if getattr(entry, "kind", "") == "file":
                out.extend(entry.read(seg.argv, cmd, seg))
    out.extend(judge(runs, cmd))
    if cmd.no_result:       # no result: a commit, a push or a staging it may have made is not known to have happened
        out = [e for e in out if not isinstance(e, (Commit, Push, Stage))]
    return out


def _quiet(script: str, cmd: Command, seg) -> bool:
    """A task runner echoed its script (`$ tsc --noEmit`) and nothing else came: the script is a tool
    that prints nothing when it passes, so its silence is its pass. Not when a filter could have taken its
    lines away (`| grep -v error`, `| head -1`); `| tail -5` showing fewer than 5 lines hides nothing."""
    if not script or cmd.failed or cmd.running or cmd.no_result or seg.redirect:
        return False
    lines = [ln.strip() for ln in (cmd.output or "").splitlines() if ln.strip()]
    if not lines or any(ln not in (f"$ {script}", f"> {script}") for ln in lines):
        return False
    segs = segments(cmd.command)
    for nxt in segs[seg.index + 1:]:
        if nxt.op_before != "|":
            break
        if nxt.argv[:1] not in (("tail",), ("head",)) or len(lines) >= _line_count(nxt.argv[1:]):
            return False
    segs = [s for s in segments(script) if s.argv]
    return len(segs) == 1 and any(getattr(e, "silent_ok", False) and e.match(segs[0].argv) for e in entries("tools"))


def _line_count(args) -> int:
    """The lines `head`/`tail` with these options show (0 when it counts bytes or from a line on)."""
    n = 10
    for k, a in enumerate(args):
        if a in ("-c", "--bytes") or a.startswith(("--bytes=", "-c")) or a.startswith("+") or "+" in a:
            return 0
        if a in ("-n", "--lines") and k + 1 < len(args) and args[k + 1].isdigit():
            n = int(args[k + 1])
        elif re.fullmatch(r"-n?\d+", a):
            n = int(a.lstrip("-n"))
        elif a.startswith("--lines=") and a[8:].isdigit():
            n = int(a[8:])
    return n


SEARCHERS = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"}


def _found_nothing(segs) -> bool:
    """The line's last command is a search, whose status 1 only says it found nothing."""
    last = [s for s in segs if s.argv]
    if not last:
        return False
    argv = last[-1].argv
    return argv[0] in SEARCHERS or tuple(argv[:2]) == ("git", "grep")


STDERR = re.compile(r"\s+2>&1|\s+2>/dev/null|\s+>\s*/dev/null")


def shown(segs: list, seg) -> str:
    """A check's command as a reader needs it: the segment and the filters its output went through."""
    parts = [seg.text]
    k = seg.index
    while k < len(segs) - 1 and segs[k].op_after == "|":
        k += 1
        parts.append(segs[k].text)
    return STDERR.sub("", " | ".join(parts)).strip()


def _verdicts(output: str, kind: str) -> list[Verdict]:
    """The verdicts of every tool whose own result markers are in `output`, those of checks of `kind`
    when there are any, one per runner."""
    tail = output[-TAIL_CHARS:]
    got = []
    for entry in entries("tools"):
        fn = getattr(entry, "verdict", None)
        if fn is None or not getattr(entry, "distinct", True):
            continue
        try:
            v = fn(tail)
        except Exception:  # noqa: BLE001 - one entry's parser never stops the others
            v = None
        if v is not None and v.passed is not None and all((v.runner, v.summary) != (g.runner, g.summary) for g in got):
            got.append(v)
    same = [v for v in got if v.kind == kind]
    return same or got


def judge(runs: list[tuple], cmd: Command) -> list[CheckRun]:
    """Each check run of one command line with its verdict: the runner's own output first, then the exit
    status where it speaks for the segment (no filter pipe, no `|| true`, the chain's semantics)."""
    out: list[CheckRun] = []
    stop = False
    for k, (seg, run, by_output) in enumerate(runs):
        if stop:
            break
        fields = dict(run.__dict__)
        if by_output and run.passed is None:
            vs = _verdicts(cmd.output or "", run.kind)
            if vs:
                fields["passed"] = all(v.passed for v in vs)
                fields["counts"] = tuple(c for v in vs for c in v.counts)
                fields["failures"] = tuple(f for v in vs for f in v.failures)[:20]
                fields["errors"] = tuple(e for v in vs for e in v.errors)[:8]
                fields["summary"] = "; ".join(dict.fromkeys(v.summary for v in vs if v.summary))[:300]   # each once
        if by_output and fields["passed"] is None and _quiet(run.script, cmd, seg):
            fields["passed"], fields["summary"] = True, "no output"
        filtered = is_filtered(seg)
        fields["truncated"] = any(p in ("tail", "head") for p in seg.piped_to)
        exit_speaks = cmd.exit is not None and not filtered and not cmd.running and seg.op_after != "||"
        if by_output and exit_speaks and cmd.exit != 0 and fields["passed"]:
            fields["passed"] = False    # the tools' own lines passed, the task itself failed (a threshold, a step after)
        if fields["passed"] is None and exit_speaks:
            chain = all(s.op_after in ("&&", "") for s, _, _ in runs[k:]) and seg.op_before in ("&&", "", ";")
            if cmd.exit == 0 and (chain or seg.index == seg.count - 1):
                fields["passed"] = True
            elif cmd.exit != 0 and (len(runs) == 1 or chain):
                fields["passed"] = False
                stop = True   # in an && chain, what comes after the failing run did not run
        if fields["passed"] is False and not fields["errors"] and not fields["failures"]:
            # the runner's own result line says more than a guessed "first line" of a cut output
            real = key_lines(cmd.output or "", first_line=False)
            fields["errors"] = real or ((fields["summary"],) if fields["summary"] else cmd.error_lines[:1])
        if cmd.running and fields["passed"] is None:
            fields["summary"] = fields["summary"] or "still running"
        out.append(CheckRun(**fields))
        if fields["passed"] is False and seg.op_after == "&&":
            stop = True
    return out
