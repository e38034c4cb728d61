"""GitHub through `gh`: issues created, closed, reopened and viewed; pull requests created, merged,
viewed and checked (as work items and `PullRequest` events)."""
from __future__ import annotations

import re

from ..model import Item, PullRequest

URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/(\d+)")


def _opt(argv, *names):
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(n + "="):
                return a[len(n) + 1:]
    return ""


class GitHub:
    name = "github"

    def match(self, argv):
        return len(argv) >= 3 and argv[0] == "gh" and argv[1] in ("issue", "pr")

    def read(self, argv, command, seg):
        what, sub, rest = argv[1], argv[2], list(argv[3:])
        out = command.output or ""
        ev = dict(ts=command.ts)
        num = next((a.lstrip("#") for a in rest if re.fullmatch(r"#?\d+", a)), "")
        m = URL.search(out)
        if m and not num:
            num = m.group(2)
        ok = not command.failed
        title = _opt(rest, "--title", "-t")
        if what == "issue":
            action = {"create": "create", "close": "close", "reopen": "reopen", "view": "show",
                      "edit": "update", "comment": "update"}.get(sub)
            if not action or not num or not ok:
                return []
            return [Item(command.at, tracker="github", item=f"#{num}", action=action, title=title,
                         status={"close": "closed", "create": "open", "reopen": "open"}.get(action, ""),
                         detail=out[:3000] if action == "show" else _opt(rest, "--body", "-b")[:2000], **ev)]
        action = {"create": "create", "merge": "merge", "view": "view", "checks": "checks", "edit": "update",
                  "ready": "update", "close": "close"}.get(sub)
        if not action:
            return []
        return [PullRequest(command.at, action=action, number=num, title=title, url=m.group(0) if m else "",
                            ok=ok and not (action == "checks" and re.search(r"\bfail\b", out)), **ev)]


ENTRIES = [GitHub()]
