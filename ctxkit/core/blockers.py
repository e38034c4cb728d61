"""Why the work is blocked at the cut, when the records show the cause (pure).

- An edit the tool refused, where the tool showed the edit as it would have looked beside the
  original (SWE-agent's linter): a line-range edit whose range stops one line short of the lines its
  replacement rewrites leaves the old line in place, so it appears twice (an unmatched `)`): the
  range to use is the one that takes the old line in.
- A change applied halfway: an edit removed the line that defines a name (an alias, an import, a
  definition) while a line the span last saw in the file still uses that name, so the file does
  not build as it stands.

Each diagnosis says what the records prove, in a sentence, with the exact edit when they show it;
none is a guess.
"""
from __future__ import annotations

import re
from typing import Sequence

from .requests import brief

PREVIEW = re.compile(r"This is how your edit would have looked if applied\s*\n-+\n(.*?)\n-+\n", re.S)
ORIGINAL = re.compile(r"This is the original code before your edit\s*\n-+\n(.*?)\n-+\n", re.S)
NUMBERED = re.compile(r"^(\d+):(.*)$")
EDIT_RANGE = re.compile(r"^edit (\d+):(\d+)\n(.*?)(?:\nend_of_edit\s*)?$", re.S)


def _numbered(block: str) -> dict[int, str]:
    out = {}
    for ln in block.splitlines():
        m = NUMBERED.match(ln)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


def range_fix(command: str, result: str) -> tuple[str, str]:
    """For a refused `edit A:B` whose replacement ends (or starts) with the very lines that follow
    (or precede) the range in the original: (the edit to make, why); ("", "") otherwise."""
    m = EDIT_RANGE.match(command.strip())
    orig_m = ORIGINAL.search(result)
    if not m or not orig_m:
        return "", ""
    a, b = int(m.group(1)), int(m.group(2))
    new = [x for x in m.group(3).split("\n")]
    while new and not new[-1].strip():
        new.pop()
    orig = _numbered(orig_m.group(1))
    k = 0   # replacement lines at its end that repeat the original lines after the range
    while k < len(new) and (b + k + 1) in orig and orig[b + k + 1].strip() and \
            [x.strip() for x in new[len(new) - k - 1:]] == [orig[n].strip() for n in range(b + 1, b + k + 2)]:
        k += 1
    j = 0   # and at its start, the original lines before the range
    while j < len(new) and (a - j - 1) in orig and orig[a - j - 1].strip() and \
            [x.strip() for x in new[:j + 1]] == [orig[n].strip() for n in range(a - j - 1, a)]:
        j += 1
    if not k and not j:
        return "", ""
    fixed = f"edit {a - j}:{b + k}"
    why = []
    if k:
        lines = ", ".join(f"{n} `{brief(orig[n].strip(), 40)}`" for n in range(b + 1, b + k + 1))
        why.append(f"the range {a}:{b} stops before line{'s' if k > 1 else ''} {lines}, which the replacement "
                   f"also ends with, so the preview shows {'them' if k > 1 else 'it'} twice")
    if j:
        lines = ", ".join(f"{n} `{brief(orig[n].strip(), 40)}`" for n in range(a - j, a))
        why.append(f"the range starts after line{'s' if j > 1 else ''} {lines}, which the replacement also starts with")
    from .kinds import _diff_words

    span_old = [orig[n] for n in range(a - j, b + k + 1) if n in orig]
    what = _diff_words(span_old, new) if len(span_old) == b + k - a + j + 1 else ""
    what = re.sub(r"(^|; )removed ", r"\1removes ", re.sub(r"(^|; )added ", r"\1adds ", what))
    return (f"`{fixed}` with the same replacement text" +
            (f" (against the original lines {a - j}–{b + k} it {what})" if what else ""), "; ".join(why) + ".")


# a line that gives a name to something other code refers to by it
DEFINES = [
    (re.compile(r"^\s*alias\s+([\w.]+?)(?:\s*,\s*as:\s*(\w+))?\s*$"), lambda m: m.group(2) or m.group(1).rsplit(".", 1)[-1]),
    (re.compile(r"^\s*import\s+([\w.]+)\s+as\s+(\w+)\s*$"), lambda m: m.group(2)),
    (re.compile(r"^\s*from\s+[\w.]+\s+import\s+(\w+)(?:\s+as\s+(\w+))?\s*$"), lambda m: m.group(2) or m.group(1)),
    (re.compile(r"^\s*import\s+(\w+)\s*$"), lambda m: m.group(1)),
    (re.compile(r"^\s*import\s+(?:\{\s*)?(\w+)(?:\s*\})?\s+from\s+['\"]"), lambda m: m.group(1)),
    (re.compile(r"^\s*(?:const|let|var)\s+(\w+)\s*=\s*require\("), lambda m: m.group(1)),
    (re.compile(r"^\s*use\s+[\w:]+::(\w+)\s*;\s*$"), lambda m: m.group(1)),
]
EDIT_NAMES = {"Edit", "MultiEdit", "Write", "str_replace_based_edit_tool", "str_replace_editor"}


