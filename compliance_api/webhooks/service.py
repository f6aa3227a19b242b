"""Endpoint rules: create (secret shown once), read, change, delete, rotate, test; the delivery log and retries.

An endpoint belongs to one user in one environment; every lookup is by id *and* owner *and* environment, so another
account's or the other environment's endpoint is the same 404 as an unknown one.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import Actor
from compliance_api.errors import ApiError
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment, scoped
from compliance_api.kit.pagination import Cursors, Paged, created_key, paginate
from compliance_api.webhooks import ssrf
from compliance_api.webhooks.models import (
    DeliveryStatus,
    EndpointStatus,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEndpoint,
)
from compliance_api.webhooks.signing import SecretBox, new_secret

MAX_ENDPOINTS = 20
ROTATION_OVERLAP = timedelta(hours=24)
TEST_EVENT = EventName.WEBHOOK_TEST


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose endpoints: an `Actor` (API caller, dashboard user), or a user named by an operator on the command line."""

    user_id: uuid.UUID
    environment: Environment

    @classmethod
    def of(cls, caller: Actor) -> Owner:
        return cls(caller.user_id, caller.environment)


@dataclass(frozen=True, slots=True)
class EndpointChanges:
    url: str | None = None
    enabled_events: list[str] | None = None
    description: str | None = None
    enabled: bool | None = None


def _checked_url(url: str, policy: ssrf.Policy) -> str:
    try:
        return ssrf.check_url(url, policy)
    except ssrf.UnsafeUrl as exc:
        raise ApiError("webhook_url_forbidden", f"The webhook URL is not allowed: {exc}.") from None


def _events(values: list[str]) -> list[str]:
    return ["*"] if "*" in values else sorted(set(values))


async def create(
    session: AsyncSession,
    owner: Owner,
    *,
    url: str,
    enabled_events: list[str],
    description: str,
    enabled: bool,
    policy: ssrf.Policy,
    box: SecretBox,
    now: datetime,
) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its `whsec_` secret (stored sealed, returned this once)."""
    checked = _checked_url(url, policy)
    count = await session.scalar(
        scoped(select(func.count()).select_from(WebhookEndpoint), WebhookEndpoint, owner.environment).where(
            WebhookEndpoint.user_id == owner.user_id
        )
    )
    if (count or 0) >= MAX_ENDPOINTS:
        raise ApiError("webhook_endpoint_limit")
    endpoint_id, secret = uuid.uuid4(), new_secret()
    row = WebhookEndpoint(
        id=endpoint_id,
        user_id=owner.user_id,
        environment=owner.environment,
        url=checked,
        description=description.strip(),
        enabled_events=_events(enabled_events),
        status=EndpointStatus.active if enabled else EndpointStatus.disabled,
        status_reason=None if enabled else "disabled by owner",
        secret_sealed=box.seal(secret, endpoint_id),
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    await session.flush()
    return row, secret


async def get(session: AsyncSession, owner: Owner, endpoint_id: uuid.UUID) -> WebhookEndpoint:
    row = await session.scalar(
        scoped(select(WebhookEndpoint), WebhookEndpoint, owner.environment).where(
            WebhookEndpoint.id == endpoint_id, WebhookEndpoint.user_id == owner.user_id
        )
    )
    if row is None:
        raise ApiError("webhook_endpoint_not_found")
    return row


def _endpoints_of(owner: Owner) -> Select[WebhookEndpoint]:
    return scoped(select(WebhookEndpoint), WebhookEndpoint, owner.environment).where(
        WebhookEndpoint.user_id == owner.user_id
    )


async def list_endpoints(session: AsyncSession, owner: Owner) -> list[WebhookEndpoint]:
    """Every endpoint of the owner, oldest first."""
    statement = _endpoints_of(owner).order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
    return list(await session.scalars(statement))


async def page_of_endpoints(
    session: AsyncSession,
    owner: Owner,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
) -> Paged[WebhookEndpoint]:
    """A page of the owner's endpoints, newest first."""
    return await paginate(
        session,
        _endpoints_of(owner),
        WebhookEndpoint.created_at,
        WebhookEndpoint.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"webhook-endpoints:{owner.user_id}:{owner.environment.value}",
        key_of=created_key,
    )


