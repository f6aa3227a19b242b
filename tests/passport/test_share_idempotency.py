"""`POST /v1/passport/shares` with Idempotency-Key over HTTP, including truly concurrent duplicates."""

from __future__ import annotations

import asyncio

import pytest
from httpx import AsyncClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.passport.models import PassportShare
from tests.passport.conftest import Account, give_passport

SHARES = "/v1/passport/shares"


async def shares(sessionmaker: async_sessionmaker[AsyncSession]) -> list[PassportShare]:
    async with sessionmaker() as session:
        return list(await session.scalars(select(PassportShare)))


@pytest.fixture
async def holder(sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account) -> Account:
    await give_passport(sessionmaker, freelancer.user)
    return freelancer


async def test_a_retry_replays_the_same_share_token(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account
) -> None:
    headers = {**holder.live, "Idempotency-Key": "share-1"}
    first = await client.post(SHARES, json={"ttl_days": 10}, headers=headers)
    again = await client.post(
        SHARES, content=b'{ "ttl_days" : 10 }', headers={**headers, "Content-Type": "application/json"}
    )
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "X-RateLimit-Limit" in again.headers
    assert len(await shares(sessionmaker)) == 1
    other = await client.post(SHARES, json={"ttl_days": 10}, headers={**holder.live, "Idempotency-Key": "share-2"})
    assert other.json()["token"] != first.json()["token"]


async def test_the_same_key_with_another_lifetime_is_409(client: AsyncClient, holder: Account) -> None:
    headers = {**holder.live, "Idempotency-Key": "share-1"}
    await client.post(SHARES, json={"ttl_days": 10}, headers=headers)
    response = await client.post(SHARES, json={"ttl_days": 11}, headers=headers)
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_mismatch"


@pytest.mark.parametrize("key", ["", "x" * 256])
async def test_a_bad_key_is_400_and_creates_nothing(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account, key: str
) -> None:
    response = await client.post(SHARES, headers={**holder.live, "Idempotency-Key": key})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "header.Idempotency-Key"
    assert await shares(sessionmaker) == []


async def test_a_failed_request_does_not_keep_the_key(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], freelancer: Account
) -> None:
    headers = {**freelancer.live, "Idempotency-Key": "share-1"}
    assert (await client.post(SHARES, headers=headers)).json()["code"] == "no_passport"
    await give_passport(sessionmaker, freelancer.user)
    response = await client.post(SHARES, headers=headers)
    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response.headers


async def test_concurrent_duplicates_create_one_share(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], holder: Account
) -> None:
    headers = {**holder.live, "Idempotency-Key": "burst"}
    responses = await asyncio.gather(*(client.post(SHARES, json={"ttl_days": 5}, headers=headers) for _ in range(8)))
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {201, 409}, statuses
    created = [r.json() for r in responses if r.status_code == 201]
    assert created, statuses
    assert all(body == created[0] for body in created)
    assert all(r.json()["code"] == "idempotency_in_progress" for r in responses if r.status_code == 409)
    assert len(await shares(sessionmaker)) == 1
