"""Key entities (pure, deterministic): files, functions/classes, packages, @people, URLs."""
from __future__ import annotations

import re
from typing import Iterable

from .artifacts import trail
from .hygiene import PATH

URL = re.compile(r"https?://[^\s)>\]\"'`]+")
PERSON = re.compile(r"(?<![\w.])@([A-Za-z][\w-]{1,38})\b")
FUNC = re.compile(r"\b(?:def|fn|func|function)\s+([A-Za-z_]\w*)(\()?|\bclass\s+([A-Z]\w*)|`([A-Za-z_][\w.]*)\(\)`")
CODEY = re.compile(r"_|\d|[a-z][A-Z]")  # snake_case, digits, camelCase: a name, not an English word
ARITY = re.compile(r"^((?:[A-Z]\w*\.)*[a-z_]\w*[?!]?)/(\d)$")  # Elixir/Erlang name/arity
PKG = re.compile(r"\b(?:pip3? install|uv pip install|uv add|poetry add|npm (?:install|i)|yarn add|pnpm add|cargo add|"
                 r"go get|gem install)[ \t]+([^\n`;&|]+)"
                 r"|^[ \t]*(?:import[ \t]+([A-Za-z_]\w*)(?:\.[\w.]+)?(?:[ \t]+as[ \t]+\w+)?[ \t]*$"
                 r"|from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import[ \t])", re.M)
PKG_NAME = re.compile(r"^@?[a-z0-9][a-z0-9._-]*(?:/[a-z0-9._-]+)?$")
VALUE_FLAGS = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-t",
               "--target", "--upgrade-strategy", "--python", "-e", "--editable", "--prefix", "--root", "-f",
               "--find-links", "--registry"}
STDLIB = frozenset("""os sys re json time datetime math typing collections itertools functools pathlib subprocess
shutil io abc enum dataclasses logging argparse random string textwrap tempfile unittest copy glob hashlib base64
uuid contextlib threading asyncio queue struct decimal fractions statistics inspect types warnings traceback
signal socket http urllib email csv sqlite3 pickle operator heapq bisect array weakref gc platform getpass
__future__""".split())
# manifests: a file's name says how to read its dependencies
LINE_NO = re.compile(r"^[ \t]*\d+(?:→|\t)", re.M)  # `cat -n` / Claude Code Read prefixes
REQ_LINE = re.compile(r"^[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*(?:\[[^\]\n]*\])?[ \t]*(?:[=<>!~;]|$)", re.M)
MIX_DEP = re.compile(r"\{:([a-z_][a-z0-9_]*),\s*[\"~>=<]")
TOML_DEP = re.compile(r"^[ \t]*([A-Za-z0-9][A-Za-z0-9_-]*)[ \t]*=[ \t]*[\"{]", re.M)
GO_REQ = re.compile(r"^[ \t]*(?:require[ \t]+)?([a-z0-9.-]{1,200}\.[a-z]{2,20}/[\w./-]{1,300})[ \t]+v\d", re.M)
JS_IMPORT = re.compile(r"(?:\bfrom\s+|\brequire\(\s*|\bimport\s+)['\"]((?:@[\w.-]+/)?[\w.-]+)[^'\"]*['\"]")
RS_USE = re.compile(r"^[ \t]*(?:pub[ \t]+)?use[ \t]+([a-z_][a-z0-9_]*)::", re.M)
RS_LOCAL = {"crate", "self", "super", "std", "core", "alloc"}
CODE_ATTRS = {"moduledoc", "doc", "impl", "spec", "type", "callback", "behaviour", "property", "staticmethod",
              "classmethod", "dataclass", "override", "param", "return", "returns", "throws", "deprecated"}
CATEGORIES = ("files", "functions", "packages", "people", "urls")


def _file_ok(p: str) -> bool:
    """A path worth listing: anchored (/, ~/, ./, ../) or ending in a file name with an
    extension; `and/or`, `1/2`, `n/a`, `open/closed/blocked` are prose."""
    if p.startswith(("/", "~/", "./", "../")):
        return bool(re.search(r"[A-Za-z]", p))
    last = p.rstrip("/").rsplit("/", 1)[-1]
    return bool(re.search(r"[A-Za-z]", last)) and bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,6}$", last))