async def update(
    session: AsyncSession,
    owner: Owner,
    endpoint_id: uuid.UUID,
    changes: EndpointChanges,
    *,
    policy: ssrf.Policy,
    now: datetime,
) -> WebhookEndpoint:
    row = await get(session, owner, endpoint_id)
    if changes.url is not None:
        row.url = _checked_url(changes.url, policy)
    if changes.enabled_events is not None:
        row.enabled_events = _events(changes.enabled_events)
    if changes.description is not None:
        row.description = changes.description.strip()
    if changes.enabled is True:
        row.status, row.status_reason = EndpointStatus.active, None
    elif changes.enabled is False:
        row.status, row.status_reason = EndpointStatus.disabled, "disabled by owner"
    row.updated_at = now
    await session.flush()
    return row


async def remove(session: AsyncSession, owner: Owner, endpoint_id: uuid.UUID) -> None:
    """Delete the endpoint and its delivery log; pending deliveries go with it."""
    row = await get(session, owner, endpoint_id)
    await session.execute(delete(WebhookDelivery).where(WebhookDelivery.endpoint_id == row.id))
    await session.delete(row)
    await session.flush()


async def rotate_secret(
    session: AsyncSession, owner: Owner, endpoint_id: uuid.UUID, *, box: SecretBox, now: datetime
) -> tuple[WebhookEndpoint, str]:
    """A new secret; the current one keeps signing too (two signatures) for 24 hours."""
    row = await get(session, owner, endpoint_id)
    secret = new_secret()
    row.previous_secret_sealed = row.secret_sealed
    row.previous_secret_expires_at = now + ROTATION_OVERLAP
    row.secret_sealed = box.seal(secret, row.id)
    row.updated_at = now
    await session.flush()
    return row, secret


def envelope(
    event_id: uuid.UUID, type: str, created_at: datetime, environment: Environment, data: dict[str, Any]
) -> dict[str, Any]:
    """The delivered body: `{"id", "type", "created_at", "environment", "data"}`."""
    return {
        "id": str(event_id),
        "type": type,
        "created_at": created_at.isoformat(),
        "environment": environment.value,
        "data": data,
    }


@dataclass(frozen=True, slots=True)
class Replay:
    replayed: int
    since: datetime


async def replay(
    session: AsyncSession, owner: Owner, endpoint_id: uuid.UUID, *, since: datetime, now: datetime
) -> Replay:
    """Send the endpoint every event it subscribes to since `since` (at most the event log's 30 days back) again: a
    new delivery where it had none, the existing one re-queued (same `webhook-id`) where it had."""
    row = await get(session, owner, endpoint_id)
    since = max(since, now - events.EVENT_RETENTION)
    reader = events.Reader(owner.user_id, owner.environment)
    replayable = await events.replayable_since(session, reader, since, now, endpoint_created_at=row.created_at)
    wanted = [event for event in replayable if row.wants(event.type)]
    existing = {
        delivery.event_id: delivery
        for delivery in await session.scalars(
            select(WebhookDelivery).where(
                WebhookDelivery.endpoint_id == row.id, WebhookDelivery.event_id.in_([e.id for e in wanted])
            )
        )
    }
    for event in wanted:
        delivery = existing.get(event.id)
        if delivery is None:
            body = envelope(event.id, event.type, event.created_at, event.environment, event.payload)
            delivery = WebhookDelivery(
                endpoint_id=row.id, environment=row.environment, event_id=event.id, event_type=event.type, body=body
            )
            session.add(delivery)
        delivery.status, delivery.attempts, delivery.next_attempt_at = DeliveryStatus.pending, 0, now
    await session.flush()
    return Replay(len(wanted), since)


