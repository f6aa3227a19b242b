"""The request log's statements. The rules that call them live in `service.py`."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Date, Row, Select, case, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from compliance_api.auth.models import ApiToken
from compliance_api.kit.environment import Environment, scoped
from compliance_api.requestlog.models import ApiRequest


def visible(
    user_id: uuid.UUID, environment: Environment, since: dt.datetime, *, dashboard_too: bool
) -> Select[ApiRequest]:
    """The user's requests in the environment since `since` (the dashboard's own too when `dashboard_too`)."""
    statement = scoped(select(ApiRequest), ApiRequest, environment).where(
        ApiRequest.user_id == user_id, ApiRequest.created_at >= since
    )
    return statement if dashboard_too else statement.where(ApiRequest.token_id.is_not(None))


def filtered(
    statement: Select[ApiRequest], status: tuple[int, int] | None, path: str | None, request_id: str | None
) -> Select[ApiRequest]:
    """Only requests with a status in [low, high), a path starting with `path`, of this request id (each if given)."""
    if status is not None:
        low, high = status
        statement = statement.where(ApiRequest.status >= low, ApiRequest.status < high)
    if path:
        statement = statement.where(ApiRequest.path.startswith(path, autoescape=True))
    if request_id:
        statement = statement.where(ApiRequest.request_id == request_id)
    return statement


async def request_in(session: AsyncSession, statement: Select[ApiRequest], row_id: uuid.UUID) -> ApiRequest | None:
    return await session.scalar(statement.where(ApiRequest.id == row_id))


class _UtcDay(FunctionElement[dt.date]):
    """The UTC calendar day of a timestamp column, on either backend."""

    type = Date()
    inherit_cache = True


@compiles(_UtcDay, "postgresql")
def _utc_day_postgresql(element: _UtcDay, compiler: Any, **kw: Any) -> str:
    return f"CAST(timezone('UTC', {compiler.process(element.clauses, **kw)}) AS DATE)"


@compiles(_UtcDay)
def _utc_day_sqlite(element: _UtcDay, compiler: Any, **kw: Any) -> str:
    return f"date({compiler.process(element.clauses, **kw)})"  # SQLite keeps UTC timestamps as naive text


async def daily_counts(
    session: AsyncSession, user_id: uuid.UUID, environment: Environment, since: dt.datetime
) -> Sequence[Row[dt.date, uuid.UUID | None, int, int | None]]:
    """(UTC day, token id, requests, rate-limited ones) of the user's requests since `since`, counted in the database
    (one index range scan)."""
    day = _UtcDay(ApiRequest.created_at)
    limited = func.sum(case((ApiRequest.status == 429, 1), else_=0))
    statement = (
        scoped(select(day, ApiRequest.token_id, func.count(), limited), ApiRequest, environment)
        .where(ApiRequest.user_id == user_id, ApiRequest.created_at >= since)
        .group_by(day, ApiRequest.token_id)
    )
    rows: Sequence[Row[dt.date, uuid.UUID | None, int, int | None]] = (await session.execute(statement)).all()
    return rows


async def tokens(session: AsyncSession, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, ApiToken]:
    return {token.id: token for token in await session.scalars(select(ApiToken).where(ApiToken.id.in_(ids)))}


async def purge_before(session: AsyncSession, before: dt.datetime) -> int:
    """Delete requests logged before `before`, in both environments; returns how many."""
    result = await session.execute(delete(ApiRequest).where(ApiRequest.created_at < before))
    return int(result.rowcount)  # type: ignore[attr-defined]
