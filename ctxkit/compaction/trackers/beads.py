"""beads (`bd`): work items created, claimed (`--status in_progress`), closed, reopened and shown."""
from __future__ import annotations

import json
import re

from ..model import Item

CREATED = re.compile(r"(?:Created issue|Created|✓ Created issue):?\s+([\w.-]+-[\w.]+)", re.I)
ID = re.compile(r"^[\w-]+-[\w.]+$")
SECTION = re.compile(r"^([A-Z][A-Z &]{3,})\s*$", re.M)
GLYPH = re.compile(r"^[^\w\[]*")


def _show(out: str, item: str) -> tuple[str, str]:
    """(title, description) from `bd show`'s text: the title line, then the DESCRIPTION section."""
    title = ""
    for line in out.splitlines():
        if item in line:
            rest = GLYPH.sub("", line).replace(item, "", 1)
            rest = re.sub(r"\[[^\]]*\]", " ", rest)
            parts = [p.strip(" :·") for p in rest.split("·")]
            title = max(parts, key=len).strip() if parts else ""
            break
    desc = ""
    m = re.search(r"^DESCRIPTION\s*$", out, re.M)
    if m:
        body = out[m.end():]
        nxt = SECTION.search(body)
        desc = (body[:nxt.start()] if nxt else body).strip()
    return title, desc
JSON_FIELD = re.compile(r'"(id|title|status|description)":\s*"((?:[^"\\]|\\.)*)"')


def _json_fields(out: str) -> dict:
    got: dict = {}
    for k, v in JSON_FIELD.findall(out[:20000]):
        got.setdefault(k, v)
    return got


def _opt(argv, *names):
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(n + "="):
                return a[len(n) + 1:]
    return ""


def _unescape(text: str) -> str:
    try:
        return json.loads(f'"{text}"')
    except ValueError:
        return text


LISTED = re.compile(r"^[^\w\n]*?(?:\d+\.\s+)?(?:\[[^\]]*\]\s*)*([○◐●✓✗]?)\s*([a-z][\w-]*-[\w]+(?:\.\d+)*):\s+(.+?)\s*$", re.M)
GLYPH_STATUS = {"✓": "closed", "◐": "in_progress", "○": "open", "✗": "closed"}


def _listed(command, out: str, skip: str = "") -> list:
    """The items a listing names (`bd ready`, `bd list`, the children and dependencies `bd show` prints)."""
    found = []
    for m in LISTED.finditer(out[:20000]):
        glyph, item, title = m.groups()
        if item == skip:
            continue
        title = re.sub(r"\s+[●○◐]\s*P\d.*$|\s+\[[^\]]*\]\s*$", "", title).strip()
        title = re.sub(r"^\((?:EPIC|epic)\)\s*", "", title)
        found.append(Item(command.at, tracker="beads", item=item, action="list", title=title,
                          status=GLYPH_STATUS.get(glyph, ""), ts=command.ts))
    return found


class Beads:
    name = "beads"

    def match(self, argv):
        return bool(argv) and argv[0] in ("bd", "beads")

    def read(self, argv, command, seg):
        if len(argv) < 2 or command.failed:
            return []
        sub, rest = argv[1], list(argv[2:])
        first_opt = next((k for k, a in enumerate(rest) if a.startswith("-")), len(rest))
        ids = [a for a in rest[:first_opt] if ID.match(a)]
        out = command.output or ""
        ev = dict(ts=command.ts)
        js = _json_fields(out) if "--json" in rest else {}
        if sub == "create":
            m = CREATED.search(out)
            item = m.group(1) if m else js.get("id") or _opt(rest, "--id")
            title = _opt(rest, "--title", "-t") or next((a for a in rest if not a.startswith("-")), "")
            return [Item(command.at, tracker="beads", item=item, action="create", title=title or js.get("title", ""),
                         status="open", detail=_opt(rest, "--description", "-d"), **ev)] if item else []
        if sub == "update":
            status = _opt(rest, "--status", "-s")
            action = {"in_progress": "claim", "closed": "close", "open": "reopen"}.get(status, "update")
            if "--claim" in rest:
                action = "claim"
            return [Item(command.at, tracker="beads", item=i, action=action, status=status or "",
                         title=_opt(rest, "--title"), **ev) for i in ids]
        if sub in ("close", "done"):
            return [Item(command.at, tracker="beads", item=i, action="close", status="closed",
                         detail=_opt(rest, "--reason", "-r"), **ev) for i in ids]
        if sub == "reopen":
            return [Item(command.at, tracker="beads", item=i, action="reopen", status="open", **ev) for i in ids]
        if sub == "show" and ids:
            title, desc = _show(out, ids[0]) if not js else (js.get("title", ""), _unescape(js.get("description", "")))
            rest_out = out[out.find("DESCRIPTION"):] if "DESCRIPTION" in out else ""
            tail = rest_out[len(desc) + 11:] if desc else rest_out
            return [Item(command.at, tracker="beads", item=ids[0], action="show", title=title,
                         status=js.get("status", ""), detail=desc[:6000], **ev)] + (_listed(command, tail, ids[0]) if not js else [])
        if sub in ("ready", "list", "search", "blocked"):
            return _listed(command, out)
        return []


ENTRIES = [Beads()]
