"""Benchmark answers kept in-process for a few seconds, so the hot path rarely touches the database.

Benchmarks change only when observations are imported (by the CLI, in another process), so a worker may answer from
its copy for `ttl` seconds (`COMPLIANCE_RATES_CACHE_SECONDS`, 0 = always read): an import is visible everywhere
within that bound, as a token revocation is. A miss costs one indexed read of the precomputed row, shared by every
request that misses the same key meanwhile (without that, all requests in flight when an entry expires each read the
database, and on SQLite they queue for seconds; see bench/RESULTS.md). Keys are validated
catalogue values (environment × sector × region), so the cache cannot grow beyond a few hundred entries.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from compliance_api.kit.environment import Environment
from compliance_api.rates.schemas import RateBenchmarkOut

Key = tuple[Environment, str, str]


@dataclass(frozen=True, slots=True)
class Entry:
    """The answer for one key: `benchmark` None when no benchmark exists; `sample_size` decides publication."""

    benchmark: RateBenchmarkOut | None
    sample_size: int


class BenchmarkCache:
    def __init__(self, ttl_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_seconds
        self._clock = clock
        self._entries: dict[Key, tuple[float, Entry]] = {}
        self._loading: dict[Key, asyncio.Future[Entry]] = {}

    async def get_or_load(self, key: Key, load: Callable[[], Awaitable[Entry]]) -> Entry:
        """The cached entry, else the result of one `load()` shared by every caller waiting for this key."""
        entry = self.get(key)
        if entry is not None:
            return entry
        pending = self._loading.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._load(key, load))
            self._loading[key] = pending
        return await asyncio.shield(pending)

    async def _load(self, key: Key, load: Callable[[], Awaitable[Entry]]) -> Entry:
        try:
            return self.put(key, await load())
        finally:
            del self._loading[key]

    def get(self, key: Key) -> Entry | None:
        found = self._entries.get(key)
        if found is None or found[0] <= self._clock():
            return None
        return found[1]

    def put(self, key: Key, entry: Entry) -> Entry:
        if self._ttl > 0:
            self._entries[key] = (self._clock() + self._ttl, entry)
        return entry
