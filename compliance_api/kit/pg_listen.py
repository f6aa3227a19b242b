"""PostgreSQL LISTEN on a connection of its own, for in-process copies that must hear of every committed change."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncpg  # type: ignore[import-untyped]


async def listen(
    dsn: str, channel: str, on_change: Callable[[], None], *, application_name: str, keepalive_seconds: float = 30.0
) -> None:
    """Call `on_change` once listening and on every notification, until the connection is lost (then return or
    raise). A `SELECT 1` every `keepalive_seconds` of silence finds a connection that died without closing."""
    connection = await asyncpg.connect(dsn, server_settings={"application_name": application_name})
    lost = asyncio.Event()
    try:
        connection.add_termination_listener(lambda _: lost.set())
        await connection.add_listener(channel, lambda *_: on_change())
        on_change()
        while not lost.is_set():
            try:
                await asyncio.wait_for(lost.wait(), timeout=keepalive_seconds)
            except TimeoutError:
                await connection.fetchval("SELECT 1", timeout=keepalive_seconds)
    finally:
        connection.terminate()
