"""Real deliveries to a local receiver: Standard Webhooks signatures, routing, retries, 410, exhaustion, the log."""

from __future__ import annotations

import datetime as dt
import json
import random
from datetime import timedelta
from typing import Any, cast

import pytest
from httpx import AsyncClient
from prometheus_client import REGISTRY
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from standardwebhooks.webhooks import Webhook
from starlette.responses import Response

from compliance_api.events import service as events
from compliance_api.events.types import EventName
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.webhooks.delivery import SCHEDULE, next_delay
from compliance_api.webhooks.models import WebhookDelivery
from compliance_api.webhooks.worker import Worker
from tests.webhooks.conftest import Account, MakeAccount
from tests.webhooks.receiver import Receiver


async def _endpoint(client: AsyncClient, account: Account, url: str, events_: list[str]) -> dict[str, str]:
    made = await client.post(
        "/v1/webhook-endpoints", json={"url": url, "enabled_events": events_}, headers=account.live
    )
    assert made.status_code == 201, made.text
    body: dict[str, str] = made.json()
    return body


async def _emit(sessionmaker: async_sessionmaker[AsyncSession], type: str, payload: dict[str, object]) -> str:
    async with sessionmaker.begin() as session:
        return str(await events.emit(session, environment=Environment.live, type=EventName(type), payload=payload))


