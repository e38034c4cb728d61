"""Files named for what they hold rather than a programming language (C and C++, shell, PHP, Swift, Lua),
read with one regex each (a style sheet's rules by their selectors); markup and data have no definitions."""
from __future__ import annotations

import re

from ..model import Definition


class Regex:
    def __init__(self, name, extensions, pattern, suppress=None, terse=False, comment=""):
        self.name, self.extensions, self.pattern = name, extensions, re.compile(pattern, re.M)
        self.comment = comment      # what starts a line comment ("" where none does)
        self.terse = terse      # its definitions are many and alike (a style sheet's rules): a few name the change
        self.suppress = re.compile(suppress) if suppress else None   # a comment that silences a check
        self.grammar, self.queries = None, ()

    def definitions(self, text: str) -> list:
        out = []
        for m in self.pattern.finditer(text):
            name = next((g for g in m.groups() if g), None)
            if name:
                out.append(Definition(name, "definition", text.count("\n", 0, m.start()) + 1))
        return out


ENTRIES = [
    Regex("C/C++", (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx"),
          r"^(?:[\w*&:<> ]+[ \t*&]+)?([A-Za-z_]\w*)[ \t]*\([^;]*\)[ \t]*\{|^(?:struct|class|enum|union)[ \t]+([A-Za-z_]\w*)",
          r"//\s*NOLINT|#pragma\s+(?:GCC|clang)\s+diagnostic\s+ignored|//\s*cppcheck-suppress", comment="//"),
    Regex("Shell", (".sh", ".bash", ".zsh"), r"^[ \t]*(?:function[ \t]+)?([A-Za-z_][\w-]*)[ \t]*\(\)[ \t]*\{",
          r"#\s*shellcheck\s+disable=", comment="#"),
    Regex("PHP", (".php",), r"^[ \t]*(?:(?:public|private|protected|static|abstract|final)[ \t]+)*(?:function|class|interface|trait)[ \t]+([A-Za-z_]\w*)",
          r"@phpstan-ignore|@psalm-suppress|phpcs:ignore", comment="//"),
    Regex("Swift", (".swift",), r"^[ \t]*(?:(?:public|private|internal|open|static|final|override)[ \t]+)*(?:func|class|struct|enum|protocol|extension)[ \t]+([A-Za-z_]\w*)",
          r"//\s*swiftlint:disable", comment="//"),
    Regex("Lua", (".lua",), r"^[ \t]*(?:local[ \t]+)?function[ \t]+([\w.:]+)", comment="--"),
    # a style sheet's rules, named by their selectors (`.row pre.code`), and its keyframes
    Regex("CSS", (".css", ".scss", ".sass", ".less"),
          r"^[ \t]*(@keyframes[ \t]+[\w-]+|[.#:\[\w*][^{};@/\n]{0,120}?)[ \t]*\{[ \t]*$",
          r"stylelint-disable", terse=True),
]
