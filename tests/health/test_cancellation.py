"""Stopping a background task is never lost: Python 3.11's `asyncio.wait_for` swallows a cancellation that arrives as
the awaited thing completes, so a health probe cancelled at that moment ran on and hung the app's shutdown."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

import compliance_api
from compliance_api.health.probe import _timed

PACKAGE = Path(compliance_api.__file__).parent


async def test_a_stop_that_arrives_as_a_check_completes_stops_the_check() -> None:
    answer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    checking = asyncio.create_task(_timed(answer, 5))
    await asyncio.sleep(0)  # the check now waits for its answer
    answer.set_result(None)
    checking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await checking


def test_the_package_bounds_waits_with_asyncio_timeout_not_wait_for() -> None:
    calls = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Attribute) and node.attr == "wait_for"
    ]
    assert calls == []