def _edits(call_name: str, args: dict) -> list[tuple[str, str, str]]:
    """(path, old text, new text) of an edit call (Write: the whole file, old unknown)."""
    path = str(args.get("file_path") or args.get("path") or "")
    if call_name == "MultiEdit" and isinstance(args.get("edits"), list):
        return [(path, str(e.get("old_string") or ""), str(e.get("new_string") or "")) for e in args["edits"]
                if isinstance(e, dict)]
    if "old_string" in args or "old_str" in args:
        return [(path, str(args.get("old_string") or args.get("old_str") or ""),
                 str(args.get("new_string") or args.get("new_str") or ""))]
    if call_name == "Write" and isinstance(args.get("content"), str):
        return [(path, None, args["content"])]
    return []


READ_LINE = re.compile(r"^\s*(\d+)\u2192(.*)$")


def half_applied(span: Sequence[dict]) -> list[tuple[str, str, str, int | None]]:
    """Names an edit removed the definition of while the file, as the span last saw it, still uses
    them: (file, the removed line, the line that still uses the name, its line number or None).
    What the span saw of a file: what Reads showed and what edits wrote, each edit applied to it."""
    from .artifacts import _args
    from .kinds import _calls

    # only the files an edit removed a defining line from are worth following (most spans: none)
    wanted = set()
    for r in span:
        for c in r.get("tool_calls") or ():
            name = (c.get("function") or {}).get("name") or ""
            args = _args(c) if name in EDIT_NAMES else None
            if isinstance(args, dict):
                for path, old, new in _edits(name, args):
                    if old and any(rx.match(ln) for ln in old.split("\n") if ln not in new for rx, _ in DEFINES):
                        wanted.add(path)
    if not wanted:
        return []
    seen: dict[str, list[list]] = {}   # path -> pieces [first line number or None, [lines]]
    removed: dict[str, list] = {}      # path -> [(name, line)] removed by the latest edits
    msgs = [r for r in span if isinstance(r, dict) and r.get("kind") in ("message", None)]
    for _, name, args, res in _calls(msgs):
        if str(args.get("file_path") or args.get("path") or "") not in wanted:
            continue
        if res is None or "error" in (res.get("flags") or ()) or \
                (res.get("content") or "").lstrip().startswith("<tool_use_error>"):
            continue
        if name == "Read":
            path = str(args.get("file_path") or "")
            rows = [READ_LINE.match(ln) for ln in str(res.get("content") or "").splitlines()]
            rows = [(int(m.group(1)), m.group(2)) for m in rows if m]
            if path and rows:  # the lines read replace what the span knew of the same lines
                first, last = rows[0][0], rows[-1][0]
                keep = [p for p in seen.get(path, []) if p[0] is None or p[0] + len(p[1]) - 1 < first or p[0] > last]
                seen[path] = keep + [[first, [t for _, t in rows]]]
            continue
        if name not in EDIT_NAMES:
            continue
        for path, old, new in _edits(name, args):
            pieces = seen.setdefault(path, [])
            if old is None:
                seen[path] = [[1, new.split("\n")]]
                removed[path] = []
                continue
            olds, news = old.split("\n"), new.split("\n")
            delta = len(news) - len(olds)
            hits = []   # every piece that shows the edited text: views of the one place it is at
            for p in pieces:
                text = "\n".join(p[1])
                at = text.find(old) if old else -1
                if at >= 0:
                    p[1] = text.replace(old, new, 1).split("\n")
                    hits.append((p, text[:at].count("\n")))
            if not hits:
                pieces.append([None, news])
            for hp, row in hits[:1]:  # pieces further down the file move with the edit
                for p in pieces:
                    if all(p is not h for h, _ in hits) and p[0] is not None and hp[0] is not None and p[0] > hp[0] + row:
                        p[0] += delta
            gone = [ln for ln in olds if ln.strip() and ln not in news]
            came = set(ln.strip() for ln in news)
            names = removed.setdefault(path, [])
            names[:] = [(n, ln) for n, ln in names if ln.strip() not in came]  # put back: no longer removed
            for ln in gone:
                for rx, name_of in DEFINES:
                    m = rx.match(ln)
                    if m:
                        names.append((name_of(m), ln.strip()))
    def still_defined(path: str, nm: str) -> bool:  # another line the span saw still gives the name
        for p in seen.get(path, []):
            for ln in p[1]:
                for rx, name_of in DEFINES:
                    m = rx.match(ln)
                    if m and name_of(m) == nm:
                        return True
        return False

    out = []
    for path, names in removed.items():
        for nm, line in names:
            if still_defined(path, nm):
                continue
            use = re.compile(rf"(?<![\w.]){re.escape(nm)}\b(?!\s*=)")
            for p in seen.get(path, []):
                for k, ln in enumerate(p[1]):
                    if use.search(ln) and ln.strip() != line and not any(rx.match(ln) for rx, _ in DEFINES):
                        out.append((path, line, ln.strip(), (p[0] + k) if p[0] is not None else None))
                        break
                else:
                    continue
                break
    return out
