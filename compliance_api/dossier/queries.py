"""The dossiers' statements: the classifications of a period and the people they name. The rules that call them
live in `service.py`."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Collection

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncScalarResult, AsyncSession

from compliance_api.accounts.models import User
from compliance_api.auth.models import ApiToken
from compliance_api.classify.models import Classification
from compliance_api.kit.environment import Environment


async def users(session: AsyncSession, user_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, User]:
    return {user.id: user for user in await session.scalars(select(User).where(User.id.in_(user_ids)))}


async def tokens(session: AsyncSession, token_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, ApiToken]:
    return {t.id: t for t in await session.scalars(select(ApiToken).where(ApiToken.id.in_(token_ids)))}


def _in_period(
    environment: Environment, start: dt.datetime, end: dt.datetime, user_id: uuid.UUID | None
) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = [
        Classification.environment == environment,
        Classification.created_at >= start,
        Classification.created_at < end,
    ]
    if user_id is not None:
        conditions.append(Classification.user_id == user_id)
    return conditions


async def count_period(
    session: AsyncSession, environment: Environment, start: dt.datetime, end: dt.datetime, user_id: uuid.UUID | None
) -> int:
    """How many classifications of the environment (and account, unless None) were created in [start, end)."""
    condition = _in_period(environment, start, end, user_id)
    found = await session.scalar(select(func.count()).select_from(Classification).where(*condition))
    return int(found or 0)


async def stream_period(
    session: AsyncSession,
    environment: Environment,
    start: dt.datetime,
    end: dt.datetime,
    user_id: uuid.UUID | None,
    *,
    page_rows: int,
) -> AsyncScalarResult[Classification]:
    """Those classifications, oldest first, from a server-side cursor `page_rows` at a time."""
    statement = (
        select(Classification)
        .where(*_in_period(environment, start, end, user_id))
        .order_by(Classification.created_at, Classification.id)
        .execution_options(yield_per=page_rows)
    )
    return await session.stream_scalars(statement)
