"""The artifact trail: which files were read, created, modified or deleted (pure, deterministic).

Extracted from tool calls (and their results, where they say what happened), never left to a
model. Covers Claude Code's tools, OpenAI-style tools with path arguments, shell commands
(rm, mv, cp, touch, cat/head/tail/less, sed -i, git rm/mv), Codex apply_patch, and SWE-agent
actions (open, create, edit, rm).
"""
from __future__ import annotations

import json
import re
import shlex
from typing import Iterable, Sequence

READ, CREATED, MODIFIED, DELETED, SEARCHED = "read", "created", "modified", "deleted", "searched"
SEARCH_TOOLS = ("grep", "glob", "search", "find", "ls", "list")

CC_TOOLS = {"read": READ, "write": CREATED, "edit": MODIFIED, "multiedit": MODIFIED, "notebookedit": MODIFIED,
            "notebookread": READ}
PATH_KEYS = ("file_path", "path", "filename", "file", "notebook_path", "target_file")
VERB_ACTIONS = [("delete", DELETED), ("remove", DELETED), ("create", CREATED), ("write", CREATED),
                ("edit", MODIFIED), ("update", MODIFIED), ("patch", MODIFIED), ("replace", MODIFIED),
                ("append", MODIFIED), ("read", READ), ("view", READ), ("open", READ), ("cat", READ)]
PATCH = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)
MOVE_TO = re.compile(r"^\*\*\* Move to: (.+)$", re.M)
PATHLIKE = re.compile(r"^[\w~./][\w./~@+-]*$")
PLAIN_WORDS = re.compile(r"[^'\"\\#]*")
SHELL_BLANKS = re.compile(r"[ \t\r\n]+")  # shlex's whitespace


_PARSED: dict = {}  # arguments text -> its parse: a call is read by several passes, parsed once


# Claude Code's answer to a call that did not run: `<tool_use_error>File does not exist.</tool_use_error>`
NOT_RUN = re.compile(r"^\s*<tool_use_error>")


def _args(call: dict) -> dict | str:
    """A call's arguments as a dict (or the raw text when they are not a JSON object). The dict
    may be shared with other readers of the same call: read it, never change it."""
    fn = call.get("function") or {}
    raw = fn.get("arguments", "")
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    if isinstance(raw, str):
        v = _PARSED.get(raw)
        if v is None:
            if len(_PARSED) > 1 << 14:
                _PARSED.clear()
            v = _PARSED[raw] = _parse_args(raw)
        return v
    return _parse_args(raw)


def _parse_args(raw) -> dict | str:
    try:
        v = json.loads(raw)
        return v if isinstance(v, dict) else raw
    except (ValueError, TypeError, RecursionError):
        return raw


def _is_path(p) -> bool:
    return isinstance(p, str) and 0 < len(p) < 400 and "\n" not in p and bool(PATHLIKE.match(p)) and \
        ("/" in p or "." in p.lstrip("."))


def shell_actions(cmd: str) -> list[tuple[str, str]]:
    """File actions a shell command line performs (best effort, conservative)."""
    out: list[tuple[str, str]] = []
    for part in re.split(r"&&|\|\||;|\n", cmd):
        part = part.strip()
        if not part:
            continue
        if PLAIN_WORDS.fullmatch(part):  # no quote, escape or comment: shlex would split on blanks only
            words = [w for w in SHELL_BLANKS.split(part) if w]
        else:
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
        if not words:
            continue
        if words[0] in ("sudo", "command"):
            words = words[1:]
        if len(words) >= 2 and words[0] == "git" and words[1] in ("rm", "mv"):
            words = words[1:]
        if not words:
            continue
        prog, args = words[0], [w for w in words[1:] if not w.startswith("-")]
        if ">" in part and not prog.startswith("echo"):
            pass
        if prog == "rm":
            out += [(DELETED, a) for a in args if _is_path(a)]
        elif prog == "mv" and len(args) == 2:
            out += [(DELETED, args[0]), (CREATED, args[1])] if _is_path(args[0]) and _is_path(args[1]) else []
        elif prog == "cp" and len(args) == 2 and _is_path(args[1]):
            out += [(READ, args[0]), (CREATED, args[1])] if _is_path(args[0]) else [(CREATED, args[1])]
        elif prog == "touch":
            out += [(CREATED, a) for a in args if _is_path(a)]
        elif prog in ("cat", "head", "tail", "less", "more", "wc", "bat", "nl"):
            out += [(READ, a) for a in args if _is_path(a) and not a.isdigit()]
        elif prog == "sed" and "-i" in " ".join(words[1:3]):
            out += [(MODIFIED, a) for a in args[1:] if _is_path(a)]
        redirect = re.search(r"(>>?)\s*([\w./~-]+)\s*$", part)
        if redirect and _is_path(redirect.group(2)) and not redirect.group(2).startswith("/dev/"):
            out.append((MODIFIED if redirect.group(1) == ">>" else CREATED, redirect.group(2)))
    return out


_UNPARSED = object()


