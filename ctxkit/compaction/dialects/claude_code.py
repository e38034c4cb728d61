"""Claude Code's tools: Read, Write, Edit, MultiEdit, Bash (and its background outputs), Glob, Grep,
WebFetch, WebSearch, Task/Agent subagents, TodoWrite, TaskCreate/TaskUpdate, ExitPlanMode,
AskUserQuestion, Skill."""
from __future__ import annotations

import re

from ..model import (CREATE, MODIFY, Answer, Change, Command, Delegate, Fetch, Item, Plan, PlanApproved,
                     Question, Read, Rejected, Search, Skill, ToolError, WebSearch)

EXIT = re.compile(r"^(?:Error: )?Exit code (\d+)\b")
NOT_RUN = re.compile(r"^\s*<tool_use_error>(.*?)(?:</tool_use_error>|$)", re.S)
REJECTED = re.compile(r"^(?:The user doesn't want to (?:proceed|take this action)|\[Request interrupted by user|"
                      r"Permission to use \w+ has been denied|User rejected)", re.I)
BACKGROUND_ID = re.compile(r"(?:running in background with ID|with ID|shell ID|task ID)[:\s]+([\w-]+)", re.I)
TASK_CREATED = re.compile(r"Task #(\w+) created")


def _s(args, *keys) -> str:
    if not isinstance(args, dict):
        return ""
    for k in keys:
        v = args.get(k)
        if isinstance(v, str) and v:
            return v
    return ""


def _hits(result: str) -> tuple[str, ...]:
    lines = [ln.strip() for ln in result.splitlines() if ln.strip()]
    return tuple(ln for ln in lines if "/" in ln or "." in ln and " " not in ln)[:200]


MATCH_LINE = re.compile(r"^(?:(\S+?):)?(\d+):(.*\S.*)$")   # `path:174:text` or `174:text`; context lines use `-`
NOTHING = re.compile(r"^(?:No (?:files|matches) found|Found 0 files?)\b", re.I)


def _matches(result: str) -> tuple[str, ...]:
    """The matching lines of a content-mode search (`174: text`, path-prefixed when it names one)."""
    out = []
    for ln in result.splitlines():
        m = MATCH_LINE.match(ln)
        if m:
            out.append((f"{m.group(1)}:" if m.group(1) else "") + f"{m.group(2)}: {m.group(3).strip()}")
    return tuple(out[:50])


