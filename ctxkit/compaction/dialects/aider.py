"""aider's edits (`Applied edit to PATH`) and commits (`Commit HASH message`), as its importer records them."""
from __future__ import annotations

from ..model import MODIFY, Change, Commit


class Aider:
    name = "aider"
    formats = ("aider",)

    def read(self, call, memo: dict):
        args = call.args if isinstance(call.args, dict) else {}
        if call.name == "edit" and isinstance(args.get("path"), str):
            return [Change(call.at, path=args["path"], action=MODIFY, ok=not call.error, ts=call.ts)]
        if call.name == "aider_commit":
            return [Commit(call.at, message=str(args.get("message") or ""), hash=str(args.get("hash") or ""),
                           all_changes=True, ts=call.ts)]
        return None


ENTRIES = [Aider()]
