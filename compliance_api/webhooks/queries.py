"""The webhooks' statements: endpoints, deliveries and their attempts, and the outbox events dispatch reads. The
rules that call them live in `service.py` and `delivery.py`."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Row, Select, and_, delete, exists, false, func, insert, not_, or_, select, tuple_
from sqlalchemy import update as update_statement
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.events.models import OutboxEvent
from compliance_api.kit.environment import Environment, owned_elsewhere, scoped
from compliance_api.webhooks.models import (
    DeliveryStatus,
    EndpointStatus,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEndpoint,
)

PendingEvent = Row[uuid.UUID, Environment, str, datetime]  # id, environment, type, created_at

# ---- endpoints ------------------------------------------------------------------------------------------------


async def count_endpoints(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> int:
    count = await session.scalar(
        scoped(select(func.count()).select_from(WebhookEndpoint), WebhookEndpoint, environment).where(
            WebhookEndpoint.user_id == user_id
        )
    )
    return count or 0


def add(session: AsyncSession, row: WebhookEndpoint | WebhookDelivery) -> None:
    session.add(row)


async def endpoint_of(
    session: AsyncSession, user_id: uuid.UUID, environment: Environment, endpoint_id: uuid.UUID
) -> WebhookEndpoint | None:
    return await session.scalar(
        scoped(select(WebhookEndpoint), WebhookEndpoint, environment).where(
            WebhookEndpoint.id == endpoint_id, WebhookEndpoint.user_id == user_id
        )
    )


def endpoints_of(user_id: uuid.UUID, environment: Environment) -> Select[WebhookEndpoint]:
    return scoped(select(WebhookEndpoint), WebhookEndpoint, environment).where(WebhookEndpoint.user_id == user_id)


async def list_endpoints(session: AsyncSession, user_id: uuid.UUID, environment: Environment) -> list[WebhookEndpoint]:
    statement = endpoints_of(user_id, environment).order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
    return list(await session.scalars(statement))


async def every_endpoint(session: AsyncSession) -> list[WebhookEndpoint]:
    """Every endpoint of both environments."""
    return list(await session.scalars(select(WebhookEndpoint)))


async def enabled_endpoints(session: AsyncSession) -> list[WebhookEndpoint]:
    return list(await session.scalars(select(WebhookEndpoint).where(WebhookEndpoint.status != EndpointStatus.disabled)))


async def endpoints_by_id(session: AsyncSession, ids: Collection[uuid.UUID]) -> dict[uuid.UUID, WebhookEndpoint]:
    return {e.id: e for e in await session.scalars(select(WebhookEndpoint).where(WebhookEndpoint.id.in_(ids)))}


async def remove_endpoint(session: AsyncSession, row: WebhookEndpoint) -> None:
    """Delete the endpoint and its deliveries."""
    await session.execute(delete(WebhookDelivery).where(WebhookDelivery.endpoint_id == row.id))
    await session.delete(row)


# ---- deliveries -----------------------------------------------------------------------------------------------


def deliveries_to(endpoint_id: uuid.UUID) -> Select[WebhookDelivery]:
    return select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint_id)


async def delivery_to(session: AsyncSession, endpoint_id: uuid.UUID, delivery_id: uuid.UUID) -> WebhookDelivery | None:
    return await session.scalar(
        select(WebhookDelivery).where(WebhookDelivery.id == delivery_id, WebhookDelivery.endpoint_id == endpoint_id)
    )


async def deliveries_by_id(session: AsyncSession, ids: Collection[uuid.UUID]) -> dict[uuid.UUID, WebhookDelivery]:
    return {d.id: d for d in await session.scalars(select(WebhookDelivery).where(WebhookDelivery.id.in_(ids)))}


async def deliveries_of_events_to(
    session: AsyncSession, endpoint_id: uuid.UUID, event_ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, WebhookDelivery]:
    """The endpoint's deliveries of these events, by event id."""
    statement = select(WebhookDelivery).where(
        WebhookDelivery.endpoint_id == endpoint_id, WebhookDelivery.event_id.in_(event_ids)
    )
    return {delivery.event_id: delivery for delivery in await session.scalars(statement)}


