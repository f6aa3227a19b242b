"""Rotating `COMPLIANCE_SECRET_KEY`: tokens hashed with the retired secret keep working while it is set as
`COMPLIANCE_SECRET_KEY_PREVIOUS`, and are re-hashed to the new secret on first use."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.auth.models import ApiToken
from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from tests.auth.rotation import NEW_SECRET, SECRET, serving
from tests.conftest import commits, executed_statements
from tests.factories import bearer, create_token

pytestmark = commits  # each test starts an app or server of its own on the test database

HEALTH = "/v1/health"


async def stored_hash(sessionmaker: async_sessionmaker[AsyncSession], token_id: uuid.UUID) -> str:
    async with sessionmaker() as session:
        value = await session.scalar(select(ApiToken.token_hash).where(ApiToken.id == token_id))
    assert value is not None
    return value


async def test_old_token_works_during_rotation_and_is_rehashed_to_the_new_secret(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, token = await create_token(sessionmaker, pepper)
    assert await stored_hash(sessionmaker, row.id) == tokens.hash_token(token, SECRET.encode())
    async with serving(settings, current=NEW_SECRET, previous=SECRET) as client:
        assert (await client.get(HEALTH, headers=bearer(token))).status_code == 200
    assert await stored_hash(sessionmaker, row.id) == tokens.hash_token(token, NEW_SECRET.encode())
    async with serving(settings, current=NEW_SECRET) as client:
        assert (await client.get(HEALTH, headers=bearer(token))).status_code == 200


async def test_token_unused_during_the_grace_period_fails_once_the_previous_secret_is_gone(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, unused = await create_token(sessionmaker, pepper)
    _, used = await create_token(sessionmaker, pepper)
    async with serving(settings, current=NEW_SECRET, previous=SECRET) as client:
        assert (await client.get(HEALTH, headers=bearer(used))).status_code == 200
    assert await stored_hash(sessionmaker, row.id) == tokens.hash_token(unused, SECRET.encode())
    async with serving(settings, current=NEW_SECRET) as client:
        response = await client.get(HEALTH, headers=bearer(unused))
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


async def test_unknown_token_during_rotation_is_401_with_one_cached_lookup(
    settings: Settings, engine: AsyncEngine
) -> None:
    unknown = bearer(tokens.generate(Environment.live))
    async with serving(settings, current=NEW_SECRET, previous=SECRET) as client:
        with executed_statements(engine, "api_token") as statements:
            responses = [await client.get(HEALTH, headers=unknown) for _ in range(3)]
    assert [(r.status_code, r.json()["code"]) for r in responses] == [(401, "invalid_token")] * 3
    assert len(statements) == 1  # both hashes in one query, and the miss is cached like any other


async def test_without_a_previous_secret_the_lookup_is_the_plain_equality(
    settings: Settings, engine: AsyncEngine, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    _, token = await create_token(sessionmaker, NEW_SECRET.encode())
    async with serving(settings, current=NEW_SECRET) as rotated:
        with executed_statements(engine, "api_token") as statements:
            assert (await rotated.get(HEALTH, headers=bearer(token))).status_code == 200
    lookups = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(lookups) == 1
    assert " IN " not in lookups[0].upper()


async def test_revoked_old_token_stays_revoked_during_rotation(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, token = await create_token(sessionmaker, pepper)
    async with sessionmaker.begin() as session:
        await auth_service.revoke(session, token_id=row.id)
    async with serving(settings, current=NEW_SECRET, previous=SECRET) as client:
        response = await client.get(HEALTH, headers=bearer(token))
    assert (response.status_code, response.json()["code"]) == (401, "revoked_token")


@pytest.mark.parametrize(
    ("environment", "host", "expected"),
    [
        (Environment.test, "api.test", "wrong_environment"),
        (Environment.live, "sandbox.localhost", "wrong_environment"),
        (Environment.test, "sandbox.localhost", None),
        (Environment.live, "api.test", None),
    ],
)
async def test_rotation_keeps_production_and_sandbox_apart(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    environment: Environment,
    host: str,
    expected: str | None,
) -> None:
    _, token = await create_token(sessionmaker, pepper, environment=environment)
    async with serving(settings, current=NEW_SECRET, previous=SECRET, host=host) as client:
        response = await client.get(HEALTH, headers=bearer(token))
    if expected is None:
        assert response.status_code == 200
    else:
        assert (response.status_code, response.json()["code"]) == (401, expected)
