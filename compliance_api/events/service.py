"""Writing events: always inside the caller's transaction, so an event exists exactly when its change does."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.errors import ApiError
from compliance_api.events import queries
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import EventName, owner_of
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Cursors, Paged, created_key, paginate


@dataclass(frozen=True, slots=True)
class NewEvent:
    type: EventName
    payload: dict[str, Any]


async def emit(
    session: AsyncSession, *, environment: Environment, type: EventName, payload: dict[str, Any]
) -> uuid.UUID:
    """Add one event to the outbox; it is committed (or rolled back) with the caller's transaction."""
    event_id = uuid.uuid4()
    await emit_many(session, environment=environment, events=[NewEvent(type, payload)], ids=[event_id])
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
    events: Iterable[NewEvent],
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
        await queries.insert_events(session, rows)
    return len(rows)


async def pending(session: AsyncSession, *, environment: Environment, type: str | None = None) -> list[OutboxEvent]:
    """Undelivered events, oldest first."""
    return list(await queries.pending(session, environment, type))


EVENT_RETENTION = timedelta(days=30)
"""How long the event log keeps an event (`GET /v1/events`, replays)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """Whose event log: an account in one environment."""

    user_id: uuid.UUID
    environment: Environment


def visible_to(reader: Reader, now: datetime) -> Select[OutboxEvent]:
    """The reader's events in its environment: its own, and the environment-wide ones, within retention."""
    return queries.visible(reader.user_id, reader.environment, now - EVENT_RETENTION)


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
    return await paginate(
        session,
        queries.filtered(visible_to(reader, now), types, created_after),
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
    event = await queries.event_in(session, visible_to(reader, now), event_id)
    if event is None:
        raise ApiError("event_not_found")
    return event


async def purge_expired(session: AsyncSession, now: datetime) -> int:
    """Delete handed-on events past the event log's retention, in both environments."""
    return await queries.purge_delivered_before(session, now - EVENT_RETENTION)
