"""A queue that serves its groups in turn, and the lanes of each group in turn, with at most `per_lane` items of one
lane out at a time.

The webhook worker queues claimed deliveries by account (group) and endpoint (lane): an account with a thousand
queued deliveries gets one turn, like an account with one, and a slow endpoint holds at most `per_lane` senders.
An urgent item goes ahead of the others in its lane. Not thread-safe: one event loop uses it.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Hashable
from typing import Generic, TypeVar

G = TypeVar("G", bound=Hashable)
L = TypeVar("L", bound=Hashable)
T = TypeVar("T")


class FairQueue(Generic[G, L, T]):
    def __init__(self, per_lane: int) -> None:
        if per_lane < 1:
            raise ValueError("per_lane must be at least 1")
        self.per_lane = per_lane
        self._items: dict[L, deque[T]] = {}
        self._out: Counter[L] = Counter()
        self._group_of: dict[L, G] = {}
        self._lanes: dict[G, deque[L]] = {}  # each group's lanes, the next in turn first
        self._groups: deque[G] = deque()  # the groups, the next in turn first
        self._held_by: Counter[G] = Counter()

    def __len__(self) -> int:
        """Items queued, not counting those out."""
        return sum(len(items) for items in self._items.values())

    def put(self, group: G, lane: L, item: T, *, urgent: bool = False) -> None:
        if lane not in self._items:
            self._items[lane] = deque()
            self._group_of[lane] = group
            if group not in self._lanes:
                self._lanes[group] = deque()
                self._groups.append(group)
            self._lanes[group].append(lane)
        if urgent:
            self._items[lane].appendleft(item)
        else:
            self._items[lane].append(item)
        self._held_by[self._group_of[lane]] += 1

    def take(self) -> tuple[L, T] | None:
        """The next item in turn whose lane has fewer than `per_lane` out (it is out from now on), or None."""
        for _ in range(len(self._groups)):
            group = self._groups[0]
            self._groups.rotate(-1)
            lanes = self._lanes[group]
            for _ in range(len(lanes)):
                lane = lanes[0]
                lanes.rotate(-1)
                if self._items[lane] and self._out[lane] < self.per_lane:
                    self._out[lane] += 1
                    return lane, self._items[lane].popleft()
        return None

    def done(self, lane: L) -> None:
        """An item taken from `lane` is finished."""
        if self._out[lane] <= 0:
            raise ValueError("no item of this lane is out")
        self._out[lane] -= 1
        self._held_by[self._group_of[lane]] -= 1
        self._forget_if_idle(lane)

    def held(self, lane: L) -> int:
        """The lane's items, queued or out."""
        return len(self._items.get(lane, ())) + self._out[lane]

    def held_by(self, group: G) -> int:
        """The group's items, queued or out."""
        return self._held_by[group]

    def lanes(self) -> list[L]:
        """Every lane holding an item, queued or out."""
        return list(self._items)

    def group_of(self, lane: L) -> G:
        return self._group_of[lane]

    def clear(self) -> int:
        """Drop every queued item (those out stay out until `done`); returns how many were dropped."""
        dropped = 0
        for lane in list(self._items):
            queued = len(self._items[lane])
            self._items[lane].clear()
            self._held_by[self._group_of[lane]] -= queued
            dropped += queued
            self._forget_if_idle(lane)
        return dropped

    def _forget_if_idle(self, lane: L) -> None:
        if self._items[lane] or self._out[lane]:
            return
        group = self._group_of.pop(lane)
        del self._items[lane], self._out[lane]
        self._lanes[group].remove(lane)
        if not self._lanes[group]:
            del self._lanes[group], self._held_by[group]
            self._groups.remove(group)
