"""The event log: `GET /v1/events` and `GET /v1/events/{id}` show an account its own events and the environment-wide
ones of its environment, for 30 days, with the body the webhooks carry; replays re-send them to an endpoint."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from standardwebhooks.webhooks import Webhook

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.models import OutboxEvent
from compliance_api.events.types import ROUTES, EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import delivery as webhook_delivery
from compliance_api.webhooks.catalogue import EVENT_TYPES
from compliance_api.webhooks.models import DeliveryStatus, WebhookDelivery
from compliance_api.webhooks.worker import Worker
from tests.webhooks.conftest import MakeAccount
from tests.webhooks.receiver import Receiver

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test receivers listen on loopback."""
    return settings.model_copy(update={"webhooks_allow_private_targets": True})


async def _emit(
    sessionmaker: Maker,
    type: str,
    payload: dict[str, Any],
    environment: Environment = Environment.live,
    at: dt.datetime | None = None,
) -> str:
    async with sessionmaker.begin() as session:
        event_id = await events.emit(session, environment=environment, type=EventName(type), payload=payload)
        if at is not None:
            (await session.get_one(OutboxEvent, event_id)).created_at = at
    return str(event_id)


async def _dispatch(sessionmaker: Maker) -> None:
    async with sessionmaker.begin() as session:
        await webhook_delivery.dispatch(session, batch=1000, now=utcnow())


def _passport_updated(user_id: uuid.UUID) -> dict[str, Any]:
    return {"freelancer_id": str(user_id), "updated_at": utcnow().isoformat(), "change": "sector", "sector": "ict"}


def test_the_catalogue_and_the_event_names_are_one_list() -> None:
    assert set(EVENT_TYPES) == set(EventName) == set(ROUTES)


async def test_emitting_an_unknown_event_type_fails_instead_of_reaching_nobody(sessionmaker: Maker) -> None:
    with pytest.raises(ValueError, match=r"passport\.updatd"):
        await _emit(sessionmaker, "passport.updatd", {"freelancer_id": str(uuid.uuid4())})


async def test_an_account_sees_its_own_and_the_environment_wide_events_only(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount
) -> None:
    anna, bob = await make_account(), await make_account()
    mine = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id))
    await _emit(sessionmaker, "passport.updated", _passport_updated(bob.user.id))
    everyone = await _emit(sessionmaker, "wtta.admission.updated", {"kvk_number": "12345678"})
    await _emit(sessionmaker, "wtta.admission.updated", {"kvk_number": "87654321"}, Environment.test)

    listed = (await client.get("/v1/events", params={"limit": 100}, headers=anna.live)).json()["data"]
    ids = [e["id"] for e in listed if e["type"] in {"passport.updated", "wtta.admission.updated"}]
    assert ids == [everyone, mine]
    assert (await client.get(f"/v1/events/{mine}", headers=bob.live)).json()["code"] == "event_not_found"
    assert (await sandbox_client.get(f"/v1/events/{mine}", headers=anna.test)).status_code == 404
    sandbox = (await sandbox_client.get("/v1/events", headers=anna.test)).json()["data"]
    assert everyone not in {e["id"] for e in sandbox}


async def test_events_filter_by_type_and_time(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount
) -> None:
    anna = await make_account()
    earlier = utcnow() - dt.timedelta(days=2)
    old = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id), at=earlier)
    new = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id))
    await _emit(sessionmaker, "wtta.admission.updated", {"kvk_number": "12345678"})

    by_type = await client.get("/v1/events", params={"type": "passport.updated"}, headers=anna.live)
    assert [e["id"] for e in by_type.json()["data"]] == [new, old]
    since = (earlier + dt.timedelta(days=1)).isoformat()
    recent = await client.get(
        "/v1/events", params={"type": "passport.updated", "created_after": since}, headers=anna.live
    )
    assert [e["id"] for e in recent.json()["data"]] == [new]
    unknown = await client.get("/v1/events", params={"type": "passport.updatd"}, headers=anna.live)
    assert unknown.status_code == 400
    assert [e["field"] for e in unknown.json()["errors"]] == ["query.type.0"]


async def test_events_older_than_30_days_are_gone_from_the_log_and_purged(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount
) -> None:
    anna = await make_account()
    old = await _emit(
        sessionmaker, "passport.updated", _passport_updated(anna.user.id), at=utcnow() - dt.timedelta(days=31)
    )
    waiting = await _emit(
        sessionmaker, "passport.updated", _passport_updated(anna.user.id), at=utcnow() - dt.timedelta(days=31)
    )
    assert (await client.get(f"/v1/events/{old}", headers=anna.live)).status_code == 404
    async with sessionmaker.begin() as session:
        (await session.get_one(OutboxEvent, uuid.UUID(old))).delivered_at = utcnow()
    async with sessionmaker.begin() as session:
        assert await events.purge_expired(session, utcnow()) == 1
    async with sessionmaker() as session:
        remaining = set(await session.scalars(select(OutboxEvent.id)))
    assert uuid.UUID(old) not in remaining
    assert uuid.UUID(waiting) in remaining, "an event not yet handed on to the webhooks is kept"


