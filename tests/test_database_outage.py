"""A database outage answers 503 `service_unavailable` with `Retry-After`, not 500: PostgreSQL is taken out of reach
by closing the proxy in front of it, then brought back."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator

import pytest
from httpx import ASGITransport, AsyncClient
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from compliance_api.config import Settings
from compliance_api.kit.outage import is_database_unreachable
from tests.conftest import ProxiedPostgres, running_app
from tests.factories import bearer, create_token

ZW = "/v1/classify/zelfstandigenwet"


@pytest.fixture
async def proxied_client(settings: Settings, proxied_postgres: ProxiedPostgres) -> AsyncIterator[AsyncClient]:
    """The application on the proxied database (and in-process rate limits: Redis is not under test here)."""
    proxied = settings.model_copy(update={"database_url": proxied_postgres.url, "redis_url": ""})
    async with running_app(proxied) as application:
        async with AsyncClient(transport=ASGITransport(app=application), base_url="http://api.test") as http:
            yield http


async def test_requests_answer_503_with_retry_after_while_the_database_is_unreachable(
    proxied_client: AsyncClient, proxied_postgres: ProxiedPostgres, pepper: bytes
) -> None:
    _, token = await create_token(proxied_postgres.sessionmaker, pepper)
    auth = bearer(token)
    assert (await proxied_client.post(ZW, json={"engagement": {}}, headers=auth)).status_code == 200

    proxied_postgres.proxy.close()  # the token stays in the gateway's cache: the endpoints meet the outage
    classify = await proxied_client.post(ZW, json={"engagement": {}}, headers=auth)
    lookup = await proxied_client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers=auth)
    for response in (classify, lookup):
        assert response.status_code == 503
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["retry-after"] == "5"
        assert response.json()["code"] == "service_unavailable"

    proxied_postgres.proxy.reopen()
    assert (await proxied_client.post(ZW, json={"engagement": {}}, headers=auth)).status_code == 200


@pytest.mark.parametrize(
    ("error", "unreachable"),
    [
        (OperationalError("SELECT 1", None, ConnectionRefusedError()), True),
        (PoolTimeout("QueuePool limit reached"), True),
        (ConnectionRefusedError(), True),
        (OperationalError("SELECT 1", None, sqlite3.OperationalError("unable to open database file")), True),
        (OperationalError("SELECT 1", None, sqlite3.OperationalError("database is locked")), True),
        (OperationalError("SELECT x", None, sqlite3.OperationalError("no such table: x")), False),
        (IntegrityError("INSERT", None, ValueError("duplicate key")), False),
        (ProgrammingError("SELEC 1", None, ValueError("syntax error")), False),
        (ValueError("a bug"), False),
    ],
)
def test_connection_failures_are_told_from_other_errors(error: Exception, unreachable: bool) -> None:
    assert is_database_unreachable(error) is unreachable
