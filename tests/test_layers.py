"""The package's import graph follows the layer order, read with ``ast`` (imports inside functions count too).

base (config, errors, redact, printable, times, _version, extras) <- read <- stats <- quality <- lineage <- delivery
<- state <- entry points (hook, scan, ...) <- api, cli, notebook <- demo. Entry points do not import each other;
``scan_reporters`` never imports ``iceberg_lineage``; there is no import cycle among modules, not even inside a
package (lazy imports and ``TYPE_CHECKING`` imports count).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "iceberg_lineage"

#: Layer of each top-level part of the package; a module may import its own layer and those below.
LAYERS: dict[str, int] = {
    "_version": 0, "errors": 0, "redact": 0, "config": 0, "printable": 0, "times": 0, "jsontypes": 0, "extras": 0, "lazy": 0,
    "read": 1,
    "stats": 2,
    "quality": 3,
    "lineage": 4,
    "delivery": 5,
    "state": 6,
    "hook": 7, "scan": 7, "proxy": 7, "checks": 7, "jobs": 7,
    "api": 8, "cli": 8, "notebook": 8, "_bootstrap": 8,
    "demo": 9,
    "__init__": 10,
}
ENTRY_POINTS = frozenset(name for name, layer in LAYERS.items() if layer == 7)


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, root: Path = ROOT) -> list[tuple[str, int]]:
    """Every module this file imports (absolute names), with the line, at any depth of the syntax tree."""
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, node.lineno))
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]  # submodules imported by name
    return found


def _modules(root: Path = ROOT) -> dict[str, Path]:
    return {_module_name(p, root): p for p in (root / PACKAGE).rglob("*.py")}


MODULES = _modules()


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _edges(modules: dict[str, Path], root: Path = ROOT) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, _ in _imports(path, root):
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def test_every_part_has_a_layer():
    assert sorted({_part(m) for m in MODULES} - set(LAYERS)) == []


def upward_imports(modules: dict[str, Path], root: Path = ROOT) -> list[str]:
    upward = []
    for name, path in modules.items():
        mine = _part(name)
        for target, line in _imports(path, root):
            if target in modules and target != PACKAGE:
                theirs = _part(target)
                if LAYERS[theirs] > LAYERS[mine]:
                    upward.append(f"{path.relative_to(root)}:{line} {mine} imports {target}")
    return upward


def test_imports_go_downward_only():
    assert upward_imports(MODULES) == []


def test_entry_points_do_not_import_each_other():
    crossing = []
    for name, path in MODULES.items():
        mine = _part(name)
        if mine not in ENTRY_POINTS:
            continue
        for target, line in _imports(path):
            theirs = _part(target) if target in MODULES else None
            if theirs in ENTRY_POINTS and theirs != mine:
                crossing.append(f"{path.relative_to(ROOT)}:{line} {mine} imports {target}")
    assert crossing == []


def import_cycles(modules: dict[str, Path], root: Path = ROOT) -> list[list[str]]:
    """Every cycle a depth-first walk of the import graph closes, each as its modules in import order. Every edge
    counts: a package's ``__init__`` importing its own modules, imports inside functions and under
    ``TYPE_CHECKING`` alike (``from pkg import mod`` is an edge to ``pkg`` and to ``pkg.mod``)."""
    graph = _edges(modules, root)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def test_no_import_cycles():
    assert import_cycles(MODULES) == []


def test_the_checker_sees_a_cycle_through_a_package_init(tmp_path):
    """The cycle checker itself can fail: a package whose ``__init__`` re-exports a module that imports the package
    back (``from pkg import sibling``), the notebook package's old cycle, is reported."""
    files = {
        "__init__": "",
        "notebook/__init__": "from iceberg_lineage.notebook.session import attach\n",
        "notebook/html": "",
        "notebook/session": "def attach():\n    from iceberg_lineage.notebook import html\n",
    }
    for module, text in files.items():
        (tmp_path / PACKAGE / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / PACKAGE / f"{module}.py").write_text(text)
    assert import_cycles(_modules(tmp_path), tmp_path) == [
        [f"{PACKAGE}.notebook", f"{PACKAGE}.notebook.session", f"{PACKAGE}.notebook"]]


@pytest.mark.parametrize("path", sorted((ROOT / "scan_reporters").rglob("*.py")), ids=lambda p: p.name)
def test_scan_reporters_never_imports_iceberg_lineage(path):
    assert [t for t, _ in _imports(path) if t == PACKAGE or t.startswith(PACKAGE + ".")] == []


def test_the_checker_sees_an_upward_import_inside_a_function(tmp_path):
    """The checker itself can fail: a lazy upward import in a throw-away tree is reported with its line."""
    for module in ("__init__", "cli/__init__", "read/__init__", "read/bad"):
        (tmp_path / PACKAGE / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / PACKAGE / f"{module}.py").write_text("")
    (tmp_path / PACKAGE / "read" / "bad.py").write_text("def f():\n    from iceberg_lineage.cli import main\n")
    assert upward_imports(_modules(tmp_path), tmp_path) == [f"{PACKAGE}/read/bad.py:2 read imports iceberg_lineage.cli"]
