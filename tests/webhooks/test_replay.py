"""Replays that recover exactly what was missed: only the undelivered events, a list of event ids, or everything
since a moment; 1,000 per request with a cursor for the rest; a delivery still pending is never queued twice."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from httpx import AsyncClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.responses import Response

from compliance_api.config import Settings
from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import delivery as webhook_delivery
from compliance_api.webhooks.models import REPLAY_LIMIT, DeliveryStatus, WebhookDelivery
from compliance_api.webhooks.signing import SecretBox
from compliance_api.webhooks.worker import Worker
from tests.webhooks.conftest import Account, MakeAccount
from tests.webhooks.receiver import Receiver

Maker = async_sessionmaker[AsyncSession]
HOUR_AGO = {"since": (utcnow() - dt.timedelta(hours=1)).isoformat()}


async def _emit(sessionmaker: Maker, account: Account, count: int = 1, type: str = "passport.updated") -> list[str]:
    """`count` events of the account's, handed on to the webhooks (one statement, one instant)."""
    ids = [uuid.uuid4() for _ in range(count)]
    payload = {"freelancer_id": str(account.user.id), "user_id": str(account.user.id), "change": "sector"}
    async with sessionmaker.begin() as session:
        await events.emit_many(
            session, environment=Environment.live, events=[events.NewEvent(EventName(type), payload)] * count, ids=ids
        )
        await webhook_delivery.dispatch(session, batch=count + 10, now=utcnow())
    return [str(i) for i in ids]


async def _endpoint(client: AsyncClient, account: Account, receiver: Receiver, types: list[str]) -> str:
    made = await client.post(
        "/v1/webhook-endpoints", json={"url": receiver.url, "enabled_events": types}, headers=account.live
    )
    return str(made.json()["id"])


async def _replay(client: AsyncClient, account: Account, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = await client.post(f"/v1/webhook-endpoints/{endpoint}/replay", json=body, headers=account.live)
    assert answer.status_code == 202, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def _deliveries(sessionmaker: Maker, endpoint: str) -> dict[str, WebhookDelivery]:
    async with sessionmaker() as session:
        rows = await session.scalars(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint)))
        return {str(row.event_id): row for row in rows}


