"""Elixir: defmodule, def/defp (named with their arity, `name/2`), defmacro, defstruct, defprotocol, defimpl."""
from __future__ import annotations

import re

from ..model import Definition

DEFS = re.compile(r"^[ \t]*(defmodule|defprotocol|defimpl)[ \t]+([A-Z][\w.]*)|"
                  r"^[ \t]*(defp?|defmacrop?|defguardp?|defdelegate)[ \t]+([a-z_][\w]*[?!]?)(\(([^()]|\([^()]*\))*\))?", re.M)


def _arity(params: str | None) -> int:
    if not params or params == "()":
        return 0
    inner, depth, n = params[1:-1], 0, 1
    for c in inner:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            n += 1
    return n


TESTS = re.compile(r"^[ \t]*(?:test|property)[ \t]+\"(.+?)\"", re.M)

class Elixir:
    name = "Elixir"
    comment = "#"     # what starts a line comment
    extensions = (".ex", ".exs", ".heex")
    suppress = re.compile(r"#\s*credo:disable|@dialyzer\s|#\s*sobelow_skip")   # a comment or attribute that silences a check
    imports = re.compile(r"^[ \t]*(?:alias|import|use|require)[ \t]+([A-Z][\w.]*)", re.M)   # the modules a file brings in
    messages = (    # what a module sends and takes: (verb, pattern of its topic or message, and its message)
        ("broadcasts", re.compile(r"PubSub\.broadcast(?:_from)?!?\(\s*[^,()]+,\s*(\"[^\"]+\"|[\w.@]+)\s*,\s*(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})")),
        ("subscribes to", re.compile(r"PubSub\.subscribe\(\s*[^,()]+,\s*(\"[^\"]+\")")),
        ("handles", re.compile(r"def handle_info\(\s*(\{:\w+[^\n]*?\})\s*,\s*\w+\s*\)")),
        ("handles the event", re.compile(r"def handle_event\(\s*(\"[\w:.-]+\")")),
    )
    grammar = ("tree_sitter_elixir", "language")
    queries = (("tree_sitter_elixir", "queries/tags.scm"),)

    def tests(self, text: str) -> list[str]:
        """The test cases defined in `text`."""
        return [m.group(m.lastindex) for m in TESTS.finditer(text)]

    def definitions(self, text: str) -> list:
        out = []
        for m in DEFS.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            if m.group(2):
                out.append(Definition(m.group(2), "module", line))
            else:
                out.append(Definition(f"{m.group(4)}/{_arity(m.group(5))}", "function", line))
        return out


ENTRIES = [Elixir()]
