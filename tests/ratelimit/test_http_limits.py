"""The rate-limit contract as integrators see it, on the in-memory and the Redis backend."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator

import pytest
from httpx import ASGITransport, AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan
from compliance_api.app import create_app
from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import TIERS
from tests.conftest import commits
from tests.factories import bearer, create_token, create_user


@pytest.fixture(params=["memory", "redis"])
async def limited_client(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[AsyncClient]:
    redis_url = request.getfixturevalue("redis_url") if request.param == "redis" else ""
    application = create_app(settings.model_copy(update={"redis_url": redis_url}))
    async with application.router.lifespan_context(application):
        async with AsyncClient(transport=ASGITransport(app=application), base_url="http://api.test") as http:
            yield http


@commits
async def test_remaining_requests_succeed_and_the_next_is_429(
    limited_client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper, plan=Plan.free)
    started = time.monotonic()
    first = await limited_client.get("/v1/health", headers=bearer(token))
    assert first.status_code == 200
    limit, remaining = int(first.headers["x-ratelimit-limit"]), int(first.headers["x-ratelimit-remaining"])
    assert (limit, remaining) == (120, 119)
    assert first.headers["ratelimit-policy"] == '"free";q=60;w=60;burst=120'
    for _ in range(remaining):
        response = await limited_client.get("/v1/health", headers=bearer(token))
        assert response.status_code == 200
        assert 0 <= int(response.headers["x-ratelimit-remaining"]) <= limit
    # Whatever refilled meanwhile (one request per second on this tier) may still pass; then 429.
    refill = math.ceil(time.monotonic() - started) + 1
    extra = 0
    while (response := await limited_client.get("/v1/health", headers=bearer(token))).status_code == 200:
        extra += 1
        assert extra <= refill
    assert response.status_code == 429
    body = response.json()
    assert body["code"] == "rate_limited"
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["x-ratelimit-remaining"] == "0"
    assert response.headers["retry-after"] == "1"
    assert int(response.headers["x-ratelimit-reset"]) >= 119


@pytest.mark.parametrize(
    ("plan", "environment", "tier"),
    [
        (Plan.free, Environment.live, "free"),
        (Plan.pro, Environment.live, "pro"),
        (Plan.team, Environment.live, "pro"),
        (Plan.partner, Environment.live, "partner"),
        (Plan.partner, Environment.test, "sandbox"),
        (Plan.pro, Environment.test, "sandbox"),
    ],
)
async def test_tier_follows_plan_in_production_and_is_sandbox_for_test_tokens(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    plan: Plan,
    environment: Environment,
    tier: str,
) -> None:
    _, token = await create_token(sessionmaker, pepper, plan=plan, environment=environment)
    http = client if environment is Environment.live else sandbox_client
    response = await http.get("/v1/health", headers=bearer(token))
    assert response.headers["x-ratelimit-limit"] == str(TIERS[tier].burst)
    assert response.headers["ratelimit-policy"].startswith(f'"{tier}";q={TIERS[tier].per_minute};')


async def test_tokens_of_one_user_share_a_bucket_per_environment(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    user = await create_user(sessionmaker)
    _, first = await create_token(sessionmaker, pepper, user=user)
    _, second = await create_token(sessionmaker, pepper, user=user)
    _, sandbox = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    await client.get("/v1/health", headers=bearer(first))
    shared = await client.get("/v1/health", headers=bearer(second))
    assert int(shared.headers["x-ratelimit-remaining"]) in (118, 119)  # 119 only if a refill landed between
    separate = await sandbox_client.get("/v1/health", headers=bearer(sandbox))
    assert separate.headers["x-ratelimit-remaining"] == "119"


async def test_errors_after_authentication_carry_rate_limit_headers(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    response = await client.get("/v1/no-such-route", headers=bearer(token))
    assert response.status_code == 404
    assert response.headers["x-ratelimit-limit"] == "120"
