"""No fixture is named like a test: pytest would collect a `test_*` fixture function in a test module as a test."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "fixture") or (
        isinstance(target, ast.Name) and target.id == "fixture"
    )


def _fixtures_named_like_tests(source: str) -> list[str]:
    return [
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test")
        and any(_is_fixture(decorator) for decorator in node.decorator_list)
    ]


def test_no_fixture_is_named_test() -> None:
    found = {
        str(path.relative_to(TESTS)): names
        for path in TESTS.rglob("*.py")
        if (names := _fixtures_named_like_tests(path.read_text()))
    }
    assert found == {}


def test_the_check_sees_every_form_of_fixture() -> None:
    source = (
        "@pytest.fixture\ndef test_a(): ...\n"
        "@pytest.fixture(scope='session')\nasync def test_b(): ...\n"
        "@fixture\ndef test_c(): ...\n"
        "@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])\ndef test_d(): ...\n"
    )
    assert _fixtures_named_like_tests(source) == ["test_a", "test_b", "test_c"]