def manifest_packages(path: str, text: str) -> list[str]:
    """Dependencies named in a manifest (by its file name) or imported by a source file."""
    name = path.rsplit("/", 1)[-1].lower()
    text = LINE_NO.sub("", text)
    if name == "package.json":
        import json

        try:
            data = json.loads(text)
        except ValueError:
            return []
        return [k for sec in ("dependencies", "devDependencies", "peerDependencies")
                for k in (data.get(sec) or {}) if isinstance(data, dict)]
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        return [m.group(1) for m in REQ_LINE.finditer(text) if not m.group(1).startswith("-")]
    if name == "mix.exs":
        return MIX_DEP.findall(text)
    if name in ("cargo.toml", "pyproject.toml"):
        out, on = [], False
        for line in text.splitlines():
            head = line.strip()
            if head.startswith("["):
                on = "dependencies" in head
                continue
            m = TOML_DEP.match(line) if on else None
            if m and m.group(1) not in ("python",):
                out.append(m.group(1))
            if name == "pyproject.toml" and on is False:
                for dep in re.findall(r"^\s*\"([A-Za-z0-9][A-Za-z0-9._-]*)", line):
                    out.append(dep)  # PEP 621 `dependencies = [ "x>=1", ...]` lists
        return out
    if name == "go.mod":
        return GO_REQ.findall(text)
    if name.endswith(".py"):
        return [p for m in PKG.finditer(text) for p in (m.group(2) or m.group(3),) if p and p not in STDLIB]
    if name.endswith((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")):
        return [m for m in JS_IMPORT.findall(text) if not m.startswith(".")]
    if name.endswith(".rs"):
        return [m for m in RS_USE.findall(text) if m not in RS_LOCAL]
    return []


def _call_paths(recs: list[dict]) -> dict:
    """tool_call id -> the file path its arguments name (to read a manifest from its result)."""
    import json

    out = {}
    for r in recs:
        for c in r.get("tool_calls") or ():
            if not isinstance(c, dict):
                continue
            args = (c.get("function") or {}).get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    args = {}
            if isinstance(args, dict):
                p = next((args[k] for k in ("file_path", "path", "filename") if isinstance(args.get(k), str)), None)
                if p:
                    out[c.get("id")] = p
    return out


def extract(records: Iterable[dict]) -> dict[str, list[str]]:
    recs = list(records)
    out: dict[str, list[str]] = {c: [] for c in CATEGORIES}

    def add(cat, v):
        v = v.strip().rstrip(".,;:")
        if v and v not in out[cat]:
            out[cat].append(v)

    def add_path(p):
        m = ARITY.match(p)
        if m:
            add("functions", p)
        elif _file_ok(p):
            add("files", p)

    for p in trail(recs):
        add("files", p)
    reads = _call_paths(recs)
    for r in recs:
        if r.get("role") == "tool":
            path = reads.get(r.get("tool_call_id"))
            if path and isinstance(r.get("content"), str):  # a manifest or source file read: its packages
                for pkg in manifest_packages(path, r["content"][:200_000]):
                    add("packages", pkg)
            continue  # otherwise tool output (file contents, listings) names too much
        if {"thinking", "reasoning"} & set(r.get("flags") or ()):
            continue
        text = r.get("content") or ""
        if not isinstance(text, str):
            continue
        for m in URL.finditer(text):
            if len(m.group(0)) > len("https://") + 3:
                add("urls", m.group(0))
        no_urls = URL.sub(" ", text)
        for m in PERSON.finditer(re.sub(r"```.*?```|`[^`]*`", " ", no_urls, flags=re.S)):
            if m.group(1).lower() not in CODE_ATTRS:
                add("people", "@" + m.group(1))
        for m in FUNC.finditer(no_urls):
            name, paren, cls, called = m.groups()
            if name and (paren or CODEY.search(name)):
                add("functions", name)
            elif cls or called:
                add("functions", cls or called)
        for m in PKG.finditer(no_urls):
            if m.group(1):
                words = m.group(1).split()
                skip = False
                for w in words:
                    if skip:
                        skip = False
                        continue
                    if w.startswith("-"):
                        skip = w in VALUE_FLAGS
                        continue
                    w = re.split(r"[=<>~^\[]|(?<=.)@", w)[0]
                    if PKG_NAME.match(w):
                        add("packages", w)
                    else:
                        break  # prose after the command
            elif (m.group(2) or m.group(3)) and (m.group(2) or m.group(3)) not in STDLIB:
                add("packages", m.group(2) or m.group(3))
        for m in PATH.finditer(no_urls):
            if "/" in m.group(0):
                add_path(m.group(0))
    return out
