"""C#: classes, interfaces, structs, records, enums, methods."""
from __future__ import annotations

import re

from ..model import Definition

TYPES = re.compile(r"^[ \t]*(?:(?:public|private|protected|internal|static|sealed|abstract|partial|readonly)[ \t]+)*"
                   r"(class|interface|struct|record|enum)[ \t]+([A-Za-z_]\w*)", re.M)
METHODS = re.compile(r"^[ \t]*(?:\[[^\]]*\][ \t]*)*(?:(?:public|private|protected|internal|static|virtual|override|async|"
                     r"sealed|abstract|extern|new)[ \t]+)+[\w<>\[\],.? ]+[ \t]+([A-Za-z_]\w*)[ \t]*\([^;{]*\)[^;{]*(?:\{|=>)", re.M)
QUERY = """
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(struct_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(method_declaration name: (identifier) @name) @definition.method
"""


TESTS = re.compile(r"\[(?:Fact|Theory|Test|TestMethod|TestCase[^\]]*)\][\s\S]{0,200}?\b(?:void|Task)[ \t]+(\w+)[ \t]*\(", re.M)

class CSharp:
    name = "C#"
    comment = "//"     # what starts a line comment
    param_name = "last"     # where a parameter's name stands in `type name` or `name type`
    extensions = (".cs",)
    suppress = re.compile(r"#pragma\s+warning\s+disable|\[SuppressMessage\(|//\s*ReSharper\s+disable")   # a comment or attribute that silences a check
    grammar = ("tree_sitter_c_sharp", "language")
    queries = ()
    query = QUERY

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = [Definition(m.group(2), m.group(1), text.count("\n", 0, m.start()) + 1) for m in TYPES.finditer(text)]
        out += [Definition(m.group(1), "method", text.count("\n", 0, m.start()) + 1) for m in METHODS.finditer(text)]
        return sorted(out, key=lambda d: d.line)


ENTRIES = [CSharp()]
