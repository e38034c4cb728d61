"""aider's edits (`Applied edit to PATH`) and commits (`Commit HASH message`), as its importer records them."""
from __future__ import annotations

from ..model import MODIFY, Change, Commit


class Aider:
    name = "aider"
    formats = ("aider",)

    def read(self, call, memo: dict):
        args = call.args if isinstance(call.args, dict) else {}
        if call.name == "edit" and isinstance(args.get("path"), str):
            # applied only where aider said so (`Applied edit to PATH`): a block that failed to match, or edits
            # the user declined ("Skipping edits to …"), have no such answer
            return [Change(call.at, path=args["path"], action=MODIFY, ok=not call.error and call.result is not None,
                           ts=call.ts)]
        if call.name == "aider_commit" and args.get("before_edits"):
            return []       # aider committing the user's own changes before it applies its edits: not the agent's work
        if call.name == "aider_commit":
            return [Commit(call.at, message=str(args.get("message") or ""), hash=str(args.get("hash") or ""),
                           all_changes=True, ts=call.ts)]
        return None


ENTRIES = [Aider()]
