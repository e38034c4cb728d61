"""OpenHands' tools (CodeAct), read as the generic dialect's words."""
from __future__ import annotations


class OpenHands:
    name = "openhands"
    formats = ("openhands",)
    aliases = {"execute_bash": "shell", "execute_ipython_cell": "action", "str_replace_editor": "edit",
               "edit_file": "edit", "browser": "fetch", "web_read": "fetch", "finish": "submit", "think": "think",
               "delegate": "delegate"}

    def read(self, call, memo: dict):
        return None


ENTRIES = [OpenHands()]
