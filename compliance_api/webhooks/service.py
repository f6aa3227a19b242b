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

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.caller import Actor
from compliance_api.errors import ApiError, FieldError
from compliance_api.events import service as events
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import EventName
from compliance_api.kit.environment import Environment
from compliance_api.kit.pagination import Cursors, ListFilters, Paged, created_key, open_cursor, paginate
from compliance_api.webhooks import queries, ssrf, wake
from compliance_api.webhooks.models import (
    REPLAY_LIMIT,
    DeliveryStatus,
    EndpointStatus,
    ReplayMode,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEndpoint,
)
from compliance_api.webhooks.signing import SecretBox, new_secret

MAX_ENDPOINTS = 20
ROTATION_OVERLAP = timedelta(hours=24)
TEST_EVENT = EventName.WEBHOOK_TEST


@dataclass(frozen=True, slots=True)
class EndpointOwner:
    """Whose endpoints: an `Actor` (API caller, dashboard user), or a user named by an operator on the command line."""

    user_id: uuid.UUID
    environment: Environment

    @classmethod
    def of(cls, caller: Actor) -> EndpointOwner:
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
    owner: EndpointOwner,
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
    if await queries.count_endpoints(session, owner.user_id, owner.environment) >= MAX_ENDPOINTS:
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
    queries.add(session, row)
    await session.flush()
    return row, secret


async def get(session: AsyncSession, owner: EndpointOwner, endpoint_id: uuid.UUID) -> WebhookEndpoint:
    row = await queries.endpoint_of(session, owner.user_id, owner.environment, endpoint_id)
    if row is None:
        raise ApiError("webhook_endpoint_not_found")
    return row


async def list_endpoints(session: AsyncSession, owner: EndpointOwner) -> list[WebhookEndpoint]:
    """Every endpoint of the owner, oldest first."""
    return await queries.list_endpoints(session, owner.user_id, owner.environment)


