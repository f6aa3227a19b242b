"""The package's import graph, read from the source with `ast`: no module imports itself back through others, no
folder (or top-level module) imports itself back through others but for the few `BACK_REFERENCES` docs/develop.md
explains, counting every import (at module level, inside functions, and those only the type checker follows under
`TYPE_CHECKING`), and nothing the app is built from imports `compliance_api.app`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "compliance_api"
DEVELOP = Path(__file__).parent.parent / "docs" / "develop.md"
ENTRY_POINTS = ("compliance_api.cli",)
"""Modules above the app: the commands that start it."""


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts}


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    """The module an `ImportFrom` names, relative imports (`from . import x`) resolved against `importer`."""
    if node.level == 0:
        return node.module or ""
    package = importer.split(".") if MODULES[importer].name == "__init__.py" else importer.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(importer: str, tree: ast.AST) -> Iterator[str]:
    """Every `compliance_api` module imported anywhere in `tree`: at module level, in functions, under any `if`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(importer, node)
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield submodule if submodule in MODULES else module


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        found = _imports(name, ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = {module for module in found if module in MODULES and module != name}
    return graph


BACK_REFERENCES = {("events", "auth")}
"""The folder-level imports that run back up, each explained in docs/develop.md ("Which way things point")."""


def _room(module: str) -> str:
    """The folder or top-level module of the package that `module` lives in (`kit`, `errors`, `compliance_api`)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _rooms(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of folders and top-level modules: one arrow where any module of one imports any of the other."""
    rooms: dict[str, set[str]] = {_room(name): set() for name in graph}
    for name, targets in graph.items():
        rooms[_room(name)].update(_room(target) for target in targets if _room(target) != _room(name))
    return rooms


def _room_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    rooms = _rooms(graph)
    for importer, imported in BACK_REFERENCES:
        rooms[importer].discard(imported)
    return [cycle for room in sorted(rooms) if (cycle := _cycle_from(room, rooms))]


def _cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A path from `start` back to itself, if there is one (depth first)."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for target in graph[node]:
            if target == start:
                return [*path, start]
            if target not in seen:
                seen.add(target)
                stack.append((target, [*path, target]))
    return None


def test_no_module_imports_itself_back() -> None:
    graph = _graph()
    cycles = [cycle for name in sorted(graph) if (cycle := _cycle_from(name, graph))]
    assert cycles == []


def test_no_folder_imports_itself_back() -> None:
    """Imports point down between folders too: a module of `kit/` importing `errors.py` while `errors.py` imports
    `kit/` is a cycle of the drawing even when no module imports itself back."""
    assert _room_cycles(_graph()) == []


def test_the_back_references_are_few_real_and_explained() -> None:
    rooms, explained = _rooms(_graph()), DEVELOP.read_text(encoding="utf-8")
    assert len(BACK_REFERENCES) <= 3
    for importer, imported in BACK_REFERENCES:
        assert imported in rooms[importer], f"{importer} no longer imports {imported}: drop it from BACK_REFERENCES"
        assert f"`{importer}/` imports `{imported}/`" in explained


def test_a_new_back_reference_between_folders_fails() -> None:
    """A domain's module importing the app's wiring, if only for the type checker, closes a cycle of folders."""
    graph, source = _graph(), "if TYPE_CHECKING:\n    from compliance_api.services import Services\n"
    graph["compliance_api.passport.views"] |= set(_imports("compliance_api.passport.views", ast.parse(source)))
    assert any({"passport", "services"} <= set(cycle) for cycle in _room_cycles(graph))
    assert (_room("compliance_api.kit.pagination"), _room("compliance_api.errors")) == ("kit", "errors")


def test_nothing_below_the_app_imports_it() -> None:
    graph = _graph()
    importers = {
        name for name, targets in graph.items() if "compliance_api.app" in targets and not name.startswith(ENTRY_POINTS)
    }
    assert importers == set()


def test_the_graph_sees_every_form_of_import() -> None:
    """The reader finds what it should: plain and `from` imports, imports the type checker alone follows, imports
    inside functions, and relative imports."""
    graph = _graph()
    assert {"compliance_api.services", "compliance_api.auth.gateway"} <= graph["compliance_api.app"]
    assert "compliance_api.app" in graph["compliance_api.cli.openapi"]
    assert "compliance_api.passport.hot_path" in graph["compliance_api.services"]  # under TYPE_CHECKING only
    source = (
        "if TYPE_CHECKING:\n    from compliance_api.config import Settings\n"
        "def f():\n    import compliance_api.db\n    from . import errors\n    from .kit import clock\n"
    )
    found = set(_imports("compliance_api.services", ast.parse(source)))
    assert found == {"compliance_api.config", "compliance_api.db", "compliance_api.errors", "compliance_api.kit.clock"}
