"""Tables for people (tabulate), JSON for machines, jq on every listing."""
from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Iterable

from ..errors import UsageProblem


def terminal_width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


def _cell(v, width: int) -> str:
    if isinstance(v, float):
        s = f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) or abs(v) < 1 else f"{v:.0f}"
    elif isinstance(v, (dict, list)):
        s = json.dumps(v, ensure_ascii=False)
    elif v is None:
        s = ""
    else:
        s = str(v)
    s = s.replace("\n", " ")
    return s if len(s) <= width else s[: max(1, width - 1)] + "…"


def render_table(rows: list[dict], columns: list[str] | None = None, fmt: str = "simple",
                 width: int | None = None) -> str:
    from tabulate import tabulate

    if not rows:
        return "(no rows)"
    columns = columns or list(dict.fromkeys(k for r in rows for k in r))
    width = width or terminal_width()
    full = [[_cell(r.get(c), 10_000) for c in columns] for r in rows]
    if fmt == "simple":
        limits = fit_widths([max([len(c)] + [len(row[i]) for row in full]) for i, c in enumerate(columns)],
                            width - 2 * len(columns) - 2)
        full = [[v if len(v) <= limits[i] else v[: max(1, limits[i] - 1)] + "…" for i, v in enumerate(row)]
                for row in full]
    return tabulate(full, headers=columns, tablefmt=fmt, disable_numparse=True)


def fit_widths(natural: list[int], total: int, floor: int = 6) -> list[int]:
    """Column widths that fit `total`: narrow columns keep their size, the widest give way."""
    widths = list(natural)
    while sum(widths) > total:
        i = max(range(len(widths)), key=lambda k: widths[k])
        if widths[i] <= floor:
            break
        widths[i] -= 1
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
