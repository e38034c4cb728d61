"""What a successor needs depends on the kind of session; the kind is read from the transcript's
shape, never from a file name (pure).

- a SWE-agent fix (its file viewer's `(Open file: …)` footer, `edit N:M … end_of_edit`, `submit`):
  the root cause as the agent stated it before its first edit, the change in words (lines removed
  and added, from the file as last viewed), the edits the linter rejected;
- a customer-service dialogue (domain tools such as `get_user_details`, `update_…`, JSON results,
  no files or shell): the customer's records as looked up (ids, payment methods with balances, the
  reservation), every action call with its arguments and its result or error, computations, and the
  change the customer agreed to;
- a read-only exploration (reads and searches, no edits): findings per question asked, from the
  agent's report (its sections, with file:line), the work root, and what does not exist;
- an aider chat: requests made through `AI!` comments in the code, and commits `/undo` removed.

`read(span, story)` gives (section title, lines, more lines) for the summary: the lines come right
after Next step, the more lines (an exploration's report sections no question asked for) only
after the files.
"""
from __future__ import annotations

import difflib
import json
import re
from typing import Sequence

from .requests import brief, request_text
from .shorten import unemphasize

SWE_FOOTER = re.compile(r"\(Open file: [^)]*\)\s*\n\(Current directory: ")
DEV_TOOLS = {"read", "edit", "write", "multiedit", "bash", "shell", "shell_command", "grep", "glob", "ls", "open",
             "create", "submit", "find_file", "search_dir", "search_file", "goto", "scroll_down", "scroll_up",
             "apply_patch", "update_plan", "todowrite", "task", "taskoutput", "webfetch", "websearch", "skill",
             "notebookedit", "exitplanmode", "enterplanmode", "askuserquestion", "aider_commit", "str_replace_editor",
             "view", "insert", "think"}
LOOK = {"Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "open", "find_file", "search_dir", "search_file",
        "goto", "scroll_down", "scroll_up", "view"}
EDITS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "edit", "create", "insert", "str_replace_editor"}
ACTION = re.compile(r"^(?:update|book|cancel|modify|create|add|remove|delete|send|exchange|return|transfer|set|"
                    r"change|refund|issue)_", re.I)
LOOKUP = re.compile(r"^(?:get|find|list|lookup|fetch)_", re.I)
SEARCH = re.compile(r"^(?:search|query)_", re.I)


def _calls(span: Sequence[dict]):
    from .artifacts import _args  # the one parser of a call's arguments

    results = {r.get("tool_call_id"): r for r in span if r.get("role") == "tool" and r.get("tool_call_id")}
    out = []
    for i, r in enumerate(span):
        for c in r.get("tool_calls") or ():
            name = ((c.get("function") or {}).get("name") or c.get("name") or "").strip()
            args = _args(c)
            out.append((i, name, args if isinstance(args, dict) else {}, results.get(c.get("id"))))
    return out


def _text(r) -> str:
    return r.get("content") if isinstance(r, dict) and isinstance(r.get("content"), str) else ""


def _command(args: dict) -> str:
    v = args.get("command") or args.get("cmd") or ""
    return v.strip() if isinstance(v, str) else ""


def _failed(res) -> bool:
    from .distill import result_failed

    return res is not None and (result_failed(res) or _text(res).lstrip().lower().startswith("error"))


def shape(span: Sequence[dict], calls=None) -> str:
    """swe | service | explore | aider | coding."""
    calls = _calls(span) if calls is None else calls
    names = [n for _, n, _, _ in calls]
    if "aider_commit" in names or any(_text(r).startswith("Tokens: ") and "usage" in (r.get("flags") or ())
                                      for r in span if r.get("role") == "system"):
        return "aider"
    if any(SWE_FOOTER.search(_text(res)) for _, _, _, res in calls) or \
            any(n == "submit" or "end_of_edit" in _command(a) for _, n, a, _ in calls):
        return "swe"
    domain = [n for n in names if n.lower() not in DEV_TOOLS]
    if domain and len(domain) >= len(names) * 0.6 and any(_json(_text(res)) is not None for _, _, _, res in calls):
        return "service"
    if names and not any(n in EDITS for n in names) and sum(n in LOOK or n == "Bash" for n in names) >= 3:
        return "explore"
    return "coding"


def read(span: Sequence[dict], story=None) -> list[tuple[str, list[str], list[str]]]:
    events = [r for r in span if isinstance(r, dict) and r.get("kind") == "event"]  # aider's command output
    span = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    calls = _calls(span)
    kind = shape(span, calls)
    cwd = getattr(story, "cwd", None)
    if kind == "swe":
        found = _swe(span, calls)
    elif kind == "service":
        found = _service(span, calls)
    elif kind == "explore":
        found = _explore(span, calls, cwd)
    elif kind == "aider":
        found = _aider(span, events)
    else:
        found = []
    return [(t, lines, rest[0] if rest else []) for t, lines, *rest in found]


