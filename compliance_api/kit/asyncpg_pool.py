"""A small asyncpg pool of its own for a hot path that bypasses SQLAlchemy (the WTTA lookup, the audit writer, the
passport reads), and one quiet log of its outages."""

from __future__ import annotations

import asyncio
import logging

import asyncpg  # type: ignore[import-untyped]
import structlog

log = structlog.get_logger()
FLOOR_FAILED = "Failed to restore the pool connection floor"


class _FloorFailures(logging.Filter):
    """asyncpg logs a warning with a 28-line traceback each time it fails to reopen a pool's minimum connection,
    after 1, 2, 4 … s and again after every failed request, for every pool of every process: during a database
    outage, a page of tracebacks every few seconds. This filter on asyncpg's pool logger drops them and logs one line
    when the first fails (`database_pool_unreachable`) and one when a pool connection opens again
    (`database_pool_reachable_again`), for the whole process."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith(FLOOR_FAILED):
            return True
        self.dropped += 1
        if not self.failing:
            self.failing = True
            error = record.exc_info[1] if record.exc_info else None
            log.warning("database_pool_unreachable", error=f"{type(error).__name__}: {error}" if error else None)
        return False

    def connected(self) -> None:
        if self.failing:
            self.failing = False
            log.info("database_pool_reachable_again", floor_failures=self.dropped)
            self.dropped = 0


FLOOR_FAILURES = _FloorFailures()
logging.getLogger("asyncpg.pool").addFilter(FLOOR_FAILURES)


async def _connected(_: asyncpg.Connection) -> None:
    """Pool init hook, on every new connection: an outage of the pools is over."""
    FLOOR_FAILURES.connected()


async def _keep_connection_state(_: asyncpg.Connection) -> None:
    """Pool release hook: our statements change no session state, so asyncpg's reset (a round trip) is skipped."""


class LazyPool:
    """Opened on first use, in the serving event loop (the process may fork or start its loop after construction)."""

    def __init__(self, dsn: str, size: int) -> None:
        self._dsn = dsn
        self._size = size
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()

    async def get(self) -> asyncpg.Pool:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    self._pool = await asyncpg.create_pool(
                        self._dsn, min_size=1, max_size=self._size, reset=_keep_connection_state, init=_connected
                    )
        return self._pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    def terminate(self) -> None:
        """Close every connection at once, without waiting (from synchronous code, such as a dispose hook)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None
