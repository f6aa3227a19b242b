"""A small asyncpg pool of its own for a hot path that bypasses SQLAlchemy (the WTTA lookup, the audit writer)."""

from __future__ import annotations

import asyncio

import asyncpg  # type: ignore[import-untyped]


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
                        self._dsn, min_size=1, max_size=self._size, reset=_keep_connection_state
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
