"""Every class of the package has a name no other class of it has: a name found in a traceback, a log line or a search
leads to one place."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import compliance_api

PACKAGE = Path(compliance_api.__file__).parent


def _classes(source: str) -> list[str]:
    """The names of every class a module defines, nested ones included."""
    return [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)]


def test_no_two_classes_of_the_package_share_a_name() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for module in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in module.relative_to(PACKAGE).parts:
            continue
        for name in _classes(module.read_text()):
            defined[name].append(str(module.relative_to(PACKAGE)))
    assert {name: where for name, where in defined.items() if len(where) > 1} == {}


def test_the_guard_sees_a_nested_class() -> None:
    assert _classes("class Outer:\n    class Inner:\n        pass\n") == ["Outer", "Inner"]
