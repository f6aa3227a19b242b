"""Dependency health, probed in the background so `/v1/health` answers without touching the database; the probe
also reads when each environment's WTTA register cache was last refreshed."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from enum import StrEnum

import structlog
from redis.asyncio import Redis
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from compliance_api.health import queries
from compliance_api.kit.environment import Environment

log = structlog.get_logger()


class HealthStatus(StrEnum):
    ok = "ok"
    degraded = "degraded"
    down = "down"


@dataclass(frozen=True, slots=True)
class Check:
    """One dependency's last probe: reachable or not, and how long it took."""

    reachable: bool
    latency_ms: float
    error: str | None = None


def assess(database: Check, redis: Check | None, *, slow_ms: float) -> HealthStatus:
    """`down` without the database; `degraded` when the database is slow or Redis slow or failing; else `ok`."""
    if not database.reachable:
        return HealthStatus.down
    if database.latency_ms > slow_ms:
        return HealthStatus.degraded
    if redis is not None and (not redis.reachable or redis.latency_ms > slow_ms):
        return HealthStatus.degraded
    return HealthStatus.ok


@dataclass(frozen=True, slots=True)
class CacheAge:
    """How old an environment's WTTA register cache is; `stale` past twice the scheduled refresh interval (or never
    refreshed while a refresh is scheduled)."""

    refreshed_at: dt.datetime | None
    age_seconds: int | None
    stale: bool


async def _timed(probe: Awaitable[object], limit_seconds: float) -> Check:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(limit_seconds):
            await probe
    except Exception as exc:  # any failure of a dependency is a health fact, not a crash
        return Check(False, (time.perf_counter() - started) * 1000, type(exc).__name__)
    return Check(True, (time.perf_counter() - started) * 1000)


class HealthProbe:
    def __init__(
        self,
        engine: AsyncEngine,
        redis: Redis | None,
        *,
        slow_ms: float,
        interval: float,
        wtta_stale_after: dt.timedelta | None = None,
    ) -> None:
        self._engine = engine
        self._wtta_stale_after = wtta_stale_after  # twice the refresh interval; None when no refresh is scheduled
        self.wtta_refreshed: dict[Environment, dt.datetime] = {}
        self._redis = redis
        self._slow_ms = slow_ms
        self._interval = interval
        self._timeout = max(1.0, slow_ms * 4 / 1000)
        self.status = HealthStatus.ok
        self.database: Check = Check(True, 0.0)
        self.redis: Check | None = None
        self._task: asyncio.Task[None] | None = None

    async def _ping_database(self) -> None:
        async with self._engine.connect() as connection:
            await queries.ping(connection)

    async def _read_wtta_refreshed(self) -> None:
        """Each environment's last register refresh; a failure keeps the last known (the ping reports the outage)."""
        try:
            async with asyncio.timeout(self._timeout):
                rows = await self._last_refreshes()
        except (SQLAlchemyError, OSError, TimeoutError):
            return
        self.wtta_refreshed = {Environment(environment): at for environment, at in rows}

    async def _last_refreshes(self) -> list[tuple[str, dt.datetime]]:
        async with self._engine.connect() as connection:
            return await queries.last_refreshes(connection)

    def wtta_age(self, environment: Environment, now: dt.datetime) -> CacheAge:
        """The environment's cache age as last probed; only production's register is refreshed on a schedule."""
        refreshed_at = self.wtta_refreshed.get(environment)
        age = None if refreshed_at is None else now - refreshed_at
        limit = self._wtta_stale_after if environment is Environment.live else None
        stale = limit is not None and (age is None or age > limit)
        return CacheAge(refreshed_at, None if age is None else int(age.total_seconds()), stale)

    async def probe_once(self) -> HealthStatus:
        self.database = await _timed(self._ping_database(), self._timeout)
        if self.database.reachable:
            await self._read_wtta_refreshed()
        self.redis = await _timed(self._redis.ping(), self._timeout) if self._redis is not None else None
        status = assess(self.database, self.redis, slow_ms=self._slow_ms)
        if status is not self.status:
            log.warning("health_changed", status=str(status), previous=str(self.status))
        self.status = status
        return status

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.probe_once()

    async def start(self) -> None:
        await self.probe_once()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
