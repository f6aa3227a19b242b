"""At most `capacity` holders at a time, the waiting ones let in by group in turn.

A capacity limiter lets waiters in first come, first served: sixty requests of one account ahead of another's hold
that one for sixty turns. Here each group (an account) waits in its own line and the lines take turns (`FairQueue`,
as webhook delivery does), so a request waits for at most one holder of each other group that is waiting, however
many each has queued. Not thread-safe: one event loop uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable
from typing import Generic, TypeVar

from compliance_api.kit.fair_queue import FairQueue

G = TypeVar("G", bound=Hashable)


class FairLimiter(Generic[G]):
    def __init__(self, capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._holding = 0
        self._waiting: FairQueue[G, G, asyncio.Future[None]] = FairQueue(per_lane=capacity)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def slot(self, group: G) -> AsyncIterator[None]:
        """Hold one of the places for the block, once it is `group`'s turn."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.put(group, group, turn)
        self._let_in()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # let in, then cancelled before it could run: give it back
                self._release(group)
            raise
        try:
            yield
        finally:
            self._release(group)

    def _release(self, group: G) -> None:
        self._holding -= 1
        self._waiting.done(group)
        self._let_in()

    def _let_in(self) -> None:
        while self._holding < self.capacity:
            taken = self._waiting.take()
            if taken is None:
                return
            group, turn = taken
            if turn.done():  # its waiter was cancelled while queued
                self._waiting.done(group)
                continue
            turn.set_result(None)
            self._holding += 1