def call_actions(call: dict, result: str | None = None, args=_UNPARSED) -> list[tuple[str, str]]:
    """File actions of one tool call (`args`: its arguments as `_args` parsed them, when the
    caller has them already)."""
    fn = call.get("function") or {}
    name = (fn.get("name") or "").strip()
    if isinstance(result, str) and NOT_RUN.match(result):
        return []  # the tool refused the call (no such file, a sibling call failed): nothing was read or written
    lname = name.lower().replace("_", "").replace("-", "")
    if args is _UNPARSED:
        args = _args(call)
    if isinstance(args, dict):
        if lname in ("bash", "shell", "exec", "run", "terminal", "localshell", "runcommand", "execute"):
            cmd = args.get("command") or args.get("cmd") or ""
            if isinstance(cmd, list):
                cmd = " ".join(shlex.quote(c) for c in cmd)
            text = str(cmd)
            acts = shell_actions(text)
            for verb, path in PATCH.findall(text):
                acts.append(({"Add": CREATED, "Update": MODIFIED, "Delete": DELETED}[verb], path.strip()))
            return acts
        path = next((args[k] for k in PATH_KEYS if _is_path(args.get(k))), None)
        if path is None:
            return []
        if lname in CC_TOOLS:
            action = CC_TOOLS[lname]
            if action == CREATED and result and re.search(r"has been updated|overwrit", result, re.I):
                action = MODIFIED
            return [(action, path)]
        for verb, action in VERB_ACTIONS:
            if verb in lname:
                return [(action, path)]
        if any(t in lname for t in SEARCH_TOOLS):
            return [(SEARCHED, path)]
        return []
    if lname == "applypatch" or "*** Begin Patch" in str(args):
        return [({"Add": CREATED, "Update": MODIFIED, "Delete": DELETED}[v], p.strip())
                for v, p in PATCH.findall(str(args))]
    return []


SWE_OPEN = re.compile(r"^(open|create|find_file|search_file)\s+\"?([^\s\"]+)\"?", re.M)


def swe_action(action: str, current: str | None) -> tuple[list[tuple[str, str]], str | None]:
    """SWE-agent actions: open/create set the current file; edit modifies it."""
    acts: list[tuple[str, str]] = []
    first = action.strip().split("\n", 1)[0]
    m = SWE_OPEN.match(first)
    if m and m.group(1) in ("open", "create") and _is_path(m.group(2)):
        acts.append((READ if m.group(1) == "open" else CREATED, m.group(2)))
        current = m.group(2)
    elif first.startswith("edit") and current:
        acts.append((MODIFIED, current))
    else:
        acts += shell_actions(first)
    return acts, current


def combine(prev: str | None, action: str) -> str:
    """The action to record when `action` follows `prev` on one path: the last one, except
    that a file created here stays `created` when edited, and a read never hides a write."""
    if prev == CREATED and action in (MODIFIED, READ):
        return CREATED
    if prev in (CREATED, MODIFIED, DELETED) and action in (READ, SEARCHED):
        return prev
    if prev == READ and action == SEARCHED:
        return READ
    return action


def trail(records: Iterable[dict]) -> dict[str, str]:
    """path -> last action, in the order paths were last touched."""
    out: dict[str, str] = {}
    results: dict[str, str] = {}
    recs = list(records)
    for r in recs:
        if r.get("role") == "tool" and r.get("tool_call_id"):
            results[r["tool_call_id"]] = r.get("content") or ""
    current = None

    def touch(action, path):
        path = path.strip()
        if not path:
            return
        out[path] = combine(out.pop(path, None), action)

    for r in recs:
        acts = []
        for call in r.get("tool_calls") or ():
            acts += call_actions(call, results.get(call.get("id")))
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        if r.get("role") == "assistant" and isinstance(meta.get("action"), str):
            swe, current = swe_action(meta["action"], current)  # tracks the open file for `edit`
            acts = acts or swe
        for action, path in acts:
            touch(action, path)
    return out


def paths(records: Sequence[dict]) -> list[str]:
    return list(trail(records))


DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|fn|func|function|defp?|class|pub[ \t]+fn)[ \t]+([A-Za-z_][\w?!]*)", re.M)


def last_edit(records: Sequence[dict]) -> tuple[str | None, str | None]:
    """(the file edited last, the function or class that edit was in or wrote), from the tool calls
    (Edit/Write/apply_patch and the like): the design's `last_edited` and `current_function`."""
    path = func = None
    for r in records:
        for call in r.get("tool_calls") or ():
            acts = [p for a, p in call_actions(call, None) if a in (MODIFIED, CREATED)]
            if not acts:
                continue
            path = acts[-1].strip()
            args = _args(call)
            text = ""
            if isinstance(args, dict):
                text = "\n".join(str(args.get(k) or "") for k in ("new_string", "content", "old_string", "new_str",
                                                                  "file_text", "patch", "input"))
                for e in args.get("edits") or ():
                    if isinstance(e, dict):
                        text += "\n" + str(e.get("new_string") or "") + "\n" + str(e.get("old_string") or "")
            elif isinstance(args, str):
                text = args
            names = DEF.findall(text)
            func = names[0] if names else None
    return path, func