async def test_an_event_reads_as_the_webhook_delivers_it(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    body = {"url": receiver.url, "enabled_events": ["passport.updated"]}
    endpoint = (await client.post("/v1/webhook-endpoints", json=body, headers=anna.live)).json()
    event_id = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id))
    assert await worker.run_once() == 1
    [got] = receiver.received
    delivered = Webhook(endpoint["secret"]).verify(got.body, got.headers)
    logged = (await client.get(f"/v1/events/{event_id}", headers=anna.live)).json()
    assert logged == json.loads(got.body) == delivered


async def test_a_replay_sends_missed_events_and_resends_delivered_ones_with_the_same_id(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver
) -> None:
    anna = await make_account()
    before = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id))
    await _dispatch(sessionmaker)  # handed on while anna had no endpoint: nobody received it
    body = {"url": receiver.url, "enabled_events": ["passport.updated"]}
    endpoint = (await client.post("/v1/webhook-endpoints", json=body, headers=anna.live)).json()
    after = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id))
    await _emit(sessionmaker, "wtta.admission.updated", {"kvk_number": "12345678"})  # not subscribed
    await _dispatch(sessionmaker)
    async with sessionmaker.begin() as session:
        delivery = await session.scalar(select(WebhookDelivery).where(WebhookDelivery.event_id == uuid.UUID(after)))
        assert delivery is not None
        delivery.status, delivery.attempts = DeliveryStatus.succeeded, 1
    pending_one = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id))  # not yet handed on

    since = (utcnow() - dt.timedelta(hours=1)).isoformat()
    answer = await client.post(
        f"/v1/webhook-endpoints/{endpoint['id']}/replay", json={"since": since}, headers=anna.live
    )
    assert answer.status_code == 202
    assert answer.json()["replayed"] == 2
    async with sessionmaker() as session:
        rows = list(
            await session.scalars(
                select(WebhookDelivery).where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint["id"]))
            )
        )
    assert sorted(str(r.event_id) for r in rows) == sorted([before, after])
    assert {r.status for r in rows} == {DeliveryStatus.pending}
    assert pending_one not in {str(r.event_id) for r in rows}
    await _dispatch(sessionmaker)  # the waiting event is dispatched as usual, without a clash with the replay


async def test_a_replay_sends_an_event_older_than_the_endpoint_that_dispatch_has_not_reached_yet(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver
) -> None:
    anna = await make_account()
    earlier = utcnow() - dt.timedelta(minutes=1)
    waiting = await _emit(sessionmaker, "passport.updated", _passport_updated(anna.user.id), at=earlier)
    body = {"url": receiver.url, "enabled_events": ["passport.updated"]}
    endpoint = (await client.post("/v1/webhook-endpoints", json=body, headers=anna.live)).json()
    since = (utcnow() - dt.timedelta(hours=1)).isoformat()
    answer = await client.post(
        f"/v1/webhook-endpoints/{endpoint['id']}/replay", json={"since": since}, headers=anna.live
    )
    assert answer.json()["replayed"] == 1, "dispatch never gives an endpoint an event older than itself"
    await _dispatch(sessionmaker)  # hands the event on without a second delivery to this endpoint
    async with sessionmaker() as session:
        rows = list(
            await session.scalars(
                select(WebhookDelivery).where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint["id"]))
            )
        )
    assert [str(r.event_id) for r in rows] == [waiting]


async def test_a_replay_goes_back_30_days_at_most_and_only_to_ones_own_endpoint(
    client: AsyncClient, make_account: MakeAccount, receiver: Receiver
) -> None:
    anna, bob = await make_account(), await make_account()
    endpoint = (
        await client.post(
            "/v1/webhook-endpoints", json={"url": receiver.url, "enabled_events": ["*"]}, headers=anna.live
        )
    ).json()
    path = f"/v1/webhook-endpoints/{endpoint['id']}/replay"
    asked = utcnow() - dt.timedelta(days=31)
    too_old = await client.post(path, json={"since": asked.isoformat()}, headers=anna.live)
    assert too_old.status_code == 202
    replayed_from = dt.datetime.fromisoformat(too_old.json()["since"])
    assert asked + dt.timedelta(days=1) <= replayed_from <= utcnow() - dt.timedelta(days=30) + dt.timedelta(minutes=1)
    recent = {"since": utcnow().isoformat()}
    assert (await client.post(path, json=recent, headers=bob.live)).json()["code"] == "webhook_endpoint_not_found"
    assert (await client.post(path, json={"since": "yesterday"}, headers=anna.live)).status_code == 400
