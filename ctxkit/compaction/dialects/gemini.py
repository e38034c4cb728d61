"""Gemini CLI's tools, read as the generic dialect's words."""
from __future__ import annotations


class Gemini:
    name = "gemini-cli"
    formats = ("gemini-cli", "gemini")
    aliases = {"run_shell_command": "shell", "read_file": "read", "read_many_files": "read", "write_file": "write",
               "replace": "edit", "edit": "edit", "glob": "glob", "search_file_content": "grep", "grep": "grep",
               "list_directory": "glob", "web_fetch": "fetch", "google_web_search": "web_search",
               "write_todos": "plan", "save_memory": "think"}

    def read(self, call, memo: dict):
        return None


ENTRIES = [Gemini()]