async def send_test(session: AsyncSession, owner: Owner, endpoint_id: uuid.UUID, *, now: datetime) -> WebhookDelivery:
    """Queue a `webhook.test` delivery to this endpoint only (even a disabled one: that is what tests are for)."""
    row = await get(session, owner, endpoint_id)
    event_id = uuid.uuid4()
    data = {"endpoint_id": str(row.id), "message": "This is a test delivery from compliance-api."}
    delivery = WebhookDelivery(
        endpoint_id=row.id,
        environment=row.environment,
        event_id=event_id,
        event_type=TEST_EVENT,
        body=envelope(event_id, TEST_EVENT, now, row.environment, data),
        created_at=now,
        next_attempt_at=now,
    )
    session.add(delivery)
    await session.flush()
    return delivery


async def list_deliveries(
    session: AsyncSession,
    owner: Owner,
    endpoint_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None = None,
    cursors: Cursors,
) -> Paged[WebhookDelivery]:
    """A page of the endpoint's deliveries, newest first."""
    row = await get(session, owner, endpoint_id)
    return await paginate(
        session,
        select(WebhookDelivery).where(WebhookDelivery.endpoint_id == row.id),
        WebhookDelivery.created_at,
        WebhookDelivery.id,
        limit=limit,
        cursor=cursor,
        cursors=cursors,
        scope=f"webhook-deliveries:{row.id}",
        key_of=created_key,
    )


async def attempt_logs(
    session: AsyncSession, deliveries: Sequence[WebhookDelivery]
) -> dict[uuid.UUID, list[WebhookDeliveryAttempt]]:
    """Every attempt of each delivery, oldest first, in one query."""
    logs: dict[uuid.UUID, list[WebhookDeliveryAttempt]] = {delivery.id: [] for delivery in deliveries}
    statement = (
        select(WebhookDeliveryAttempt)
        .where(WebhookDeliveryAttempt.delivery_id.in_(logs))
        .order_by(WebhookDeliveryAttempt.attempted_at, WebhookDeliveryAttempt.number)
    )
    for attempt in await session.scalars(statement):
        logs[attempt.delivery_id].append(attempt)
    return logs


@dataclass(frozen=True, slots=True)
class EventDelivery:
    """A delivery of an event to one of the owner's endpoints, with that endpoint's URL and every attempt."""

    delivery: WebhookDelivery
    endpoint_url: str
    attempts: list[WebhookDeliveryAttempt]


async def deliveries_of_events(
    session: AsyncSession, owner: Owner, event_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[EventDelivery]]:
    """The deliveries of these events to the owner's endpoints in the owner's environment, oldest first, with their
    attempt logs (for the event log's pages); two queries whatever the number of events."""
    found: dict[uuid.UUID, list[EventDelivery]] = {event_id: [] for event_id in event_ids}
    if not found:
        return found
    statement = (
        scoped(select(WebhookDelivery, WebhookEndpoint.url), WebhookEndpoint, owner.environment)
        .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
        .where(WebhookEndpoint.user_id == owner.user_id, WebhookDelivery.event_id.in_(found))
        .order_by(WebhookDelivery.created_at, WebhookDelivery.id)
    )
    rows = (await session.execute(statement)).all()
    logs = await attempt_logs(session, [delivery for delivery, _ in rows])
    for delivery, url in rows:
        found[delivery.event_id].append(EventDelivery(delivery, url, logs[delivery.id]))
    return found


async def retry(
    session: AsyncSession, owner: Owner, endpoint_id: uuid.UUID, delivery_id: uuid.UUID, *, now: datetime
) -> WebhookDelivery:
    """Send a delivery again now (any status), with a fresh retry schedule and the same `webhook-id`."""
    row = await get(session, owner, endpoint_id)
    delivery = await session.scalar(
        select(WebhookDelivery).where(WebhookDelivery.id == delivery_id, WebhookDelivery.endpoint_id == row.id)
    )
    if delivery is None:
        raise ApiError("webhook_delivery_not_found")
    delivery.status, delivery.attempts, delivery.next_attempt_at = DeliveryStatus.pending, 0, now
    await session.flush()
    return delivery
