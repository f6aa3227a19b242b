"""Share-tokens: create (shown once, stored hashed), list, revoke, and bad input; views of a share."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from compliance_api.passport.models import PassportShare
from tests.passport.conftest import Account, give_passport, make_account

SHARES = "/v1/passport/shares"


@pytest.fixture
async def holder(sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account) -> Account:
    await give_passport(sessionmaker, freelancer.user)
    await give_passport(sessionmaker, freelancer.user, Environment.test)
    return freelancer


async def test_a_share_token_is_shown_once_and_stored_only_as_a_keyed_hash(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account
) -> None:
    response = await client.post(SHARES, json={"ttl_days": 7}, headers=holder.live)
    assert response.status_code == 201, response.text
    created = response.json()
    token = created["token"]
    assert token.startswith("pst_")
    assert len(token) == 36
    assert created["status"] == "active"
    assert created["last4"] == token[-4:]
    async with sessionmaker() as session:
        row = await session.get_one(PassportShare, uuid.UUID(created["id"]))
    assert token not in repr(vars(row))
    assert token[4:-4] not in row.token_hash
    assert (row.expires_at - row.created_at).days == 7

    listed = (await client.get(SHARES, headers=holder.live)).json()["data"]
    assert [s["id"] for s in listed] == [created["id"]]
    assert "token" not in listed[0]


async def test_an_empty_body_gives_a_30_day_share(client: AsyncClient, holder: Account) -> None:
    created = (await client.post(SHARES, headers=holder.live)).json()
    assert created["status"] == "active"
    lifetime = dt.datetime.fromisoformat(created["expires_at"]) - dt.datetime.fromisoformat(created["created_at"])
    assert lifetime.days == 30


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"ttl_days": 0}, "ttl_days"),
        ({"ttl_days": 366}, "ttl_days"),
        ({"ttl_days": "30"}, "ttl_days"),
        ({"ttl_days": 1.5}, "ttl_days"),
        ({"ttl_days": True}, "ttl_days"),
        ({"ttl_days": 30, "scope": "all"}, "scope"),
        ([], "body"),
    ],
)
async def test_bad_share_bodies_are_400_and_create_nothing(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account, body: Any, field: str
) -> None:
    response = await client.post(SHARES, json=body, headers=holder.live)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "validation_failed"
    assert field in {e["field"] for e in response.json()["errors"]}
    async with sessionmaker() as session:
        assert list(await session.scalars(select(PassportShare))) == []


async def test_revoke_is_immediate_and_repeatable(client: AsyncClient, holder: Account) -> None:
    created = (await client.post(SHARES, headers=holder.live)).json()
    for _ in range(2):
        revoked = await client.delete(f"{SHARES}/{created['id']}", headers=holder.live)
        assert revoked.status_code == 200
        assert revoked.json()["status"] == "revoked"
    verify = await client.get(f"/v1/passport/{created['token']}/verify", headers=holder.live)
    assert verify.status_code == 404


async def test_shares_are_per_freelancer_and_environment(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    holder: Account,
    pepper: bytes,
) -> None:
    other = await make_account(sessionmaker, pepper)
    await give_passport(sessionmaker, other.user)
    mine = (await client.post(SHARES, headers=holder.live)).json()
    others = [
        (client.delete(f"{SHARES}/{mine['id']}", headers=other.live)),
        (client.get(f"{SHARES}/{mine['id']}/views", headers=other.live)),
    ]
    for attempt in others:
        response = await attempt
        assert response.status_code == 404
        assert response.json()["code"] == "share_not_found"
    own_elsewhere = [
        (sandbox_client.get(f"{SHARES}/{mine['id']}/views", headers=holder.test)),
        (sandbox_client.delete(f"{SHARES}/{mine['id']}", headers=holder.test)),
    ]
    for attempt in own_elsewhere:  # the holder's own share, in the other environment: told where it is
        response = await attempt
        assert response.status_code == 404
        assert (response.json()["code"], response.json()["environment"]) == ("in_other_environment", "live")
    assert (await client.get(SHARES, headers=holder.live)).json()["data"][0]["status"] == "active"
    assert (await client.get(SHARES, headers=other.live)).json()["data"] == []
    assert (await sandbox_client.get(SHARES, headers=holder.test)).json()["data"] == []


async def test_business_tokens_cannot_manage_shares(client: AsyncClient, business: Account) -> None:
    assert (await client.post(SHARES, headers=business.live)).json()["code"] == "freelancer_only"
    assert (await client.get(SHARES, headers=business.live)).json()["code"] == "freelancer_only"


async def test_a_freelancer_without_a_passport_cannot_share(client: AsyncClient, freelancer: Account) -> None:
    response = await client.post(SHARES, headers=freelancer.live)
    assert response.status_code == 404
    assert response.json()["code"] == "no_passport"


@pytest.mark.parametrize("share_id", ["not-a-uuid", "123"])
async def test_a_malformed_share_id_is_400(client: AsyncClient, holder: Account, share_id: str) -> None:
    response = await client.delete(f"{SHARES}/{share_id}", headers=holder.live)
    assert response.status_code == 400
    assert response.json()["code"] == "validation_failed"


async def test_a_wrong_method_names_every_method_of_the_path(client: AsyncClient, holder: Account) -> None:
    response = await client.put(SHARES, headers=holder.live)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
