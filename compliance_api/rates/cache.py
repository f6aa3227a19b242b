"""Benchmark answers kept in-process for a few seconds, so the hot path rarely touches the database.

Benchmarks change only when observations are imported (by the CLI, in another process), so a worker may answer from
its copy for `ttl` seconds (`COMPLIANCE_RATES_CACHE_SECONDS`, 0 = always read): an import is visible everywhere
within that bound, as a token revocation is. A miss costs one indexed read of the precomputed row, shared by every
request that misses the same key meanwhile (without that, all requests in flight when an entry expires each read the
database, and on SQLite they queue for seconds; see bench/RESULTS.md). An entry past half its life is read again in
the background, so a busy key does not make its requests wait for the database: an expiry made every request of the
key in flight wait for the read (on SQLite under load, 75-175 ms every 4 s). No entry is
answered past its `ttl`. Keys are validated catalogue values (environment × sector × region), so the cache cannot
grow beyond a few hundred entries.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from compliance_api.kit.environment import Environment

log = structlog.get_logger()

Key = tuple[Environment, str, str]


@dataclass(frozen=True, slots=True)
class Entry:
    """The answer for one key: `body`, the benchmark's JSON, None when no benchmark exists; `sample_size` decides
    publication."""

    body: bytes | None
    sample_size: int


class BenchmarkCache:
    def __init__(self, ttl_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_seconds
        self._refresh_after = ttl_seconds * 0.5
        self._clock = clock
        self._entries: dict[Key, tuple[float, float, Entry]] = {}  # (expires, refresh after, entry)
        self._loading: dict[Key, asyncio.Future[Entry]] = {}

    async def get_or_load(self, key: Key, load: Callable[[], Awaitable[Entry]]) -> Entry:
        """The cached entry (read again in the background once old enough), else the result of one `load()` shared
        by every caller waiting for this key."""
        found = self._entries.get(key)
        now = self._clock()
        if found is not None and found[0] > now:
            if found[1] <= now and key not in self._loading:
                self._start_load(key, load)
            return found[2]
        pending = self._loading.get(key) or self._start_load(key, load)
        return await asyncio.shield(pending)

    def _start_load(self, key: Key, load: Callable[[], Awaitable[Entry]]) -> asyncio.Future[Entry]:
        pending = self._loading[key] = asyncio.ensure_future(self._load(key, load))
        pending.add_done_callback(_retrieved)
        return pending

    async def _load(self, key: Key, load: Callable[[], Awaitable[Entry]]) -> Entry:
        try:
            return self.put(key, await load())
        finally:
            del self._loading[key]

    def get(self, key: Key) -> Entry | None:
        found = self._entries.get(key)
        if found is None or found[0] <= self._clock():
            return None
        return found[2]

    def put(self, key: Key, entry: Entry) -> Entry:
        if self._ttl > 0:
            now = self._clock()
            self._entries[key] = (now + self._ttl, now + self._refresh_after, entry)
        return entry


def _retrieved(load: asyncio.Future[Entry]) -> None:
    """Say why a read failed (a background one has nobody else to tell); the entry it was to replace still expires."""
    if not load.cancelled() and (error := load.exception()) is not None:
        log.warning("rate_benchmark_read_failed", error=type(error).__name__)
