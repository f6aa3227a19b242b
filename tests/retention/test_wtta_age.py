"""A cached admission is as old as the last import that confirmed it, including one that listed every number."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.retention.service import purge_sandbox
from compliance_api.wtta import register_import
from compliance_api.wtta.models import WttaAdmission, WttaRegisterVersion
from compliance_api.wtta.reader import lookup_reader_for
from compliance_api.wtta.register_file import validate
from compliance_api.wtta.replica import ReplicatedLookup
from tests.conftest import commits

SANDBOX = Environment.test


async def _import(
    sessionmaker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch, kvks: list[str], days_ago: int
) -> None:
    """Import `kvks` into the sandbox as if it happened `days_ago` days ago."""
    at = utcnow() - dt.timedelta(days=days_ago)
    monkeypatch.setattr(register_import, "utcnow", lambda: at)
    rows = [validate((kvk, "Age B.V.", "admitted", "", "", ""), "line", n) for n, kvk in enumerate(kvks, start=1)]
    origin = register_import.ImportSource(location="register.csv", source="test register")
    async with sessionmaker.begin() as session:
        await register_import.import_rows(session, environment=SANDBOX, rows=rows, origin=origin)


async def _cached(sessionmaker: async_sessionmaker[AsyncSession]) -> set[str]:
    async with sessionmaker() as session:
        return set(await session.scalars(select(WttaAdmission.kvk_number).where(WttaAdmission.environment == SANDBOX)))


async def test_a_number_missing_from_recent_imports_goes_and_a_confirmed_one_stays(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _import(sessionmaker, monkeypatch, ["10000001", "10000002"], days_ago=40)
    await _import(sessionmaker, monkeypatch, ["10000001"], days_ago=1)

    report = await purge_sandbox(sessionmaker, settings, now=utcnow())

    assert report.deleted["wtta_admission"] == 1
    assert report.deleted["wtta_import"] == 1
    assert await _cached(sessionmaker) == {"10000001"}


async def test_a_recent_import_of_every_cached_number_confirms_them_all(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _import(sessionmaker, monkeypatch, ["10000001", "10000002"], days_ago=40)
    await _import(sessionmaker, monkeypatch, ["10000001", "10000002"], days_ago=1)  # stamps the import, not the rows

    report = await purge_sandbox(sessionmaker, settings, now=utcnow())

    assert report.deleted["wtta_admission"] == 0
    assert await _cached(sessionmaker) == {"10000001", "10000002"}


async def _versions(sessionmaker: async_sessionmaker[AsyncSession]) -> dict[Environment, int]:
    """Each environment's register version (0 before its first import)."""
    async with sessionmaker() as session:
        rows = await session.execute(select(WttaRegisterVersion.environment, WttaRegisterVersion.version))
    return {environment: 0 for environment in Environment} | {row.environment: row.version for row in rows}


@commits
async def test_a_purge_that_removes_admissions_makes_in_memory_copies_reload(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """API processes answer lookups from memory: the purged number must not be answered from an old copy."""
    await _import(sessionmaker, monkeypatch, ["10000001", "10000002"], days_ago=40)
    await _import(sessionmaker, monkeypatch, ["10000001"], days_ago=1)
    monkeypatch.undo()
    replica = lookup_reader_for(settings.resolved_database_url, postgres_pool_size=2)
    assert isinstance(replica, ReplicatedLookup)
    try:
        assert await replica.wait_loaded(SANDBOX) == 2
        before = await _versions(sessionmaker)

        assert (await purge_sandbox(sessionmaker, settings, now=utcnow(), dry_run=True)).deleted["wtta_admission"] == 1
        assert await _versions(sessionmaker) == before, "a dry run changes nothing"
        await purge_sandbox(sessionmaker, settings, now=utcnow())

        after = await _versions(sessionmaker)
        assert after[SANDBOX] > before[SANDBOX]
        assert after[Environment.live] == before[Environment.live]
        assert await replica.lookup(SANDBOX, "10000002") is None
        assert await replica.wait_loaded(SANDBOX) == 1
        assert await replica.lookup(SANDBOX, "10000002") is None
        assert await replica.lookup(SANDBOX, "10000001") is not None
    finally:
        await replica.close()


async def test_a_purge_that_removes_nothing_keeps_the_register_version(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _import(sessionmaker, monkeypatch, ["10000001"], days_ago=1)
    before = await _versions(sessionmaker)

    await purge_sandbox(sessionmaker, settings, now=utcnow())

    assert await _versions(sessionmaker) == before
