"""The layout rule, checked on the import graph (every import, at module level or inside a
function): the CLI sits on top and nothing imports it; services orchestrate and import no CLI;
store, sources, backends and io import neither; core is pure (no click, no store, no I/O layer)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "ctxkit"
LAYERS = ("cli", "services", "store", "sources", "backends", "io", "core")
FORBIDDEN = {
    "core": {"ctxkit.cli", "ctxkit.services", "ctxkit.store", "ctxkit.sources", "ctxkit.backends", "ctxkit.io",
             "click"},
    "services": {"ctxkit.cli"},
    "store": {"ctxkit.cli", "ctxkit.services"},
    "sources": {"ctxkit.cli", "ctxkit.services"},
    "backends": {"ctxkit.cli", "ctxkit.services"},
    "io": {"ctxkit.cli", "ctxkit.services"},
    "": {"ctxkit.cli", "ctxkit.services"},   # records.py, errors.py
}


def _module(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, mod: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in the file (module MOD, by default its own)."""
    mod = mod or _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
            # `from .. import cli` / `from ..services import hooks`: the names are modules too
            out += [(node.lineno, f"{name}.{a.name}") for a in node.names]
    return out


def _layer(path: Path) -> str | None:
    parts = path.relative_to(PKG).parts
    if len(parts) == 1:
        return "" if path.name not in ("__init__.py", "__main__.py") else None
    return parts[0] if parts[0] in LAYERS else None


def _violations(path: Path, layer: str, mod: str | None = None) -> list[str]:
    return [f"{path}:{line}: {layer or 'ctxkit'} imports {name}" for line, name in _imports(path, mod)
            if any(name == b or name.startswith(b + ".") for b in FORBIDDEN[layer])]


def violations() -> list[str]:
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        layer = _layer(path)
        if layer is not None and layer != "cli":
            bad += _violations(path, layer)
    return bad


def test_no_layer_imports_a_layer_above_it():
    assert violations() == []


def test_the_check_sees_relative_and_function_level_imports(tmp_path):
    # the check itself: a services module importing the CLI inside a function is caught
    src = PKG / "services" / "hooks.py"
    names = [n for _, n in _imports(src)]
    assert "ctxkit.services.compact_options.options_from_config" in names  # resolved from `from .x import y`
    assert "ctxkit.store.sessions" in names
    probe = tmp_path / "probe.py"
    probe.write_text("import json\ndef f():\n    from ..cli.compact import compact\n    from .. import cli\n")
    found = _violations(probe, "services", "ctxkit.services.probe")
    assert len(found) >= 2 and all("imports ctxkit.cli" in v for v in found)
    core = tmp_path / "pure.py"
    core.write_text("import click\nfrom ..store import logs\nfrom .bm25 import tokenize\n")
    assert [v.rsplit(" ", 1)[1] for v in _violations(core, "core", "ctxkit.core.pure")] == [
        "click", "ctxkit.store", "ctxkit.store.logs"]


# -- the compaction engine (ctxkit/compaction): extract -> analyze -> render, knowledge in registries ----------

ENGINE = PKG / "compaction"
PLUGIN_AXES = ("dialects", "tools", "trackers", "languages")


def _engine_modules():
    return [(p, _module(p)) for p in sorted(ENGINE.rglob("*.py"))]


def _ctx_imports(path: Path) -> list[tuple[int, str]]:
    return [(line, name) for line, name in _imports(path) if name.startswith("ctxkit")]


def _part(mod: str) -> str:
    parts = mod.split(".")
    return parts[2] if len(parts) > 2 else ""


def test_engine_model_imports_only_the_record_type():
    bad = []
    for p, mod in _engine_modules():
        if _part(mod) == "model":
            bad += [f"{p}:{line}: {name}" for line, name in _ctx_imports(p)
                    if not (name.startswith("ctxkit.compaction.model") or name.startswith("ctxkit.records"))]
    assert bad == []


def test_plugins_import_only_the_model_and_never_each_other():
    bad = []
    for p, mod in _engine_modules():
        if _part(mod) in PLUGIN_AXES:
            own = mod if p.name != "__init__.py" else None
            for line, name in _ctx_imports(p):
                if name.startswith("ctxkit.compaction.model") or (own and name.startswith(own)):
                    continue
                bad.append(f"{p}:{line}: {name}")
    assert bad == []


def test_extract_knows_plugins_only_through_the_registry_and_analyze_never_renders():
    bad = []
    for p, mod in _engine_modules():
        part = _part(mod)
        for line, name in _ctx_imports(p):
            target = _part(name) if name.startswith("ctxkit.compaction.") else ""
            if part == "extract" and target in PLUGIN_AXES:
                bad.append(f"{p}:{line}: extract imports {name}")
            if part == "analyze" and target in ("render", "extract") + PLUGIN_AXES:
                bad.append(f"{p}:{line}: analyze imports {name}")
            if part == "render" and name.startswith("ctxkit") and not (
                    name.startswith("ctxkit.compaction.model") or name.startswith("ctxkit.compaction.render")):
                bad.append(f"{p}:{line}: render imports {name}")
    assert bad == []


def test_no_engine_module_is_over_500_lines():
    long = [f"{p}: {n} lines" for p, _ in _engine_modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert long == []


def _graph() -> dict[str, set[str]]:
    mods = {_module(p): p for p in PKG.rglob("*.py")}
    graph = {}
    for mod, path in mods.items():
        out = set()
        for _, name in _imports(path, mod):
            while name and name not in mods:
                name = name.rsplit(".", 1)[0] if "." in name else ""
            if name and name != mod:
                out.add(name)
        graph[mod] = out
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_no_import_cycle_anywhere_in_ctxkit():
    """Every import counts, at module level or inside a function: a cycle is a cycle either way."""
    assert cycles(_graph()) == []


def test_no_underscore_name_is_imported_across_modules():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        bad.append(f"{path}:{node.lineno}: imports {a.name}")
    assert bad == []


def test_the_cycle_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
