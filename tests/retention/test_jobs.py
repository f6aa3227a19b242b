"""The worker's daily purge: runs at once, then waits for the next day or the stop signal."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from structlog.testing import capture_logs

from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.kit.outage import DatabaseOutage
from compliance_api.retention.jobs import run_daily, run_once
from tests.conftest import ProxiedPostgres
from tests.retention import families
from tests.retention.conftest import counts, days_ahead


async def test_run_daily_purges_then_stops_when_asked(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await families.events(sessionmaker)
    stop = asyncio.Event()
    stop.set()

    await asyncio.wait_for(run_daily(sessionmaker, settings, stop, clock=lambda: days_ahead(31)), timeout=30)

    assert (await counts(sessionmaker, Environment.test))["outbox_event"] == 0
    assert (await counts(sessionmaker, Environment.live))["outbox_event"] == 1


async def test_run_daily_runs_again_after_the_interval(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    stop = asyncio.Event()
    runs: list[dt.datetime] = []

    def clock() -> dt.datetime:
        runs.append(days_ahead(31))
        if len(runs) == 2:
            stop.set()
        return runs[-1]

    await asyncio.wait_for(
        run_daily(sessionmaker, settings, stop, interval=dt.timedelta(milliseconds=1), clock=clock), timeout=30
    )

    assert len(runs) == 2


async def test_a_failed_run_is_reported_not_raised(settings: Settings, tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'unmigrated.db'}")  # no tables: the purge fails
    try:
        assert await run_once(create_sessionmaker(engine), settings, now=days_ahead(31)) is False
    finally:
        await engine.dispose()


async def test_an_unreachable_database_is_logged_once_and_retried_sooner(
    settings: Settings, proxied_postgres: ProxiedPostgres
) -> None:
    engine = create_engine(Settings(database_url=proxied_postgres.url).resolved_database_url)
    outage = DatabaseOutage("retention", first_wait=5.0, max_wait=300.0)
    try:
        proxied_postgres.proxy.close()
        with capture_logs() as logs:
            rounds = [await run_once(create_sessionmaker(engine), settings, now=days_ahead(31), outage=outage)]
            rounds += [await run_once(create_sessionmaker(engine), settings, now=days_ahead(31), outage=outage)]
        assert rounds == [False, False]
        assert [(e["event"], e["loop"]) for e in logs] == [("database_unreachable", "retention")]
        assert outage.next_wait == 10.0

        proxied_postgres.proxy.reopen()
        with capture_logs() as logs:
            assert await run_once(create_sessionmaker(engine), settings, now=days_ahead(31), outage=outage) is True
        assert [e["event"] for e in logs if e["event"].startswith("database")] == ["database_reachable_again"]
        assert not outage.unreachable
    finally:
        await engine.dispose()


async def test_the_daily_round_also_purges_expired_verdicts_in_production(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    """Production verdicts go only after their retention (7 years), sandbox ones after 30 days."""
    await families.classifications(audit, sessionmaker)

    assert await run_once(sessionmaker, settings, now=days_ahead(365 * 6)) is True
    assert (await counts(sessionmaker, Environment.live))["classification"] == 1
    assert (await counts(sessionmaker, Environment.test))["classification"] == 0

    assert await run_once(sessionmaker, settings, now=days_ahead(365 * 7 + 2)) is True
    assert (await counts(sessionmaker, Environment.live))["classification"] == 0
