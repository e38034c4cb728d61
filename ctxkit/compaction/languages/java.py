"""Java and Kotlin: classes, interfaces, enums, records, methods, Kotlin `fun`."""
from __future__ import annotations

import re

from ..model import Definition

TYPES = re.compile(r"^[ \t]*(?:(?:public|private|protected|static|final|abstract|sealed|data|open|internal)[ \t]+)*"
                   r"(class|interface|enum|record|object)[ \t]+([A-Za-z_]\w*)", re.M)
METHODS = re.compile(r"^[ \t]*(?:@\w+[ \t]+)*(?:(?:public|private|protected|static|final|abstract|synchronized|override|"
                     r"suspend|open|internal)[ \t]+)*(?:fun[ \t]+(?:<[^>]*>[ \t]*)?(?:\w+\.)?([A-Za-z_]\w*)|"
                     r"[\w<>\[\],.? ]+[ \t]+([A-Za-z_]\w*))[ \t]*\([^;{]*\)[^;{]*\{", re.M)
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "new", "else", "synchronized"}


TESTS = re.compile(r"@(?:Test|ParameterizedTest)\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[^\n(]*?\b(\w+)[ \t]*\(", re.M)

class Java:
    name = "Java/Kotlin"
    comment = "//"     # what starts a line comment
    param_name = "last"     # where a parameter's name stands in `type name` or `name type`
    extensions = (".java", ".kt", ".kts", ".scala")
    suppress = re.compile(r"@SuppressWarnings\(|@Suppress\(|//\s*NOSONAR|@file:Suppress")   # a comment or attribute that silences a check
    imports = re.compile(r"^[ \t]*import[ \t]+(?:static[ \t]+)?([\w.*]+)", re.M)   # the classes a file brings in
    grammar = ("tree_sitter_java", "language")
    queries = (("tree_sitter_java", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = [Definition(m.group(2), m.group(1), text.count("\n", 0, m.start()) + 1) for m in TYPES.finditer(text)]
        for m in METHODS.finditer(text):
            name = m.group(1) or m.group(2)
            if name and name not in KEYWORDS:
                out.append(Definition(name, "method", text.count("\n", 0, m.start()) + 1))
        return sorted(out, key=lambda d: d.line)


ENTRIES = [Java()]
