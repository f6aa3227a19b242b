"""Sandbox purge: each table family goes after 30 days in the sandbox only; fixtures stay; dry runs change nothing."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.demo.fixtures import create_demo
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.group_commit import GroupCommit
from compliance_api.models import Base
from compliance_api.rates.fixtures import seed_synthetic
from compliance_api.rates.models import RateBenchmark
from compliance_api.retention.rules import KEPT, RULES
from compliance_api.wtta import service as wtta_service
from compliance_api.wtta.fixtures import SANDBOX_ADMISSIONS
from tests.conftest import commits
from tests.retention import families
from tests.retention.conftest import counts, purge_in

pytestmark = (
    commits  # the import stages rows in a temporary table that lives until its transaction ends, so these tests commit
)


async def _purged_in_sandbox_only(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, tables: set[str]
) -> None:
    """The family's rows exist in both environments; at 29 days nothing goes, at 31 every sandbox row does."""
    live, sandbox = await counts(sessionmaker, Environment.live), await counts(sessionmaker, Environment.test)
    assert all(live[table] > 0 and sandbox[table] > 0 for table in tables)

    assert (await purge_in(sessionmaker, settings, 29)).total == 0
    report = await purge_in(sessionmaker, settings, 31)

    assert report.deleted == sandbox
    assert set(report.deleted) >= tables
    assert set((await counts(sessionmaker, Environment.test)).values()) == {0}
    assert await counts(sessionmaker, Environment.live) == live


async def test_classifications_and_events(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await families.classifications(audit, sessionmaker)
    await families.events(sessionmaker)
    await _purged_in_sandbox_only(sessionmaker, settings, {"classification", "outbox_event"})


async def test_wtta_admissions_history_and_imports(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await families.wtta(sessionmaker)
    await _purged_in_sandbox_only(sessionmaker, settings, {"wtta_admission", "wtta_status_change", "wtta_import"})


async def test_rate_imports_observations_and_benchmarks(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await families.rates(sessionmaker)
    await _purged_in_sandbox_only(sessionmaker, settings, {"rate_import", "rate_observation", "rate_benchmark"})


async def test_passports_verifications_shares_and_views(
    sessionmaker: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    audit: GroupCommit,
    settings: Settings,
    pepper: bytes,
) -> None:
    await families.passports(sessionmaker, engine, audit, pepper)
    tables = {"passport", "passport_verification", "passport_share", "passport_share_view"}
    await _purged_in_sandbox_only(sessionmaker, settings, tables)


async def test_dac7_sellers_activities_grants_and_reports(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await families.dac7(sessionmaker)
    tables = {"dac7_seller", "dac7_activity", "dac7_grant", "dac7_report"}
    await _purged_in_sandbox_only(sessionmaker, settings, tables)


async def _benchmarks(sessionmaker: async_sessionmaker[AsyncSession]) -> set[tuple[object, ...]]:
    async with sessionmaker() as session:
        rows = await session.execute(
            select(RateBenchmark.sector, RateBenchmark.region, RateBenchmark.p50_eur, RateBenchmark.sample_size).where(
                RateBenchmark.environment == Environment.test
            )
        )
        return {tuple(row) for row in rows}


async def test_benchmarks_are_recomputed_from_the_observations_that_stay(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    async with sessionmaker.begin() as session:
        await seed_synthetic(
            session, Environment.test, seed=7, as_of=utcnow().date(), window_months=families.WINDOW_MONTHS
        )
    synthetic_only = await _benchmarks(sessionmaker)
    await families.rates(sessionmaker)
    assert await _benchmarks(sessionmaker) != synthetic_only

    report = await purge_in(sessionmaker, settings, 31)

    assert report.deleted["rate_observation"] == 30
    assert report.deleted["rate_benchmark"] == 0  # every pair still has synthetic observations
    assert await _benchmarks(sessionmaker) == synthetic_only


async def test_demo_fixtures_survive_any_age_and_demo_stays_idempotent(
    audit: GroupCommit, sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, pepper: bytes
) -> None:
    async with sessionmaker.begin() as session:
        first = await create_demo(session, pepper=pepper)
    await families.classifications(audit, sessionmaker)
    fixtures = await counts(sessionmaker, Environment.test)

    report = await purge_in(sessionmaker, settings, 400)

    after = await counts(sessionmaker, Environment.test)
    assert report.deleted["classification"] == 1
    assert after == {**fixtures, "classification": 0, "outbox_event": 0}
    async with sessionmaker() as session:
        for kvk, *_ in SANDBOX_ADMISSIONS.values():
            assert await wtta_service.lookup(session, environment=Environment.test, kvk_number=kvk) is not None
    async with sessionmaker.begin() as session:
        second = await create_demo(session, pepper=pepper, rotate=True)
    assert second.fixtures["wtta"] == first.fixtures["wtta"]
    assert second.fixtures["dac7"] == first.fixtures["dac7"]

    report = await purge_in(sessionmaker, settings, 400)

    assert report.deleted["passport_share"] == 2  # the shares the rotating demo replaced
    assert await counts(sessionmaker, Environment.test) == {**fixtures, "classification": 0, "outbox_event": 0}


async def test_dry_run_counts_the_same_rows_and_deletes_none(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await families.wtta(sessionmaker)
    await families.rates(sessionmaker)
    await families.dac7(sessionmaker)
    before = await counts(sessionmaker, Environment.test)

    dry = await purge_in(sessionmaker, settings, 31, dry_run=True)

    assert dry.dry_run
    assert dry.total > 0
    assert await counts(sessionmaker, Environment.test) == before
    assert (await purge_in(sessionmaker, settings, 31)).deleted == dry.deleted


async def test_running_twice_deletes_nothing_the_second_time(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, pepper: bytes
) -> None:
    async with sessionmaker.begin() as session:
        await create_demo(session, pepper=pepper)
    await families.wtta(sessionmaker, kvk="87654321")
    assert (await purge_in(sessionmaker, settings, 31)).total > 0
    after_first = await counts(sessionmaker, Environment.test)

    second = await purge_in(sessionmaker, settings, 31)

    assert second.total == 0
    assert await counts(sessionmaker, Environment.test) == after_first


def test_every_environment_owned_table_has_a_rule_or_is_kept_on_purpose() -> None:
    owned = {table.name for table in Base.metadata.sorted_tables if "environment" in table.c}
    ruled = {rule.name for rule in RULES}
    assert owned - KEPT <= ruled
    assert not KEPT & ruled