async def insert_new_deliveries(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    """Insert the deliveries; one a concurrent replay of the same event made first is left as it is."""
    upsert = postgresql.insert if (await session.connection()).dialect.name == "postgresql" else sqlite.insert
    statement = upsert(WebhookDelivery).on_conflict_do_nothing(index_elements=["endpoint_id", "event_id"])
    await session.execute(statement, rows)


async def insert_deliveries(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    await session.execute(insert(WebhookDelivery), rows)


async def attempts_of(session: AsyncSession, delivery_ids: Collection[uuid.UUID]) -> Sequence[WebhookDeliveryAttempt]:
    """Every attempt of these deliveries, oldest first."""
    statement = (
        select(WebhookDeliveryAttempt)
        .where(WebhookDeliveryAttempt.delivery_id.in_(delivery_ids))
        .order_by(WebhookDeliveryAttempt.attempted_at, WebhookDeliveryAttempt.number)
    )
    return (await session.scalars(statement)).all()


def add_attempt(session: AsyncSession, attempt: WebhookDeliveryAttempt) -> None:
    session.add(attempt)


async def deliveries_with_urls(
    session: AsyncSession, user_id: uuid.UUID, environment: Environment, event_ids: Collection[uuid.UUID]
) -> Sequence[Row[WebhookDelivery, str]]:
    """The deliveries of these events to the user's endpoints in `environment`, oldest first, with each URL."""
    statement = (
        scoped(select(WebhookDelivery, WebhookEndpoint.url), WebhookEndpoint, environment)
        .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
        .where(WebhookEndpoint.user_id == user_id, WebhookDelivery.event_id.in_(event_ids))
        .order_by(WebhookDelivery.created_at, WebhookDelivery.id)
    )
    return (await session.execute(statement)).all()


# ---- replay ---------------------------------------------------------------------------------------------------


def replay_candidates(
    visible: Select[OutboxEvent],
    endpoint: WebhookEndpoint,
    *,
    event_ids: Sequence[uuid.UUID],
    since: datetime,
    undelivered: bool,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> Select[OutboxEvent]:
    """The visible events a replay to `endpoint` selects, oldest first: those listed (or those since `since`), of a
    type it subscribes to, only those no attempt delivered when `undelivered`, after the cursor's key."""
    statement = (
        visible.where(OutboxEvent.id.in_(event_ids)) if event_ids else visible.where(OutboxEvent.created_at >= since)
    )
    if "*" not in endpoint.enabled_events:
        statement = statement.where(OutboxEvent.type.in_(endpoint.enabled_events))
    if undelivered:
        statement = statement.where(not_(exists(_delivered_to(endpoint))))
    if after is not None:
        statement = statement.where(tuple_(OutboxEvent.created_at, OutboxEvent.id) > tuple_(*after))
    return statement.order_by(OutboxEvent.created_at, OutboxEvent.id).limit(limit)


def _delivered_to(endpoint: WebhookEndpoint) -> Select[uuid.UUID]:
    """A delivery of the outer query's event to `endpoint` that some attempt delivered."""
    return select(WebhookDelivery.id).where(
        WebhookDelivery.endpoint_id == endpoint.id,
        WebhookDelivery.event_id == OutboxEvent.id,
        WebhookDelivery.delivered_at.is_not(None),
    )


async def events(session: AsyncSession, statement: Select[OutboxEvent]) -> list[OutboxEvent]:
    return list(await session.scalars(statement))


async def types_of_listed(
    session: AsyncSession, visible: Select[OutboxEvent], event_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, str]:
    """The type of each listed event among the visible ones."""
    listed = visible.with_only_columns(OutboxEvent.id, OutboxEvent.type).where(OutboxEvent.id.in_(event_ids))
    return {event_id: type for event_id, type in await session.execute(listed)}


# ---- dispatch -------------------------------------------------------------------------------------------------


async def any_undispatched(session: AsyncSession) -> bool:
    """Whether the outbox holds an event not yet dispatched (one indexed read)."""
    waiting = select(OutboxEvent.id).where(OutboxEvent.delivered_at.is_(None)).limit(1)
    return (await session.execute(waiting)).first() is not None


def _wanted(endpoints: Sequence[WebhookEndpoint]) -> ColumnElement[bool]:
    """Outbox events some endpoint may subscribe to: of an environment where one wants every type, or of a type one
    of the environment's endpoints wants (the rest of `delivery._may_want` is checked per event)."""
    clauses: list[ColumnElement[bool]] = []
    for environment in {endpoint.environment for endpoint in endpoints}:
        subscribed = [set(e.enabled_events) for e in endpoints if e.environment is environment]
        if any("*" in types for types in subscribed):
            clauses.append(OutboxEvent.environment == environment)
        else:
            clauses.append(and_(OutboxEvent.environment == environment, OutboxEvent.type.in_(set().union(*subscribed))))
    return or_(*clauses) if clauses else false()


async def hand_on_unwanted(
    session: AsyncSession, endpoints: Sequence[WebhookEndpoint], *, batch: int, now: datetime
) -> int:
    """Mark up to `batch` events no endpoint subscribes to as dispatched, in one statement that reads no row into
    Python (most events on a sandbox or an embedded server; read one by one they cost 40-80 µs each,
    bench/RESULTS.md); returns how many."""
    unwanted = (
        select(OutboxEvent.id)
        .where(OutboxEvent.delivered_at.is_(None), not_(_wanted(endpoints)))
        .order_by(OutboxEvent.created_at, OutboxEvent.id)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )
    statement = (
        update_statement(OutboxEvent).where(OutboxEvent.id.in_(unwanted.scalar_subquery())).values(delivered_at=now)
    )
    result = await session.execute(statement, execution_options={"synchronize_session": False})
    return int(result.rowcount)  # type: ignore[attr-defined]  # an UPDATE's result is a CursorResult


async def undispatched(session: AsyncSession, *, batch: int) -> Sequence[PendingEvent]:
    """Up to `batch` undispatched events, oldest first, locked (skipping rows another worker holds)."""
    statement = (
        select(OutboxEvent.id, OutboxEvent.environment, OutboxEvent.type, OutboxEvent.created_at)
        .where(OutboxEvent.delivered_at.is_(None))
        .order_by(OutboxEvent.created_at, OutboxEvent.id)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )
    return (await session.execute(statement)).all()


async def payloads(session: AsyncSession, event_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    read = select(OutboxEvent.id, OutboxEvent.payload).where(OutboxEvent.id.in_(event_ids))
    return {row.id: row.payload for row in await session.execute(read)}


async def mark_dispatched(session: AsyncSession, event_ids: Collection[uuid.UUID], now: datetime) -> None:
    await session.execute(update_statement(OutboxEvent).where(OutboxEvent.id.in_(event_ids)).values(delivered_at=now))


# ---- claim ----------------------------------------------------------------------------------------------------


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(WebhookDelivery.status == DeliveryStatus.pending, WebhookDelivery.next_attempt_at <= now)


async def due_tests(session: AsyncSession, test_event: str, *, now: datetime, limit: int) -> list[WebhookDelivery]:
    """Up to `limit` due test deliveries, oldest due first, locked."""
    statement = select(WebhookDelivery).where(_due(now), WebhookDelivery.event_type == test_event)
    return await _oldest(session, statement, limit)


async def due_others(
    session: AsyncSession,
    test_event: str,
    *,
    now: datetime,
    limit: int,
    full_endpoints: Sequence[uuid.UUID] | None,
    full_accounts: Sequence[uuid.UUID],
) -> list[WebhookDelivery]:
    """Up to `limit` due deliveries other than tests, oldest due first, locked, leaving out those to the endpoints
    and of the accounts without room."""
    statement = select(WebhookDelivery).where(_due(now), WebhookDelivery.event_type != test_event)
    if full_endpoints:
        statement = statement.where(WebhookDelivery.endpoint_id.not_in(full_endpoints))
    if full_accounts:
        of_full = select(WebhookEndpoint.id).where(WebhookEndpoint.user_id.in_(full_accounts))
        statement = statement.where(WebhookDelivery.endpoint_id.not_in(of_full.scalar_subquery()))
    return await _oldest(session, statement, limit)


async def _oldest(session: AsyncSession, statement: Select[WebhookDelivery], limit: int) -> list[WebhookDelivery]:
    ordered = statement.order_by(WebhookDelivery.next_attempt_at).limit(limit).with_for_update(skip_locked=True)
    return list(await session.scalars(ordered))


async def notify(session: AsyncSession, channel: str) -> None:
    """PostgreSQL's NOTIFY on `channel`, sent when the transaction commits."""
    await session.execute(select(func.pg_notify(channel, "")))


environment_elsewhere = owned_elsewhere(WebhookEndpoint, WebhookEndpoint.id, WebhookEndpoint.user_id)
"""The other environment in which this id is one of the user's webhook endpoints, if it is."""
