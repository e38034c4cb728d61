"""Registries of the knowledge that varies: which agent wrote the transcript (dialects), which
programs it ran (tools), which tracker holds the work (trackers), which language the code is in
(languages). Each entry is a small object in its own module; the engine finds entries only here.

An entry module exposes `ENTRIES`, a list of entry objects. Built-in modules are listed by name
and imported on first use (plugins by entry point can join the same lists later).

Entry protocols (duck-typed: entries import only `model`):
- dialect: `name`, `formats` (source formats it reads), `read(call) -> list[Event] | None` (None: a
  tool it does not know; the generic dialect is asked next).
- tool: `name`, `kind`, `match(argv) -> bool`, `read(argv, command, seg) -> list[Event]`: what one
  simple command of a shell line was (a test run, a commit…), given the whole command's result.
- tracker: like a tool (`match`, `read`), for commands that move work items (`bd`, `gh`).
- language: `name`, `extensions`, `definitions(text) -> list[Definition]`.
"""
from __future__ import annotations

import importlib

BUILTIN = {
    "dialects": ("claude_code", "codex", "swe_agent", "aider", "tau_bench", "gemini", "copilot", "opencode",
                 "openhands", "cline", "generic"),
    "tools": ("git", "test_runners", "linters", "builds", "packages", "wrappers", "shell"),
    "trackers": ("beads", "github"),
    "languages": ("python", "javascript", "go", "rust", "java", "ruby", "csharp", "elixir", "dart", "other"),
}
_loaded: dict[str, list] = {}


def register(axis: str, entry) -> None:
    """Add an entry to an axis (a plugin's, or a test's); it is asked before the built-in ones."""
    entries(axis).insert(0, entry)


def entries(axis: str) -> list:
    if axis not in BUILTIN:
        raise KeyError(f"unknown registry axis {axis!r}")
    got = _loaded.get(axis)
    if got is None:
        got = []
        for name in BUILTIN[axis]:
            got.extend(importlib.import_module(f"{__package__}.{axis}.{name}").ENTRIES)
        _loaded[axis] = got
    return got


DEFAULT_DIALECT = "claude-code"    # records that name no format are read as the most common agent's, then generically


def dialects_for(fmt: str | None) -> list:
    """The dialects that read a transcript of format `fmt`, most specific first; the generic one last."""
    fmt = fmt or DEFAULT_DIALECT
    own = [d for d in entries("dialects") if fmt in d.formats]
    return own + [d for d in entries("dialects") if "*" in d.formats and d not in own]


_BY_EXT: dict = {}


def language_for(path: str):
    """The language entry for a file path by its extension, or None."""
    low = path.lower()
    ext = low.rsplit(".", 1)[-1] if "." in low.rsplit("/", 1)[-1] else ""
    if ext in _BY_EXT:
        return _BY_EXT[ext]
    found = None
    for lang in entries("languages"):
        if any(low.endswith(x) for x in lang.extensions):
            found = lang
            break
    if ext:
        _BY_EXT[ext] = found
    return found


def code_parser():
    """The tree-sitter reader of definitions, or None without the optional `tree-sitter` package (each
    language's regex reads the text then)."""
    import importlib.util

    if importlib.util.find_spec("tree_sitter") is None:
        return None
    return importlib.import_module(f"{__package__}.languages.treesitter").PARSER