# --- SWE-agent ------------------------------------------------------------------------------------

VIEW_HEAD = re.compile(r"^\[File: (\S+) \(\d+ lines total\)\]", re.M)
VIEW_LINE = re.compile(r"^(\d+):(.*)$")
EDIT_RANGE = re.compile(r"^edit (\d+):(\d+)\n(.*?)(?:\nend_of_edit\s*)?$", re.S)


def _views(text: str):
    m = VIEW_HEAD.search(text)
    if not m:
        return None, {}
    lines = {}
    for ln in text[m.end():].splitlines():
        v = VIEW_LINE.match(ln)
        if v:
            lines[int(v.group(1))] = v.group(2)
    return m.group(1), lines


def _short(path: str) -> str:
    return re.sub(r"^/[^/]+__[^/]+/", "", path).lstrip("./") or path


def _swe(span, calls) -> list[tuple[str, list[str]]]:
    seen: dict[str, dict[int, str]] = {}   # path -> line number -> text, as last viewed
    open_file = None
    created: set = set()
    out, rejected, cause = [], [], ""
    applied_after = False   # an edit applied after the last rejected one
    for i, name, args, res in calls:
        text = _text(res)
        path, lines = _views(text) if not _failed(res) else (None, {})
        cmd = _command(args)
        if cmd.startswith("create "):
            created.add(cmd.split(None, 1)[1].strip())
        is_edit = name in ("edit", "str_replace_editor") or cmd.startswith("edit ")
        target = path or open_file
        scratch = bool(target) and any(target.endswith("/" + c) or target == c for c in created)
        if is_edit and not cause and not scratch:
            prose = unemphasize(re.sub(r"```.*?```", " ", _text(span[i]), flags=re.S))
            sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+", prose) if len(s.strip()) > 20]
            cause = " ".join(sents[:2])
        if is_edit and _failed(res):
            why = re.search(r"E\d+ (\w+Error: [^\n]+)", text)
            rejected.append((cmd.split("\n", 1)[0] or name, why.group(1) if why else brief(text, 80)))
            applied_after = False
        elif is_edit and not scratch:
            applied_after = True
            m = EDIT_RANGE.match(cmd)
            if m and target:
                a, b = int(m.group(1)), int(m.group(2))
                old = [seen.get(target, {}).get(n) for n in range(a, b + 1)]
                said = _diff_words([x for x in old if x is not None], m.group(3).split("\n")) \
                    if all(x is not None for x in old) else ""
                out.append(f"`{_short(target)}` lines {a}–{b}" + (f": {said}" if said else " replaced."))
            elif isinstance(args.get("search"), str) and isinstance(args.get("replace"), str):
                said = _diff_words(args["search"].split("\n"), args["replace"].split("\n"))
                out.append(f"`{_short(target or args.get('path') or '?')}`: {said or 'edited'}")
        if path:
            open_file = path
            seen.setdefault(path, {}).update(lines)  # an edit's own listing shows the file after it
        elif SWE_FOOTER.search(text):
            m = re.search(r"\(Open file: ([^)]*)\)", text)
            if m and m.group(1) not in ("n/a", ""):
                open_file = m.group(1)
    fix = []
    if cause:
        fix.append(f"Root cause, as the agent stated it before editing: {brief(cause, 300)}")
    # what the exploration before the edit found: the lines of the files viewed that bear on the issue
    from . import findings as F

    viewed = {p: ls for p, ls in seen.items() if not any(p.endswith("/" + c) or p == c for c in created)}
    issue = next((request_text(r) for r in span if request_text(r)), "").split("\n", 1)[0]
    hits = F.key_lines(f"{issue} {cause}", F.Index(viewed), cap=5, per_file=5) if viewed and (issue or cause) else []
    if hits:
        fix.append("Where it is, as viewed: " + F.said(hits, _short))
    fix += [f"Change: {x}" for x in out]
    if rejected:
        kinds = list(dict.fromkeys(w for _, w in rejected))
        fix.append(f"{len(rejected)} edit{'s' if len(rejected) > 1 else ''} rejected by the linter "
                   f"{'before one applied' if applied_after else '(none applied after them yet)'} "
                   f"({'; '.join(kinds[:3])}): `{rejected[0][0]}`" + (f" … `{rejected[-1][0]}`" if len(rejected) > 1 else ""))
    return [("Fix", fix)] if fix else []


