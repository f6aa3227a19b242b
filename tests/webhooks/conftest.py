"""Webhook test wiring: private targets allowed (the receiver is on 127.0.0.1), a real HTTP receiver, accounts."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import User
from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.conftest import SECRET
from tests.factories import bearer, create_token, create_user
from tests.webhooks.receiver import Receiver, receiving


@pytest.fixture
def settings(database_url: str, var_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        redis_url=os.environ.get("REDIS_URL", ""),
        secret_key=SECRET,
        var_dir=var_dir,
        public_base_url="http://api.test",
        webhooks_allow_private_targets=True,
    )


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
