"""At most `capacity` holders at a time, the waiting ones let in by group in turn.

A capacity limiter lets waiters in first come, first served: sixty requests of one account ahead of another's hold
that one for sixty turns. Here each group (an account) waits in its own line, and a free place goes to the waiting
group served longest ago; a group neither waiting nor holding starts afresh, as never served. So a request waits for
the holders it found and at most one turn of each other group waiting, however many each has queued: one account's
burst holds another's request for one holder's time. (`FairQueue`, the webhook worker's, rotates its groups instead,
so a group arriving just after a burst began would wait for two of its items.) Not thread-safe: one event loop uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter, deque
from collections.abc import AsyncIterator, Hashable
from typing import Generic, TypeVar

G = TypeVar("G", bound=Hashable)
NEVER = -1


class FairLimiter(Generic[G]):
    def __init__(self, capacity: int = 1) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._holding = 0
        self._lines: dict[G, deque[asyncio.Future[None]]] = {}  # in the order the groups began waiting
        self._served: dict[G, int] = {}  # each group's last turn while it waits or holds (NEVER: none yet)
        self._held: Counter[G] = Counter()
        self._turns = itertools.count()

    @property
    def waiting(self) -> int:
        return sum(len(line) for line in self._lines.values())

    @contextlib.asynccontextmanager
    async def slot(self, group: G) -> AsyncIterator[None]:
        """Hold one of the places for the block, once it is `group`'s turn."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._lines.setdefault(group, deque()).append(turn)
        self._served.setdefault(group, NEVER)
        self._let_in()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # let in, then cancelled before it could run: give it back
                self._release(group)
            else:
                self._leave(group, turn)
            raise
        try:
            yield
        finally:
            self._release(group)

    def _release(self, group: G) -> None:
        self._holding -= 1
        self._held[group] -= 1
        self._forget_if_idle(group)
        self._let_in()

    def _leave(self, group: G, turn: asyncio.Future[None]) -> None:
        line = self._lines[group]
        line.remove(turn)
        if not line:
            del self._lines[group]
        self._forget_if_idle(group)

    def _forget_if_idle(self, group: G) -> None:
        if group not in self._lines and not self._held[group]:
            del self._served[group], self._held[group]

    def _let_in(self) -> None:
        while self._holding < self.capacity and self._lines:
            group = min(self._lines, key=self._served.__getitem__)  # ties: the group waiting longest (dict order)
            line = self._lines[group]
            line.popleft().set_result(None)
            self._holding += 1
            self._held[group] += 1
            self._served[group] = next(self._turns)
            if not line:
                del self._lines[group]