def _diff_words(old: list[str], new: list[str], cap: int = 3) -> str:
    """What an edit changed, word by word (re-wrapping and re-indenting are not changes): each
    changed run as `before` → `after` with a word of context, at most `cap` runs."""
    a, b = " ".join(old).split(), " ".join(new).split()
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        ctx = a[i1 - 1] + " " if i1 > 0 else ""
        was, now = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        if op == "delete":
            parts.append(f"removed `{brief(was, 120)}`" + (f" after `{a[i1 - 1]}`" if i1 > 0 else ""))
        elif op == "insert":
            parts.append(f"added `{brief(now, 160)}`" + (f" after `{a[i1 - 1]}`" if i1 > 0 else ""))
        else:
            parts.append(f"`{brief(ctx + was, 120)}` → `{brief(ctx + now, 160)}`")
    more = len(parts) - cap
    return "; ".join(parts[:cap]) + (f"; {more} more change{'s' if more > 1 else ''}" if more > 0 else "")


# --- customer service -----------------------------------------------------------------------------

def _json(text: str):
    t = (text or "").strip()
    if not t or t[0] not in "[{":
        return None
    try:
        return json.loads(t)
    except ValueError:
        return None


def _scalar(v) -> bool:
    return isinstance(v, (str, int, float, bool)) or v is None


def _flat(obj, cap: int = 420) -> str:
    """A looked-up record in one line: its scalar fields, its small lists, and its dicts of dicts
    (payment methods by id) as `id (field, field)`."""
    parts = []
    for k, v in obj.items():
        if k in ("address", "dob", "name") and not _scalar(v):
            if k == "name" and isinstance(v, dict):
                parts.append("name " + " ".join(str(x) for x in v.values() if _scalar(x)))
            continue
        if _scalar(v):
            parts.append(f"{k} {v}")
        elif isinstance(v, list) and all(_scalar(x) for x in v):
            parts.append(f"{k} " + ", ".join(map(str, v[:8])) + (" …" if len(v) > 8 else ""))
        elif isinstance(v, list) and all(isinstance(x, dict) for x in v):
            rows = ["/".join(str(x) for x in d.values() if _scalar(x) and x not in (None, "")) for d in v[:6]]
            parts.append(f"{k}: " + "; ".join(rows) + (" …" if len(v) > 6 else ""))
        elif isinstance(v, dict) and all(isinstance(x, dict) for x in v.values()):
            rows = [f"{i} (" + ", ".join(str(x) for kk, x in d.items() if _scalar(x) and kk != "id") + ")"
                    for i, d in list(v.items())[:8]]
            parts.append(f"{k}: " + "; ".join(rows))
    return brief("; ".join(parts), cap)


def _args_line(args: dict) -> str:
    def val(v):
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return " ".join(str(x) for x in v.values())
        return str(v)
    return ", ".join(f"{k}={val(v)}" for k, v in args.items() if k != "summary")


def _ident(d: dict) -> str:
    """A looked-up record's own name: its first `…_number` / `…_id` / `id` field."""
    return next((str(v) for k, v in d.items() if re.search(r"(?:^id|_id|_number|_code)$", k) and _scalar(v) and v), "")


def _rows(items: list, cap: int = 520) -> str:
    """A list of looked-up records (the options a search found) in one line: the fields they all
    share once, then each record by its name with its own fields and its small nested tables."""
    dicts = [x for x in items if isinstance(x, dict)]
    if not dicts:
        return brief(", ".join(map(str, items)), cap)
    common = {k: v for k, v in dicts[0].items() if _scalar(v) and len(dicts) > 1 and all(d.get(k) == v for d in dicts)}
    rows = []
    for d in dicts[:8]:
        me = _ident(d)
        bits = [f"{k.replace('scheduled_', '').replace('_time_est', '')} {v}" for k, v in d.items()
                if _scalar(v) and k not in common and str(v) != me and v not in (None, "")]
        for k, v in d.items():
            if isinstance(v, dict) and v and all(_scalar(x) for x in v.values()):
                bits.append(f"{k} " + ", ".join(f"{kk} {x}" for kk, x in v.items()))
        rows.append((me + ": " if me else "") + "; ".join(bits))
    head = ("all " + ", ".join(f"{k} {v}" for k, v in common.items()) + " — ") if common else ""
    return brief(head + " | ".join(rows) + (f" | and {len(dicts) - 8} more" if len(dicts) > 8 else ""), cap)


def _numbers(obj, where: str, found: dict) -> None:
    """Each number a looked-up record holds, with what it is: `HAT072 prices business`."""
    if isinstance(obj, dict):
        me = " ".join(x for x in (where, _ident(obj)) if x)
        for k, v in obj.items():
            if isinstance(v, bool):
                continue
            if isinstance(v, (int, float)):
                found.setdefault(float(v), []).append(" ".join(x for x in (me, k) if x))
            elif isinstance(v, (dict, list)):
                _numbers(v, " ".join(x for x in (me, k) if x), found)
    elif isinstance(obj, list):
        for x in obj:
            _numbers(x, where, found)


