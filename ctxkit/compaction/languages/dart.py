"""Dart: classes, mixins, extensions, enums, functions and methods."""
from __future__ import annotations

import re

from ..model import Definition

TYPES = re.compile(r"^[ \t]*(?:abstract[ \t]+|sealed[ \t]+|base[ \t]+|final[ \t]+)*(class|mixin|extension|enum)[ \t]+([A-Za-z_]\w*)", re.M)
FUNCS = re.compile(r"^[ \t]*(?:static[ \t]+|external[ \t]+|@override[ \t\n]+)*(?:[\w<>?,]+[ \t]+)?([a-zA-Z_]\w*)[ \t]*\([^;{]*\)[ \t]*(?:async\*?[ \t]*)?(?:\{|=>)", re.M)
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "else"}


TESTS = re.compile(r"\b(?:test|testWidgets)\(\s*(['\"])(.+?)\1", re.M)

class Dart:
    name = "Dart"
    comment = "//"     # what starts a line comment
    param_name = "last"     # where a parameter's name stands in `type name` or `name type`
    extensions = (".dart",)
    suppress = re.compile(r"//\s*ignore(?:_for_file)?:")   # a comment or attribute that silences a check
    grammar = ("tree_sitter_dart", "language")
    queries = (("tree_sitter_dart", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = [Definition(m.group(2), m.group(1), text.count("\n", 0, m.start()) + 1) for m in TYPES.finditer(text)]
        out += [Definition(m.group(1), "function", text.count("\n", 0, m.start()) + 1) for m in FUNCS.finditer(text)
                if m.group(1) not in KEYWORDS]
        return sorted(out, key=lambda d: d.line)


ENTRIES = [Dart()]
