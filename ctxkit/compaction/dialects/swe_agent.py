"""SWE-agent's commands (open, create, edit, goto, scroll, find_file, search_file, search_dir, submit, bash),
written as a command line in the call; `edit` applies to the file open at the time."""
from __future__ import annotations

import re

from ..model import CREATE, MODIFY, Change, Command, Place, Read, Search, Submit

CWD = re.compile(r"\(Current directory: ([^)]+)\)")

OPEN_FILE = re.compile(r"\[File: ([^\s\]]+)|\(Open file: ([^\s)]+)\)")
FOUND = re.compile(r"^(/[^\s:]+)", re.M)


class SweAgent:
    name = "swe-agent"
    formats = ("swe-agent",)
    aliases = {"str_replace_editor": "edit", "bash": "shell"}

    def read(self, call, memo: dict):
        args, result = call.args, call.result or ""
        out = []
        cwd = CWD.search(result)
        if cwd and memo.get("swe_cwd") != cwd.group(1):
            memo["swe_cwd"] = cwd.group(1)
            out.append(Place(call.at, cwd=cwd.group(1), ts=call.ts))
        got = self._read(call, memo, args, result)
        return None if got is None and not out else out + (got or [])

    def _read(self, call, memo, args, result):
        m = OPEN_FILE.search(result)
        opened = (m.group(1) or m.group(2)) if m else None
        if opened and opened != "n/a":
            memo["swe_open"] = opened
        if isinstance(args, dict) and "command" not in args:   # the function-calling variant
            if call.name == "edit" and ("search" in args or "replace" in args):
                return [Change(call.at, path=memo.get("swe_open", ""), action=MODIFY, old=str(args.get("search") or ""),
                               new=str(args.get("replace") or ""), ok=not call.error, ts=call.ts)] \
                    if memo.get("swe_open") else []
            if call.name in ("find_file", "search_file", "search_dir"):
                pattern = str(args.get("file_name") or args.get("search_term") or "")
                return [Search(call.at, pattern=pattern, kind="glob" if call.name == "find_file" else "grep",
                               hits=tuple(FOUND.findall(result))[:100], ts=call.ts)]
            if call.name == "open":
                path = str(args.get("path") or memo.get("swe_open") or "")
                return [Read(call.at, path=path, text=result, ts=call.ts)] if path else []
            if call.name == "submit":
                return [Submit(call.at, text=result[:2000], ts=call.ts)]
            return None
        text = args.get("command") if isinstance(args, dict) else args if isinstance(args, str) else ""
        if not isinstance(text, str) or not text.strip():
            return None
        first, _, body = text.strip().partition("\n")
        words = first.split()
        verb = words[0] if words else ""
        ev = dict(ts=call.ts)
        if verb in ("open", "goto", "scroll_down", "scroll_up"):
            path = memo.get("swe_open") or (words[1].strip('"') if len(words) > 1 else "")
            return [Read(call.at, path=path, text=result, **ev)] if path and verb == "open" else []
        if verb == "create":
            path = words[1].strip('"') if len(words) > 1 else memo.get("swe_open", "")
            return [Change(call.at, path=path, action=CREATE, ok=not call.error, via="write", **ev)]
        if verb == "edit":
            path = memo.get("swe_open", "")
            return [Change(call.at, path=path, action=MODIFY, new=body.rsplit("end_of_edit", 1)[0], ok=not call.error,
                           **ev)] if path else []
        if verb in ("find_file", "search_file", "search_dir"):
            pattern = words[1].strip('"') if len(words) > 1 else ""
            return [Search(call.at, pattern=pattern, kind="glob" if verb == "find_file" else "grep",
                           hits=tuple(FOUND.findall(result))[:100], **ev)]
        if verb == "submit":
            return [Submit(call.at, text=result[:2000], **ev)]
        if call.name in ("bash",) or verb:
            return [Command(call.at, command=text, output=result, failed=call.error, **ev)]
        return None


ENTRIES = [SweAgent()]
