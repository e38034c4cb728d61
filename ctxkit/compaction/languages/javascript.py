"""JavaScript and TypeScript (and JSX/TSX, Vue/Svelte script blocks): functions, classes, arrow functions
bound to a name, methods, interfaces, types, enums."""
from __future__ import annotations

import re

from ..model import Definition

DEFS = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:abstract[ \t]+)?(?:async[ \t]+)?"
    r"(?:(function\*?|class|interface|enum|type|namespace)[ \t]+([A-Za-z_$][\w$]*)"
    r"|(?:const|let|var)[ \t]+([A-Za-z_$][\w$]*)[ \t]*(?::[^=\n]+)?=[ \t]*(?:async[ \t]*)?(?:\([^)\n]*\)|[A-Za-z_$][\w$]*)[ \t]*(?::[^=\n]+)?=>"
    r"|(?:const|let|var)[ \t]+([A-Za-z_$][\w$]*)[ \t]*=[ \t]*(?:async[ \t]+)?function"
    r"|(?:(?:public|private|protected|static|readonly|override|get|set)[ \t]+)*([A-Za-z_$][\w$]*)[ \t]*\([^)\n]*\)[ \t]*(?::[^{\n]+)?\{[ \t]*$)",
    re.M)
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "function", "else", "do", "try", "with", "new", "await"}
KIND = {"function": "function", "function*": "function", "class": "class", "interface": "interface", "enum": "enum",
        "type": "type", "namespace": "namespace"}


TESTS = re.compile(r"\b(?:it|test)(?:\.(?:only|skip))?\s*\(\s*(['\"`])(.+?)\1", re.M)

class JavaScript:
    name = "TypeScript/JavaScript"
    comment = "//"     # what starts a line comment
    extensions = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte")
    suppress = re.compile(r"(?://|/\*)\s*(?:eslint-disable|biome-ignore|@ts-ignore|@ts-expect-error|@ts-nocheck|prettier-ignore|istanbul ignore|c8 ignore)")   # a comment or attribute that silences a check
    imports = re.compile(r"""^[ \t]*(?:import[ \t][^'"\n]*?['"]([^'"\n]+)['"]|(?:export[ \t][^'"\n]*?from[ \t]*)['"]([^'"\n]+)['"])|\brequire\(['"]([^'"\n]+)['"]\)""", re.M)   # the modules a file brings in
    messages = (    # the events a script sends and listens for
        ("sends the event", re.compile(r"\b(?:pushEvent|pushEventTo|emit|postMessage)\(\s*['\"]([\w:.-]+)['\"]")),
        ("listens for", re.compile(r"\b(?:handleEvent|addEventListener|\.on)\(\s*['\"]([\w:.-]+)['\"]")),
    )
    grammar = ("tree_sitter_typescript", "language_tsx")
    queries = (("tree_sitter_javascript", "queries/tags.scm"), ("tree_sitter_typescript", "queries/tags.scm"))

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = []
        for m in DEFS.finditer(text):
            name = m.group(2) or m.group(3) or m.group(4) or m.group(5)
            if not name or name in KEYWORDS:
                continue
            if m.group(1) == "type" and not re.match(r"[ \t]*(?:<[^\n]*?>)?[ \t]*=", text[m.end():m.end() + 200]):
                continue    # `type X,` in an import list names a type; `type X = …` defines one
            kind = KIND.get(m.group(1) or "", "function" if (m.group(3) or m.group(4)) else "method")
            out.append(Definition(name, kind, text.count("\n", 0, m.start()) + 1))
        return out


ENTRIES = [JavaScript()]
