"""Dry runs of the classify operations (`…/dry-run`, or `?dry_run=true` on the kept operation): the verdict a request
would get, with `id` null and nothing kept (no audit record, no event, no Idempotency-Key record), at the rate-limit
cost of any call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.models import Classification
from compliance_api.events.models import OutboxEvent
from compliance_api.idempotency.models import IdempotencyRecord
from tests.classify.conftest import Account

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
DUTCH = {"engagement": {"hourly_rate_eur": 37, "months_duration": 12}, "reference": "what-if"}
BELGIAN = {"country": "BE", "criteria": {"no_freedom_working_time": True}}
PER_CALL = {"id", "created_at"}
DRY = {"dry_run": "true"}
WAYS = {"dry-run operation": ("/dry-run", {}), "dry_run=true": ("", DRY)}


async def _kept(sessionmaker: async_sessionmaker[AsyncSession]) -> tuple[int, int, int]:
    """Classifications, events and Idempotency-Key records stored."""
    async with sessionmaker() as session:
        counts = [await session.scalar(select(func.count()).select_from(t)) for t in (Classification, OutboxEvent)]
        keys = await session.scalar(select(func.count()).select_from(IdempotencyRecord))
    return counts[0] or 0, counts[1] or 0, keys or 0


def _without_per_call(verdict: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in verdict.items() if name not in PER_CALL}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(("path", "body"), [(ZW, DUTCH), (CB, BELGIAN)])
async def test_a_dry_run_answers_the_verdict_with_a_null_id_and_keeps_nothing(
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    account: Account,
    path: str,
    body: dict[str, Any],
    way: str,
) -> None:
    before = await _kept(sessionmaker)
    headers = {**account.live, "Accept-Language": "de", "Idempotency-Key": "loop-step-1"}
    suffix, params = WAYS[way]
    answer = await client.post(path + suffix, json=body, params=params, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Language"] == "de"
    preview = answer.json()
    assert preview["id"] is None
    assert await _kept(sessionmaker) == before, "no record, no event, no idempotency record"

    kept = (await client.post(path, json=body, headers={**account.live, "Accept-Language": "de"})).json()
    assert kept["id"] is not None
    assert _without_per_call(preview) == _without_per_call(kept)
    assert (await _kept(sessionmaker))[:2] == (before[0] + 1, before[1] + 1)
    listed = (await client.get("/v1/classifications", headers=account.live)).json()["data"]
    assert [item["id"] for item in listed] == [kept["id"]]


async def test_dry_runs_cost_rate_limit_like_any_call(client: AsyncClient, auth: dict[str, str]) -> None:
    """The free plan's burst is 120 requests: 125 dry runs, and thirteen dry-run batches of 1000 items (10 each),
    cannot all pass. Sent at once, so that however slow the machine, the bucket has no time to refill meanwhile."""
    dry = {"dry_run": "true"}
    singles = await asyncio.gather(*(client.post(ZW, json=DUTCH, params=dry, headers=auth) for _ in range(125)))
    assert {answer.status_code for answer in singles} == {200, 429}
    batch = {"items": [DUTCH] * 1000}
    batches = await asyncio.gather(
        *(client.post(f"{ZW}/batch", json=batch, params=dry, headers=auth) for _ in range(13))
    )
    assert 429 in {answer.status_code for answer in batches}


@pytest.mark.parametrize("way", WAYS)
async def test_a_dry_run_batch_answers_each_item_and_keeps_none(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], account: Account, way: str
) -> None:
    before = await _kept(sessionmaker)
    items = [DUTCH, {"engagement": {"hourly_rate_eur": -5}}]
    suffix, params = WAYS[way]
    answer = await client.post(f"{ZW}/batch{suffix}", json={"items": items}, params=params, headers=account.live)
    assert answer.status_code == 200, answer.text
    verdict, problem = answer.json()["data"]
    assert (verdict["id"], verdict["livemode"]) == (None, True)
    assert (problem["index"], problem["code"]) == (1, "validation_failed")
    cross = await client.post(f"{CB}/batch{suffix}", json={"items": [BELGIAN]}, params=params, headers=account.live)
    assert [item["id"] for item in cross.json()["data"]] == [None]
    assert await _kept(sessionmaker) == before


async def test_dry_run_false_keeps_the_verdict_and_a_value_not_a_boolean_is_400(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], account: Account
) -> None:
    kept = await client.post(ZW, json=DUTCH, params={"dry_run": "false"}, headers=account.live)
    assert kept.json()["id"] is not None
    refused = await client.post(ZW, json=DUTCH, params={"dry_run": "maybe"}, headers=account.live)
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["query.dry_run"]
    assert (await _kept(sessionmaker))[0] == 1
