"""PostgreSQL LISTEN on a connection of its own, and the one reconnecting follower of the in-process copies (the
WTTA register's and the passport rows') that must hear of every committed change."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import asyncpg  # type: ignore[import-untyped]
import structlog

from compliance_api.kit.outage import DatabaseOutage, is_database_unreachable

log = structlog.get_logger(__name__)


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
                async with asyncio.timeout(keepalive_seconds):
                    await lost.wait()
            except TimeoutError:
                await connection.fetchval("SELECT 1", timeout=keepalive_seconds)
    finally:
        connection.terminate()


Watch = Callable[[Callable[[], None]], Awaitable[None]]
"""Calls its argument once watching and whenever a change may have been committed; returns or raises when lost."""


class Follower:
    """Follows a watch (`listen`, or a source's own) for as long as the process lives, for an in-memory copy.

    `on_heard` runs once following and on every change; `on_lost` when the watch is lost, before the next attempt.
    A lost database is retried after longer and longer waits and logged once (`DatabaseOutage`); anything else is
    logged as a warning and retried after `retry_seconds`.
    """

    def __init__(
        self,
        name: str,
        watch: Watch,
        *,
        on_heard: Callable[[], None],
        on_lost: Callable[[], None],
        retry_seconds: float,
    ) -> None:
        self.name = name
        self.outage = DatabaseOutage(name, first_wait=retry_seconds, max_wait=max(retry_seconds, 60.0))
        self._watch = watch
        self._on_heard = on_heard
        self._on_lost = on_lost
        self._retry_seconds = retry_seconds
        self._following = False
        self._task: asyncio.Task[None] | None = None

    @property
    def following(self) -> bool:
        """Whether every change is being heard now."""
        return self._following

    def start(self) -> None:
        """Start following, in the running event loop, unless already started."""
        if self._task is None:
            self._task = asyncio.create_task(self._follow())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)  # the watch lets go of its connection
            self._task = None
        self._following = False

    async def _follow(self) -> None:
        while True:
            wait = self._retry_seconds
            try:
                await self._watch(self._heard)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_database_unreachable(exc):
                    wait = self.outage.failed(exc)
                else:
                    log.warning("follower.watch_lost", follower=self.name, exc_info=True)
            self._following = False
            self._on_lost()
            await asyncio.sleep(wait)

    def _heard(self) -> None:
        self.outage.succeeded()
        self._following = True
        self._on_heard()
