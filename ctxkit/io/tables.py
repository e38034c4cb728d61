"""Tables for people (tabulate), JSON for machines, jq on every listing."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from typing import Iterable

from ..errors import UsageProblem


def terminal_width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


def _cell(v, width: int) -> str:
    if isinstance(v, bool):  # never Python's True/False
        s = "true" if v else "false"
    elif isinstance(v, float):
        s = f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) or abs(v) < 1 else f"{v:.0f}"
    elif isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        s = ", ".join(map(str, v))  # a list of names or numbers reads as one
    elif isinstance(v, (dict, list)):
        s = json.dumps(v, ensure_ascii=False)
    elif v is None:
        s = ""
    else:
        s = str(v)
    s = s.replace("\n", " ")
    return s if len(s) <= width else s[: max(1, width - 1)] + "…"


# Columns whose values a user copies into another command: never cut.
ID_COLUMNS = frozenset({"id", "session_id", "chunk_id", "goal_id", "group", "key", "path", "name"})
_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_SHORT_TS = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")


def is_id_column(name: str) -> bool:
    return name in ID_COLUMNS or name.endswith("_id")


def _short_time(s: str) -> str:
    """An ISO time as `YYYY-MM-DD HH:MM` (UTC shown as is): readable, and the minute is kept."""
    m = _TS.match(s)
    return f"{m.group(1)} {m.group(2)}" if m else s


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: max(1, width - 1)] + "…"


def _overhead(fmt: str, k: int) -> int:
    """What format `fmt` adds around k columns (separators, borders, padding), measured."""
    from tabulate import tabulate

    line = max(tabulate([["x" * 10] * k], headers=["h"] * k, tablefmt=fmt, disable_numparse=True).split("\n"),
               key=len)
    return max(0, len(line) - 10 * k)


def render_table(rows: list[dict], columns: list[str] | None = None, fmt: str = "simple",
                 width: int | None = None, whole=(), spare=()) -> str:
    """A table in tabulate's format `fmt` that fits `width` (the terminal): ids are never cut;
    times show to the minute; columns empty in every row are left out; the columns listed first
    are the ones that answer the command's question: long values of the others narrow first,
    then the rightmost columns are hidden (a last line names them; --json has everything), and a
    header is shortened only when even that is not enough. The headers are the rows' keys, as
    --json prints them. `whole` names columns that are never cut or hidden, as ids (short codes a reader passes back);
    `spare` columns are hidden first, before any value of the others is cut."""
    import tabulate as tabulate_module
    from tabulate import tabulate

    tabulate_module.MIN_PADDING = 0  # a header costs its own length: the widths below are the real ones
    if not rows:
        return "(no rows)"
    columns = columns or list(dict.fromkeys(k for r in rows for k in r))
    columns = [c for c in columns if any(r.get(c) not in (None, "", [], {}) for r in rows)] or columns[:1]
    names = list(columns)
    pad = 0
    width = width or terminal_width()
    full = [[_short_time(_cell(r.get(c), 10_000)) for c in columns] for r in rows]
    ids = [is_id_column(c) or c in whole for c in columns]  # never cut, never hidden
    fixed = [ids[i] or all(not row[i] or _SHORT_TS.match(row[i]) for row in full)  # + times: never cut
             for i in range(len(columns))]
    longest = [max(len(row[i]) for row in full) for i in range(len(columns))]
    shown = list(range(len(columns)))
    hidden: list[str] = []
    for c in spare:
        if c in columns and sum(max(len(names[i]) + pad, longest[i]) for i in shown) \
                + _overhead(fmt, len(shown)) > width:
            shown.remove(columns.index(c))
            hidden.append(c)
    slack = 0  # what a first rendering showed the overhead estimate missed
    for _ in range(3):
        while True:
            natural = [max(len(names[i]) + pad, longest[i]) for i in shown]
            # a flexible column narrows to 12 (its header kept whole); only then may a header be cut
            keep_head = [n if fixed[i] else min(n, max(6, len(names[i]) + pad, min(12, longest[i])))
                         for i, n in zip(shown, natural)]
            floors = [n if fixed[i] else min(n, max(6, min(12, longest[i]))) for i, n in zip(shown, natural)]
            room = width - _overhead(fmt, len(shown)) - slack
            if sum(keep_head) <= room or len(shown) == 1 or all(ids[i] for i in shown):
                break
            drop = max(i for i in shown if not ids[i])  # the rightmost column that is not an id
            shown.remove(drop)
            hidden.append(columns[drop])
        limits = fit_widths(natural, room, floors, keep_head)
        heads = [_cut(names[i], max(1, lim - pad)) for i, lim in zip(shown, limits)]
        body = [[_cut(row[i], lim) for i, lim in zip(shown, limits)] for row in full]
        out = tabulate(body, headers=heads, tablefmt=fmt, disable_numparse=True)
        over = max(len(line) for line in out.split("\n")) - width
        if over <= 0 or all(ids[i] for i in shown):
            break
        slack += over
    if hidden:
        import textwrap

        out += "\n" + textwrap.fill(f"({len(hidden)} column{'s' * (len(hidden) > 1)} hidden to fit {width} "
                                    f"columns: {', '.join(reversed(hidden))}; --json shows all)", width)
    return out


def fit_widths(natural: list[int], total: int, floors: list[int] | int = 6,
               soft: list[int] | None = None) -> list[int]:
    """Column widths that fit `total`: the widest columns give way first, down to `soft` (values
    narrowed, headers whole), then down to `floors` (headers may be cut)."""
    widths = list(natural)
    floors = [floors] * len(widths) if isinstance(floors, int) else floors
    for level in ([max(a, b) for a, b in zip(soft, floors)] if soft else None, floors):
        if level is None:
            continue
        while sum(widths) > total:
            movable = [k for k in range(len(widths)) if widths[k] > level[k]]
            if not movable:
                break
            widths[max(movable, key=lambda k: widths[k])] -= 1
    return widths


def apply_jq(expr: str, items: Iterable) -> Iterable:
    import jq

    try:
        prog = jq.compile(expr)
    except ValueError as e:
        raise UsageProblem(f"--jq: invalid expression {expr!r}: {str(e).splitlines()[0]}") from None
    for item in items:
        try:
            yield from prog.input_value(item).all()
        except ValueError as e:
            from ..errors import JqError

            raise JqError(f"--jq: {str(e).splitlines()[0]}") from None


def want_table(table: bool, as_json: bool, stream=None) -> bool:
    if as_json:
        return False
    if table:
        return True
    stream = stream or sys.stdout
    return stream.isatty() and not os.environ.get("CTX_NO_TABLE")
