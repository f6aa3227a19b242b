"""`reference`, `metadata` and `monitor` on both classify requests: stored, returned on the verdict and the record."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify.models import Classification
from tests.classify.conftest import Account

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
TRACKING = {"reference": "contract-2026-0042", "metadata": {"cost_centre": "IT", "run": "2026-11"}, "monitor": True}
BODIES: dict[str, dict[str, Any]] = {
    ZW: {"engagement": {"hourly_rate_eur": 95}},
    CB: {"country": "DE", "criteria": {"subject_to_instructions": True}},
}


@pytest.mark.parametrize("path", [ZW, CB])
async def test_tracking_fields_are_stored_and_returned(client: AsyncClient, account: Account, path: str) -> None:
    verdict = await client.post(path, json={**BODIES[path], **TRACKING}, headers=account.live)
    assert verdict.status_code == 200, verdict.text
    body = verdict.json()
    assert {key: body[key] for key in TRACKING} == TRACKING
    record = await client.get(f"/v1/classifications/{body['id']}", headers=account.live)
    assert record.status_code == 200
    stored = record.json()
    assert {key: stored[key] for key in TRACKING} == TRACKING
    assert {key: stored["result"][key] for key in TRACKING} == TRACKING


@pytest.mark.parametrize("path", [ZW, CB])
async def test_without_tracking_fields_the_defaults_are_returned(
    client: AsyncClient, account: Account, path: str
) -> None:
    body = (await client.post(path, json=BODIES[path], headers=account.live)).json()
    assert (body["reference"], body["metadata"], body["monitor"]) == (None, {}, False)
    stored = (await client.get(f"/v1/classifications/{body['id']}", headers=account.live)).json()
    assert (stored["reference"], stored["metadata"], stored["monitor"]) == (None, {}, False)


@pytest.mark.parametrize("path", [ZW, CB])
@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"reference": "x" * 201}, "reference"),
        ({"reference": ""}, "reference"),
        ({"reference": 42}, "reference"),
        ({"metadata": {f"k{i}": "v" for i in range(21)}}, "metadata"),
        ({"metadata": {"k": "v" * 501}}, "metadata.k"),
        ({"metadata": {"k" * 501: "v"}}, "metadata.k"),
        ({"metadata": {"k": 1}}, "metadata.k"),
        ({"metadata": ["k"]}, "metadata"),
        ({"monitor": "yes"}, "monitor"),
    ],
)
async def test_bad_tracking_fields_are_400_naming_the_field_and_store_nothing(
    client: AsyncClient,
    account: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
    path: str,
    extra: dict[str, Any],
    field: str,
) -> None:
    response = await client.post(path, json={**BODIES[path], **extra}, headers=account.live)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == "validation_failed"
    assert any(error["field"].startswith(field) for error in problem["errors"]), problem["errors"]
    async with sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Classification)) == 0


async def test_limits_are_inclusive(client: AsyncClient, account: Account) -> None:
    extra = {"reference": "r" * 200, "metadata": {f"{i:0>500}": "v" * 500 for i in range(20)}}
    response = await client.post(ZW, json={**BODIES[ZW], **extra}, headers=account.live)
    assert response.status_code == 200, response.text
    assert response.json()["metadata"] == extra["metadata"]
