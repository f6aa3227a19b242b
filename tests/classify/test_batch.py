"""Batch classification: up to 1000 items, each answered by its verdict (kept in the audit trail) or its own
problem, in the order sent; one bad item never fails the others."""

from __future__ import annotations

import asyncio
import math
import random
import string
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.classify.models import Classification
from compliance_api.config import Settings
from compliance_api.events.models import OutboxEvent
from compliance_api.idempotency.models import IdempotencyRecord
from tests.classify.conftest import Account
from tests.conftest import running_app

ZW_BATCH = "/v1/classify/zelfstandigenwet/batch"
CB_BATCH = "/v1/classify/cross-border/batch"
ENGAGEMENT = {
    "hourly_rate_eur": 95,
    "months_duration": 12,
    "days_per_week": 5,
    "other_clients_count": 0,
    "own_tools": True,
    "own_liability": True,
    "sets_own_hours": False,
    "can_delegate": False,
    "profit_risk": False,
}


async def _stored(sessionmaker: async_sessionmaker[AsyncSession]) -> tuple[int, int]:
    async with sessionmaker() as session:
        records = await session.scalar(select(func.count()).select_from(Classification))
        events = await session.scalar(
            select(func.count()).select_from(OutboxEvent).where(OutboxEvent.type == "classification.created")
        )
    return int(records or 0), int(events or 0)


