"""Callers for the classify tests: one production token and one sandbox token of the same business user."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan, User
from compliance_api.auth.caller import Caller
from compliance_api.classify.ruleset import Rulesets, packaged_rulesets
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import tier_for
from tests.factories import bearer, create_token, create_user


@dataclass(frozen=True, slots=True)
class Account:
    user: User
    live: dict[str, str]
    test: dict[str, str]


async def make_account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    user = await create_user(sessionmaker, plan=Plan.internal)
    _, live = await create_token(sessionmaker, pepper, user=user)
    _, test = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    return Account(user=user, live=bearer(live), test=bearer(test))


def caller_for(user: User, environment: Environment) -> Caller:
    """A caller as the gateway would build it, for calling the service directly."""
    return Caller(
        user_id=user.id,
        token_id=uuid.uuid4(),
        environment=environment,
        plan=user.plan,
        kind=user.kind,
        tier=tier_for(user.plan, environment),
        token_last4="test",
    )


@pytest.fixture
async def account(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> Account:
    return await make_account(sessionmaker, pepper)


@pytest.fixture
def rulesets() -> Rulesets:
    return packaged_rulesets()
