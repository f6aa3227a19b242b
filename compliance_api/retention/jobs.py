"""The daily purge, for the worker: `await run_daily(sessionmaker, settings, stop)` as one of its tasks."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from contextlib import suppress

import structlog
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.retention.service import purge_sandbox

log = structlog.get_logger()

DAY = dt.timedelta(days=1)


async def run_daily(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    stop: asyncio.Event,
    *,
    interval: dt.timedelta = DAY,
    clock: Callable[[], dt.datetime] = utcnow,
) -> None:
    """Purge now, then once per `interval` until `stop` is set; a failed run is logged and retried next time."""
    while True:
        await run_once(sessionmaker, settings, now=clock())
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval.total_seconds())
        if stop.is_set():
            return


async def run_once(sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, *, now: dt.datetime) -> bool:
    """One purge; logs what went (or why it failed) and says whether it succeeded."""
    try:
        report = await purge_sandbox(sessionmaker, settings, now=now)
    except (SQLAlchemyError, OSError) as exc:
        log.warning("sandbox_purge_failed", error=type(exc).__name__)
        return False
    log.info("sandbox_purged", cutoff=report.cutoff.isoformat(), total=report.total, **report.deleted)
    return True
