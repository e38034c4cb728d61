"""Python: def, async def, class."""
from __future__ import annotations

import re

from ..model import Definition

DEFS = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)", re.M)


TESTS = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test_\w+)", re.M)

class Python:
    name = "Python"
    comment = "#"     # what starts a line comment
    indent_blocks = True     # its code on one line would not read as code
    extensions = (".py", ".pyi")
    suppress = re.compile(r"#\s*(?:noqa\b|type:\s*ignore|pyright:\s*ignore|pylint:\s*disable|nosec\b|pragma:\s*no cover|fmt:\s*(?:off|skip))")   # a comment or attribute that silences a check
    imports = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w.]+))", re.M)   # the modules a file brings in
    grammar = ("tree_sitter_python", "language")
    queries = (("tree_sitter_python", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        return [Definition(m.group(3), "class" if m.group(2) == "class" else "function", text.count("\n", 0, m.start()) + 1)
                for m in DEFS.finditer(text)]


ENTRIES = [Python()]
