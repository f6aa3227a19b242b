"""Writing events: always inside the caller's transaction, so an event exists exactly when its change does."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.errors import ApiError
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import ENVIRONMENT_WIDE, EventName, owner_of
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment, scoped
from compliance_api.kit.pagination import Cursors, Paged, created_key, paginate


@dataclass(frozen=True, slots=True)
class Event:
    type: EventName
    payload: dict[str, Any]


async def emit(
    session: AsyncSession, *, environment: Environment, type: EventName, payload: dict[str, Any]
) -> uuid.UUID:
    """Add one event to the outbox; it is committed (or rolled back) with the caller's transaction."""
    event_id = uuid.uuid4()
    await emit_many(session, environment=environment, events=[Event(type, payload)], ids=[event_id])
    return event_id


def outbox_row(
    *, environment: Environment, type: EventName, payload: dict[str, Any], at: datetime, id: uuid.UUID | None = None
) -> dict[str, Any]:
    """An `outbox_event` row, for writers that insert it themselves (`emit_many`, the audit trail's group commit)."""
    return {
        "id": id or uuid.uuid4(),
        "environment": environment,
        "type": type,
        "payload": payload,
        "owner_id": owner_of(type, payload),
        "created_at": at,
    }


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


EVENT_RETENTION = timedelta(days=30)
"""How long the event log keeps an event (`GET /v1/events`, replays)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """Whose event log: an account in one environment."""

    user_id: uuid.UUID
    environment: Environment


def visible_to(reader: Reader, now: datetime) -> Select[OutboxEvent]:
    """The reader's events in its environment: its own, and the environment-wide ones, within retention."""
    return scoped(select(OutboxEvent), OutboxEvent, reader.environment).where(
        or_(
            OutboxEvent.owner_id == reader.user_id,
            and_(OutboxEvent.owner_id.is_(None), OutboxEvent.type.in_(ENVIRONMENT_WIDE)),
        ),
        OutboxEvent.created_at >= now - EVENT_RETENTION,
    )


async def list_events(
    session: AsyncSession,
    reader: Reader,
    *,
    types: Sequence[str],
    created_after: datetime | None,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
    now: datetime,
) -> Paged[OutboxEvent]:
    """A page of the reader's events, newest first."""
    statement = visible_to(reader, now)
    if types:
        statement = statement.where(OutboxEvent.type.in_(types))
    if created_after is not None:
        statement = statement.where(OutboxEvent.created_at > created_after)
    return await paginate(
        session,
        statement,
        OutboxEvent.created_at,
        OutboxEvent.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"events:{reader.user_id}:{reader.environment.value}",
        key_of=created_key,
        filters={"type": types, "created_after": created_after},
    )


async def get_event(session: AsyncSession, reader: Reader, event_id: uuid.UUID, now: datetime) -> OutboxEvent:
    """One of the reader's events; `event_not_found` when it is someone else's, elsewhere or past retention."""
    event = await session.scalar(visible_to(reader, now).where(OutboxEvent.id == event_id))
    if event is None:
        raise ApiError("event_not_found")
    return event


async def purge_expired(session: AsyncSession, now: datetime) -> int:
    """Delete handed-on events past the event log's retention, in both environments."""
    result = await session.execute(
        delete(OutboxEvent).where(OutboxEvent.created_at < now - EVENT_RETENTION, OutboxEvent.delivered_at.is_not(None))
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
