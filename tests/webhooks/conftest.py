"""Webhook test wiring: private targets allowed (the receiver is on 127.0.0.1), a real HTTP receiver, accounts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User
from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.factories import bearer, create_token, create_user
from tests.webhooks.receiver import Receiver, receiving


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The suite's settings, with private targets allowed: the test receivers listen on loopback."""
    return settings.model_copy(update={"webhooks_allow_private_targets": True})


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with receiving(Receiver) as box:
        yield box


@dataclass(frozen=True, slots=True)
class Account:
    user: User
    live: dict[str, str]
    test: dict[str, str]


MakeAccount = Callable[[], Awaitable[Account]]


@pytest.fixture
def make_account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> MakeAccount:
    async def make() -> Account:
        user = await create_user(sessionmaker)
        _, live = await create_token(sessionmaker, pepper, user=user)
        _, test = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
        return Account(user, bearer(live), bearer(test))

    return make


@pytest.fixture
async def worker(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Worker]:
    delivery = Worker(settings, sessionmaker, SecretBox(settings.secret_key_bytes()))
    yield delivery
    await delivery.close()
