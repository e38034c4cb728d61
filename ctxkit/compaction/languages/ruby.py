"""Ruby: def (and def self.), class, module."""
from __future__ import annotations

import re

from ..model import Definition

DEFS = re.compile(r"^[ \t]*(?:(def)[ \t]+(?:self\.)?([A-Za-z_]\w*[?!=]?)|(class|module)[ \t]+([A-Z][\w:]*))", re.M)


TESTS = re.compile(r"^[ \t]*(?:it|test|scenario)[ \t]+(['\"])(.+?)\1", re.M)

class Ruby:
    name = "Ruby"
    comment = "#"     # what starts a line comment
    extensions = (".rb", ".rake", ".gemspec")
    suppress = re.compile(r"#\s*rubocop:disable|#\s*steep:ignore|#\s*:nocov:")   # a comment or attribute that silences a check
    imports = re.compile(r"""^[ \t]*require(?:_relative)?[ \t(]+['"]([^'"\n]+)['"]""", re.M)   # the files a file brings in
    grammar = ("tree_sitter_ruby", "language")
    queries = (("tree_sitter_ruby", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        return [Definition(m.group(2) or m.group(4), "method" if m.group(1) else m.group(3),
                           text.count("\n", 0, m.start()) + 1) for m in DEFS.finditer(text)]


ENTRIES = [Ruby()]