def _traced(expression: str, found: dict) -> str:
    """The numbers of the agent's arithmetic, each with where the looked-up records hold it (or
    that they do not): the reader checks the agent's choice of numbers, not only its sum."""
    parts = []
    for tok in dict.fromkeys(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", expression)):
        where = list(dict.fromkeys(found.get(float(tok), [])))
        if float(tok) < 10 and not where:
            continue
        parts.append(f"{tok}: " + (" or ".join(where[:2]) + (" …" if len(where) > 2 else "") if where
                                   else "not in any looked-up record"))
    return "; ".join(parts)


def _service(span, calls) -> list[tuple[str, list[str]]]:
    state, actions = [], []
    looked: dict[str, str] = {}
    numbers: dict = {}
    for i, name, args, res in calls:
        text = _text(res)
        obj = _json(text)
        if (LOOKUP.match(name) or SEARCH.match(name)) and isinstance(obj, (dict, list)) and obj and not _failed(res):
            key = name + json.dumps(args, sort_keys=True)
            who = ", ".join(f"{v}" for v in args.values() if _scalar(v))
            looked[key] = f"{name}({who}): {_flat(obj) if isinstance(obj, dict) else _rows(obj)}"
            _numbers(obj, "", numbers)
        elif ACTION.match(name) and not name.startswith("transfer_"):
            result = brief(text, 120) if text else "no result recorded"
            actions.append(f"`{name}({brief(_args_line(args), 220)})` → {'FAILED: ' if _failed(res) else ''}{result}")
        elif name == "calculate" and text:
            expr = str(args.get("expression", ""))
            trace = _traced(expr, numbers)
            actions.append(f"Calculated by the agent: `{expr}` = {brief(text, 40)}" +
                           (f" (its numbers, as the records hold them: {trace})" if trace else ""))
    state = list(looked.values())
    agreed = ""
    for k, r in enumerate(span):
        if r.get("role") == "assistant" and re.search(r"\bconfirm\b", _text(r), re.I) and \
                any(request_text(x) and re.match(r"^\W*(yes|yeah|correct|confirm|go ahead|ok)", request_text(x), re.I)
                    for x in span[k + 1:k + 2]):
            agreed = _text(r)
    out = [("Customer records", state)] if state else []
    if agreed:
        body = unemphasize(re.sub(r"\s+", " ", agreed))
        out.append(("Agreed with the customer", [brief(body, 500)]))
    if actions:
        out.append(("Actions and results", actions))
    return out


# --- read-only exploration ------------------------------------------------------------------------

FENCED = re.compile(r"^[ \t]*```.*?^[ \t]*```[^\n]*$", re.M | re.S)   # a code block: fences open a line
HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*$")
NUMBERED_Q = re.compile(r"^\s*(\d+)[.)]\s+(.+)$")


def _sections(report: str) -> list[tuple[int, str, list[str]]]:
    """(level, heading, content lines) of a markdown report, each heading's content including its
    subsections' (their headings as lines); code blocks and table rules left out."""
    body = FENCED.sub("", report)
    flat: list[list] = [[0, "", []]]
    for ln in body.splitlines():
        t = ln.strip()
        h = HEADING.match(t)
        if h:
            flat.append([len(h.group(1)), unemphasize(h.group(2)).strip(), []])
            continue
        if not t or re.match(r"^[-|: ]+$", t):
            continue
        flat[-1][2].append(t)
    out = []
    for k, (lvl, head, lines) in enumerate(flat):
        allp = list(lines)
        for lv2, h2, l2 in flat[k + 1:]:
            if lvl == 0 or lv2 <= lvl:
                break
            allp += [h2 + ":"] + l2
        if allp:
            out.append((lvl, head, allp))
    return out


def _gist(lines: list[str], cap: int = 320) -> str:
    picked = []
    for ln in lines:
        t = unemphasize(re.sub(r"^[-*+]\s+|^\d+[.)]\s+", "", ln)).strip()
        if t.startswith("|"):
            cells = [c.strip() for c in t.strip("|").split("|") if c.strip()]
            t = ": ".join([cells[0], ", ".join(cells[1:])]) if len(cells) > 1 else ""
        if t:
            picked.append(t.rstrip(":"))
        if len("; ".join(picked)) >= cap:
            break
    return brief("; ".join(picked), cap)


def _words(s: str) -> set:
    return {w for w in re.findall(r"[a-z][a-z0-9_]{3,}", s.lower())}


def _explore(span, calls, cwd) -> list[tuple[str, list[str]]]:
    out = []
    if cwd:
        out.append(f"Work root: `{cwd}`.")
    missing = []
    for _, name, args, res in calls:
        t = _text(res)
        path = args.get("file_path") or args.get("path") or ""
        if "File does not exist" in t and path:
            missing.append(f"`{_rel(path, cwd)}`")
        elif name == "Glob" and t.strip() == "No files found" and args.get("pattern"):
            missing.append(f"no file matches `{args['pattern']}`")
        else:
            for m in re.finditer(r"[‘'`]([^’'`\n]+)[’'`]: No such file or directory", t):
                missing.append(f"`{_rel(m.group(1), cwd)}`")
    if missing:
        out.append("Not there: " + ", ".join(dict.fromkeys(missing)) + ".")
    report = _report(span)
    task = next((request_text(r) for r in span if request_text(r)), "") or ""
    questions = [(m.group(1), m.group(2)) for m in map(NUMBERED_Q.match, task.splitlines()) if m]
    if not report:  # cut mid-way: what the reads so far showed, by question, and what is left to read
        return _explore_midway(out, calls, cwd, task, questions, span)
    secs = _sections(report) if report else []
    used: set = set()
    for num, q in questions:
        best, score = None, 0
        for k, (_, h, _) in enumerate(secs):
            if k in used:
                continue
            s_ = len(_words(q) & _words(h)) + (3 if re.match(rf"^{num}[.)]\s", h) else 0)
            if s_ > score:
                best, score = k, s_
        if best is not None and score >= 2:
            used.add(best)
            out.append(f"Q{num} ({brief(q, 70)}): {_gist(secs[best][2])}")
        else:
            out.append(f"Q{num} ({brief(q, 70)}): not answered under its own heading in the report.")
    more = []
    inside = {k for k in used for j in range(k + 1, len(secs)) if _within(secs, k, j)}
    for k, (lvl, h, lines) in enumerate(secs):
        if k in used or k in inside or not h or re.search(r"report|overview", h, re.I) or \
                any(_within(secs, k, j) for j in used):  # a title over the sections already told
            continue
        if any(_within(secs, j, k) for j in range(k) if secs[j][1] and not re.search(r"report|overview", secs[j][1], re.I)):
            continue  # told with its parent
        more.append(f"{brief(h, 60)}: {_gist(lines, 260)}")
    return [("Findings", out, more)] if out or more else []


def _report(span) -> str:
    """The agent's report: a long message with no call after it (an exploration's last word). A
    long message the agent went on reading after is a note on the way, not the report."""
    for r in reversed(span):
        if r.get("role") != "assistant":
            continue
        if r.get("tool_calls"):
            return ""
        if len(_text(r)) > 400:
            return _text(r)
    return ""


PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.\w{1,6})\b")
DEP = re.compile(r"\{:(\w+),\s*\"([^\"]{1,20})\"")                    # a mix dependency `{:ash, "~> 3.0"`
CONFIG_FOR = re.compile(r"^\s*config\s+(:\w+)(?:,\s*([A-Z][\w.]*|:\w+))?", re.M)   # `config :app, Mod`


