"""GitHub Copilot CLI's tools, read as the generic dialect's words."""
from __future__ import annotations


class Copilot:
    name = "copilot-cli"
    formats = ("copilot-cli", "copilot")
    aliases = {"bash": "shell", "powershell": "shell", "read_bash": "think", "write_bash": "think",
               "stop_bash": "think", "view": "read", "create": "write", "edit": "edit", "str_replace_editor": "edit",
               "glob": "glob", "grep": "grep", "web_fetch": "fetch", "update_todo": "plan", "report_intent": "think",
               "task": "delegate"}

    def read(self, call, memo: dict):
        return None


ENTRIES = [Copilot()]
