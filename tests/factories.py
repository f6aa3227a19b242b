"""Test data, made through the services (never raw SQL)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.auth.models import ApiToken
from compliance_api.kit.environment import Environment


async def create_user(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    plan: Plan = Plan.free,
    kind: UserKind = UserKind.business,
    email: str | None = None,
) -> User:
    async with sessionmaker.begin() as session:
        return await accounts_service.create(
            session, email=email or f"user-{uuid.uuid4().hex[:12]}@example.com", kind=kind, plan=plan
        )


async def create_token(
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    *,
    user: User | None = None,
    environment: Environment = Environment.live,
    plan: Plan = Plan.free,
    name: str = "test",
) -> tuple[ApiToken, str]:
    owner = user or await create_user(sessionmaker, plan=plan)
    async with sessionmaker.begin() as session:
        return await auth_service.create(session, user=owner, environment=environment, name=name, pepper=pepper)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
