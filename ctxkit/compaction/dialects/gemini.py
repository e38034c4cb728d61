"""Gemini CLI's tools, read as the generic dialect's words; its shell tool's answer is a form (`Command:`,
`Directory:`, `Output:`, `Error:`, `Exit Code:` …) whose fields are read apart."""
from __future__ import annotations

import re

from ..model import Command

HEAD = re.compile(r"\ACommand: .*?\nDirectory: (.*?)\nOutput: ", re.S)
TAIL = ("Exit Code", "Signal", "Background PIDs", "Process Group PGID")
NONE = ("(none)", "(empty)", "")


def fields(result: str, command: str = "") -> dict[str, str]:
    """The form's fields by name ({} when the answer is not one). The command's own output may hold lines
    that look like fields (`Error: Cannot find module`): the head is read from the start, the fixed tail
    (`Exit Code:` … `Process Group PGID:`) from the end, and `Error:` is the last one before that tail."""
    if command and result.startswith(f"Command: {command}\nDirectory: "):    # the command may hold such lines
        rest = result[len(f"Command: {command}\nDirectory: "):]
        where, sep, body = rest.partition("\nOutput: ")
        if not sep:
            return {}
        out = {"Directory": where}
    else:
        head = HEAD.match(result)
        if not head:
            return {}
        out = {"Directory": head.group(1)}
        body = result[head.end():]
    for name in reversed(TAIL):
        k = body.rfind(f"\n{name}: ")
        if k >= 0:
            out[name] = body[k + len(name) + 3:].split("\n", 1)[0]
            body = body[:k]
    k = body.rfind("\nError: ")
    out["Output"], out["Error"] = (body[:k], body[k + 8:]) if k >= 0 else (body, "")
    return out


class Gemini:
    name = "gemini-cli"
    formats = ("gemini-cli", "gemini")
    aliases = {"run_shell_command": "shell", "read_file": "read", "read_many_files": "read", "write_file": "write",
               "replace": "edit", "edit": "edit", "glob": "glob", "search_file_content": "grep", "grep": "grep",
               "list_directory": "glob", "web_fetch": "fetch", "google_web_search": "web_search",
               "write_todos": "plan", "save_memory": "think"}

    def read(self, call, memo: dict):
        if call.name != "run_shell_command" or not isinstance(call.args, dict):
            return None
        cmd = str(call.args.get("command") or "")
        f = fields(call.result or "", cmd)
        if not f or not cmd:
            return None
        out = "\n".join(x for x in (f.get("Output", ""), f.get("Error", "")) if x.strip() not in NONE)
        code = f.get("Exit Code", "").strip()
        exit_ = int(code) if re.fullmatch(r"-?\d+", code) else None
        killed = f.get("Signal", "").strip() not in NONE + ("0",)     # ended by a signal: not a success
        where = f.get("Directory", "").strip()
        cwd = str(call.args.get("directory") or call.args.get("dir_path") or "") or ("" if where in NONE + ("(root)",) else where)
        return [Command(call.at, command=cmd, output=out, exit=exit_,
                        failed=bool(call.error or (exit_ or 0) != 0 or killed), cwd=cwd, ts=call.ts)]


ENTRIES = [Gemini()]
