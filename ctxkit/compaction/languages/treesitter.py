"""Definitions from a real parser: tree-sitter with each language's own tags query (the grammar packages
ship `queries/tags.scm`). Optional: without the `tree-sitter` package or a language's grammar, `parser()`
answers None and the language's regex reads the text instead."""
from __future__ import annotations

import importlib
import importlib.resources

from ..model import Definition

_cache: dict = {}


class TreeSitter:
    def definitions(self, lang, text: str) -> list | None:
        """`lang`'s definitions in `text` from its grammar and tags query, or None when either is missing."""
        compiled = self._compiled(lang)
        if compiled is None:
            return None
        parser, query = compiled
        from tree_sitter import QueryCursor

        data = text.encode("utf-8", "surrogatepass")
        tree = parser.parse(data)
        out, seen = [], set()
        for _, caps in QueryCursor(query).matches(tree.root_node):
            kinds = [k for k in caps if k.startswith("definition.")]
            names = caps.get("name") or ()
            if not kinds or not names:
                continue
            node, whole = names[0], caps[kinds[0]][0]
            name = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
            key = (name, whole.start_point[0])
            if key in seen:
                continue
            seen.add(key)
            out.append(Definition(name, kinds[0].split(".", 1)[1], whole.start_point[0] + 1, whole.end_point[0] + 1))
        return sorted(out, key=lambda d: d.line)

    def _compiled(self, lang):
        key = id(lang)
        if key in _cache:
            return _cache[key]
        _cache[key] = None
        grammar = getattr(lang, "grammar", None)
        if not grammar:
            return None
        try:
            import tree_sitter as ts

            mod = importlib.import_module(grammar[0])
            language = ts.Language(getattr(mod, grammar[1])())
            source = getattr(lang, "query", "") or ""
            for pkg, rel in getattr(lang, "queries", ()):
                source += "\n" + importlib.resources.files(pkg).joinpath(rel).read_text(encoding="utf-8")
            query = _query(ts, language, source)
            if query is None:
                return None
            _cache[key] = (ts.Parser(language), query)
        except Exception:  # noqa: BLE001 - an optional parser: any failure means the regex reads the text
            _cache[key] = None
        return _cache[key]


def _query(ts, language, source: str):
    """The tags query; a pattern this grammar version does not know is dropped, not fatal."""
    try:
        return ts.Query(language, source)
    except Exception:  # noqa: BLE001
        pass
    kept = []
    for block in _patterns(source):
        try:
            ts.Query(language, block)
            kept.append(block)
        except Exception:  # noqa: BLE001
            continue
    try:
        return ts.Query(language, "\n".join(kept)) if kept else None
    except Exception:  # noqa: BLE001
        return None


def _patterns(source: str) -> list[str]:
    """The top-level patterns of a query file (balanced parentheses/brackets at column 0)."""
    out, buf, depth = [], [], 0
    for line in source.splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith(";")):
            continue
        buf.append(line)
        depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if depth <= 0:
            out.append("\n".join(buf))
            buf, depth = [], 0
    return out


ENTRIES: list = []
PARSER = TreeSitter()
