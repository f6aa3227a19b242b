"""Security headers on every response (HSTS only over https) and CORS, closed unless origins are configured."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from httpx import ASGITransport, AsyncClient

from compliance_api.config import Settings
from tests.conftest import running_app

ALLOWED = "https://app.example.test"
PREFLIGHT = {
    "Origin": ALLOWED,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization",
}


@asynccontextmanager
async def _client(settings: Settings, base_url: str) -> AsyncIterator[AsyncClient]:
    async with running_app(settings) as application:
        async with AsyncClient(transport=ASGITransport(app=application), base_url=base_url) as http:
            yield http


@pytest.fixture
async def https_client(settings: Settings, engine: object) -> AsyncIterator[AsyncClient]:
    async with _client(settings, "https://api.test") as http:
        yield http


@pytest.fixture
async def cors_client(settings: Settings, engine: object) -> AsyncIterator[AsyncClient]:
    configured = settings.model_copy(update={"cors_allow_origins": (ALLOWED,)})
    async with _client(configured, "http://api.test") as http:
        yield http


@pytest.mark.parametrize("path", ["/livez", "/v1/health", "/nowhere", "/openapi.json", "/docs"])
async def test_every_response_carries_the_security_headers(client: AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-frame-options"] == "DENY"
    assert "strict-transport-security" not in response.headers  # plain http: HSTS would be ignored (RFC 6797)
    assert "server" not in response.headers


async def test_https_requests_get_hsts(https_client: AsyncClient, auth: dict[str, str]) -> None:
    for response in (await https_client.get("/livez"), await https_client.get("/v1/health", headers=auth)):
        assert response.headers["strict-transport-security"] == "max-age=31536000"
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_hsts_can_be_switched_off(settings: Settings, engine: object) -> None:
    async with _client(settings.model_copy(update={"hsts_max_age_seconds": 0}), "https://api.test") as http:
        response = await http.get("/livez")
        assert "strict-transport-security" not in response.headers
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_cors_is_closed_by_default(client: AsyncClient, auth: dict[str, str]) -> None:
    response = await client.get("/v1/health", headers={**auth, "Origin": ALLOWED})
    assert response.status_code == 200
    assert not any(name.startswith("access-control-") for name in response.headers)
    preflight = await client.options("/v1/health", headers=PREFLIGHT)
    assert "access-control-allow-origin" not in preflight.headers


async def test_configured_origin_may_call_and_read_the_rate_limit_headers(
    cors_client: AsyncClient, auth: dict[str, str]
) -> None:
    response = await cors_client.get("/v1/health", headers={**auth, "Origin": ALLOWED})
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ALLOWED
    exposed = {h.strip().lower() for h in response.headers["access-control-expose-headers"].split(",")}
    assert {"x-request-id", "x-ratelimit-remaining", "retry-after", "deprecation", "sunset"} <= exposed
    assert "access-control-allow-credentials" not in response.headers


async def test_preflight_from_a_configured_origin_needs_no_token(cors_client: AsyncClient) -> None:
    preflight = await cors_client.options("/v1/classify/zelfstandigenwet", headers=PREFLIGHT)
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ALLOWED
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    assert preflight.headers["x-content-type-options"] == "nosniff"


async def test_other_origins_are_not_allowed(cors_client: AsyncClient, auth: dict[str, str]) -> None:
    other = "https://evil.example.test"
    response = await cors_client.get("/v1/health", headers={**auth, "Origin": other})
    assert "access-control-allow-origin" not in response.headers
    preflight = await cors_client.options("/v1/health", headers={**PREFLIGHT, "Origin": other})
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers


def test_origins_setting_is_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPLIANCE_CORS_ALLOW_ORIGINS", " https://a.test/ , https://b.test,")
    assert Settings().cors_allow_origins == ("https://a.test", "https://b.test")
    monkeypatch.delenv("COMPLIANCE_CORS_ALLOW_ORIGINS")
    assert Settings().cors_allow_origins == ()


@pytest.mark.parametrize("path", ["/v1/webhook-endpoints/", "/v1/health/", "/livez/", "/freelancer/sign-in/"])
async def test_a_trailing_slash_is_not_found_and_never_redirected(
    client: AsyncClient, auth: dict[str, str], path: str
) -> None:
    response = await client.get(path, headers={**auth, "Host": "evil.example"})
    assert response.status_code == 404
    assert "location" not in response.headers