async def test_undelivered_replays_only_what_no_attempt_delivered(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    [missed] = await _emit(sessionmaker, anna)  # before the endpoint: it never had it
    endpoint = await _endpoint(client, anna, receiver, ["passport.updated"])
    [delivered] = await _emit(sessionmaker, anna)
    assert await worker.run_once() == 1
    receiver.answers.append(Response(status_code=503, headers={"retry-after": "3600"}))
    [failing] = await _emit(sessionmaker, anna)
    assert await worker.run_once() == 1

    first = await _replay(client, anna, endpoint, {**HOUR_AGO, "mode": "undelivered"})
    assert (first["replayed"], first["already_pending"], first["has_more"]) == (1, 1, False)
    rows = await _deliveries(sessionmaker, endpoint)
    assert rows[delivered].status is DeliveryStatus.succeeded, "a delivered event is not sent again"
    assert rows[missed].status is DeliveryStatus.pending
    retry_at = rows[failing].next_attempt_at
    assert retry_at is not None
    assert retry_at <= utcnow(), "waiting an hour for its retry: sent now instead"

    everything = await _replay(client, anna, endpoint, HOUR_AGO)
    assert (everything["replayed"], everything["already_pending"]) == (1, 2), "only the delivered one is queued again"
    assert (await _deliveries(sessionmaker, endpoint))[delivered].status is DeliveryStatus.pending


async def test_listed_events_are_replayed_and_a_second_replay_queues_nothing_twice(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver, ["passport.updated"])
    chosen, other = await _emit(sessionmaker, anna, 2)
    assert await worker.run_once() == 2
    body = {"event_ids": [chosen, chosen]}
    first = await _replay(client, anna, endpoint, body)
    assert (first["replayed"], first["already_pending"], first["next_cursor"]) == (1, 0, None)
    again = await _replay(client, anna, endpoint, body)
    assert (again["replayed"], again["already_pending"]) == (0, 1), "still pending: not queued a second time"
    rows = await _deliveries(sessionmaker, endpoint)
    assert (rows[chosen].status, rows[other].status) == (DeliveryStatus.pending, DeliveryStatus.succeeded)
    assert await worker.run_once() == 1
    assert [r.headers["webhook-id"] for r in receiver.received].count(chosen) == 2, "sent once more, not twice"


async def test_a_delivery_in_flight_is_left_to_its_attempt(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver, settings: Settings
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver, ["passport.updated"])
    [event] = await _emit(sessionmaker, anna)
    async with sessionmaker.begin() as session:
        [job] = await webhook_delivery.claim(
            session, batch=10, now=utcnow(), box=SecretBox(settings.secret_key_bytes())
        )
    assert str(job.event_id) == event
    leased_until = (await _deliveries(sessionmaker, endpoint))[event].next_attempt_at
    answer = await _replay(client, anna, endpoint, {"event_ids": [event], "mode": "undelivered"})
    assert (answer["replayed"], answer["already_pending"]) == (0, 1)
    assert (await _deliveries(sessionmaker, endpoint))[event].next_attempt_at == leased_until, "its lease holds"


async def test_unknown_foreign_and_unsubscribed_ids_are_named(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver
) -> None:
    anna, bert = await make_account(), await make_account()
    [mine] = await _emit(sessionmaker, anna)
    [token_event] = await _emit(sessionmaker, anna, type="api_token.revoked")
    [berts] = await _emit(sessionmaker, bert)
    endpoint = await _endpoint(client, anna, receiver, ["passport.updated"])
    unknown = str(uuid.uuid4())
    body = {"event_ids": [mine, mine, berts, unknown, token_event]}
    answer = await client.post(f"/v1/webhook-endpoints/{endpoint}/replay", json=body, headers=anna.live)
    assert answer.status_code == 400
    problem = answer.json()
    assert problem["code"] == "validation_failed"
    assert [e["field"] for e in problem["errors"]] == ["event_ids.2", "event_ids.3", "event_ids.4"], "as sent"
    assert berts in problem["errors"][0]["message"]
    assert unknown in problem["detail"]
    assert "api_token.revoked" in problem["errors"][2]["message"]
    assert await _deliveries(sessionmaker, endpoint) == {}, "nothing queued"


async def test_since_or_event_ids_exactly_one_and_a_cursor_only_with_since(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver
) -> None:
    anna = await make_account()
    [event] = await _emit(sessionmaker, anna)
    endpoint = await _endpoint(client, anna, receiver, ["*"])
    path = f"/v1/webhook-endpoints/{endpoint}/replay"
    cases = {
        "since": {},
        "event_ids": {**HOUR_AGO, "event_ids": [event]},
        "cursor": {"event_ids": [event], "cursor": "abc"},
        "mode": {**HOUR_AGO, "mode": "some"},
        "event_ids.0": {"event_ids": ["not-a-uuid"]},
    }
    for field, body in cases.items():
        answer = await client.post(path, json=body, headers=anna.live)
        assert answer.status_code == 400, (field, answer.text)
        assert [e["field"] for e in answer.json()["errors"]] == [field]
    assert await _deliveries(sessionmaker, endpoint) == {}


async def test_a_replay_of_more_than_the_cap_continues_with_the_cursor(
    client: AsyncClient, sessionmaker: Maker, make_account: MakeAccount, receiver: Receiver
) -> None:
    anna, bert = await make_account(), await make_account()
    await _emit(sessionmaker, anna, REPLAY_LIMIT + 5)  # all at one instant: the cursor must not rely on time alone
    endpoint = await _endpoint(client, anna, receiver, ["passport.updated"])
    first = await _replay(client, anna, endpoint, {**HOUR_AGO, "mode": "undelivered"})
    assert (first["replayed"], first["has_more"]) == (REPLAY_LIMIT, True)
    rest = await _replay(client, anna, endpoint, {**HOUR_AGO, "mode": "undelivered", "cursor": first["next_cursor"]})
    assert (rest["replayed"], rest["already_pending"], rest["has_more"], rest["next_cursor"]) == (5, 0, False, None)
    assert len(await _deliveries(sessionmaker, endpoint)) == REPLAY_LIMIT + 5, "each event once"
    path = f"/v1/webhook-endpoints/{endpoint}/replay"
    for changed, field in (({"mode": "all"}, "mode"), ({"since": utcnow().isoformat()}, "since")):
        body = {**HOUR_AGO, "mode": "undelivered", **changed, "cursor": first["next_cursor"]}
        other = await client.post(path, json=body, headers=anna.live)
        assert other.status_code == 400, changed
        assert [e["field"] for e in other.json()["errors"]] == [field]

    berts = await _endpoint(client, bert, receiver, ["*"])
    stolen = await client.post(
        f"/v1/webhook-endpoints/{berts}/replay", json={**HOUR_AGO, "cursor": first["next_cursor"]}, headers=bert.live
    )
    assert stolen.status_code == 400
    assert [e["field"] for e in stolen.json()["errors"]] == ["cursor"]
