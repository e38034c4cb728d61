"""The generic tool-call dialect: OpenAI/Anthropic-style tools named for what they do.

It reads a call by its name's words (a shell, a read, a write, an edit, a patch, a search, a fetch,
a plan, a submission, a question, a hand-over) and the usual argument names. Other dialects map
their own tool names onto these words through their `aliases` table, and extract asks this dialect
with the mapped name. A call it cannot place is a domain `Action` (name, arguments, result).
"""
from __future__ import annotations

import json
import re

from ..model import (CREATE, DELETE, MODIFY, Action, Change, Command, Delegate, Fetch, Plan, Question, Read,
                     Search, Submit, ToolError, Transfer, WebSearch)

PATH_KEYS = ("file_path", "path", "filePath", "filename", "file", "target_file", "notebook_path", "absolute_path",
             "relative_path", "uri")
CMD_KEYS = ("command", "cmd", "commands", "script", "code")
EXIT = re.compile(r"(?:^|\n)\s*(?:Exit code:?|Process exited with code|exit status|exit code)\s*(-?\d+)", re.I)

WORDS = [  # (canonical kind, name pattern), first match wins
    ("plan", r"todo|update_?plan|plan_?update|write_?todos"),
    ("shell", r"shell|bash|exec|run_?command|execute_?command|terminal|run_?shell|execute_?bash|cmd\b|powershell"),
    ("patch", r"apply_?patch|patch"),
    ("write", r"write|create_?file|save_?file|overwrite"),
    ("edit", r"edit|replace|str_?replace|insert|apply_?diff|modify"),
    ("read", r"read|view|open|cat\b|show_?file|get_?file"),
    ("glob", r"glob|find_?file|list_?files|list_?dir|\bls\b|directory"),
    ("grep", r"grep|search_?file|search_?code|ripgrep|search_?content|codebase_?search"),
    ("web_search", r"web_?search|google|search_?web"),
    ("fetch", r"fetch|browse|http_?get|url"),
    ("submit", r"submit|finish|attempt_?completion|complete_?task|done"),
    ("question", r"ask|question|follow_?up"),
    ("transfer", r"transfer|handoff|escalate"),
    ("delegate", r"subagent|delegate|spawn|agent\b|task\b"),
    ("think", r"think|reason|note"),
]
_WORDS = [(k, re.compile(p, re.I)) for k, p in WORDS]


def kind_of(name: str) -> str:
    for k, pat in _WORDS:
        if pat.search(name):
            return k
    return "action"


def _s(args, keys) -> str:
    if not isinstance(args, dict):
        return ""
    for k in keys:
        v = args.get(k)
        if isinstance(v, str) and v:
            return v
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            return " ".join(v) if k in CMD_KEYS else v[0]
    return ""


def command_text(args) -> str:
    if isinstance(args, str):
        return args
    cmd = _s(args, CMD_KEYS)
    if isinstance(args, dict) and isinstance(args.get("command"), list):
        parts = [str(x) for x in args["command"]]
        if len(parts) >= 3 and parts[0].endswith(("bash", "sh", "zsh", "powershell", "pwsh")) and parts[1] in ("-lc", "-c", "-Command"):
            return parts[2]
        return " ".join(parts)
    return cmd


def plan_steps(args) -> tuple:
    items = None
    if isinstance(args, dict):
        for k in ("plan", "todos", "items", "steps", "tasks"):
            if isinstance(args.get(k), list):
                items = args[k]
                break
    out = []
    for it in items or ():
        if isinstance(it, dict):
            text = it.get("step") or it.get("content") or it.get("description") or it.get("title") or it.get("task") or ""
            status = str(it.get("status") or ("completed" if it.get("done") or it.get("completed") else "pending"))
            status = {"done": "completed", "complete": "completed", "in-progress": "in_progress",
                      "active": "in_progress", "todo": "pending", "not_started": "pending"}.get(status.lower(), status.lower())
            out.append((str(text), status))
        elif isinstance(it, str):
            out.append((it, "pending"))
    return tuple(out)


