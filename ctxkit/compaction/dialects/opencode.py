"""opencode's tools, read as the generic dialect's words."""
from __future__ import annotations


class OpenCode:
    name = "opencode"
    formats = ("opencode",)
    aliases = {"bash": "shell", "read": "read", "write": "write", "edit": "edit", "patch": "patch", "glob": "glob",
               "grep": "grep", "list": "glob", "webfetch": "fetch", "todowrite": "plan", "todoread": "think",
               "task": "delegate"}

    def read(self, call, memo: dict):
        return None


ENTRIES = [OpenCode()]
