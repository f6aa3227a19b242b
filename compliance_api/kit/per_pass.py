"""A reading taken at most once per pass of the running event loop.

The SQLite hot paths ask on every request whether another connection committed (a synchronous read on the loop).
Requests served in the same pass of the loop are concurrent: none of them was answered before another began, so one
reading answers them all as well as one each would. The freshness bound is the start of the pass: a commit made
before a request arrived in an earlier pass is always seen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoopPass(Generic[T]):
    """`read()` at most once per pass of the running loop; outside a loop, every time."""

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._value: T | None = None
        self._fresh = False

    def get(self) -> T:
        if self._fresh:
            return self._value  # type: ignore[return-value]  # set with _fresh
        value = self._read()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return value
        self._value, self._fresh = value, True
        loop.call_soon(self._expire)
        return value

    def _expire(self) -> None:
        self._fresh = False
