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