async def page_of_endpoints(
    session: AsyncSession,
    owner: EndpointOwner,
    *,
    limit: int,
    cursor: str | None,
    cursors: Cursors,
) -> Paged[WebhookEndpoint]:
    """A page of the owner's endpoints, newest first."""
    return await paginate(
        session,
        queries.endpoints_of(owner.user_id, owner.environment),
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
    owner: EndpointOwner,
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


async def remove(session: AsyncSession, owner: EndpointOwner, endpoint_id: uuid.UUID) -> None:
    """Delete the endpoint and its delivery log; pending deliveries go with it."""
    row = await get(session, owner, endpoint_id)
    await queries.remove_endpoint(session, row)
    await session.flush()


async def rotate_secret(
    session: AsyncSession, owner: EndpointOwner, endpoint_id: uuid.UUID, *, box: SecretBox, now: datetime
) -> tuple[WebhookEndpoint, str]:
    """A new secret; the current one keeps signing too (two signatures) for 24 hours. Refused while a previous
    rotation's 24 hours last: a third secret would end the first one's overlap at once."""
    row = await get(session, owner, endpoint_id)
    if row.previous_secret_expires_at is not None and row.previous_secret_expires_at > now:
        raise ApiError(
            "secret_rotation_in_progress",
            f"This endpoint's previous secret signs until {row.previous_secret_expires_at.isoformat()}; rotate "
            "again after that. If the new secret leaked, delete the endpoint and create a new one.",
        )
    secret = new_secret()
    row.previous_secret_sealed = row.secret_sealed
    row.previous_secret_expires_at = now + ROTATION_OVERLAP
    row.secret_sealed = box.seal(secret, row.id)
    row.updated_at = now
    await session.flush()
    return row, secret


async def reseal_secrets(session: AsyncSession, box: SecretBox) -> int:
    """Seal every endpoint's signing secrets (both environments) under the box's current key; returns how many."""
    endpoints = await queries.every_endpoint(session)
    for endpoint in endpoints:
        endpoint.secret_sealed = box.reseal(endpoint.secret_sealed, endpoint.id)
        if endpoint.previous_secret_sealed is not None:
            endpoint.previous_secret_sealed = box.reseal(endpoint.previous_secret_sealed, endpoint.id)
    return len(endpoints)


def envelope(
    event_id: uuid.UUID, type: str, created_at: datetime, environment: Environment, data: dict[str, Any]
) -> dict[str, Any]:
    """The delivered body: `{"id", "type", "created_at", "environment", "livemode", "data"}`."""
    return {
        "id": str(event_id),
        "type": type,
        "created_at": created_at.isoformat(),
        "environment": environment.value,
        "livemode": environment is Environment.live,
        "data": data,
    }


IN_FLIGHT_SLACK = timedelta(seconds=30)
"""Clock difference allowed between API and worker processes when telling a waiting delivery from one in flight."""


@dataclass(frozen=True, slots=True)
class ReplayAsk:
    """Which events a replay sends: those since `since` (continued after `cursor`), or those listed in `event_ids`;
    all of them, or only those no attempt delivered (`ReplayMode.undelivered`)."""

    since: datetime | None = None
    event_ids: Sequence[uuid.UUID] = ()
    mode: ReplayMode = ReplayMode.all
    cursor: str | None = None


NOT_A_REPLAY_CURSOR = (
    "not a cursor of this replay: pass `next_cursor` of the previous answer for this endpoint unchanged"
)


@dataclass(frozen=True, slots=True)
class Replay:
    replayed: int
    already_pending: int
    since: datetime
    next_cursor: str | None = None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


async def replay(
    session: AsyncSession,
    owner: EndpointOwner,
    endpoint_id: uuid.UUID,
    ask: ReplayAsk,
    *,
    now: datetime,
    lease: timedelta,
    cursors: Cursors,
) -> Replay:
    """Queue the endpoint's subscribed events `ask` selects again, oldest first, `REPLAY_LIMIT` at most (the rest is
    continued with the answer's cursor): a new delivery where it had none, the finished one re-queued (same
    `webhook-id`) where it had one. A delivery still pending is not queued twice (`already_pending`); one waiting
    for a retry is moved to now."""
    row = await get(session, owner, endpoint_id)
    oldest = now - events.EVENT_RETENTION
    since = oldest if ask.since is None else max(ask.since, oldest)
    scope = f"webhook-replay:{row.id}"
    filters: ListFilters = {"since": ask.since, "mode": ask.mode}
    visible = events.visible_to(events.Reader(owner.user_id, owner.environment), now)
    if ask.event_ids:
        await _check_listed(session, row, visible, ask.event_ids)
    after = None
    if ask.cursor is not None:
        key = open_cursor(cursors, ask.cursor, scope, filters, field_prefix="", not_ours=NOT_A_REPLAY_CURSOR)
        after = (key.created_at, key.id)
    statement = queries.replay_candidates(
        visible,
        row,
        event_ids=ask.event_ids,
        since=since,
        undelivered=ask.mode is ReplayMode.undelivered,
        after=after,
        limit=REPLAY_LIMIT + 1,
    )
    found = await queries.events(session, statement)
    selected = found[:REPLAY_LIMIT]
    replayed, already_pending = await _queue_again(session, row, selected, now=now, lease=lease)
    if replayed or already_pending:
        await wake.announce(session)
    more = len(found) > REPLAY_LIMIT
    next_cursor = cursors.seal(created_key(selected[-1]), scope, filters) if more else None
    return Replay(replayed, already_pending, since, next_cursor)


async def _check_listed(
    session: AsyncSession, endpoint: WebhookEndpoint, visible: Select[OutboxEvent], event_ids: Sequence[uuid.UUID]
) -> None:
    """Every listed id is one of the caller's events here within retention, of a type the endpoint subscribes to;
    else a 400 naming each id that is not."""
    types = await queries.types_of_listed(session, visible, event_ids)
    errors = []
    for index, event_id in enumerate(event_ids):
        if event_id not in types:
            errors.append(FieldError(f"event_ids.{index}", f"no event {event_id} of yours here in the last 30 days"))
        elif not endpoint.wants(types[event_id]):
            message = f"event {event_id} is a `{types[event_id]}`, which this endpoint does not subscribe to"
            errors.append(FieldError(f"event_ids.{index}", message))
    if errors:
        detail = "; ".join(error.message for error in errors[:10]) + ("; …" if len(errors) > 10 else "")
        raise ApiError("validation_failed", detail, errors=errors)


async def _queue_again(
    session: AsyncSession,
    endpoint: WebhookEndpoint,
    selected: Sequence[OutboxEvent],
    *,
    now: datetime,
    lease: timedelta,
) -> tuple[int, int]:
    """Queue each selected event for the endpoint unless its delivery is already pending (or dispatch is about to
    make one); returns (queued, already pending)."""
    existing = await queries.deliveries_of_events_to(session, endpoint.id, [e.id for e in selected])
    waiting_after = now + lease + IN_FLIGHT_SLACK  # a pending delivery due later than this is not in flight
    new: list[dict[str, Any]] = []
    already_pending = 0
    for event in selected:
        delivery = existing.get(event.id)
        if delivery is None and event.delivered_at is None and event.created_at >= endpoint.created_at:
            already_pending += 1  # dispatch gives the endpoint this event; it delivers the older ones only to others
        elif delivery is None:
            new.append(_new_delivery(endpoint, event, now))
        elif delivery.status is DeliveryStatus.pending:
            already_pending += 1
            if delivery.next_attempt_at is not None and delivery.next_attempt_at > waiting_after:
                delivery.attempts, delivery.next_attempt_at = 0, now
        else:
            delivery.status, delivery.attempts, delivery.next_attempt_at = DeliveryStatus.pending, 0, now
    if new:
        await queries.insert_new_deliveries(session, new)
    await session.flush()
    return len(selected) - already_pending, already_pending


def _new_delivery(endpoint: WebhookEndpoint, event: OutboxEvent, now: datetime) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "endpoint_id": endpoint.id,
        "environment": endpoint.environment,
        "event_id": event.id,
        "event_type": event.type,
        "body": envelope(event.id, event.type, event.created_at, event.environment, event.payload),
        "status": DeliveryStatus.pending,
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }


