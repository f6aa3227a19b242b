"""Writing events: always inside the caller's transaction, so an event exists exactly when its change does."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.events.models import OutboxEvent
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment, scoped


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    payload: dict[str, Any]


async def emit(session: AsyncSession, *, environment: Environment, type: str, payload: dict[str, Any]) -> uuid.UUID:
    """Add one event to the outbox; it is committed (or rolled back) with the caller's transaction."""
    event_id = uuid.uuid4()
    await emit_many(session, environment=environment, events=[Event(type, payload)], ids=[event_id])
    return event_id


def outbox_row(
    *, environment: Environment, type: str, payload: dict[str, Any], at: datetime, id: uuid.UUID | None = None
) -> dict[str, Any]:
    """An `outbox_event` row, for writers that insert it themselves (`emit_many`, the audit trail's group commit)."""
    return {"id": id or uuid.uuid4(), "environment": environment, "type": type, "payload": payload, "created_at": at}


async def emit_many(
    session: AsyncSession,
    *,
    environment: Environment,
    events: Iterable[Event],
    ids: Sequence[uuid.UUID] = (),
    at: datetime | None = None,
) -> int:
    """Add many events in one statement (bulk imports); returns how many were written."""
    now = at or utcnow()
    rows = [
        outbox_row(
            environment=environment,
            type=event.type,
            payload=event.payload,
            at=now,
            id=ids[i] if i < len(ids) else None,
        )
        for i, event in enumerate(events)
    ]
    if rows:
        await session.execute(insert(OutboxEvent), rows)
    return len(rows)


async def pending(session: AsyncSession, *, environment: Environment, type: str | None = None) -> list[OutboxEvent]:
    """Undelivered events, oldest first."""
    statement = scoped(select(OutboxEvent), OutboxEvent, environment).where(OutboxEvent.delivered_at.is_(None))
    if type is not None:
        statement = statement.where(OutboxEvent.type == type)
    return list((await session.scalars(statement.order_by(OutboxEvent.created_at, OutboxEvent.id))).all())
