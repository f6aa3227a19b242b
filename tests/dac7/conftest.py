"""DAC7 test wiring: sellers and activities made through the service, accounts with tokens in both environments."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User
from compliance_api.dac7 import activity_file, service
from compliance_api.dac7.fixtures import DEMO_OPERATOR
from compliance_api.dac7.identity import Dac7Address, Dac7FinancialAccount, Dac7Tin, SellerIdentity
from compliance_api.dac7.operator import set_operator
from compliance_api.dac7.sealing import IdentityBox
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.conftest import SECRET
from tests.passport.conftest import (
    Account,
    business,  # noqa: F401  (the fixture, registered here by the import)
    make_account,
)

VALID_BSN = "111222333"
TEST_BOX = IdentityBox(SECRET.encode())  # the box of the `settings` fixture
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


def complete_identity(tin: str = VALID_BSN, state: str = "NL", last_name: str = "de Vries") -> SellerIdentity:
    """An individual with everything a DAC7 report needs, resident where the TIN was issued."""
    return SellerIdentity(
        first_name="Jan",
        last_name=last_name,
        date_of_birth=dt.date(1990, 4, 1),
        address=Dac7Address(country=state, street="Damrak", building="1", post_code="1012 LG", city="Amsterdam"),
        tins=[Dac7Tin(tin=tin, issued_by=state)],
        financial_account=Dac7FinancialAccount(iban="NL91ABNA0417164300", holder="J. de Vries"),
    )


async def make_seller(
    sessionmaker: async_sessionmaker[AsyncSession],
    user: User,
    environment: Environment = Environment.live,
    tin: str = VALID_BSN,
    state: str = "NL",
    identity: SellerIdentity | None = None,
) -> None:
    """A seller with a complete identity (or the one given), sealed as the app's settings seal it."""
    async with sessionmaker.begin() as session:
        chosen = identity or complete_identity(tin, state)
        await service.set_identity(session, user, environment, chosen, box=TEST_BOX, now=utcnow())


async def make_operator(sessionmaker: async_sessionmaker[AsyncSession], environment: Environment) -> None:
    async with sessionmaker.begin() as session:
        await set_operator(session, environment, DEMO_OPERATOR, utcnow())


async def import_rows(
    sessionmaker: async_sessionmaker[AsyncSession],
    rows: Sequence[str],
    environment: Environment = Environment.live,
) -> service.Dac7ImportResult:
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
