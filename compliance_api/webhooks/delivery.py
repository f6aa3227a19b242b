"""One delivery round's steps: dispatch outbox events into deliveries, claim due deliveries, POST them, record the
outcome. `worker.py` runs them in a loop.

Dispatch turns each outbox event into one delivery row per enabled endpoint of the event's environment that
subscribed to its type before the event happened (catalogue routing: `environment` events reach every such
endpoint, `owner` events only the endpoints of the user named in the payload), and stamps the event's
`delivered_at`, all in one transaction.

Claiming moves a due delivery's `next_attempt_at` forward by a lease (`COMPLIANCE_WEBHOOKS_LEASE_SECONDS`, default
60, keep it above the 15 s request timeout) in the claiming transaction, with
`FOR UPDATE SKIP LOCKED` on PostgreSQL, so several workers never claim the same row; a worker killed mid-attempt
leaves its claims to be picked up again when the lease ends (at-least-once: receivers de-duplicate on `webhook-id`).
SQLite ignores the row lock and serialises writers: one worker per SQLite database. A claim takes due test events
first, then the oldest due deliveries within the `Room` the worker leaves each endpoint and account: an endpoint or
account that already holds its share is left out of the query, so one account's backlog cannot fill a claim.

An attempt the SSRF guard refuses (ssrf.py: the URL, or an address its host resolves to now) sends nothing and keeps
no status, latency or answer, only the error `refused by the target guard: <reason>`; it is retried like a failure.

Retry schedule after a failed attempt (any non-2xx, a redirect, a timeout, a network error or a refusal): 5 s,
5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 20 h, each shortened by up to 20 % jitter, so 10 attempts within 3 days
(71.6 h at most).
A `Retry-After` answer (seconds or an HTTP date) postpones the next attempt to then when that is later, capped at the
scheduled wait plus 24 hours. A 410 disables the endpoint; the last failed attempt marks the delivery `failed`, the
endpoint `failing`, and emits `webhook.endpoint.failing` to its owner; the next success makes it `active` again.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx
import orjson
import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.kit.retry_after import read_retry_after
from compliance_api.webhooks import queries, ssrf
from compliance_api.webhooks.catalogue import EVENT_TYPES
from compliance_api.webhooks.models import (
    DeliveryStatus,
    EndpointStatus,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEndpoint,
)
from compliance_api.webhooks.service import envelope
from compliance_api.webhooks.signing import SecretBox, headers

log = structlog.get_logger("compliance_api.webhooks")


SCHEDULE: tuple[timedelta, ...] = tuple(
    timedelta(seconds=s) for s in (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 72000)
)
JITTER = 0.2
TIMEOUT = httpx.Timeout(15.0, connect=5.0)
RESPONSE_BYTES = 1024
ERROR_CHARS = 500
USER_AGENT = "compliance-api-webhooks/1"
TEST_EVENT = EventName.WEBHOOK_TEST


@dataclass(frozen=True, slots=True)
class DeliveryOutcome:
    status_code: int | None
    latency_ms: int | None
    error: str | None
    response_body: str | None
    retry_after: timedelta | None = None

    @classmethod
    def refused(cls, reason: ssrf.UnsafeUrl) -> DeliveryOutcome:
        """The guard refused the target: nothing was sent, so nothing about an answer is kept, only the reason."""
        return cls(None, None, f"refused by the target guard: {reason}"[:ERROR_CHARS], None)

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def kind(self) -> str:
        """For metrics: `success`, `http_error` or `network_error` (refused URLs included)."""
        if self.status_code is None:
            return "network_error"
        return "success" if self.ok else "http_error"


def next_delay(attempts: int, retry_after: timedelta | None, rng: random.Random) -> timedelta | None:
    """The wait before the next attempt after `attempts` failed ones; None once the schedule is exhausted."""
    if attempts > len(SCHEDULE):
        return None
    scheduled = SCHEDULE[attempts - 1] * (1 - JITTER * rng.random())
    if retry_after is not None and retry_after > scheduled:
        return min(retry_after, scheduled + timedelta(hours=24))
    return scheduled


# ---- dispatch ------------------------------------------------------------------------------------------------


PendingEvent = queries.PendingEvent


def _may_want(endpoint: WebhookEndpoint, event: PendingEvent) -> bool:
    """Whether the endpoint subscribes to the event, short of owner routing (which needs the payload)."""
    kind = EVENT_TYPES.get(event.type)
    if kind is None or kind.routing == "endpoint" or not endpoint.wants(event.type):
        return False
    return endpoint.environment is event.environment and endpoint.created_at <= event.created_at


def _owned_by(endpoint: WebhookEndpoint, event_type: str, payload: dict[str, Any]) -> bool:
    kind = EVENT_TYPES[event_type]
    return kind.routing != "owner" or str(payload.get(kind.owner_field or "")) == str(endpoint.user_id)


async def dispatch(session: AsyncSession, *, batch: int, now: datetime) -> int:
    """Fan up to `batch` undispatched outbox events out into deliveries, after marking up to `batch` events nobody
    subscribes to as dispatched; returns how many events were handled.

    Payloads are read only for the events some endpoint may want.
    """
    if not await queries.any_undispatched(session):  # an idle outbox costs one indexed read, as it always did
        return 0
    endpoints = await queries.enabled_endpoints(session)
    skipped = await queries.hand_on_unwanted(session, endpoints, batch=batch, now=now)
    found = await queries.undispatched(session, batch=batch)
    if not found:
        return skipped
    wanted = {event.id: [e for e in endpoints if _may_want(e, event)] for event in found}
    wanted = {event_id: targets for event_id, targets in wanted.items() if targets}
    if wanted:
        payloads = await queries.payloads(session, wanted)
        rows = [
            {
                "id": uuid.uuid4(),
                "endpoint_id": endpoint.id,
                "environment": event.environment,
                "event_id": event.id,
                "event_type": event.type,
                "body": envelope(event.id, event.type, event.created_at, event.environment, payloads[event.id]),
                "status": DeliveryStatus.pending,
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for event in found
            for endpoint in wanted.get(event.id, ())
            if _owned_by(endpoint, event.type, payloads[event.id])
        ]
        if rows:
            await queries.insert_deliveries(session, rows)
    await queries.mark_dispatched(session, [e.id for e in found], now)
    return skipped + len(found)


# ---- claim, send, record -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    delivery_id: uuid.UUID
    event_id: uuid.UUID
    body: dict[str, Any]
    attempts: int
    endpoint_id: uuid.UUID
    url: str
    environment: Environment
    secrets: tuple[str, ...]
    account_id: uuid.UUID
    urgent: bool = False  # a test event: someone is waiting for it


@dataclass(frozen=True, slots=True)
class Room:
    """How many more deliveries one claim may lease per endpoint and per account: `endpoint` and `account` for those
    the worker holds nothing of, the maps' values (what the worker's share leaves) for the others. Test events are
    always claimed."""

    endpoint: int
    account: int
    endpoints: Mapping[uuid.UUID, int] = field(default_factory=dict)
    accounts: Mapping[uuid.UUID, int] = field(default_factory=dict)

    def full_endpoints(self) -> list[uuid.UUID]:
        """The endpoints without room, whose deliveries a claim leaves out."""
        return [key for key, left in self.endpoints.items() if left <= 0]

    def full_accounts(self) -> list[uuid.UUID]:
        """The accounts without room, whose deliveries a claim leaves out."""
        return [key for key, left in self.accounts.items() if left <= 0]


async def claim(
    session: AsyncSession,
    *,
    batch: int,
    now: datetime,
    box: SecretBox,
    lease: timedelta = timedelta(seconds=60),
    room: Room | None = None,
) -> list[Job]:
    """Lease up to `batch` due deliveries of enabled endpoints, test events first, then the oldest within `room`
    (None: no limit); deliveries of disabled endpoints are cancelled."""
    tests = await queries.due_tests(session, TEST_EVENT, now=now, limit=batch)
    others = []
    if len(tests) < batch:
        others = await queries.due_others(
            session,
            TEST_EVENT,
            now=now,
            limit=batch - len(tests),
            full_endpoints=room.full_endpoints() if room else None,
            full_accounts=room.full_accounts() if room else [],
        )
    found = tests + others
    if not found:
        return []
    endpoints = await queries.endpoints_by_id(session, {d.endpoint_id for d in found})
    left = _Left(room)
    jobs: list[Job] = []
    for delivery in found:
        endpoint = endpoints.get(delivery.endpoint_id)
        if endpoint is None:  # being deleted: its deliveries go with it
            continue
        urgent = delivery.event_type == TEST_EVENT
        if not endpoint.enabled and not urgent:
            delivery.status, delivery.next_attempt_at = DeliveryStatus.cancelled, None
            continue
        if urgent or left.take(endpoint):
            delivery.next_attempt_at = now + lease
            jobs.append(_job(delivery, endpoint, box, now))
    await session.flush()
    return jobs


class _Left:
    """The room a claim has left as it leases deliveries one by one."""

    def __init__(self, room: Room | None) -> None:
        self.room = room
        self.endpoints: dict[uuid.UUID, int] = dict(room.endpoints) if room else {}
        self.accounts: dict[uuid.UUID, int] = dict(room.accounts) if room else {}

    def take(self, endpoint: WebhookEndpoint) -> bool:
        """Whether one more delivery to `endpoint` fits (and count it)."""
        if self.room is None:
            return True
        endpoint_left = self.endpoints.get(endpoint.id, self.room.endpoint)
        account_left = self.accounts.get(endpoint.user_id, self.room.account)
        if endpoint_left <= 0 or account_left <= 0:
            return False
        self.endpoints[endpoint.id], self.accounts[endpoint.user_id] = endpoint_left - 1, account_left - 1
        return True


def _job(delivery: WebhookDelivery, endpoint: WebhookEndpoint, box: SecretBox, now: datetime) -> Job:
    secrets = [box.open(endpoint.secret_sealed, endpoint.id)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret_sealed is not None and expires is not None and expires > now:
        secrets.append(box.open(endpoint.previous_secret_sealed, endpoint.id))
    return Job(
        delivery.id,
        delivery.event_id,
        delivery.body,
        delivery.attempts,
        endpoint.id,
        endpoint.url,
        endpoint.environment,
        tuple(secrets),
        endpoint.user_id,
        urgent=delivery.event_type == TEST_EVENT,
    )


class Sender:
    """POSTs signed bodies to checked addresses: 15 s timeout, no redirects, no cookies, answer read up to 1 kB."""

    def __init__(self, settings: Settings, client: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._client = client or httpx.AsyncClient(
            timeout=TIMEOUT,
            follow_redirects=False,
            trust_env=False,
            limits=httpx.Limits(
                max_connections=settings.webhooks_concurrency, max_keepalive_connections=settings.webhooks_concurrency
            ),
        )

    async def close(self) -> None:
        await self._client.aclose()

    async def send(self, job: Job) -> DeliveryOutcome:
        started = time.perf_counter()
        body = orjson.dumps(job.body).decode()
        try:
            target = await ssrf.pin(job.url, ssrf.policy_for(self._settings, job.environment))
            request_headers = {
                **headers(job.secrets, str(job.event_id), utcnow(), body),
                "host": target.host,
                "user-agent": USER_AGENT,
            }
            extensions = {"sni_hostname": target.sni} if target.sni else {}
            request = self._client.build_request(
                "POST", target.url, content=body.encode(), headers=request_headers, extensions=extensions
            )
            response = await self._client.send(request, stream=True)
            try:
                answer = await _read_capped(response)
            finally:
                await response.aclose()
        except ssrf.UnsafeUrl as exc:
            return DeliveryOutcome.refused(exc)
        except (ssrf.Unresolvable, httpx.HTTPError) as exc:
            return DeliveryOutcome(None, _ms(started), f"{type(exc).__name__}: {exc}"[:ERROR_CHARS], None)
        error = None if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"
        asked = read_retry_after(response.headers.get("retry-after"), utcnow())
        return DeliveryOutcome(response.status_code, _ms(started), error, answer, asked)


async def _read_capped(response: httpx.Response) -> str:
    kept = b""
    async for chunk in response.aiter_raw():
        kept += chunk
        if len(kept) >= RESPONSE_BYTES:
            break
    return kept[:RESPONSE_BYTES].decode("utf-8", errors="ignore")


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


async def record(
    session: AsyncSession, results: Sequence[tuple[Job, DeliveryOutcome]], *, now: datetime, rng: random.Random
) -> None:
    """Write each attempt's outcome, the next attempt or the final state, and the endpoint's health."""
    deliveries = await queries.deliveries_by_id(session, [job.delivery_id for job, _ in results])
    endpoints = await queries.endpoints_by_id(session, {job.endpoint_id for job, _ in results})
    for job, outcome in results:
        delivery, endpoint = deliveries.get(job.delivery_id), endpoints.get(job.endpoint_id)
        if delivery is None or endpoint is None:  # deleted while in flight
            continue
        delivery.attempts = job.attempts + 1
        delivery.last_attempt_at = now
        delivery.last_status_code = outcome.status_code
        delivery.last_latency_ms = outcome.latency_ms
        delivery.last_error = outcome.error
        delivery.last_response_body = outcome.response_body
        queries.add_attempt(
            session,
            WebhookDeliveryAttempt(
                delivery_id=delivery.id,
                environment=delivery.environment,
                number=delivery.attempts,
                attempted_at=now,
                status_code=outcome.status_code,
                latency_ms=outcome.latency_ms,
                error=outcome.error,
            ),
        )
        await _settle(session, delivery, endpoint, outcome, now=now, rng=rng)
    await session.flush()


async def _settle(
    session: AsyncSession,
    delivery: WebhookDelivery,
    endpoint: WebhookEndpoint,
    outcome: DeliveryOutcome,
    *,
    now: datetime,
    rng: random.Random,
) -> None:
    if outcome.ok:
        delivery.status, delivery.delivered_at, delivery.next_attempt_at = DeliveryStatus.succeeded, now, None
        if endpoint.status is EndpointStatus.failing:
            endpoint.status, endpoint.status_reason = EndpointStatus.active, None
        return
    if outcome.status_code == 410:
        delivery.status, delivery.next_attempt_at = DeliveryStatus.failed, None
        endpoint.status, endpoint.status_reason = EndpointStatus.disabled, "the endpoint answered 410 Gone"
        endpoint.updated_at = now
        log.warning("webhook_endpoint_disabled", endpoint_id=str(endpoint.id), reason="410")
        return
    delay = next_delay(delivery.attempts, outcome.retry_after, rng)
    if delay is not None:
        delivery.next_attempt_at = now + delay
        return
    delivery.status, delivery.next_attempt_at = DeliveryStatus.failed, None
    if endpoint.status is EndpointStatus.active and delivery.event_type != TEST_EVENT:
        await _mark_failing(session, endpoint, delivery.last_error, now)


async def _mark_failing(session: AsyncSession, endpoint: WebhookEndpoint, error: str | None, now: datetime) -> None:
    endpoint.status, endpoint.status_reason, endpoint.updated_at = EndpointStatus.failing, "retries exhausted", now
    log.warning("webhook_endpoint_failing", endpoint_id=str(endpoint.id))
    await events.emit(
        session,
        environment=endpoint.environment,
        type=EventName.WEBHOOK_ENDPOINT_FAILING,
        payload={
            "user_id": str(endpoint.user_id),
            "endpoint_id": str(endpoint.id),
            "url": endpoint.url,
            "failing_since": now.isoformat(),
            "last_error": error,
        },
    )
