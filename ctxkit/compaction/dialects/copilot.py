"""GitHub Copilot CLI's tools, read as the generic dialect's words; its shell tool's answer ends with a
trailer (`<shellId: 18 completed with exit code 0>`, or `<command with shellId: 22 is still running …>`)
that holds the exit status."""
from __future__ import annotations

import re

from ..model import Command

TRAILER = re.compile(r"\n?<shellId: (\w+) completed with exit code (-?\d+)>\s*\Z")
RUNNING = re.compile(r"\n?<command with shellId: (\w+) is still running[^<>]*>\s*\Z")


class Copilot:
    name = "copilot-cli"
    formats = ("copilot-cli", "copilot")
    aliases = {"bash": "shell", "powershell": "shell", "read_bash": "think", "write_bash": "think",
               "stop_bash": "think", "view": "read", "create": "write", "edit": "edit", "str_replace_editor": "edit",
               "glob": "glob", "grep": "grep", "web_fetch": "fetch", "update_todo": "plan", "report_intent": "think",
               "task": "delegate"}

    def read(self, call, memo: dict):
        """A shell call; `read_bash` (more of a command still running) and `stop_bash` (its end) as the
        same command again, so a command read to its end is not left running."""
        if call.name not in ("bash", "powershell", "read_bash", "stop_bash"):
            return None
        shells = memo.setdefault("copilot_shells", {})
        result = call.result or ""
        if call.name in ("read_bash", "stop_bash"):
            sid = str(call.args.get("shellId") or "") if isinstance(call.args, dict) else ""
            cmd = shells.get(sid, "")
            if not cmd:
                return []
            if call.name == "stop_bash":    # stopped before it ended: no success, and no result to read
                return [Command(call.at, command=cmd, output="", failed=True, ts=call.ts)]
        else:
            cmd = str(call.args.get("command") or "") if isinstance(call.args, dict) else str(call.args or "")
        done, running = TRAILER.search(result), RUNNING.search(result)
        if not cmd or not (done or running):
            return None if call.name in ("bash", "powershell") else []
        shells[(done or running).group(1)] = cmd
        exit_ = int(done.group(2)) if done else None
        out = result[:(done or running).start()]
        return [Command(call.at, command=cmd, output=out, exit=exit_, running=bool(running),
                        failed=bool(call.error or (exit_ or 0) != 0), ts=call.ts)]


ENTRIES = [Copilot()]
