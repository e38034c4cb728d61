"""Cline's tools, read as the generic dialect's words."""
from __future__ import annotations


class Cline:
    name = "cline"
    formats = ("cline",)
    aliases = {"execute_command": "shell", "read_file": "read", "write_to_file": "write", "replace_in_file": "edit",
               "search_files": "grep", "list_files": "glob", "list_code_definition_names": "glob",
               "browser_action": "fetch", "ask_followup_question": "question", "attempt_completion": "submit",
               "plan_mode_respond": "think", "new_task": "delegate"}

    def read(self, call, memo: dict):
        return None


ENTRIES = [Cline()]
