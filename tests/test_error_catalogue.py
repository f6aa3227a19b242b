"""Every code in the error catalogue is one a test provokes: a code no request can produce is removed instead."""

from __future__ import annotations

import ast
from pathlib import Path

from compliance_api.errors import ERROR_CATALOGUE

TESTS = Path(__file__).parent


def _asserted_strings(module: ast.Module) -> set[str]:
    """String constants inside `assert` statements, calls of `assert…` helpers and `parametrize` data."""
    found: set[str] = set()
    for node in ast.walk(module):
        scopes: list[ast.AST] = []
        if isinstance(node, ast.Assert):
            scopes.append(node)
        elif isinstance(node, ast.Call):
            name = str(getattr(node.func, "id", None) or getattr(node.func, "attr", ""))
            if name.startswith("assert") or name == "parametrize":
                scopes.append(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.List | ast.Tuple):
            scopes.append(node.value)  # case tables handed to parametrize by name
        for scope in scopes:
            found |= {c.value for c in ast.walk(scope) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return found


def test_every_error_code_is_asserted_by_a_test() -> None:
    asserted: set[str] = set()
    for path in TESTS.rglob("test_*.py"):
        if path != Path(__file__):
            asserted |= _asserted_strings(ast.parse(path.read_text(encoding="utf-8")))
    assert set(ERROR_CATALOGUE) - asserted == set()
