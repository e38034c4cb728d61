"""Gemini CLI's tools, read as the generic dialect's words; its shell tool's answer is a form (`Command:`,
`Directory:`, `Output:`, `Error:`, `Exit Code:` …) whose fields are read apart."""
from __future__ import annotations

import re

from ..model import Command

FIELDS = ("Command", "Directory", "Output", "Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID")
FIELD = re.compile(r"^(" + "|".join(FIELDS) + r"): ?", re.M)
NONE = ("(none)", "(empty)", "")


def fields(result: str) -> dict[str, str]:
    """The form's fields by name ({} when the answer is not one: it must open with `Command:`)."""
    marks = list(FIELD.finditer(result))
    if not marks or marks[0].start() != 0 or marks[0].group(1) != "Command":
        return {}
    return {m.group(1): result[m.end():(marks[k + 1].start() if k + 1 < len(marks) else len(result))].rstrip("\n")
            for k, m in enumerate(marks)}


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
        f = fields(call.result or "")
        cmd = str(call.args.get("command") or "")
        if not f or not cmd:
            return None
        out = "\n".join(x for x in (f.get("Output", ""), f.get("Error", "")) if x.strip() not in NONE)
        code = f.get("Exit Code", "").strip()
        exit_ = int(code) if re.fullmatch(r"-?\d+", code) else None
        where = f.get("Directory", "").strip()
        cwd = str(call.args.get("directory") or call.args.get("dir_path") or "") or ("" if where in NONE + ("(root)",) else where)
        return [Command(call.at, command=cmd, output=out, exit=exit_,
                        failed=bool(call.error or (exit_ or 0) != 0), cwd=cwd, ts=call.ts)]


ENTRIES = [Gemini()]
