"""Go: functions, methods (with their receiver type), types."""
from __future__ import annotations

import re

from ..model import Definition

DEFS = re.compile(r"^(?:func[ \t]+(?:\([^)]*?\*?([A-Za-z_]\w*)(?:\[[^\]]*\])?\)[ \t]*)?([A-Za-z_]\w*)|type[ \t]+([A-Za-z_]\w*)[ \t]+(\w+))", re.M)


TESTS = re.compile(r"^func[ \t]+((?:Test|Benchmark|Fuzz)\w*)[ \t]*\(", re.M)

class Go:
    name = "Go"
    comment = "//"     # what starts a line comment
    param_name = "first"     # where a parameter's name stands in `type name` or `name type`
    extensions = (".go",)
    suppress = re.compile(r"//\s*nolint\b|//\s*lint:ignore\b|#nosec\b")   # a comment or attribute that silences a check
    imports = re.compile(r"""^[ \t]*(?:import[ \t]+)?(?:[\w.]+[ \t]+)?"([\w.-]+(?:/[\w.-]+)*)"[ \t]*(?://.*)?$""", re.M)   # the packages a file brings in (one per line of an import block)
    grammar = ("tree_sitter_go", "language")
    queries = (("tree_sitter_go", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = []
        for m in DEFS.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            if m.group(2):
                out.append(Definition(m.group(2), "method" if m.group(1) else "function", line))
            else:
                out.append(Definition(m.group(3), m.group(4) if m.group(4) in ("struct", "interface") else "type", line))
        return out


ENTRIES = [Go()]
