"""The last answer built per key, reused while its inputs are unchanged (no expiry, no invalidation to forget)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LatestCache(Generic[V]):
    """Per key (a share, a freelancer) the value built from one set of inputs; any other inputs miss.

    The inputs are everything the value is built from (the rows just read, the day, the signing key), so a change
    anywhere (a new verification, a revocation, a rotated key, a purge) is a miss by construction. Bounded: when
    full it starts over, which costs one rebuild per key.
    """

    def __init__(self, max_keys: int = 10_000) -> None:
        self._max_keys = max_keys
        self._entries: dict[Hashable, tuple[Hashable, V]] = {}

    def get(self, key: Hashable, inputs: Hashable) -> V | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] != inputs:
            return None
        return entry[1]

    def put(self, key: Hashable, inputs: Hashable, value: V) -> None:
        if len(self._entries) >= self._max_keys and key not in self._entries:
            self._entries.clear()
        self._entries[key] = (inputs, value)