class ClaudeCode:
    name = "claude-code"
    formats = ("claude-code",)

    def read(self, call, memo: dict):
        name, args, result = call.name, call.args, call.result or ""
        ev = dict(ts=call.ts)
        if result and REJECTED.match(result):
            return [Rejected(call.at, tool=name, reason=result.split("\n", 1)[0][:300], **ev)]
        refused = NOT_RUN.match(result) if result else None
        if name in ("Read", "NotebookRead"):
            path = _s(args, "file_path", "notebook_path", "path")
            if refused or call.error:
                text = refused.group(1).strip() if refused else result.strip()
                return [ToolError(call.at, tool=name, text=text[:300], target=path, **ev)]
            off = args.get("offset") if isinstance(args, dict) else 0
            return [Read(call.at, path=path, text=result, offset=off if isinstance(off, int) else 0, **ev)]
        if name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
            path = _s(args, "file_path", "notebook_path", "path")
            ok = not (refused or call.error)
            if name == "Write":
                action = MODIFY if re.search(r"has been updated|overwrit", result, re.I) else CREATE
                return [Change(call.at, path=path, action=action, new=_s(args, "content"), ok=ok, via="write", **ev)]
            if name == "MultiEdit":
                edits = args.get("edits") if isinstance(args, dict) else None
                return [Change(call.at, path=path, action=MODIFY, old=str(e.get("old_string") or ""),
                               new=str(e.get("new_string") or ""), ok=ok, **ev)
                        for e in edits or () if isinstance(e, dict)] or [Change(call.at, path=path, action=MODIFY, ok=ok, **ev)]
            if name == "NotebookEdit":
                return [Change(call.at, path=path, action=MODIFY, new=_s(args, "new_source"), ok=ok, **ev)]
            return [Change(call.at, path=path, action=MODIFY, old=_s(args, "old_string"), new=_s(args, "new_string"),
                           ok=ok, **ev)]
        if name == "Bash":
            cmd = _s(args, "command")
            bg = bool(isinstance(args, dict) and args.get("run_in_background"))
            m = EXIT.match(result)
            exit_ = int(m.group(1)) if m else (None if call.error else (0 if call.result is not None and not bg else None))
            if bg:
                bid = BACKGROUND_ID.search(result)
                if bid:
                    memo.setdefault("background", {})[bid.group(1)] = cmd
            return [Command(call.at, command=cmd, output=EXIT.sub("", result, count=1).lstrip("\n") if m else result,
                            exit=exit_, failed=bool(call.error or (exit_ or 0) != 0), background=bg,
                            running=bg and call.result is not None and not call.error, **ev)]
        if name in ("BashOutput", "TaskOutput"):
            bid = _s(args, "bash_id", "task_id", "shell_id", "id")
            cmd = memo.get("background", {}).get(bid)
            if not cmd:
                return []
            status = re.search(r"<status>(\w+)</status>", result)
            code = re.search(r"<exit_code>(-?\d+)</exit_code>", result)
            out = re.search(r"<(?:stdout|output)>(.*?)</(?:stdout|output)>", result, re.S)
            running = bool(status and status.group(1) == "running")
            exit_ = int(code.group(1)) if code else None
            return [Command(call.at, command=cmd, output=out.group(1) if out else result, exit=exit_,
                            failed=exit_ not in (None, 0), background=True, running=running, **ev)]
        if name in ("Glob", "Grep", "LS"):
            if refused:
                return [ToolError(call.at, tool=name, text=refused.group(1).strip(), target=_s(args, "path"), **ev)]
            kind = {"Glob": "glob", "Grep": "grep", "LS": "list"}[name]
            files_only = name != "Grep" or _s(args, "output_mode") in ("", "files_with_matches")
            return [Search(call.at, pattern=_s(args, "pattern"), path=_s(args, "path"), kind=kind,
                           hits=_hits(result) if files_only else (), matches=() if files_only else _matches(result),
                           empty=bool(NOTHING.match(result.strip())), **ev)]
        if name == "WebFetch":
            return [Fetch(call.at, url=_s(args, "url"), text=result, ok=not call.error, **ev)]
        if name == "WebSearch":
            return [WebSearch(call.at, query=_s(args, "query"), text=result, **ev)]
        if name in ("Task", "Agent"):
            return [Delegate(call.at, agent=_s(args, "subagent_type") or "subagent", description=_s(args, "description"),
                             prompt=_s(args, "prompt"), result=result, **ev)]
        if name == "TodoWrite":
            todos = args.get("todos") if isinstance(args, dict) else None
            steps = tuple((str(t.get("content") or t.get("activeForm") or ""), str(t.get("status") or "pending"))
                          for t in todos or () if isinstance(t, dict))
            return [Plan(call.at, steps=steps, source="todo", **ev)] if steps else []
        if name == "TaskCreate":
            m = TASK_CREATED.search(result)
            if not m:
                return []
            return [Item(call.at, tracker="tasks", item=m.group(1), action="create", title=_s(args, "subject"),
                         status="open", detail=_s(args, "description"), **ev)]
        if name == "TaskUpdate":
            tid = str(args.get("taskId") or "") if isinstance(args, dict) else ""
            status = _s(args, "status")
            action = {"in_progress": "claim", "completed": "close", "deleted": "close"}.get(status, "update")
            if not tid or call.error:
                return []
            return [Item(call.at, tracker="tasks", item=tid, action=action, title=_s(args, "subject"),
                         status=status, detail=_s(args, "description"), **ev)]
        if name in ("TaskList", "TaskGet"):
            return []
        if name == "ExitPlanMode":
            plan = _s(args, "plan")
            return [PlanApproved(call.at, text=plan, approved=not call.error, **ev)]   # no text: the plan file it wrote
        if name == "AskUserQuestion":
            qs = args.get("questions") if isinstance(args, dict) else None
            text = "; ".join(str(q.get("question") or "") for q in qs or () if isinstance(q, dict)) or _s(args, "question")
            out = [Question(call.at, text=text, **ev)]
            ans = re.findall(r'"[^"]*"="([^"]*)"', result)
            if ans or (result and not call.error):
                out.append(Answer(call.result_at if call.result_at >= 0 else call.at,
                                  text="; ".join(ans) if ans else result[:600], **ev))
            return out
        if name in ("Skill", "SlashCommand"):
            return [Skill(call.at, name=_s(args, "skill", "command", "name"), text=result[:2000], **ev)]
        if name in ("EnterPlanMode", "KillShell", "KillBash", "TaskStop"):
            return []
        return None


ENTRIES = [ClaudeCode()]
