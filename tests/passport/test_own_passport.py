"""`GET /v1/passport` and `/api/v1/passport`: the own passport, for its own token, and who else gets what."""

from __future__ import annotations

import datetime as dt

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.conftest import commits
from tests.passport.conftest import Account, give_passport

PATHS = ("/v1/passport", "/api/v1/passport")
SPEC_FIELDS = {"compliance_score", "compliance_level", "sector", "verified", "last_updated"}


@commits
@pytest.mark.parametrize("path", PATHS)
async def test_own_passport_has_the_spec_fields(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account, path: str
) -> None:
    await give_passport(sessionmaker, freelancer.user)
    response = await client.get(path, headers=freelancer.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) >= SPEC_FIELDS
    assert body["compliance_score"] == 50
    assert body["compliance_level"] == "medium"
    assert body["sector"] == "ict"
    assert body["verified"] is True
    assert dt.datetime.fromisoformat(body["last_updated"]) <= utcnow()
    assert body["freelancer_id"] == str(freelancer.user.id)
    assert body["livemode"] is True
    assert {v["check"] for v in body["verifications"]} == {"identity", "kvk_registration"}
    assert "X-RateLimit-Limit" in response.headers


@commits
async def test_expired_verifications_do_not_count(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account
) -> None:
    yesterday = utcnow().date() - dt.timedelta(days=1)
    await give_passport(
        sessionmaker, freelancer.user, checks={"identity": yesterday, "kvk_registration": None, "vat_number": None}
    )
    body = (await client.get("/v1/passport", headers=freelancer.live)).json()
    assert body["compliance_score"] == 40
    assert body["verified"] is False, "identity expired"
    assert {v["check"]: v["valid"] for v in body["verifications"]} == {
        "identity": False,
        "kvk_registration": True,
        "vat_number": True,
    }


@pytest.mark.parametrize("path", PATHS)
async def test_a_freelancer_without_a_passport_gets_no_passport(
    client: AsyncClient, freelancer: Account, path: str
) -> None:
    response = await client.get(path, headers=freelancer.live)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "no_passport"


@pytest.mark.parametrize("path", PATHS)
async def test_a_business_token_gets_403_freelancer_only(client: AsyncClient, business: Account, path: str) -> None:
    response = await client.get(path, headers=business.live)
    assert response.status_code == 403
    assert response.json()["code"] == "freelancer_only"


@commits
async def test_the_sandbox_never_sees_the_production_passport(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    freelancer: Account,
) -> None:
    await give_passport(sessionmaker, freelancer.user, Environment.live)
    assert (await sandbox_client.get("/v1/passport", headers=freelancer.test)).json()["code"] == "no_passport"
    await give_passport(sessionmaker, freelancer.user, Environment.test, checks={"vat_number": None}, sector="care")
    sandbox = (await sandbox_client.get("/v1/passport", headers=freelancer.test)).json()
    live = (await client.get("/v1/passport", headers=freelancer.live)).json()
    assert (sandbox["sector"], sandbox["compliance_score"], sandbox["livemode"]) == ("care", 15, False)
    assert (live["sector"], live["compliance_score"], live["livemode"]) == ("ict", 50, True)


async def test_the_passport_needs_a_token(client: AsyncClient) -> None:
    for path in PATHS:
        response = await client.get(path)
        assert response.status_code == 401
        assert response.json()["code"] == "missing_token"