class Generic:
    name = "generic"
    formats = ("*",)

    def read(self, call, memo: dict, kind: str | None = None):
        name, args, result = call.name, call.args, call.result or ""
        ev = dict(ts=call.ts)
        kind = kind or kind_of(name)
        if isinstance(args, dict) and kind in ("edit", "read", "write") and isinstance(args.get("command"), str) \
                and args["command"] in ("view", "create", "str_replace", "insert", "undo_edit", "delete"):
            kind = {"view": "read", "create": "write", "str_replace": "edit", "insert": "edit", "undo_edit": "edit",
                    "delete": "delete"}[args["command"]]   # str_replace_editor-style tools
        path = _s(args, PATH_KEYS)
        ok = not call.error
        if kind == "shell":
            cmd = command_text(args)
            if not cmd:
                return []
            m = EXIT.search(result[:400]) if result else None
            exit_ = int(m.group(1)) if m else None
            return [Command(call.at, command=cmd, output=result, exit=exit_,
                            failed=bool(call.error or (exit_ or 0) != 0), **ev)]
        if kind == "patch":
            text = args if isinstance(args, str) else _s(args, ("input", "patch", "diff", "content"))
            return [Change(call.at, path="", action="patch", new=text, ok=ok, via="patch", **ev)]
        if kind in ("write", "edit", "delete") and path:
            if kind == "delete":
                return [Change(call.at, path=path, action=DELETE, ok=ok, **ev)]
            if kind == "write":
                return [Change(call.at, path=path, action=CREATE, ok=ok, via="write",
                               new=_s(args, ("content", "file_text", "text", "contents", "new_content")), **ev)]
            return [Change(call.at, path=path, action=MODIFY, ok=ok,
                           old=_s(args, ("old_string", "old_str", "old", "search", "oldString", "old_text")),
                           new=_s(args, ("new_string", "new_str", "new", "replace", "newString", "new_text",
                                         "insert_text", "diff", "content")), **ev)]
        if kind == "read" and path:
            if call.error:
                return [ToolError(call.at, tool=name, text=result[:300], target=path, **ev)]
            return [Read(call.at, path=path, text=result, **ev)]
        if kind in ("glob", "grep"):
            pattern = _s(args, ("pattern", "query", "regex", "glob", "file_pattern", "name"))
            lines = [ln.strip() for ln in result.splitlines() if ln.strip()]
            hits = tuple(ln for ln in lines if ("/" in ln or "." in ln) and " " not in ln)[:200]
            return [Search(call.at, pattern=pattern, path=path, hits=hits,
                           kind="glob" if kind == "glob" else "grep", **ev)]
        if kind == "web_search":
            return [WebSearch(call.at, query=_s(args, ("query", "q", "search_term")), text=result, **ev)]
        if kind == "fetch":
            return [Fetch(call.at, url=_s(args, ("url", "uri", "href")), text=result, ok=ok, **ev)]
        if kind == "plan":
            steps = plan_steps(args)
            return [Plan(call.at, steps=steps, source=name, **ev)] if steps else []
        if kind == "submit":
            return [Submit(call.at, text=_s(args, ("result", "message", "summary", "answer", "text")) or result[:2000], **ev)]
        if kind == "question":
            return [Question(call.at, text=_s(args, ("question", "text", "message", "prompt")), **ev)]
        if kind == "transfer":
            return [Transfer(call.at, reason=_s(args, ("summary", "reason", "message")), **ev)]
        if kind == "delegate":
            return [Delegate(call.at, agent=name, description=_s(args, ("description", "title", "task")),
                             prompt=_s(args, ("prompt", "message", "instructions")), result=result, **ev)]
        if kind == "think":
            return []
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return [Action(call.at, name=name, args=text[:2000], result=result[:4000], ok=ok, **ev)]


ENTRIES = [Generic()]