def _defs(path: str, text: str) -> tuple[int, list[str], list[str]]:
    """A file read, as (lines, dependencies and config entries, defined names)."""
    from .entities import LINE_NO
    from .episodes import definitions

    body = LINE_NO.sub("", text)
    deps = list(dict.fromkeys(f"{a} {b}" for a, b in DEP.findall(body)))
    confs = list(dict.fromkeys("config " + " ".join(x for x in m if x) for m in CONFIG_FOR.findall(body)))
    return len(body.splitlines()), deps + confs, definitions(body, path)


OUTLINE_CAP = 10   # the names a file read is outlined by; the rest are said when the budget allows


def _outline(read: tuple[int, list[str], list[str]], cap: int = OUTLINE_CAP) -> str:
    """What a file read showed, in a few words: its length, the dependencies and config entries
    it sets, the modules and functions it defines."""
    n, sets, names = read
    bits = []
    if sets:
        bits.append(", ".join(sets[:16]) + (f" ({len(sets)} in all)" if len(sets) > 16 else ""))
    if names:
        bits.append(", ".join(f"`{d}`" for d in names[:cap]) + (f" ({len(names)} in all)" if len(names) > cap else ""))
    return f"{n} lines" + (": " + "; ".join(bits) if bits else "")


def _explore_midway(out: list[str], calls, cwd, task: str, questions, span=()) -> list:
    """An exploration cut before its report: per question, what the files read so far showed
    for it (core.findings: the lines that answer it, with file and line; what two files it names
    share and what each has alone; a named module's public interface; markup held in code), the
    listings made, the agent's own conclusions, and what is not looked at yet."""
    from . import findings as F

    files = F.seen_files(calls, _failed)
    reads = {}   # path -> the fullest text read (for its length and definitions)
    listed: list[tuple[str, list[str]]] = []   # (command as shown, its entries)
    for _, name, args, res in calls:
        t = _text(res)
        if res is None or _failed(res) or t.lstrip().startswith("<tool_use_error>"):
            continue
        path = args.get("file_path") or args.get("path") or ""
        cmd = _command(args)
        if name in ("Read", "view", "open") and path and t.strip():
            if len(t) > len(reads.get(path, "")):
                reads[path] = t
        elif cmd and F.LISTS.match(cmd) and t.strip():
            from .focus import _entries

            shown = cmd.replace(cwd.rstrip("/") + "/", "").replace(cwd.rstrip("/"), ".") if cwd else cmd
            # `ls -la a/ && ls -la b/`: each listing on its own (each `ls -l` output starts with `total N`)
            cmds = [c.strip() for c in re.split(r"\s*(?:&&|;)\s*", shown) if c.strip()]
            chunks = re.split(r"(?m)^total \d+\s*$", t)[1:]
            pairs = list(zip(cmds, chunks)) if len(cmds) > 1 and len(chunks) == len(cmds) and \
                all(F.LISTS.match(c) for c in cmds) else [(shown, t)]
            for c, chunk in pairs:
                rows = [ln for ln in chunk.splitlines() if ln.strip()]
                listed.append((c, [_rel(x, cwd) for x in (_entries(rows) if rows else []) if x not in (".", "..")]))
    rel = lambda p: _rel(p, cwd)  # noqa: E731
    known_defs: dict = {}

    def defs(p: str):
        """What the file read defines (_defs), worked out once."""
        if p not in known_defs:
            known_defs[p] = _defs(p, reads[p])
        return known_defs[p]
    index = F.Index(files)
    shared: dict = {}
    for _, q in questions:
        for t in dict.fromkeys(t for t, _, _ in F.enquiry_terms(q)):
            shared[t] = shared.get(t, 0) + 1
    said: set = set()          # (path, line) already given under an earlier question
    outlined: set = set()      # files whose outline is given
    more: list[str] = []       # the next best lines, for when the budget allows
    extra: list = []           # (question, its next best lines)
    used_lists: set = set()
    answered: set = set()
    gone = next((x for x in out if x.startswith("Not there: ")), "")
    asks = questions or [("", " ".join(task.split()))]   # no numbered questions: the request is the one line of enquiry
    for num, q in asks:
        head = f"Q{num} ({brief(q, 70)}): " if num else "For the request: "
        parts = []
        terms = F.enquiry_terms(q)
        why = {p: F.subject(p, q, terms, cwd) for p in files}
        by_name = [p for p in files if any(k[1] for k in why[p]) and not F.TEST_PATH.search(p)]
        by_path = [p for p in files if F.PATH_MARK in why[p]]
        if F.MARKUP_Q.search(q):
            stems = {t for t, is_name, _ in terms if not is_name}
            for p, lines in files.items():
                for a, b, holder in F.markup_blocks(lines):
                    if any(seg.startswith(t) for k in range(a, b + 1) if k in lines
                           for seg in F._segments(lines[k]) for t in stems):
                        where = f"in `{F.fragment(lines[holder].strip(), 60)}` (line {holder}), " if holder else ""
                        parts.append(f"`{rel(p)}` holds its markup inline, {where}lines {a}–{b}")
        for p in by_path[:12]:  # the files the question names by their path: what each is
            if p in reads:
                parts.append(f"`{rel(p)}` ({_outline(defs(p), 6)})")
                outlined.add(p)
        if F.API_Q.search(q):
            for p in by_name:
                api = F.interface(files[p])
                if api:
                    parts.append(f"`{rel(p)}`'s public functions: " + ", ".join(
                        f"`{F.fragment(h, 80)}` (line {n}" + (f": \"{d}\")" if d else ")") for n, h, d in api[:8]) +
                        (f" ({len(api)} in all)" if len(api) > 8 else ""))
        settled = {p for p in by_path if p in reads and defs(p)[1]}  # a manifest or config: its outline says it
        hits = [h for h in F.key_lines(q, index, shared, said, cap=14, cwd=cwd) if h.path not in settled]
        said |= {(h.path, h.line) for h in hits[:6]}
        if hits[:6]:
            parts.append(F.said(hits[:6], rel))
        if hits[6:]:
            extra.append((num, hits[6:]))
        if 2 <= len(by_name) <= 4:
            common, only = F.compare(files, by_name)
            if common:
                parts.append(("both" if len(by_name) == 2 else "all") + " define " + _names(common))
            for p in by_name:
                if only.get(p):
                    parts.append(f"only `{rel(p)}` defines " + _names(only[p]))
        missing_defs = F.undefined(q, index, cwd)
        if missing_defs:
            parts.append("not read yet: where " + ", ".join(f"`{x}`" for x in missing_defs) +
                         (" is" if len(missing_defs) == 1 else " are") + " defined")
        for k, (cmd, rows) in enumerate(listed):  # a listing of a folder the question names
            if k not in used_lists and any(re.search(rf"(?<![\w/.-]){re.escape(d.rstrip('/'))}(?:/|\b)", cmd)
                                           for d in re.findall(r"(?<![\w/])([\w.-]+/)(?!\w)", q)):
                used_lists.add(k)
                parts.append(f"`{brief(cmd, 80)}` shows " + _entries_said(rows))
        # the files its words point at that the span found missing (a template that does not exist)
        qw = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", q)} - F.SKIP
        absent = [x for x in re.findall(r"`[^`]+`", gone) if ("/" in x or "." in x)
                  and qw & set(re.findall(r"[a-z]{4,}", x.lower()))][:3]
        gone_said = f"{', '.join(absent)} do{'es' if len(absent) == 1 else ''} not exist" if absent else ""
        if parts:
            answered.add(num)
            out.append(head + "; ".join(parts + ([gone_said] if gone_said else [])) + ".")
        else:
            out.append(head + "nothing in the files read so far bears on it" + (f"; {gone_said}" if gone_said else "") +
                       ": not looked at yet.")
    other = [p for p in reads if p not in outlined and not any(path == p for path, _ in said)]
    if other:
        out.append("Read, nothing above from them: " + "; ".join(
            f"`{rel(p)}` ({_outline(defs(p), 4)})" for p in other) + ".")
    from .focus import _search_conclusion

    searched = [x for x in dict.fromkeys(_search_conclusion(name, args, _text(res), cwd) for _, name, args, res in calls
                                         if res is not None and name in ("Grep", "Glob")) if x]
    # a search that only found a file read since, or nothing (said under Not there), told nothing new
    searched = [x for x in searched if not (x.endswith(": no match.") and x.split("`")[1] in gone) and not any(
        x.endswith(f": found only in `{rel(p)}`.") for p in reads)]
    if searched:
        out.append("Searches: " + "; ".join(re.sub(r"^searched ", "", x).rstrip(".") for x in searched[-8:]) + ".")
    rest = [(c, r) for k, (c, r) in enumerate(listed) if k not in used_lists]
    if rest:
        out.append("Listed: " + "; ".join(f"`{brief(c, 80)}` shows " + _entries_said(r, 6) for c, r in rest[-6:]) + ".")
    notes = F.conclusions(span)
    if notes:
        # each sentence whole, as a fact of the span says it (the Facts section then does not repeat it)
        out.append("The agent's own conclusions so far: " + " ".join(
            f"\"{n}\"" if n.endswith(("!", "…")) else f"\"{n}.\"" for n in notes))
    named = list(dict.fromkeys(PATHLIKE.findall(task)))
    done = {rel(p) for p in reads}
    left = [p for p in named if p not in done and p.rsplit("/", 1)[-1] not in gone]
    nxt = []
    if left:
        nxt.append("Read the files the request names that are not read yet: " + ", ".join(f"`{p}`" for p in left) + ".")
    open_qs = [n for n, _ in questions if n not in answered]
    if not questions and "" not in answered:
        nxt.append("Nothing read so far bears on the request: look for it first.")
    if open_qs:
        nxt.append("Look for what " + ", ".join(f"Q{n}" for n in open_qs) + " ask" + ("s" if len(open_qs) == 1 else "") +
                   ": nothing read so far bears on " + ("it" if len(open_qs) == 1 else "them") + ".")
    asked = f"answering {', '.join(f'Q{n}' for n, _ in questions)} under their own headings" if questions else ""
    full = " with the full content of each file, as the request asks" if re.search(r"\bfull\b", task, re.I) else ""
    nxt.append(("Then write" if left or open_qs else "Write") + " the report the request asks for" +
               (f", {asked}" if asked else "") + full + "; no report was written before the cut.")
    if reads:
        nxt.append("The files' contents are not kept in this summary (only what each showed, under Findings, with line "
                   "numbers): re-read " + ("every file the report must quote in full" if full else
                                           "the files the report must quote") + " before writing it.")
    # the budget left at the end: the next best lines per question (a line said above, or under an
    # earlier question, is not said again), then the rest of what each file read defines that no line
    # above names (the report it still has to write asks for them)
    for num, hits in extra:
        hits = [h for h in hits if (h.path, h.line) not in said]
        said |= {(h.path, h.line) for h in hits}
        if hits:
            more.append((f"Q{num}, more lines: " if num else "More lines on the request: ") + F.said(hits, rel) + ".")
    told = "\n".join(out + more)
    ticked = set(re.findall(r"`([^`\n]+)`", told))              # the names said above
    called = set(re.findall(r"(?<![\w.])([\w?!]+)\(", told))   # a function said by a call or header of it
    for p in reads:
        names = [d for d in defs(p)[2] if d not in ticked and not (
            re.match(r"^[\w?!]+/\d+$", d) and d.split("/")[0] in called)]
        if len(names) > 4:
            more.append(f"The rest of what `{rel(p)}` defines ({len(names)} more): " +
                        ", ".join(f"`{d}`" for d in names[:60]) + ".")
    return [("Findings so far (no report yet)", out, more), ("Next step", nxt)]


