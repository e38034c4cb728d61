"""OpenHands' tools (CodeAct), read as the generic dialect's words. Its shell runs one command at a time: a
command left running (no exit yet) ends when the next one is sent, or is stopped by input such as `C-c`."""
from __future__ import annotations



class OpenHands:
    name = "openhands"
    formats = ("openhands",)
    aliases = {"execute_bash": "shell", "execute_ipython_cell": "action", "str_replace_editor": "edit",
               "edit_file": "edit", "browser": "fetch", "web_read": "fetch", "finish": "submit", "think": "think",
               "delegate": "delegate"}

    one_shell = True    # one command at a time: the next one sent means the one before has ended

    def read(self, call, memo: dict):
        if call.name == "execute_bash" and isinstance(call.args, dict) and call.args.get("is_input") in (True, "true"):
            return []       # keys sent to the command running (`C-c`), not a command
        return None


ENTRIES = [OpenHands()]
