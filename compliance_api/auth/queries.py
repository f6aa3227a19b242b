"""The API tokens' statements. The rules that call them live in `service.py`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Row, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.accounts.models import Plan, User, UserKind
from compliance_api.auth.models import ApiToken
from compliance_api.kit.environment import Environment, scoped


def add(session: AsyncSession, row: ApiToken) -> None:
    session.add(row)


async def tokens_of(session: AsyncSession, user_id: uuid.UUID, environment: Environment | None) -> Sequence[ApiToken]:
    """The user's tokens (in `environment`, or both), oldest first."""
    statement = select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.created_at)
    if environment is not None:
        statement = scoped(statement, ApiToken, environment)
    return (await session.scalars(statement)).all()


async def token_in(session: AsyncSession, token_id: uuid.UUID, environment: Environment) -> ApiToken | None:
    return await session.scalar(scoped(select(ApiToken).where(ApiToken.id == token_id), ApiToken, environment))


async def token(session: AsyncSession, token_id: uuid.UUID) -> ApiToken | None:
    return await session.get(ApiToken, token_id)


async def token_of(session: AsyncSession, user_id: uuid.UUID, token_id: uuid.UUID) -> ApiToken | None:
    return await session.scalar(select(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user_id))


async def token_by_hash(
    session: AsyncSession, token_hash: str, previous_hash: str | None
) -> Row[uuid.UUID, uuid.UUID, Environment, datetime | None, str, Plan, UserKind] | None:
    """(id, user_id, environment, revoked_at, token_hash, plan, kind) of the token keyed by either hash."""
    matches = (
        ApiToken.token_hash == token_hash
        if previous_hash is None
        else ApiToken.token_hash.in_((token_hash, previous_hash))
    )
    return (
        await session.execute(
            select(
                ApiToken.id,
                ApiToken.user_id,
                ApiToken.environment,
                ApiToken.revoked_at,
                ApiToken.token_hash,
                User.plan,
                User.kind,
            )
            .join(User, User.id == ApiToken.user_id)
            .where(matches)
        )
    ).one_or_none()


async def change_token(session: AsyncSession, token_id: uuid.UUID, changes: dict[str, datetime | str]) -> None:
    await session.execute(update(ApiToken).where(ApiToken.id == token_id).values(**changes))
