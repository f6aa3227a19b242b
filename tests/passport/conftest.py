"""Passport test wiring: a freelancer with tokens in both environments, a business verifier, passports built
through the service."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User, UserKind
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service
from compliance_api.passport.catalogue import packaged_catalogue
from tests.factories import bearer, create_token, create_user


@dataclass(frozen=True, slots=True)
class Account:
    user: User
    live: dict[str, str]
    test: dict[str, str]

    def headers(self, environment: Environment) -> dict[str, str]:
        return self.live if environment is Environment.live else self.test


async def make_account(
    sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, kind: UserKind = UserKind.freelancer
) -> Account:
    user = await create_user(sessionmaker, kind=kind)
    _, live = await create_token(sessionmaker, pepper, user=user)
    _, test = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    return Account(user=user, live=bearer(live), test=bearer(test))


async def give_passport(
    sessionmaker: async_sessionmaker[AsyncSession],
    user: User,
    environment: Environment = Environment.live,
    *,
    checks: dict[str, dt.date | None] | None = None,
    sector: str = "ict",
) -> None:
    """A passport with `checks` (check id → expiry date; None: the catalogue's default), verified 30 days ago."""
    now = utcnow()
    wanted = checks if checks is not None else {"identity": None, "kvk_registration": None}
    async with sessionmaker.begin() as session:
        await service.set_sector(session, user, environment, sector, now)
        for check, expires_on in wanted.items():
            await service.record_verification(
                session,
                user,
                environment,
                packaged_catalogue(),
                check=check,
                verified_on=now.date() - dt.timedelta(days=30),
                expires_on=expires_on,
                evidence_ref=f"evidence-{check}",
                now=now,
            )


@pytest.fixture
async def freelancer(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper)


@pytest.fixture
async def business(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper, UserKind.business)