def _names(names: list[str], cap: int = 8) -> str:
    return ", ".join(f"`{n}`" for n in names[:cap]) + (f" ({len(names)} in all)" if len(names) > cap else "")


def _entries_said(rows: list[str], cap: int = 12) -> str:
    """A listing's entries, their common folder said once."""
    base = ""
    if len(rows) > 1 and all("/" in r for r in rows):
        pre = rows[0].rsplit("/", 1)[0] + "/"
        while pre and not all(r.startswith(pre) for r in rows):
            pre = pre.rstrip("/").rsplit("/", 1)[0] + "/" if "/" in pre.rstrip("/") else ""
        if pre:
            base, rows = pre, [r[len(pre):] for r in rows]
    said = ", ".join(f"`{brief(r, 80)}`" for r in rows[:cap]) + (f" ({len(rows)} in all)" if len(rows) > cap else "")
    return (f"in `{base}`: " if base else "") + said


def _within(secs, k: int, j: int) -> bool:
    """Section j is a subsection of section k (it follows k before any heading of k's level)."""
    lvl = secs[k][0]
    if j <= k or lvl == 0:
        return False
    return all(secs[m][0] > lvl for m in range(k + 1, j + 1))


def _rel(path: str, cwd) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


# --- aider ----------------------------------------------------------------------------------------

