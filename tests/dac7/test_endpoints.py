"""`GET /v1/dac7/seller/{id}` and the grants: who may read, and every way to try without a right."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import give_grant, import_rows, make_seller, row
from tests.passport.conftest import Account


def _this_year(month: int, day: int = 15) -> dt.date:
    today = utcnow().date()
    wanted = dt.date(today.year, month, day)
    return min(wanted, today)


def _forbidden_body(response: Any) -> dict[str, Any]:
    body = dict(response.json())
    body.pop("request_id")
    return body


async def test_the_seller_reads_its_own_snapshot_with_net_consideration(
    client: AsyncClient, seller: Account, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    last_year = dt.date(utcnow().year - 1, 6, 1)
    await import_rows(
        sessionmaker,
        [
            row("a-1", seller.user.id, _this_year(1), "1000.00", "100.00", "50.50"),
            row("a-2", seller.user.id, _this_year(1, 20), "200.10", "20.00", "0"),
            row("old-1", seller.user.id, last_year, "999.00", "0", "0"),
        ],
    )
    response = await client.get(f"/v1/dac7/seller/{seller.user.id}", headers=seller.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["freelancer_id"] == str(seller.user.id)
    assert body["reporting_year"] == utcnow().year
    assert (body["tin"], body["member_state"]) == ("111222333", "NL")
    assert body["total_consideration_eur"] == 1029.60, "1000 - 100 - 50.50 + 200.10 - 20; last year's not counted"
    assert body["number_of_activities"] == 2
    assert body["fees_eur"] == 120.0
    assert body["taxes_eur"] == 50.5
    assert body["reported_at"] is None
    assert body["reportable"] is True
    assert body["livemode"] is True


async def test_a_grant_holder_reads_and_loses_access_when_the_grant_is_revoked(
    client: AsyncClient, seller: Account, business: Account
) -> None:
    url = f"/v1/dac7/seller/{seller.user.id}"
    assert (await client.get(url, headers=business.live)).status_code == 403
    created = await client.post("/v1/dac7/grants", headers=seller.live, json={"grantee_id": str(business.user.id)})
    assert created.status_code == 201, created.text
    grant = created.json()
    assert (grant["grantee_id"], grant["status"], grant["revoked_at"]) == (str(business.user.id), "active", None)
    assert (await client.get(url, headers=business.live)).status_code == 200
    listed = await client.get("/v1/dac7/grants", headers=seller.live)
    assert [g["id"] for g in listed.json()["data"]] == [grant["id"]]
    revoked = await client.delete(f"/v1/dac7/grants/{grant['id']}", headers=seller.live)
    assert revoked.status_code == 200
    assert revoked.json()["status"] == "revoked"
    assert (await client.get(url, headers=business.live)).status_code == 403


@pytest.mark.parametrize("attacker", ["other_freelancer", "business_without_grant", "revoked_grant", "sandbox"])
async def test_everyone_without_a_right_gets_the_same_403_as_for_an_unknown_seller(
    attacker: str,
    client: AsyncClient,
    sandbox_client: AsyncClient,
    seller: Account,
    business: Account,
    other_freelancer: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    http, headers = client, business.live
    if attacker == "other_freelancer":
        await make_seller(sessionmaker, other_freelancer.user)
        headers = other_freelancer.live
    elif attacker == "revoked_grant":
        grant_id = await give_grant(sessionmaker, seller.user, business.user, Environment.live)
        assert (await client.delete(f"/v1/dac7/grants/{grant_id}", headers=seller.live)).status_code == 200
    elif attacker == "sandbox":  # a production grant and seller; the business and the seller use sandbox tokens
        await give_grant(sessionmaker, seller.user, business.user, Environment.live)
        assert (await client.get(f"/v1/dac7/seller/{seller.user.id}", headers=business.live)).status_code == 200
        http, headers = sandbox_client, business.test
    refused = await http.get(f"/v1/dac7/seller/{seller.user.id}", headers=headers)
    unknown = await http.get(f"/v1/dac7/seller/{uuid.uuid4()}", headers=headers)
    assert refused.status_code == unknown.status_code == 403
    assert refused.headers["content-type"] == "application/problem+json"
    assert _forbidden_body(refused) == _forbidden_body(unknown)
    assert refused.json()["code"] == "forbidden"


async def test_the_sellers_own_sandbox_token_does_not_see_its_production_record(
    sandbox_client: AsyncClient, seller: Account
) -> None:
    response = await sandbox_client.get(f"/v1/dac7/seller/{seller.user.id}", headers=seller.test)
    assert response.status_code == 403


async def test_a_sandbox_grant_does_not_open_production(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    seller: Account,
    business: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    await make_seller(sessionmaker, seller.user, Environment.test)
    await give_grant(sessionmaker, seller.user, business.user, Environment.test)
    assert (await sandbox_client.get(f"/v1/dac7/seller/{seller.user.id}", headers=business.test)).status_code == 200
    assert (await client.get(f"/v1/dac7/seller/{seller.user.id}", headers=business.live)).status_code == 403


@pytest.mark.parametrize("bad", ["not-a-uuid", "123", "6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c1Z"])
async def test_a_non_uuid_seller_id_is_400_problem_json(client: AsyncClient, seller: Account, bad: str) -> None:
    response = await client.get(f"/v1/dac7/seller/{bad}", headers=seller.live)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "validation_failed"
    assert response.json()["errors"][0]["field"] == "path.freelancer_id"


async def test_grants_are_for_sellers_only_and_name_a_real_other_user(
    client: AsyncClient, seller: Account, business: Account
) -> None:
    as_business = await client.post("/v1/dac7/grants", headers=business.live, json={"grantee_id": str(seller.user.id)})
    assert (as_business.status_code, as_business.json()["code"]) == (403, "seller_only")
    assert (await client.get("/v1/dac7/grants", headers=business.live)).json()["code"] == "seller_only"
    unknown = await client.post("/v1/dac7/grants", headers=seller.live, json={"grantee_id": str(uuid.uuid4())})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "grantee_not_found")
    own = await client.post("/v1/dac7/grants", headers=seller.live, json={"grantee_id": str(seller.user.id)})
    assert (own.status_code, own.json()["errors"][0]["field"]) == (400, "grantee_id")
    for body in ({"grantee_id": "nope"}, {"grantee_id": str(business.user.id), "extra": 1}, {}):
        bad = await client.post("/v1/dac7/grants", headers=seller.live, json=body)
        assert (bad.status_code, bad.json()["code"]) == (400, "validation_failed")
    assert (await client.get("/v1/dac7/grants", headers=seller.live)).json()["data"] == [], "nothing was written"


async def test_granting_twice_returns_the_active_grant_and_idempotency_key_replays(
    client: AsyncClient, seller: Account, business: Account
) -> None:
    body = {"grantee_id": str(business.user.id)}
    first = await client.post("/v1/dac7/grants", headers=seller.live, json=body)
    again = await client.post("/v1/dac7/grants", headers=seller.live, json=body)
    assert first.json()["id"] == again.json()["id"]
    keyed = {**seller.live, "Idempotency-Key": "grant-1"}
    replay_a = await client.post("/v1/dac7/grants", headers=keyed, json=body)
    replay_b = await client.post("/v1/dac7/grants", headers=keyed, json=body)
    assert replay_b.headers["Idempotent-Replayed"] == "true"
    assert replay_a.json() == replay_b.json()


async def test_a_seller_cannot_revoke_another_sellers_grant(
    client: AsyncClient,
    seller: Account,
    business: Account,
    other_freelancer: Account,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    grant_id = await give_grant(sessionmaker, seller.user, business.user, Environment.live)
    response = await client.delete(f"/v1/dac7/grants/{grant_id}", headers=other_freelancer.live)
    assert (response.status_code, response.json()["code"]) == (404, "grant_not_found")
    assert (await client.get(f"/v1/dac7/seller/{seller.user.id}", headers=business.live)).status_code == 200
