"""The outbox's statements. The rules that call them live in `service.py`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import ENVIRONMENT_WIDE
from compliance_api.kit.environment import Environment, owned_elsewhere, scoped


async def insert_events(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    await session.execute(insert(OutboxEvent), rows)


async def pending(session: AsyncSession, environment: Environment, type: str | None) -> Sequence[OutboxEvent]:
    """Undelivered events (of `type`, unless None), oldest first."""
    statement = scoped(select(OutboxEvent), OutboxEvent, environment).where(OutboxEvent.delivered_at.is_(None))
    if type is not None:
        statement = statement.where(OutboxEvent.type == type)
    return (await session.scalars(statement.order_by(OutboxEvent.created_at, OutboxEvent.id))).all()


def visible(user_id: uuid.UUID, environment: Environment, since: datetime) -> Select[OutboxEvent]:
    """The user's events in the environment: its own and the environment-wide ones, created since `since`."""
    return scoped(select(OutboxEvent), OutboxEvent, environment).where(
        or_(
            OutboxEvent.owner_id == user_id,
            and_(OutboxEvent.owner_id.is_(None), OutboxEvent.type.in_(ENVIRONMENT_WIDE)),
        ),
        OutboxEvent.created_at >= since,
    )


def filtered(
    statement: Select[OutboxEvent], types: Sequence[str], created_after: datetime | None
) -> Select[OutboxEvent]:
    """Only events of these types (any when empty), created after `created_after` (any when None)."""
    if types:
        statement = statement.where(OutboxEvent.type.in_(types))
    if created_after is not None:
        statement = statement.where(OutboxEvent.created_at > created_after)
    return statement


async def event_in(session: AsyncSession, statement: Select[OutboxEvent], event_id: uuid.UUID) -> OutboxEvent | None:
    return await session.scalar(statement.where(OutboxEvent.id == event_id))


async def purge_delivered_before(session: AsyncSession, before: datetime) -> int:
    """Delete handed-on events created before `before`, in both environments; returns how many."""
    result = await session.execute(
        delete(OutboxEvent).where(OutboxEvent.created_at < before, OutboxEvent.delivered_at.is_not(None))
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


environment_elsewhere = owned_elsewhere(OutboxEvent, OutboxEvent.id, OutboxEvent.owner_id)
"""The other environment in which this id is one of the user's events, if it is."""
