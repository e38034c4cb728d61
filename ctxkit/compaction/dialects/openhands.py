"""OpenHands' tools (CodeAct), read as the generic dialect's words; keys sent to a running command (`C-c`) are
no command of their own."""
from __future__ import annotations



class OpenHands:
    name = "openhands"
    formats = ("openhands",)
    aliases = {"execute_bash": "shell", "execute_ipython_cell": "action", "str_replace_editor": "edit",
               "edit_file": "edit", "browser": "fetch", "web_read": "fetch", "finish": "submit", "think": "think",
               "delegate": "delegate"}

    def read(self, call, memo: dict):
        if call.name == "execute_bash" and isinstance(call.args, dict) and call.args.get("is_input") in (True, "true"):
            return []       # keys sent to the command running (`C-c`), not a command
        return None


ENTRIES = [OpenHands()]
