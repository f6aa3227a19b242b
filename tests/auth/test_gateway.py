"""Every way to break authentication gets a 401 problem with its code and a bearer challenge, never a 500."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from compliance_api.accounts.models import Plan
from compliance_api.auth import service as auth_service
from compliance_api.auth import tokens
from compliance_api.kit.environment import Environment
from tests.conftest import executed_statements
from tests.factories import bearer, create_token


def assert_401(response_status: int, body: dict[str, object], headers: dict[str, str], code: str) -> None:
    assert response_status == 401
    assert body["code"] == code
    assert body["status"] == 401
    assert headers["content-type"] == "application/problem+json"
    assert headers["www-authenticate"].startswith('Bearer realm="compliance-api"')
    assert headers["x-request-id"] == body["request_id"]
    assert "x-ratelimit-remaining" not in headers


MALFORMED_HEADERS: list[tuple[str, list[tuple[bytes, bytes]], str]] = [
    ("no header", [], "missing_token"),
    ("empty", [(b"authorization", b"")], "missing_token"),
    ("blank", [(b"authorization", b"   ")], "missing_token"),
    ("no scheme", [(b"authorization", b"sk_live_" + b"a" * 38)], "malformed_token"),
    ("wrong scheme", [(b"authorization", b"Basic dXNlcjpwYXNz")], "malformed_token"),
    ("scheme only", [(b"authorization", b"Bearer")], "malformed_token"),
    ("scheme and space", [(b"authorization", b"Bearer ")], "malformed_token"),
    ("10 kB", [(b"authorization", b"Bearer " + b"a" * 10_240)], "malformed_token"),
    ("non-ASCII", [(b"authorization", "Bearer sk_live_é".encode())], "malformed_token"),
    ("latin-1 bytes", [(b"authorization", b"Bearer \xff\xfe")], "malformed_token"),
    ("two tokens", [(b"authorization", b"Bearer abc def")], "malformed_token"),
    ("two headers", [(b"authorization", b"Bearer a"), (b"authorization", b"Bearer b")], "malformed_token"),
    ("garbage token", [(b"authorization", b"Bearer not-a-token")], "malformed_token"),
    ("control characters", [(b"authorization", b"Bearer \x01\x02")], "malformed_token"),
]


@pytest.mark.parametrize(("name", "headers", "code"), MALFORMED_HEADERS, ids=[m[0] for m in MALFORMED_HEADERS])
async def test_malformed_authorization_headers_get_401(
    client: AsyncClient, name: str, headers: list[tuple[bytes, bytes]], code: str
) -> None:
    response = await client.get("/v1/health", headers=headers)
    assert_401(response.status_code, response.json(), dict(response.headers), code)


async def test_lowercase_bearer_scheme_is_accepted(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    response = await client.get("/v1/health", headers={"Authorization": f"bearer {token}"})
    assert response.status_code == 200


async def test_mistyped_token_is_refused_without_a_database_query(
    client: AsyncClient, engine: AsyncEngine, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    mistyped = token[:20] + ("A" if token[20] != "A" else "B") + token[21:]
    with executed_statements(engine) as statements:
        response = await client.get("/v1/health", headers=bearer(mistyped))
    assert_401(response.status_code, response.json(), dict(response.headers), "malformed_token")
    assert statements == []


@pytest.mark.parametrize(
    ("mangle", "says"),
    [
        (lambda token: token[:-1], "46 characters long; this one has 45"),
        (lambda token: token + token, "this one has 92"),
        (lambda token: "sk_prod_" + token[8:], "starts with `sk_live_`"),
        (lambda token: token[:30] + "-" + token[31:], "only letters and digits"),
        (lambda token: token[:20] + ("A" if token[20] != "A" else "B") + token[21:], "checksum does not match"),
    ],
    ids=["one short", "pasted twice", "wrong prefix", "punctuation", "mistyped"],
)
async def test_a_malformed_token_is_refused_saying_what_is_wrong(
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    mangle: Callable[[str], str],
    says: str,
) -> None:
    _, token = await create_token(sessionmaker, pepper)
    response = await client.get("/v1/health", headers=bearer(mangle(token)))
    assert_401(response.status_code, response.json(), dict(response.headers), "malformed_token")
    assert says in response.json()["detail"]
    assert says in response.headers["www-authenticate"]


async def test_unknown_well_formed_token_is_invalid(client: AsyncClient) -> None:
    response = await client.get("/v1/health", headers=bearer(tokens.generate(Environment.live)))
    assert_401(response.status_code, response.json(), dict(response.headers), "invalid_token")


async def test_revoked_token_is_refused(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    row, token = await create_token(sessionmaker, pepper)
    async with sessionmaker.begin() as session:
        await auth_service.revoke(session, token_id=row.id)
    response = await client.get("/v1/health", headers=bearer(token))
    assert_401(response.status_code, response.json(), dict(response.headers), "revoked_token")


@pytest.mark.parametrize(
    ("token_environment", "host"),
    [(Environment.test, "api.test"), (Environment.live, "sandbox.localhost")],
    ids=["sk_test on production host", "sk_live on sandbox host"],
)
async def test_token_on_the_other_environments_host_is_wrong_environment(
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    token_environment: Environment,
    host: str,
) -> None:
    _, token = await create_token(sessionmaker, pepper, environment=token_environment)
    response = await client.get("/v1/health", headers={**bearer(token), "Host": host})
    assert_401(response.status_code, response.json(), dict(response.headers), "wrong_environment")
    where = {Environment.live: "production", Environment.test: "the sandbox"}[token_environment]
    assert response.json()["detail"] == f"A {token[:8]} token works only in {where}: send it to {where}'s base URL."


async def test_each_token_works_on_its_own_host(
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    _, live = await create_token(sessionmaker, pepper, environment=Environment.live)
    _, test = await create_token(sessionmaker, pepper, environment=Environment.test)
    assert (await client.get("/v1/health", headers=bearer(live))).status_code == 200
    assert (await sandbox_client.get("/v1/health", headers=bearer(test))).status_code == 200


async def test_a_token_of_another_deployment_is_invalid(
    client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """A real token hashed with another pepper (another deployment's secret) is unknown here."""
    _, token = await create_token(sessionmaker, b"another-deployment-secret-0123456789")
    response = await client.get("/v1/health", headers=bearer(token))
    assert_401(response.status_code, response.json(), dict(response.headers), "invalid_token")


async def test_paths_outside_v1_need_no_token(client: AsyncClient) -> None:
    for path in ("/livez", "/readyz", "/openapi.json", "/openapi/2026-07-09.json", "/docs", "/metrics"):
        assert (await client.get(path)).status_code == 200, path


@pytest.mark.parametrize("path", ["/v1/health", "/v1/unknown", "/api/v1/passport", "/v1"])
async def test_every_v1_path_needs_a_token(client: AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 401


async def test_concurrent_requests_with_an_uncached_token_share_one_lookup(
    client: AsyncClient, engine: AsyncEngine, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    _, token = await create_token(sessionmaker, pepper, plan=Plan.pro)
    with executed_statements(engine, "FROM api_token") as lookups:
        responses = await asyncio.gather(*(client.get("/v1/health", headers=bearer(token)) for _ in range(50)))
    assert [r.status_code for r in responses] == [200] * 50
    assert len(lookups) == 1
