"""Production DAC7 records are kept for the record-keeping period after their reportable period, then wiped."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.config import Settings
from compliance_api.dac7 import retention, service
from compliance_api.dac7.models import Dac7Activity, Dac7Report, Dac7Seller
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import import_rows, make_seller, row
from tests.factories import create_user

NOW = dt.datetime(2036, 3, 1, tzinfo=dt.UTC)
LONG_AGO = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)


async def _age(sessionmaker: async_sessionmaker[AsyncSession], user_id: object) -> None:
    """The seller's identity was last changed long ago."""
    async with sessionmaker.begin() as session:
        seller = await session.scalar(select(Dac7Seller).where(Dac7Seller.user_id == user_id))
        assert seller is not None
        seller.updated_at = LONG_AGO


async def test_periods_past_retention_are_wiped_and_newer_ones_kept(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    gone = await create_user(sessionmaker, kind=UserKind.freelancer)
    kept = await create_user(sessionmaker, kind=UserKind.freelancer)
    recent = await create_user(sessionmaker, kind=UserKind.freelancer)
    for user in (gone, kept, recent):
        await make_seller(sessionmaker, user)
    await make_seller(sessionmaker, gone, Environment.test)
    await import_rows(
        sessionmaker,
        [
            row("old", gone.id, dt.date(2025, 6, 1)),
            row("old-kept", kept.id, dt.date(2025, 6, 1)),
            row("new-kept", kept.id, dt.date(2026, 6, 1)),
        ],
    )
    await import_rows(sessionmaker, [row("sandbox", gone.id, dt.date(2025, 6, 1))], Environment.test)
    async with sessionmaker.begin() as session:
        for user, year in ((gone, 2025), (kept, 2025), (kept, 2026)):
            seller = await service.seller_of(session, user.id, Environment.live)
            assert seller is not None
            session.add(Dac7Report(seller_id=seller.id, year=year, message_ref_id="m", reported_at=NOW))
    await _age(sessionmaker, gone.id)
    assert retention.first_kept_year(NOW, 10) == 2026, "2025 was kept until the end of 2035"
    async with sessionmaker.begin() as session:
        wiped = await retention.purge_expired(session, 10, NOW)
    assert wiped == retention.Wiped(activities=2, reports=2, sellers=1)
    async with sessionmaker() as session:
        live = {
            s.user_id
            for s in await session.scalars(select(Dac7Seller).where(Dac7Seller.environment == Environment.live))
        }
        assert live == {kept.id, recent.id}, "a seller recorded recently, with nothing reported yet, stays"
        years = set(
            await session.scalars(select(Dac7Activity.year).where(Dac7Activity.environment == Environment.live))
        )
        assert years == {2026}
        sandbox = await session.scalar(select(func.count()).where(Dac7Activity.environment == Environment.test))
        assert sandbox == 1, "the sandbox has its own purge"
    async with sessionmaker.begin() as session:
        assert await retention.purge_expired(session, 10, utcnow()) == retention.Wiped(0, 0, 0)


@pytest.mark.parametrize("wrong", [4, 11])
def test_the_period_is_from_5_to_10_years_and_10_by_default(wrong: int) -> None:
    assert Settings().dac7_retention_years == 10
    with pytest.raises(ValidationError, match="dac7_retention_years"):
        Settings(dac7_retention_years=wrong)
