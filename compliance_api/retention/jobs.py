"""The daily purges, for the worker: `await run_daily(sessionmaker, settings, stop)` as one of its tasks.

Each day: sandbox data past 30 days (fixtures kept), verdicts past their retention (production years, sandbox days),
production DAC7 records past their record-keeping period (`dac7/retention.py`), Idempotency-Key records past 24 hours,
events and logged requests past 30 days; then monitored verdicts are re-scored
under today's law (once a day per environment, and once more when a start brings new ruleset versions). Each job is
its own transaction; one failing does not stop the others.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from contextlib import suppress

import structlog
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.rescore import claim_run, rescore, rulesets_signature
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.classify.service import Retention
from compliance_api.classify.service import purge_expired as purge_expired_classifications
from compliance_api.config import Settings
from compliance_api.dac7.retention import purge_expired as purge_expired_dac7
from compliance_api.events.service import purge_expired as purge_expired_events
from compliance_api.idempotency.service import purge_expired as purge_expired_idempotency
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.outage import DatabaseOutage, is_database_unreachable
from compliance_api.requestlog.service import purge_expired as purge_expired_requests
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
    """Purge now, then once per `interval` until `stop` is set; a failed run is logged and retried next time, a run
    that found the database unreachable sooner (after 5 s, doubling up to 5 min)."""
    outage = DatabaseOutage("retention", first_wait=5.0, max_wait=300.0)
    while True:
        await run_once(sessionmaker, settings, now=clock(), outage=outage)
        wait = min(outage.next_wait, interval.total_seconds()) if outage.unreachable else interval.total_seconds()
        with suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await stop.wait()
        if stop.is_set():
            return


async def run_once(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    *,
    now: dt.datetime,
    outage: DatabaseOutage | None = None,
) -> bool:
    """One round of the daily purges; logs what went (or why a purge failed) and says whether all succeeded.

    An unreachable database ends the round (the other jobs would fail the same way) and is told to `outage`, which
    logs it once for as long as it lasts."""
    outage = outage or DatabaseOutage("retention")
    try:
        sandbox = await _purge_sandbox(sessionmaker, settings, now)
        expired = await _purge_expired(sessionmaker, settings, now)
        rescored = await _rescore_monitored(sessionmaker, settings, now)
    except Exception as exc:
        if not is_database_unreachable(exc):
            raise
        outage.failed(exc)
        return False
    outage.succeeded()
    return sandbox and expired and rescored


def _reported(job: str, exc: Exception) -> bool:
    """Log a job's failure and go on with the next job; an unreachable database is raised to end the round."""
    if is_database_unreachable(exc):
        raise exc
    log.warning(job, error=type(exc).__name__)
    return False


async def _purge_sandbox(sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, now: dt.datetime) -> bool:
    try:
        report = await purge_sandbox(sessionmaker, settings, now=now)
    except (SQLAlchemyError, OSError) as exc:
        return _reported("sandbox_purge_failed", exc)
    log.info("sandbox_purged", cutoff=report.cutoff.isoformat(), total=report.total, **report.deleted)
    return True


async def _purge_expired(sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, now: dt.datetime) -> bool:
    """Verdicts past retention, Idempotency-Key records past 24 hours, events past the event log's 30 days,
    requests past the request log's 30 days and production DAC7 records past their record-keeping period."""
    retention = Retention(settings.classification_retention_years, settings.sandbox_retention_days)
    try:
        async with sessionmaker.begin() as session:
            verdicts = await purge_expired_classifications(session, retention, now)
            keys = await purge_expired_idempotency(session, now)
            events = await purge_expired_events(session, now)
            requests = await purge_expired_requests(session, now)
            dac7 = await purge_expired_dac7(session, settings.dac7_retention_years, now)
    except (SQLAlchemyError, OSError) as exc:
        return _reported("expired_purge_failed", exc)
    by_environment = {f"verdicts_{e.value}": n for e, n in verdicts.items()}
    log.info(
        "expired_purged",
        idempotency_records=keys,
        events=events,
        requests=requests,
        dac7_activities=dac7.activities,
        dac7_reports=dac7.reports,
        dac7_sellers=dac7.sellers,
        **by_environment,
    )
    return True


async def _rescore_monitored(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, now: dt.datetime
) -> bool:
    """Re-score monitored verdicts as of today, per environment, unless that ran today under these rulesets."""
    rulesets = packaged_rulesets()
    signature = rulesets_signature(rulesets)
    retention = Retention(settings.classification_retention_years, settings.sandbox_retention_days)
    try:
        for environment in Environment:
            async with sessionmaker.begin() as session:
                if not await claim_run(session, environment, signature, now.date(), now):
                    continue
                report = await rescore(
                    session, rulesets, environment, as_of=now.date(), now=now, since=retention.cutoff(environment, now)
                )
            log.info(
                "verdicts_rescored",
                environment=environment.value,
                examined=report.examined,
                changed=len(report.changes),
            )
    except (SQLAlchemyError, OSError) as exc:
        return _reported("rescore_failed", exc)
    return True
