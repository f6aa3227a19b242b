"""The scheduled refresh of the production register cache from `COMPLIANCE_WTTA_REGISTER_URL`, run by the worker.

Each round is what `compliance-api wtta import URL` does: a download conditional on the previous one's validators
(ETag, Last-Modified), then one transaction; a failure anywhere changes nothing in the cache. The schedule lives in
the database (the last refresh from the URL), so a restarted worker, or several, refresh when it is due rather than
on start. A failed round is logged on one line, counted (`compliance_wtta_refreshes_total{outcome="failed"}`) and
retried after a minute, then two, four … (at most half the interval), sooner than the next full interval. A file that
cannot be imported (a bad row, a date outside the calendar, JSON nested too deeply) is refused the same way
(`outcome="refused"`, the line and field in the log) and remembered, so that while it stays unchanged it is neither
downloaded nor read again (`outcome="refused_unchanged"`).
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
from compliance_api.wtta.register_file import RegisterFileError, read_rows
from compliance_api.wtta.register_import import ImportSource, RegisterImportResult

log = structlog.get_logger()

FIRST_RETRY = dt.timedelta(minutes=1)
# DownloadError, RegisterFileError and EmptySnapshot are ValueErrors; asyncpg raises OSError when it cannot connect.
REFRESH_ERRORS = (ValueError, SQLAlchemyError, OSError)


class RefusedRegister(ValueError):
    """The register file at the URL cannot be imported: `error` names the line and field of its first bad row.
    `unchanged`: it is the file refused before (the server answered 304 to its validators, or sent the same bytes),
    so it was not read again."""

    def __init__(self, error: str, *, unchanged: bool) -> None:
        super().__init__(error)
        self.error = error
        self.unchanged = unchanged


async def refresh_from_url(
    sessionmaker: async_sessionmaker[AsyncSession], *, url: str, environment: Environment = Environment.live
) -> RegisterImportResult:
    """Download `url` if it changed since the last import from it, and import it in one transaction.

    A file that cannot be imported is remembered (its validators and hash) and RefusedRegister raised: while it stays
    unchanged, later rounds ask for it conditionally on its validators and neither download nor read it again, after
    a restart too. The download runs in a thread, so that an API process running the worker keeps serving meanwhile.
    """
    async with sessionmaker() as session:
        previous = await service.last_url_import(session, environment=environment, url=url)
        refused = await service.refused_file(session, environment=environment, url=url)
    source = refused or previous
    with ExitStack() as downloaded:
        download = fetch(
            url, etag=source.etag if source else None, last_modified=source.last_modified if source else None
        )
        fetched = await asyncio.to_thread(downloaded.enter_context, download)
        if refused is not None and (fetched.path is None or fetched.sha256 == refused.sha256):
            raise RefusedRegister(refused.error, unchanged=True)
        origin = ImportSource(url, url, url, fetched.etag, fetched.last_modified)
        try:
            async with sessionmaker.begin() as session:
                if fetched.path is None:
                    return await register_import.record_not_modified(
                        session, environment=environment, origin=origin, full=False
                    )
                with fetched.path.open("rb") as file:
                    result = await register_import.import_rows(
                        session, environment=environment, rows=read_rows(file), origin=origin
                    )
                await service.forget_refused(session, environment=environment, url=url)
                return result
        except RegisterFileError as exc:
            async with sessionmaker.begin() as session:
                await service.remember_refused(
                    session, environment=environment, url=url, fetched=fetched, error=str(exc), now=utcnow()
                )
            raise RefusedRegister(str(exc), unchanged=False) from None


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
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (reading it checks it)
    except ValueError:
        return "(not a valid URL)"
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"


def _one_line(exc: Exception) -> str:
    """What failed, without the statement a database error quotes."""
    if isinstance(exc, SQLAlchemyError):
        return f"{type(exc).__name__}: {getattr(exc, 'orig', None) or 'database error'}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


async def refresh_round(
    sessionmaker: async_sessionmaker[AsyncSession], schedule: RefreshSchedule, *, now: dt.datetime
) -> dt.timedelta:
    """Refresh the production cache if it is due (or a retry is); returns how long to wait for the next round.

    Nothing a round meets stops the worker: a refused file, a failed download or database, and anything unforeseen
    are each logged on one line, counted and retried later, while the cache stays as it was."""
    try:
        async with sessionmaker() as session:
            last = await service.last_url_import(session, environment=Environment.live, url=schedule.url)
        if last is not None and now - last.finished_at < schedule.interval:
            schedule.failures = 0  # fresh, perhaps refreshed by another worker
            return schedule.interval - (now - last.finished_at)
        result = await refresh_from_url(sessionmaker, url=schedule.url)
    except RefusedRegister as exc:
        outcome = "refused_unchanged" if exc.unchanged else "refused"
        return _retry(schedule, outcome, "wtta_refresh_refused", exc.error, unchanged=exc.unchanged)
    except REFRESH_ERRORS as exc:
        return _retry(schedule, "failed", "wtta_refresh_failed", _one_line(exc))
    except Exception as exc:  # a bug must not end webhook delivery and the daily purges, which run beside it
        return _retry(schedule, "failed", "wtta_refresh_failed", f"{type(exc).__name__}: {_one_line(exc)}")
    schedule.failures = 0
    outcome = "not_modified" if result.not_modified else "imported"
    WTTA_REFRESHES.labels(outcome=outcome).inc()
    log.info("wtta_refreshed", url=shown_url(schedule.url), outcome=outcome, **result.as_json())
    return schedule.interval


def _retry(schedule: RefreshSchedule, outcome: str, event: str, error: str, **details: object) -> dt.timedelta:
    """Count and log a round that changed nothing, and return when to try again (sooner than the interval)."""
    schedule.failures += 1
    delay = schedule.retry_delay()
    WTTA_REFRESHES.labels(outcome=outcome).inc()
    log.warning(
        event,
        url=shown_url(schedule.url),
        error=error,
        attempt=schedule.failures,
        retry_in_seconds=round(delay.total_seconds()),
        **details,
    )
    return delay


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
            async with asyncio.timeout(delay.total_seconds()):
                await stop.wait()