def _code_asks(span) -> list[tuple[int, str]]:
    """(record index, request) for each request made through an `AI!` comment in the code (aider's
    watch mode), as the agent quoted the comment, in order."""
    asks: list[tuple[int, str]] = []
    for k, r in enumerate(span):
        if r.get("role") != "assistant":
            continue
        for m in re.finditer(r"`?(?://|#|<!--)\s*AI!\s*([^`\n]{3,120})`?", _text(r)):
            a = m.group(1).strip().rstrip("`").strip()
            if a.strip(". ") and a not in (x for _, x in asks):
                asks.append((k, a))
    # "Write async version..." is the start of "Write async version, using …": said once
    return [(k, a) for k, a in asks if not (a.endswith("...") and any(
        b != a and b.startswith(a[:-3].rstrip(". ")) for _, b in asks))]


def code_requests(span: Sequence[dict]) -> list[str]:
    """The requests an aider session received through `AI!` comments after the latest typed one,
    as request texts ("through an `AI!` comment in the code: …"), oldest first; [] for any other
    kind of session. They are requests like the typed ones: the newest of them is the latest."""
    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    if shape(msgs) != "aider":
        return []
    last_typed = max((k for k, r in enumerate(msgs) if request_text(r)), default=-1)
    return [f"(through an `AI!` comment in the code) {a}" for k, a in _code_asks(msgs) if k > last_typed]


def _aider(span, events=()) -> list[tuple[str, list[str]]]:
    out = []
    for r in list(span) + list(events):
        t = _text(r)
        if t.startswith("Removed: "):
            m = re.match(r"Removed: (\w+) (.+)\nNow at:\s+(\w+) (.+)", t)
            if m:
                out.append(f"`/undo` removed commit {m.group(1)} ({brief(m.group(2), 80)}); HEAD is back at "
                           f"{m.group(3)} ({brief(m.group(4), 80)}).")
    asks = _code_asks(span)
    last_typed = max((k for k, r in enumerate(span) if request_text(r)), default=-1)
    if asks:
        earlier = f"{len(asks) - 8} earlier, then " if len(asks) > 8 else ""
        out.insert(0, "Requests made through `AI!` comments in the code (aider watch mode), in order: " + earlier +
                   "; ".join(f"\"{a}\"" for _, a in asks[-8:]) + ".")
        if asks[-1][0] > last_typed:
            out.insert(1, "The work went on after the latest typed request through `AI!` comments (the latest "
                          "request above is the last of them). Look for a remaining `AI!` comment in the code before "
                          "taking any request as current.")
    return [("Aider requests and undo", out)] if out else []
