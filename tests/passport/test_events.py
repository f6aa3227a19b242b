"""Passport changes write `passport.updated` to the outbox in the same transaction, per environment."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.events import service as events
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service
from compliance_api.passport.catalogue import packaged_catalogue
from compliance_api.passport.service import PassportError
from tests.passport.conftest import Account, give_passport


async def test_sector_and_verifications_emit_passport_updated(
    freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await give_passport(sessionmaker, freelancer.user, Environment.test, checks={"identity": None})
    async with sessionmaker() as session:
        sandbox = await events.pending(session, environment=Environment.test, type="passport.updated")
        live = await events.pending(session, environment=Environment.live, type="passport.updated")
    assert [event.payload["change"] for event in sandbox] == ["sector", "verification"]
    assert {event.payload["freelancer_id"] for event in sandbox} == {str(freelancer.user.id)}
    assert sandbox[1].payload["check"] == "identity"
    assert live == []


async def test_a_refused_change_writes_no_event(
    freelancer: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    now = utcnow()

    async def change_then_fail() -> None:
        async with sessionmaker.begin() as session:
            await service.set_sector(session, freelancer.user, Environment.live, "ict", now)
            await service.record_verification(
                session,
                freelancer.user,
                Environment.live,
                packaged_catalogue(),
                check="identity",
                verified_on=now.date(),
                expires_on=now.date() - dt.timedelta(days=1),
                evidence_ref="x",
                now=now,
            )

    with pytest.raises(PassportError):
        await change_then_fail()
    async with sessionmaker() as session:
        assert await events.pending(session, environment=Environment.live, type="passport.updated") == []
