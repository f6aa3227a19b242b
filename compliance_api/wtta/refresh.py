"""The scheduled refresh of the production register cache from `COMPLIANCE_WTTA_REGISTER_URL`, run by the worker.

Each round is what `compliance-api wtta import URL` does: a download conditional on the previous one's validators
(ETag, Last-Modified), then one transaction; a failure anywhere changes nothing in the cache. The schedule lives in
the database (the last refresh from the URL), so a restarted worker, or several, refresh when it is due rather than
on start. A failed round is logged on one line, counted (`compliance_wtta_refreshes_total{outcome="failed"}`) and
retried after a minute, then two, four … (at most half the interval), sooner than the next full interval.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from urllib.parse import urlsplit

import structlog
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.metrics import WTTA_REFRESHES
from compliance_api.wtta import register_import, service
from compliance_api.wtta.download import fetch
from compliance_api.wtta.register_file import read_rows
from compliance_api.wtta.register_import import ImportResult, ImportSource

log = structlog.get_logger()

FIRST_RETRY = dt.timedelta(minutes=1)
# DownloadError, RegisterFileError and EmptySnapshot are ValueErrors; asyncpg raises OSError when it cannot connect.
REFRESH_ERRORS = (ValueError, SQLAlchemyError, OSError)


async def refresh_from_url(
    sessionmaker: async_sessionmaker[AsyncSession], *, url: str, environment: Environment = Environment.live
) -> ImportResult:
    """Download `url` if it changed since the last import from it, and import it in one transaction.

    The download runs in a thread, so that an API process running the worker keeps serving meanwhile.
    """
    async with sessionmaker() as session:
        previous = await service.last_url_import(session, environment=environment, url=url)
    validators = (previous.etag, previous.last_modified) if previous else (None, None)
    with ExitStack() as downloaded:
        download = fetch(url, etag=validators[0], last_modified=validators[1])
        fetched = await asyncio.to_thread(downloaded.enter_context, download)
        origin = ImportSource(url, url, url, fetched.etag, fetched.last_modified)
        async with sessionmaker.begin() as session:
            if fetched.path is None:
                return await register_import.record_not_modified(
                    session, environment=environment, origin=origin, full=False
                )
            with fetched.path.open("rb") as file:
                return await register_import.import_rows(
                    session, environment=environment, rows=read_rows(file), origin=origin
                )


@dataclass(slots=True)
class RefreshSchedule:
    url: str
    interval: dt.timedelta
    failures: int = 0  # consecutive failed rounds

    def retry_delay(self) -> dt.timedelta:
        doubled = FIRST_RETRY * (1 << min(self.failures - 1, 30))  # bounded: a timedelta overflows at 2**40 minutes
        return min(doubled, self.interval / 2)


def shown_url(url: str) -> str:
    """The URL without credentials or query (which may hold a token), for the log."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"


def _one_line(exc: Exception) -> str:
    """What failed, without the statement a database error quotes."""
    if isinstance(exc, SQLAlchemyError):
        return f"{type(exc).__name__}: {getattr(exc, 'orig', None) or 'database error'}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


async def refresh_round(
    sessionmaker: async_sessionmaker[AsyncSession], schedule: RefreshSchedule, *, now: dt.datetime
) -> dt.timedelta:
    """Refresh the production cache if it is due (or a retry is); returns how long to wait for the next round."""
    try:
        async with sessionmaker() as session:
            last = await service.last_url_import(session, environment=Environment.live, url=schedule.url)
        if last is not None and now - last.finished_at < schedule.interval:
            schedule.failures = 0  # fresh, perhaps refreshed by another worker
            return schedule.interval - (now - last.finished_at)
        result = await refresh_from_url(sessionmaker, url=schedule.url)
    except REFRESH_ERRORS as exc:
        schedule.failures += 1
        delay = schedule.retry_delay()
        WTTA_REFRESHES.labels(outcome="failed").inc()
        log.warning(
            "wtta_refresh_failed",
            url=shown_url(schedule.url),
            error=_one_line(exc),
            attempt=schedule.failures,
            retry_in_seconds=round(delay.total_seconds()),
        )
        return delay
    schedule.failures = 0
    outcome = "not_modified" if result.not_modified else "imported"
    WTTA_REFRESHES.labels(outcome=outcome).inc()
    log.info("wtta_refreshed", url=shown_url(schedule.url), outcome=outcome, **result.as_json())
    return schedule.interval


async def run_wtta_refresh(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    stop: asyncio.Event,
    *,
    clock: Callable[[], dt.datetime] = utcnow,
) -> None:
    """Refresh rounds until `stop` is set; nothing to do without `COMPLIANCE_WTTA_REGISTER_URL`."""
    if not settings.wtta_register_url:
        return
    schedule = RefreshSchedule(settings.wtta_register_url, dt.timedelta(hours=settings.wtta_refresh_hours))
    while not stop.is_set():
        delay = await refresh_round(sessionmaker, schedule, now=clock())
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=delay.total_seconds())
