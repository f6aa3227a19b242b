"""The package's import graph, read from the source with `ast`: no module imports itself back through others, and
nothing the app is built from imports `compliance_api.app` (not even for the type checker)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "compliance_api"
ENTRY_POINTS = ("compliance_api.cli",)
"""Modules above the app: the commands that start it."""


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, *, type_checking: bool) -> Iterator[tuple[str, bool]]:
    """Every `compliance_api` module imported under `node`, with whether only the type checker imports it."""
    for child in ast.iter_child_nodes(node):
        guarded = type_checking or (isinstance(child, ast.If) and _is_type_checking(child))
        if isinstance(child, ast.Import):
            yield from ((alias.name, guarded) for alias in child.names)
        elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
            for alias in child.names:
                submodule = f"{child.module}.{alias.name}"
                yield (submodule if submodule in MODULES else child.module), guarded
        yield from _imports(child, type_checking=guarded)


def _graph(*, with_type_checking: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        found = _imports(ast.parse(path.read_text(encoding="utf-8")), type_checking=False)
        graph[name] = {m for m, guarded in found if m in MODULES and m != name and (with_type_checking or not guarded)}
    return graph


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
    graph = _graph(with_type_checking=False)
    cycles = [cycle for name in sorted(graph) if (cycle := _cycle_from(name, graph))]
    assert cycles == []


def test_nothing_below_the_app_imports_it() -> None:
    graph = _graph(with_type_checking=True)
    importers = {
        name for name, targets in graph.items() if "compliance_api.app" in targets and not name.startswith(ENTRY_POINTS)
    }
    assert importers == set()


def test_the_graph_sees_real_imports() -> None:
    """The reader finds what it should: the app imports its services and the gateway, the CLI imports the app."""
    graph = _graph(with_type_checking=True)
    assert {"compliance_api.services", "compliance_api.auth.gateway"} <= graph["compliance_api.app"]
    assert "compliance_api.app" in graph["compliance_api.cli.openapi"]