async def _make_due(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    """Bring every pending delivery's next attempt to now (the clock is not waited for)."""
    async with sessionmaker.begin() as session:
        await session.execute(update(WebhookDelivery).values(next_attempt_at=utcnow() - timedelta(seconds=1)))


async def _deliveries(client: AsyncClient, account: Account, endpoint_id: str) -> list[dict[str, object]]:
    answer = await client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries", headers=account.live)
    data: list[dict[str, object]] = answer.json()["data"]
    return data


async def test_a_delivery_verifies_with_standardwebhooks_and_parses_as_plain_json(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["passport.updated"])
    event_id = await _emit(
        sessionmaker,
        "passport.updated",
        {"freelancer_id": str(anna.user.id), "updated_at": utcnow().isoformat(), "change": "sector", "sector": "ict"},
    )
    assert await worker.run_once() == 1
    [got] = receiver.received
    verified = Webhook(endpoint["secret"]).verify(got.body, got.headers)
    assert got.headers["webhook-id"] == event_id
    assert got.headers["content-type"] == "application/json"
    assert set(verified) == {"id", "type", "created_at", "environment", "livemode", "data"}
    assert (verified["id"], verified["type"], verified["environment"], verified["livemode"]) == (
        event_id,
        "passport.updated",
        "live",
        True,
    )
    assert verified["data"]["sector"] == "ict"
    assert json.loads(got.body) == verified, "a catch hook that only parses JSON gets the same object"
    [logged] = await _deliveries(client, anna, endpoint["id"])
    assert (logged["status"], logged["attempts"], logged["last_status_code"]) == ("succeeded", 1, 200)
    assert logged["last_response_body"] == '{"ok":true}'
    assert await worker.run_once() == 0, "delivered once, not again"


async def test_a_wrong_secret_does_not_verify(
    client: AsyncClient, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    [got] = receiver.received
    other = Webhook("whsec_" + "QUJD" * 8)
    with pytest.raises(Exception, match="No matching signature"):
        other.verify(got.body, got.headers)
    tampered = got.body.replace(b"test delivery", b"evil delivery")
    with pytest.raises(Exception, match="No matching signature"):
        Webhook(endpoint["secret"]).verify(tampered, got.headers)


async def test_user_events_reach_only_their_owner_and_register_events_everyone(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    sessionmaker: async_sessionmaker[AsyncSession],
    sandbox_client: AsyncClient,
) -> None:
    anna, bob = await make_account(), await make_account()
    await _endpoint(client, anna, receiver.url + "/anna", ["*"])
    await _endpoint(client, bob, receiver.url + "/bob", ["wtta.admission.updated", "passport.updated"])
    sandbox = await sandbox_client.post(
        "/v1/webhook-endpoints", json={"url": receiver.url + "/sandbox", "enabled_events": ["*"]}, headers=anna.test
    )
    assert sandbox.status_code == 201
    await _emit(sessionmaker, "passport.updated", {"freelancer_id": str(anna.user.id), "change": "sector"})
    await _emit(sessionmaker, "wtta.admission.updated", {"kvk_number": "12345678", "to_status": "admitted"})
    await _emit(sessionmaker, "api_token.created", {"user_id": str(bob.user.id), "token_id": "x"})
    await worker.run_once()
    seen = sorted((r.path, json.loads(r.body)["type"]) for r in receiver.received)
    assert seen == [
        ("/hook/anna", "passport.updated"),
        ("/hook/anna", "wtta.admission.updated"),
        ("/hook/bob", "wtta.admission.updated"),
    ], "bob gets no passport event of anna's, anna no token event of bob's, the sandbox nothing of production"


async def test_failures_are_retried_on_schedule_and_the_response_is_kept_truncated(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    receiver.answers += [Response("x" * 5000, status_code=500), Response(status_code=302, headers={"location": "/"})]
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    before = utcnow()
    await worker.run_once()
    [first] = await _deliveries(client, anna, endpoint["id"])
    assert (first["status"], first["attempts"], first["last_status_code"]) == ("pending", 1, 500)
    assert first["last_response_body"] == "x" * 1024
    due = dt.datetime.fromisoformat(str(first["next_attempt_at"]))
    assert before + SCHEDULE[0] * 0.8 - timedelta(seconds=1) <= due <= utcnow() + SCHEDULE[0]
    assert await worker.run_once() == 0, "not due yet"
    await _make_due(sessionmaker)
    await worker.run_once()
    [second] = await _deliveries(client, anna, endpoint["id"])
    assert (second["status"], second["attempts"], second["last_status_code"]) == ("pending", 2, 302), "no redirects"
    await _make_due(sessionmaker)
    await worker.run_once()
    [third] = await _deliveries(client, anna, endpoint["id"])
    assert (third["status"], third["attempts"]) == ("succeeded", 3)
    log = cast(list[dict[str, Any]], third["attempt_log"])
    assert [(a["number"], a["status_code"]) for a in log] == [(1, 500), (2, 302), (3, 200)]
    assert [a["error"] for a in log] == ["HTTP 500", "HTTP 302", None]
    assert log[0]["attempted_at"] < log[1]["attempted_at"] < log[2]["attempted_at"]
    assert all(isinstance(a["latency_ms"], int) for a in log)
    ids = {r.headers["webhook-id"] for r in receiver.received}
    assert len(receiver.received) == 3
    assert len(ids) == 1, "the same webhook-id on every attempt"


async def test_retry_after_postpones_the_next_attempt(
    client: AsyncClient, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    receiver.answers.append(Response(status_code=429, headers={"retry-after": "3600"}))
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    [logged] = await _deliveries(client, anna, endpoint["id"])
    due = dt.datetime.fromisoformat(str(logged["next_attempt_at"]))
    assert due >= utcnow() + timedelta(minutes=59)


@pytest.mark.parametrize(
    ("retry_after", "at_least", "at_most"),
    [
        ("\u00b2", timedelta(0), timedelta(minutes=1)),  # a superscript two: a digit to `str.isdigit`, not a number
        ("99999999999999999999999", timedelta(hours=24), timedelta(hours=24, minutes=1)),  # capped as any long one
        ("soon", timedelta(0), timedelta(minutes=1)),
    ],
    ids=["superscript digit", "huge", "words"],
)
async def test_a_strange_retry_after_never_stops_the_worker(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    retry_after: str,
    at_least: timedelta,
    at_most: timedelta,
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    receiver.answers.append(Response(status_code=503, headers={"retry-after": retry_after}))
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    [logged] = await _deliveries(client, anna, endpoint["id"])
    assert (logged["status"], logged["last_status_code"]) == ("pending", 503)
    due = dt.datetime.fromisoformat(str(logged["next_attempt_at"])) - utcnow()
    assert at_least <= due <= at_most


def test_the_schedule_spans_at_most_three_days_with_jitter() -> None:
    rng = random.Random(7)
    waits = [next_delay(n, None, rng) for n in range(1, len(SCHEDULE) + 2)]
    assert waits[-1] is None
    total = sum((w for w in waits if w is not None), timedelta())
    assert timedelta(hours=55) < total <= timedelta(days=3)
    assert all(w is not None and w <= s for w, s in zip(waits, SCHEDULE, strict=False))
    assert waits[0] is not None
    assert waits[0] >= timedelta(seconds=4)


async def test_410_disables_the_endpoint(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    receiver.answers.append(Response(status_code=410))
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    now = (await client.get(f"/v1/webhook-endpoints/{endpoint['id']}", headers=anna.live)).json()
    assert (now["status"], now["enabled"]) == ("disabled", False)
    assert "410" in now["status_reason"]
    await _emit(sessionmaker, "api_token.created", {"user_id": str(anna.user.id)})
    await worker.run_once()
    assert len(receiver.received) == 1, "nothing is sent to a disabled endpoint"


async def test_an_exhausted_schedule_marks_the_endpoint_failing_and_tells_its_owner(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    failing = await _endpoint(client, anna, receiver.url + "/down", ["api_token.created"])
    notices = await _endpoint(client, anna, receiver.url + "/ops", ["webhook.endpoint.failing"])
    receiver.answers += [Response(status_code=503) for _ in range(len(SCHEDULE) + 1)]
    await _emit(sessionmaker, "api_token.created", {"user_id": str(anna.user.id)})
    for _ in range(len(SCHEDULE) + 1):
        await _make_due(sessionmaker)
        assert await worker.run_once() == 1
    [logged] = await _deliveries(client, anna, failing["id"])
    assert (logged["status"], logged["attempts"], logged["next_attempt_at"]) == ("failed", len(SCHEDULE) + 1, None)
    state = (await client.get(f"/v1/webhook-endpoints/{failing['id']}", headers=anna.live)).json()
    assert state["status"] == "failing"
    await worker.run_once()
    notice = json.loads(receiver.received[-1].body)
    assert notice["type"] == "webhook.endpoint.failing"
    assert notice["data"]["endpoint_id"] == failing["id"]
    assert receiver.received[-1].path == "/hook/ops"
    assert (await _deliveries(client, anna, notices["id"]))[0]["status"] == "succeeded"


async def test_manual_retry_resends_with_the_same_webhook_id(
    client: AsyncClient, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    [logged] = await _deliveries(client, anna, endpoint["id"])
    retried = await client.post(
        f"/v1/webhook-endpoints/{endpoint['id']}/deliveries/{logged['id']}/retry", headers=anna.live
    )
    assert retried.status_code == 202
    assert retried.json()["status"] == "pending"
    await worker.run_once()
    assert [r.headers["webhook-id"] for r in receiver.received] == [str(logged["event_id"])] * 2
    other = await client.post(
        f"/v1/webhook-endpoints/{endpoint['id']}/deliveries/{endpoint['id']}/retry", headers=anna.live
    )
    assert other.json()["code"] == "webhook_delivery_not_found"


async def test_rotation_signs_with_both_secrets_for_24_hours(
    client: AsyncClient,
    make_account: MakeAccount,
    receiver: Receiver,
    worker: Worker,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    rotated = (await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/rotate-secret", headers=anna.live)).json()
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    got = receiver.received[-1]
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    Webhook(endpoint["secret"]).verify(got.body, got.headers)
    Webhook(rotated["secret"]).verify(got.body, got.headers)
    async with sessionmaker.begin() as session:
        from compliance_api.webhooks.models import WebhookEndpoint

        row = await session.scalar(select(WebhookEndpoint))
        assert row is not None
        row.previous_secret_expires_at = utcnow() - timedelta(seconds=1)
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    got = receiver.received[-1]
    Webhook(rotated["secret"]).verify(got.body, got.headers)
    with pytest.raises(Exception, match="No matching signature"):
        Webhook(endpoint["secret"]).verify(got.body, got.headers)


async def test_attempts_are_counted_in_metrics(
    client: AsyncClient, make_account: MakeAccount, receiver: Receiver, worker: Worker
) -> None:
    anna = await make_account()
    endpoint = await _endpoint(client, anna, receiver.url, ["*"])
    before = REGISTRY.get_sample_value("compliance_webhook_attempts_total", {"outcome": "http_error"}) or 0.0
    receiver.answers.append(Response(status_code=500))
    await client.post(f"/v1/webhook-endpoints/{endpoint['id']}/test", headers=anna.live)
    await worker.run_once()
    after = REGISTRY.get_sample_value("compliance_webhook_attempts_total", {"outcome": "http_error"})
    assert after == before + 1
