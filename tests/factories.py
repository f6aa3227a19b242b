"""Test data, made through the services (never raw SQL)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.auth.models import ApiToken
from compliance_api.config import Settings
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service as webhooks_service
from compliance_api.webhooks import ssrf
from compliance_api.webhooks.signing import SecretBox


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


async def create_webhook_endpoint(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    owner: webhooks_service.EndpointOwner,
    url: str = "https://hooks.example.com/in",
    *,
    enabled_events: tuple[str, ...] = ("*",),
) -> uuid.UUID:
    """An enabled endpoint of `owner` (every event by default); returns its id."""
    async with sessionmaker.begin() as session:
        row, _ = await webhooks_service.create(
            session,
            owner,
            url=url,
            enabled_events=list(enabled_events),
            description="",
            enabled=True,
            policy=ssrf.policy_for(settings, owner.environment),
            box=SecretBox(settings.secret_key_bytes()),
            now=utcnow(),
        )
        return row.id


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
