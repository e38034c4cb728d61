"""Edits of a settings file's text that leave every byte of it the user wrote where it was (pure).

`ctx hook install` merges its hooks into an agent's settings by inserting text only; what it
inserted is a list of spans, and deleting them gives the file back byte for byte. A JSON value's
place in the text is found with the standard decoder (`raw_decode` says where a value ends).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


class EditError(ValueError):
    """The text is not a document this edit can be made in (the message says why)."""


@dataclass(frozen=True)
class Member:
    key: str
    start: int          # the key's opening quote
    value_start: int
    value_end: int      # one past the value


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def members(text: str, start: int) -> tuple[list[Member], int]:
    """The members of the JSON object whose `{` is at `start`, and the index of its `}`."""
    if text[start:start + 1] != "{":
        raise EditError("not a JSON object")
    out: list[Member] = []
    i = _skip(text, start + 1)
    if text[i:i + 1] == "}":
        return out, i
    while True:
        if text[i:i + 1] != '"':
            raise EditError(f"expected a key at character {i}")
        key, after = _DECODER.raw_decode(text, i)
        j = _skip(text, after)
        if text[j:j + 1] != ":":
            raise EditError(f"expected ':' at character {j}")
        vs = _skip(text, j + 1)
        _, ve = _DECODER.raw_decode(text, vs)
        out.append(Member(key, i, vs, ve))
        k = _skip(text, ve)
        if text[k:k + 1] == "}":
            return out, k
        if text[k:k + 1] != ",":
            raise EditError(f"expected ',' or '}}' at character {k}")
        i = _skip(text, k + 1)


def elements(text: str, start: int) -> tuple[list[tuple[int, int]], int]:
    """(start, end) of each element of the JSON array whose `[` is at `start`, and its `]`."""
    if text[start:start + 1] != "[":
        raise EditError("not a JSON array")
    out = []
    i = _skip(text, start + 1)
    if text[i:i + 1] == "]":
        return out, i
    while True:
        _, end = _DECODER.raw_decode(text, i)
        out.append((i, end))
        k = _skip(text, end)
        if text[k:k + 1] == "]":
            return out, k
        if text[k:k + 1] != ",":
            raise EditError(f"expected ',' or ']' at character {k}")
        i = _skip(text, k + 1)


def _indent_at(text: str, pos: int) -> str:
    line = text.rfind("\n", 0, pos) + 1
    j = line
    while j < pos and text[j] in " \t":
        j += 1
    return text[line:j]


def _unit(text: str) -> str:
    """The file's indentation step (two spaces when it has none to go by)."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _dump(value, indent: str | None, unit: str) -> str:
    """VALUE as JSON indented like its new neighbours (one item a line, `unit` a level), its
    first line without the indentation it is placed at; on one line where INDENT is None (the
    container it goes into is written on one line)."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    body = json.dumps(value, indent=len(unit.expandtabs()) or 2, ensure_ascii=False)
    if "\t" in unit:
        body = "\n".join(line.replace(" " * len(unit.expandtabs()), "\t") if line.startswith(" ") else line
                         for line in body.split("\n"))
    return body.replace("\n", "\n" + indent)


def _insert_in_container(text: str, open_at: int, items: list[tuple[int, int]], close_at: int, piece: str,
                         unit: str) -> tuple[int, str]:
    """(position, text) that adds PIECE (already rendered) as the container's last item."""
    if items:
        last_end = items[-1][1]
        indent = _indent_at(text, items[-1][0]) if "\n" in text[open_at:items[-1][0]] else None
        sep = "," + ("\n" + indent if indent is not None else " ")
        return last_end, sep + piece
    inner = _indent_at(text, close_at) + unit if "\n" in text[open_at:close_at] else None
    if inner is not None:
        return open_at + 1, "\n" + inner + piece
    return open_at + 1, piece


