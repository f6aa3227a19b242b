"""DAC7 test wiring: sellers and activities made through the service, accounts with tokens in both environments."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User
from compliance_api.dac7 import activity_file, service
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.passport.conftest import (
    Account,
    business,  # noqa: F401  (the fixture, registered here by the import)
    make_account,
)

VALID_BSN = "111222333"
HEADER = "activity_id,freelancer_id,activity_date,consideration_eur,fees_eur,taxes_eur,activity_type"


def csv_file(*rows: str) -> bytes:
    return ("\n".join([HEADER, *rows]) + "\n").encode()


def row(
    activity_id: str,
    seller: uuid.UUID,
    day: dt.date,
    consideration: str = "100.00",
    fees: str = "10.00",
    taxes: str = "0",
    kind: str = "personal_services",
) -> str:
    return f"{activity_id},{seller},{day.isoformat()},{consideration},{fees},{taxes},{kind}"


async def make_seller(
    sessionmaker: async_sessionmaker[AsyncSession],
    user: User,
    environment: Environment = Environment.live,
    tin: str = VALID_BSN,
    state: str = "NL",
) -> None:
    async with sessionmaker.begin() as session:
        await service.record_seller(session, user, environment, tin=tin, member_state=state, now=utcnow())


async def import_rows(
    sessionmaker: async_sessionmaker[AsyncSession],
    rows: Sequence[str],
    environment: Environment = Environment.live,
) -> service.ImportResult:
    parsed = activity_file.parse(csv_file(*rows), json_format=False, today=utcnow().date())
    async with sessionmaker.begin() as session:
        return await service.import_activities(session, environment, parsed, now=utcnow())


async def give_grant(
    sessionmaker: async_sessionmaker[AsyncSession], seller: User, grantee: User, environment: Environment
) -> uuid.UUID:
    async with sessionmaker.begin() as session:
        return (await service.grant(session, seller, grantee, environment, utcnow())).id


@pytest.fixture
async def seller(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    """A freelancer recorded as a DAC7 seller in production only."""
    account = await make_account(sessionmaker, pepper)
    await make_seller(sessionmaker, account.user)
    return account


@pytest.fixture
async def other_freelancer(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper)
