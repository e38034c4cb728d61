"""OpenAI Codex CLI's tools: exec_command / shell / shell_command (and write_stdin, which reads more of
a command still running), apply_patch, update_plan, web_search, view_image."""
from __future__ import annotations

import re

from ..model import Change, Command

EXIT = re.compile(r"(?:^|\n)(?:Process exited with code|Exit code:)\s*(-?\d+)")
RUNNING = re.compile(r"Process running with session ID (\d+)")
HEADER = re.compile(r"\A(?:(?:Chunk ID|Wall time|Process exited with code|Process running with session ID|"
                    r"Original token count|Exit code|Total output lines)[^\n]*\n)*Output:\n?", re.S)


def output_of(result: str) -> str:
    """The command's own output, without Codex's header lines."""
    return HEADER.sub("", result, count=1)


class Codex:
    name = "codex"
    formats = ("codex",)
    # Codex tool names read as the generic dialect's words
    aliases = {"exec_command": "shell", "shell": "shell", "shell_command": "shell", "local_shell_call": "shell",
               "container.exec": "shell", "apply_patch": "patch", "update_plan": "plan", "web_search": "web_search",
               "view_image": "think"}

    def read(self, call, memo: dict):
        name, args, result = call.name, call.args, call.result or ""
        if name not in ("exec_command", "shell", "shell_command", "local_shell_call", "container.exec", "write_stdin"):
            return None
        sessions = memo.setdefault("codex_sessions", {})
        if name == "write_stdin":
            sid = str(args.get("session_id")) if isinstance(args, dict) else ""
            cmd = sessions.get(sid)
            if not cmd:
                return []
        else:
            cmd = ""
            if isinstance(args, dict):
                c = args.get("cmd") or args.get("command")
                if isinstance(c, list):
                    parts = [str(x) for x in c]
                    if parts[:1] == ["apply_patch"] and len(parts) > 1:   # older rollouts patch through the shell
                        return [Change(call.at, path="", action="patch", new=parts[1], ok=not call.error,
                                       via="patch", ts=call.ts)]
                    cmd = parts[2] if len(parts) >= 3 and parts[1] in ("-lc", "-c") else " ".join(parts)
                elif isinstance(c, str):
                    cmd = c
            elif isinstance(args, str):
                cmd = args
            if not cmd:
                return []
        m = EXIT.search(result[:600])
        run = RUNNING.search(result[:600])
        if run:
            sessions[run.group(1)] = cmd
        exit_ = int(m.group(1)) if m else None
        cwd = str(args.get("workdir") or "") if isinstance(args, dict) else ""
        return [Command(call.at, command=cmd, output=output_of(result), exit=exit_,
                        failed=bool((exit_ or 0) != 0 or (call.error and exit_ is None)), cwd=cwd,
                        running=bool(run) and not m, ts=call.ts)]


ENTRIES = [Codex()]