async def send_test(
    session: AsyncSession, owner: EndpointOwner, endpoint_id: uuid.UUID, *, now: datetime
) -> WebhookDelivery:
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
    queries.add(session, delivery)
    await session.flush()
    await wake.announce(session)
    return delivery


async def list_deliveries(
    session: AsyncSession,
    owner: EndpointOwner,
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
        queries.deliveries_to(row.id),
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
    for attempt in await queries.attempts_of(session, logs):
        logs[attempt.delivery_id].append(attempt)
    return logs


@dataclass(frozen=True, slots=True)
class EventDelivery:
    """A delivery of an event to one of the owner's endpoints, with that endpoint's URL and every attempt."""

    delivery: WebhookDelivery
    endpoint_url: str
    attempts: list[WebhookDeliveryAttempt]


async def deliveries_of_events(
    session: AsyncSession, owner: EndpointOwner, event_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[EventDelivery]]:
    """The deliveries of these events to the owner's endpoints in the owner's environment, oldest first, with their
    attempt logs (for the event log's pages); two queries whatever the number of events."""
    found: dict[uuid.UUID, list[EventDelivery]] = {event_id: [] for event_id in event_ids}
    if not found:
        return found
    rows = await queries.deliveries_with_urls(session, owner.user_id, owner.environment, found)
    logs = await attempt_logs(session, [delivery for delivery, _ in rows])
    for delivery, url in rows:
        found[delivery.event_id].append(EventDelivery(delivery, url, logs[delivery.id]))
    return found


async def retry(
    session: AsyncSession, owner: EndpointOwner, endpoint_id: uuid.UUID, delivery_id: uuid.UUID, *, now: datetime
) -> WebhookDelivery:
    """Send a delivery again now (any status), with a fresh retry schedule and the same `webhook-id`."""
    row = await get(session, owner, endpoint_id)
    delivery = await queries.delivery_to(session, row.id, delivery_id)
    if delivery is None:
        raise ApiError("webhook_delivery_not_found")
    delivery.status, delivery.attempts, delivery.next_attempt_at = DeliveryStatus.pending, 0, now
    await session.flush()
    await wake.announce(session)
    return delivery
