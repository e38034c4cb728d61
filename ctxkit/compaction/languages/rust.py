"""Rust: fn, struct, enum, trait, impl, mod, macro_rules."""
from __future__ import annotations

import re

from ..model import Definition

DEFS = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:async[ \t]+|const[ \t]+|unsafe[ \t]+|extern[ \t]+\"C\"[ \t]+)*"
                  r"(fn|struct|enum|trait|mod|type|union)[ \t]+([A-Za-z_]\w*)|^[ \t]*impl(?:<[^>]*>)?[ \t]+(?:[\w:<>]+[ \t]+for[ \t]+)?([A-Za-z_]\w*)|"
                  r"^[ \t]*macro_rules![ \t]*([A-Za-z_]\w*)", re.M)


TESTS = re.compile(r"#\[(?:tokio::)?test\][ \t]*\n(?:[ \t]*#\[[^\]]*\][ \t]*\n)*[ \t]*(?:pub[ \t]+)?(?:async[ \t]+)?fn[ \t]+(\w+)", re.M)

class Rust:
    name = "Rust"
    comment = "//"     # what starts a line comment
    extensions = (".rs",)
    suppress = re.compile(r"#!?\[(?:allow|expect)\(|#\[rustfmt::skip\]")   # a comment or attribute that silences a check
    imports = re.compile(r"^[ \t]*(?:pub[ \t]+)?use[ \t]+([\w:]+)", re.M)   # the paths a file brings in
    grammar = ("tree_sitter_rust", "language")
    queries = (("tree_sitter_rust", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = []
        for m in DEFS.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            if m.group(2):
                out.append(Definition(m.group(2), "function" if m.group(1) == "fn" else m.group(1), line))
            elif m.group(3):
                out.append(Definition(m.group(3), "impl", line))
            else:
                out.append(Definition(m.group(4), "macro", line))
        return out


ENTRIES = [Rust()]