def plan_append(text: str, path: tuple[str, ...], key: str, value) -> tuple[int, str]:
    """(position, text) that appends VALUE to the array at PATH + [KEY] of the JSON document,
    creating the missing objects and the array on the way (the document must be an object).
    The inserted text is indented like the document."""
    unit = _unit(text)
    start = _skip(text, 0)
    obj = start
    want = list(path) + [key]
    for depth, name in enumerate(want):
        ms, close = members(text, obj)
        found = next((m for m in ms if m.key == name), None)
        level = None if "\n" not in text[obj:close] else _indent_at(text, ms[0].start) \
            if ms and "\n" in text[obj:ms[0].start] else _indent_at(text, close) + unit
        if found is None:   # build the rest of the path as one new member
            rest: object = [value]
            for n in reversed(want[depth + 1:]):
                rest = {n: rest}
            piece = json.dumps(name, ensure_ascii=False) + ": " + _dump(rest, level, unit)
            return _insert_in_container(text, obj, [(m.start, m.value_end) for m in ms], close, piece, unit)
        if depth == len(want) - 1:
            if text[found.value_start] != "[":
                raise EditError(f"{'.'.join(want)} is not a list")
            items, aclose = elements(text, found.value_start)
            item_level = None if "\n" not in text[found.value_start:aclose] else _indent_at(text, items[0][0]) \
                if items and "\n" in text[found.value_start:items[0][0]] else _indent_at(text, aclose) + unit
            return _insert_in_container(text, found.value_start, items, aclose, _dump(value, item_level, unit), unit)
        if text[found.value_start] != "{":
            raise EditError(f"{'.'.join(want[:depth + 1])} is not an object")
        obj = found.value_start
    raise EditError("empty path")  # pragma: no cover - want is never empty


def append_all(text: str, adds: list[tuple[tuple[str, ...], str, object]]) -> tuple[str, list[tuple[int, int]]]:
    """Append each (path, key, value) in turn (plan_append); the new text and the spans it
    inserted, merged where one insertion landed in or next to another."""
    spans: list[list[int]] = []
    for path, key, value in adds:
        pos, piece = plan_append(text, path, key, value)
        text = text[:pos] + piece + text[pos:]
        n = len(piece)
        host = next((sp for sp in spans if sp[0] <= pos <= sp[1]), None)
        for sp in spans:
            if sp is host:
                sp[1] += n
            elif sp[0] >= pos:
                sp[0] += n
                sp[1] += n
        if host is None:
            spans.append([pos, pos + n])
    return text, sorted((a, b) for a, b in spans)


def delete_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """TEXT without the given (start, end) spans."""
    out, last = [], 0
    for s, e in sorted(spans):
        if s < last or e > len(text) or s > e:
            raise EditError("the spans do not fit the text")
        out.append(text[last:s])
        last = e
    out.append(text[last:])
    return "".join(out)


def _object_at(text: str, path: tuple[str, ...]) -> int | None:
    obj = _skip(text, 0)
    for name in path:
        ms, _ = members(text, obj)
        found = next((m for m in ms if m.key == name), None)
        if found is None or text[found.value_start] != "{":
            return None
        obj = found.value_start
    return obj


def _cut(items: list[tuple[int, int]], i: int, open_at: int, close_at: int) -> tuple[int, int]:
    """The span that removes item I of a container and the comma that joined it."""
    if i > 0:
        return items[i - 1][1], items[i][1]
    if len(items) > 1:
        return items[0][0], items[1][0]
    return open_at + 1, close_at


def remove_elements(text: str, path: tuple[str, ...], match) -> tuple[str, int]:
    """TEXT without the elements of every array at PATH + [event] (for each event member of the
    object at PATH) for which `match(value)` is true, each with the comma that joined it; an
    event whose array it empties loses its member too. Returns (text, elements removed)."""
    removed, emptied = 0, set()
    while True:
        obj = _object_at(text, path)
        if obj is None:
            return text, removed
        ms, close = members(text, obj)
        cut = None
        for mi, m in enumerate(ms):
            if text[m.value_start] != "[":
                continue
            items, aclose = elements(text, m.value_start)
            hit = next((i for i, (s, e) in enumerate(items) if match(json.loads(text[s:e]))), None)
            if hit is not None:
                cut = _cut(items, hit, m.value_start, aclose)
                removed += 1
                if len(items) == 1:
                    emptied.add(m.key)
                break
            if not items and m.key in emptied:
                cut = _cut([(x.start, x.value_end) for x in ms], mi, obj, close)
                emptied.discard(m.key)
                break
        if cut is None:
            return text, removed
        text = text[:cut[0]] + text[cut[1]:]
