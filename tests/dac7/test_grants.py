"""Grants in the service: one active grant per seller, grantee and environment, so one revocation ends access."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.dac7 import service
from compliance_api.dac7.models import Dac7Grant
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import give_grant
from tests.passport.conftest import Account


async def test_the_database_keeps_at_most_one_active_grant_per_pair(
    seller: Account, business: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await give_grant(sessionmaker, seller.user, business.user, Environment.live)
    await give_grant(sessionmaker, seller.user, business.user, Environment.test)  # another environment: fine
    with pytest.raises(IntegrityError):  # what a concurrent second grant would hit
        async with sessionmaker.begin() as session:
            session.add(
                Dac7Grant(
                    seller_user_id=seller.user.id,
                    grantee_user_id=business.user.id,
                    environment=Environment.live,
                    created_at=utcnow(),
                )
            )


async def test_after_a_revocation_a_new_grant_is_a_new_row(
    seller: Account, business: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    first = await give_grant(sessionmaker, seller.user, business.user, Environment.live)
    async with sessionmaker.begin() as session:
        revoked = await service.revoke_grant_by_id(session, first, utcnow())
    assert revoked.status == "revoked"
    second = await give_grant(sessionmaker, seller.user, business.user, Environment.live)
    assert second != first
    async with sessionmaker.begin() as session:
        with pytest.raises(service.Dac7Error, match="always reads its own"):
            await service.grant(session, seller.user, seller.user, Environment.live, utcnow())
        with pytest.raises(service.Dac7Error, match="only freelancers"):
            await service.grant(session, business.user, seller.user, Environment.live, utcnow())


async def test_a_grant_that_loses_a_race_returns_the_winner(
    seller: Account, business: Account, sessionmaker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    winner = await give_grant(sessionmaker, seller.user, business.user, Environment.live)
    real = service._active_grant
    calls: list[int] = []

    async def blind_first(*args: Any) -> Dac7Grant | None:
        """The first lookup misses the winner, as a request that read before the other committed would."""
        calls.append(1)
        return None if len(calls) == 1 else await real(*args)

    monkeypatch.setattr(service, "_active_grant", blind_first)
    async with sessionmaker.begin() as session:
        found = await service.grant(session, seller.user, business.user, Environment.live, utcnow())
        assert found.id == winner
    assert len(calls) == 2