async def test_each_item_gets_its_verdict_or_its_own_problem_in_order(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    items: list[Any] = [
        {"engagement": ENGAGEMENT, "reference": "first"},
        {"engagement": {**ENGAGEMENT, "hourly_rate_eur": -5}},
        "not an object",
        {"engagement": ENGAGEMENT, "reference": "bad\u0000ref"},
        {"engagement": {**ENGAGEMENT, "hourly_rate_eur": 20}, "reference": "last"},
    ]
    response = await client.post(ZW_BATCH, json={"items": items}, headers=account.live)
    assert response.status_code == 200
    data = response.json()["data"]
    assert [entry.get("index") for entry in data] == [None, 1, 2, 3, None]
    assert (data[0]["reference"], data[4]["reference"]) == ("first", "last")
    assert data[4]["verdict"] == "unsafe"
    assert [e["field"] for e in data[1]["errors"]] == ["items.1.engagement.hourly_rate_eur"]
    assert data[2]["errors"][0]["field"] == "items.2"
    assert [e["field"] for e in data[3]["errors"]] == ["items.3.reference"]
    assert {problem["code"] for problem in data[1:4]} == {"validation_failed"}
    assert all(problem["status"] == 400 for problem in data[1:4])
    assert await _stored(sessionmaker) == (2, 2)
    kept = await client.get(f"/v1/classifications/{data[0]['id']}", headers=account.live)
    assert kept.json()["result"] == data[0]


async def test_cross_border_items_may_be_of_different_countries_and_unknown_criteria_are_an_items_problem(
    client: AsyncClient, account: Account
) -> None:
    items = [
        {"country": "FR", "criteria": {"client_gives_orders": True}},
        {"country": "DE", "criteria": {"no_such_thing": True}},
        {"country": "BE", "criteria": {}},
        {"country": "XX", "criteria": {}},
    ]
    data = (await client.post(CB_BATCH, json={"items": items}, headers=account.live)).json()["data"]
    assert [entry.get("country") for entry in data[::2]] == ["FR", "BE"]
    assert data[1]["index"] == 1
    assert [e["field"] for e in data[1]["errors"]] == ["items.1.criteria.no_such_thing"]
    assert data[3]["index"] == 3


@pytest.mark.parametrize(
    ("body", "field"),
    [({"items": []}, "items"), ({"items": [{}] * 1001}, "items"), ({"items": {}}, "items"), ({}, "items")],
)
async def test_a_batch_of_no_or_over_1000_items_is_refused_whole(
    client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    body: dict[str, Any],
    field: str,
) -> None:
    response = await client.post(ZW_BATCH, json=body, headers=account.live)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert await _stored(sessionmaker) == (0, 0)


async def test_a_batch_is_answered_in_the_requested_language(client: AsyncClient, account: Account) -> None:
    body = {"items": [{"engagement": ENGAGEMENT}]}
    response = await client.post(ZW_BATCH, json=body, headers={**account.live, "Accept-Language": "fr-BE"})
    assert response.headers["content-language"] == "fr"
    single = await client.post(
        "/v1/classify/zelfstandigenwet", json=body["items"][0], headers={**account.live, "Accept-Language": "fr"}
    )
    assert response.json()["data"][0]["advice"] == single.json()["advice"]


async def test_an_idempotent_batch_is_replayed_not_classified_again(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = {"items": [{"engagement": ENGAGEMENT}, {"engagement": ENGAGEMENT}]}
    headers = {**account.live, "Idempotency-Key": "payroll-2026-11"}
    first = await client.post(ZW_BATCH, json=body, headers=headers)
    again = await client.post(ZW_BATCH, json=body, headers=headers)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert await _stored(sessionmaker) == (2, 2)
    other = await client.post(ZW_BATCH, json={"items": body["items"][:1]}, headers=headers)
    assert other.json()["code"] == "idempotency_mismatch"


@pytest.mark.parametrize("items", [100, 101, 250, 1000])
async def test_a_batch_costs_one_request_per_started_100_items(
    client: AsyncClient, auth: dict[str, str], items: int
) -> None:
    """On the free plan (one request a second refills): the answer's remaining count shows the whole cost, give or
    take the one request that may have refilled meanwhile."""
    before = int((await client.get("/v1/health", headers=auth)).headers["x-ratelimit-remaining"])
    body = {"items": [{"engagement": ENGAGEMENT}] * items}
    response = await client.post(ZW_BATCH, json=body, headers=auth)
    assert response.status_code == 200
    cost = math.ceil(items / 100)
    assert cost - 1 <= before - int(response.headers["x-ratelimit-remaining"]) <= cost


async def test_a_batch_the_bucket_cannot_pay_for_is_429_and_classifies_nothing(
    client: AsyncClient, auth: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """The free plan's burst is 120 requests: thirteen batches of 1000 items (10 each) cannot all pass. Sent at once,
    so that however slow the machine, the bucket has no time to refill between them."""
    body = {"items": [{"engagement": ENGAGEMENT}] * 1000}
    answers = await asyncio.gather(*(client.post(ZW_BATCH, json=body, headers=auth) for _ in range(13)))
    refused = [a for a in answers if a.status_code == 429]
    assert refused
    assert refused[0].json()["code"] == "rate_limited"
    assert int(refused[0].headers["retry-after"]) >= 1
    assert refused[0].headers["x-ratelimit-remaining"] == "0"
    accepted = sum(1 for a in answers if a.status_code == 200)
    assert await _stored(sessionmaker) == (1000 * accepted, 1000 * accepted)


async def test_numbers_json_allows_but_the_fields_do_not_are_an_items_problem(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """A 70-digit integer and `NaN` (which Python's JSON reader takes) are refused naming the field, never a 500."""
    raw = (
        b'{"items": [{"engagement": {"hourly_rate_eur": NaN}},'
        b' {"engagement": {"months_duration": 1' + b"0" * 70 + b"}},"
        b' {"country": "FR", "criteria": {}, "as_of": 1' + b"0" * 70 + b"}]}"
    )
    headers = {**account.live, "content-type": "application/json"}
    data = (await client.post(ZW_BATCH, content=raw, headers=headers)).json()["data"]
    assert [problem["errors"][0]["field"] for problem in data] == [
        "items.0.engagement.hourly_rate_eur",
        "items.1.engagement.months_duration",
        "items.2.engagement",
    ]
    crossed = (await client.post(CB_BATCH, content=raw, headers=headers)).json()["data"]
    assert [problem["index"] for problem in crossed] == [0, 1, 2]
    assert await _stored(sessionmaker) == (0, 0)


async def test_a_single_call_with_a_70_digit_integer_is_a_400_naming_the_field(
    client: AsyncClient, account: Account
) -> None:
    raw = b'{"engagement": {"months_duration": 1' + b"0" * 70 + b"}}"
    headers = {**account.live, "content-type": "application/json"}
    response = await client.post("/v1/classify/zelfstandigenwet", content=raw, headers=headers)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["engagement.months_duration"]


async def test_an_idempotent_batch_with_a_70_digit_integer_or_nan_is_fingerprinted_not_a_500(
    client: AsyncClient, account: Account
) -> None:
    headers = {**account.live, "content-type": "application/json", "Idempotency-Key": "odd-numbers"}
    big = b'{"items": [{"engagement": {"months_duration": 1' + b"0" * 70 + b"}}]}"
    first = await client.post(ZW_BATCH, content=big, headers=headers)
    assert first.status_code == 200
    assert first.json()["data"][0]["index"] == 0
    assert (await client.post(ZW_BATCH, content=big, headers=headers)).headers["idempotent-replayed"] == "true"
    nan = b'{"items": [{"engagement": {"months_duration": 1' + b"0" * 70 + b', "hourly_rate_eur": NaN}}]}'
    other = await client.post(ZW_BATCH, content=nan, headers=headers)
    assert other.json()["code"] == "idempotency_mismatch"


def _over_the_body_limit() -> bytes:
    """A batch of 200 items, each with the most metadata an item may carry: over 2 MiB, and valid item by item."""
    metadata = {f"key{index:02d}": "v" * 500 for index in range(20)}
    return orjson.dumps({"items": [{"engagement": ENGAGEMENT, "metadata": metadata}] * 200})


def _contract_example_detail(app: FastAPI, path: str) -> str:
    examples = app.openapi()["paths"][path]["post"]["responses"]["413"]["content"]["application/problem+json"]
    detail: str = examples["examples"]["payload_too_large"]["value"]["detail"]
    return detail


@pytest.mark.parametrize("path", [ZW_BATCH, CB_BATCH])
async def test_a_batch_over_the_body_limit_is_413_saying_to_split_it(
    app: FastAPI, client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession], path: str
) -> None:
    body = _over_the_body_limit()
    headers = {**account.live, "content-type": "application/json"}

    async def streamed() -> AsyncIterator[bytes]:  # no Content-Length: the limit is counted as the body arrives
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    for content in (body, streamed()):
        response = await client.post(path, content=content, headers=headers)
        assert response.status_code == 413
        problem = response.json()
        assert problem["code"] == "payload_too_large"
        assert problem["detail"] == (
            "The request body exceeds the size limit (1 MiB); split the batch into several requests, each body "
            "within the limit."
        )
        assert problem["detail"] == _contract_example_detail(app, path)
    assert await _stored(sessionmaker) == (0, 0)


async def test_a_single_classification_over_the_body_limit_says_only_the_limit(
    client: AsyncClient, account: Account
) -> None:
    body = orjson.dumps({"engagement": ENGAGEMENT, "reference": "x" * (1024 * 1024)})
    response = await client.post(
        "/v1/classify/zelfstandigenwet", content=body, headers={**account.live, "content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["detail"] == "The request body exceeds the size limit (1 MiB)."


async def test_the_413_names_the_limit_in_force(settings: Settings, engine: AsyncEngine, account: Account) -> None:
    smaller = settings.model_copy(update={"max_body_bytes": 50_000})
    async with running_app(smaller) as application:
        async with AsyncClient(transport=ASGITransport(app=application), base_url="http://api.test") as http:
            response = await http.post(
                ZW_BATCH, content=_over_the_body_limit(), headers={**account.live, "content-type": "application/json"}
            )
    assert response.status_code == 413
    assert response.json()["detail"].startswith(
        "The request body exceeds the size limit (50000 bytes); split the batch"
    )


async def test_a_keyed_batch_of_bad_items_stores_at_most_a_kilobyte_an_item(
    client: AsyncClient, account: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """1000 items of 15 unknown fields each, with long random names (so nothing repeats and each is named): every
    item lists what fits and counts them all, and the record keeps at most 1 MB; a replay answers the same bytes."""
    rng = random.Random(35)
    alphabet = string.ascii_letters + string.digits

    def item() -> dict[str, Any]:
        return {"engagement": {"".join(rng.choices(alphabet, k=55)): 0 for _ in range(15)}}

    body = orjson.dumps({"items": [item() for _ in range(1000)]})
    assert len(body) <= 1024 * 1024
    headers = {**account.live, "content-type": "application/json", "Idempotency-Key": "bad-items"}
    first = await client.post(ZW_BATCH, content=body, headers=headers)
    assert first.status_code == 200
    data = first.json()["data"]
    assert all(problem["errors"] for problem in data)
    assert all(len(problem["errors"]) == 15 or problem["error_count"] == 15 for problem in data)
    async with sessionmaker() as session:
        stored = await session.scalar(select(func.length(IdempotencyRecord.response_body)))
    assert stored is not None
    assert stored <= 1000 * 1024
    again = await client.post(ZW_BATCH, content=body, headers=headers)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
