"""A NUL character (U+0000) in any text input is a 400 naming the field, and nothing is written.

PostgreSQL cannot store NUL in text: before this guard such input reached the database, failed there (a 500) and the
error's log line printed the statement's parameters."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.db import Base

HOOK = "https://hooks.example.com/compliance"
GRANTEE = "6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11"
NUL = "\u0000"

BODIES = [
    ("/v1/webhook-endpoints", {"url": HOOK + NUL, "enabled_events": ["*"]}, "url"),
    ("/v1/webhook-endpoints", {"url": HOOK, "enabled_events": ["*"], "description": "mine" + NUL}, "description"),
    ("/v1/webhook-endpoints", {"url": HOOK, "enabled_events": ["passport.updated" + NUL]}, "enabled_events"),
    ("/v1/classify/zelfstandigenwet", {"engagement": {}, "reference": "ref" + NUL}, "reference"),
    ("/v1/classify/zelfstandigenwet", {"engagement": {}, "metadata": {"key": "value" + NUL}}, "metadata"),
    ("/v1/classify/zelfstandigenwet", {"engagement": {}, "metadata": {"key" + NUL: "value"}}, "metadata"),
    ("/v1/classify/cross-border", {"country": "DE", "criteria": {"x" + NUL: True}}, "criteria"),
    ("/v1/classify/cross-border", {"country": "DE", "criteria": {}, "reference": NUL}, "reference"),
    ("/v1/dac7/grants", {"grantee_id": GRANTEE[:-1] + NUL}, "grantee_id"),
]


async def _row_count(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    """Rows in every table of the schema: a refused request leaves this unchanged."""
    async with sessionmaker() as session:
        counts = [await session.scalar(select(func.count()).select_from(t)) for t in Base.metadata.sorted_tables]
    return sum(count or 0 for count in counts)


def _assert_names(response: Any, field: str) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "validation_failed"
    assert any(e["field"] == field and "NUL" in e["message"] for e in problem["errors"]), problem


@pytest.mark.parametrize(("path", "body", "field"), BODIES)
async def test_nul_in_a_body_string_is_refused_naming_the_field(
    client: AsyncClient,
    auth: dict[str, str],
    sessionmaker: async_sessionmaker[AsyncSession],
    path: str,
    body: dict[str, Any],
    field: str,
) -> None:
    before = await _row_count(sessionmaker)
    _assert_names(await client.post(path, json=body, headers=auth), field)
    assert await _row_count(sessionmaker) == before


async def test_nul_in_a_webhook_update_is_refused(
    client: AsyncClient, auth: dict[str, str], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    made = await client.post("/v1/webhook-endpoints", json={"url": HOOK, "enabled_events": ["*"]}, headers=auth)
    path = f"/v1/webhook-endpoints/{made.json()['id']}"
    _assert_names(await client.patch(path, json={"description": NUL}, headers=auth), "description")
    assert (await client.get(path, headers=auth)).json()["description"] == ""


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/classifications?reference=a%00b", "query.reference"),
        ("/v1/classifications?limit=5&%00=1", "query."),
        ("/v1/passport/sh_%00abc/verify", "path"),
        ("/v1/webhook-endpoints/%00", "path"),
    ],
)
async def test_nul_in_a_query_or_path_parameter_is_refused_naming_it(
    client: AsyncClient, auth: dict[str, str], path: str, field: str
) -> None:
    _assert_names(await client.get(path, headers=auth), field)


async def test_a_literal_backslash_u0000_is_ordinary_text(client: AsyncClient, auth: dict[str, str]) -> None:
    body = {"engagement": {}, "reference": "C:\\u0000", "metadata": {"path": "\\u0000"}}
    response = await client.post("/v1/classify/zelfstandigenwet", json=body, headers=auth)
    assert response.status_code == 200, response.text
    assert response.json()["reference"] == "C:\\u0000"
