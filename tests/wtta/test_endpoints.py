from __future__ import annotations

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.kit.environment import Environment
from tests.conftest import commits
from tests.factories import bearer, create_token
from tests.wtta.registers import import_lines, row

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
async def live_token(sessionmaker: Maker, pepper: bytes) -> str:
    return (await create_token(sessionmaker, pepper))[1]


@pytest.fixture
async def sandbox_token(sessionmaker: Maker, pepper: bytes) -> str:
    return (await create_token(sessionmaker, pepper, environment=Environment.test))[1]


@commits
async def test_lookup_returns_the_spec_fields(client: AsyncClient, sessionmaker: Maker, live_token: str) -> None:
    await import_lines(sessionmaker, [row("12345678")], source="NAU register", source_url="https://nau.example/r.csv")
    response = await client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers=bearer(live_token))
    assert response.status_code == 200
    body = response.json()
    assert body["last_verified_at"].endswith("Z") or "+00:00" in body["last_verified_at"]
    del body["last_verified_at"]
    assert body == {
        "livemode": True,
        "kvk_number": "12345678",
        "legal_name": "Acme B.V.",
        "admission_status": "admitted",
        "admission_number": "NAU-1",
        "admitted_at": "2027-01-01T00:00:00Z",
        "expires_at": None,
        "source": "NAU register",
        "source_url": "https://nau.example/r.csv",
        "missing_from_source_at": None,
    }


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"kvk": ""},
        {"kvk": "1234567"},
        {"kvk": "123456789"},
        {"kvk": "1234567x"},
        {"kvk": "12345678\n"},
        {"kvk": "１２３４５６７８"},
    ],
)
async def test_kvk_must_be_exactly_8_digits(client: AsyncClient, live_token: str, params: dict[str, str]) -> None:
    response = await client.get("/v1/wtta/lookup", params=params, headers=bearer(live_token))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_failed"
    assert response.json()["errors"][0]["field"] == "query.kvk"


async def test_not_in_cache_says_when_the_cache_was_refreshed(
    client: AsyncClient, sessionmaker: Maker, live_token: str
) -> None:
    response = await client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers=bearer(live_token))
    assert response.status_code == 404
    assert response.json()["code"] == "not_in_cache"
    assert "not yet imported" in response.json()["detail"]
    assert "1 January 2027" in response.json()["detail"]
    await import_lines(sessionmaker, [row("87654321")])
    response = await client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers=bearer(live_token))
    detail = response.json()["detail"]
    assert "production cache" in detail
    assert "last refreshed 20" in detail
    assert "1 January 2027" in detail


@commits
async def test_sandbox_and_production_see_only_their_own_cache(
    client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, live_token: str, sandbox_token: str
) -> None:
    await import_lines(sessionmaker, [row("11111111", "revoked")], environment=Environment.test)
    await import_lines(sessionmaker, [row("22222222")], environment=Environment.live)
    for http, token, visible, hidden in (
        (client, live_token, "22222222", "11111111"),
        (sandbox_client, sandbox_token, "11111111", "22222222"),
    ):
        assert (await http.get("/v1/wtta/lookup", params={"kvk": visible}, headers=bearer(token))).status_code == 200
        hidden_response = await http.get("/v1/wtta/lookup", params={"kvk": hidden}, headers=bearer(token))
        assert hidden_response.json()["code"] == "not_in_cache"
        assert (await http.get(f"/v1/wtta/{hidden}/history", headers=bearer(token))).status_code == 404


@commits
async def test_missing_from_source_is_shown(client: AsyncClient, sessionmaker: Maker, live_token: str) -> None:
    await import_lines(sessionmaker, [row("12345678"), row("87654321")])
    await import_lines(sessionmaker, [row("87654321")], full=True)
    body = (await client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers=bearer(live_token))).json()
    assert body["admission_status"] == "admitted"
    assert body["missing_from_source_at"] is not None


@commits  # two imports: on PostgreSQL the first one's staging table goes only at a real commit
async def test_history_lists_changes_oldest_first(client: AsyncClient, sessionmaker: Maker, live_token: str) -> None:
    await import_lines(sessionmaker, [row("12345678", "applied")], source="one")
    await import_lines(sessionmaker, [row("12345678", "admitted")], source="two")
    await import_lines(sessionmaker, [row("12345678", "admitted")], source="three")
    response = await client.get("/v1/wtta/12345678/history", headers=bearer(live_token))
    assert response.status_code == 200
    body = response.json()
    assert body["kvk_number"] == "12345678"
    assert [(c["from_status"], c["to_status"], c["source"]) for c in body["changes"]] == [
        (None, "applied", "one"),
        ("applied", "admitted", "two"),
    ]


@pytest.mark.parametrize("kvk", ["1234567", "abcdefgh", "123456789"])
async def test_history_validates_the_number(client: AsyncClient, live_token: str, kvk: str) -> None:
    response = await client.get(f"/v1/wtta/{kvk}/history", headers=bearer(live_token))
    assert response.status_code == 400


async def test_history_of_an_unknown_number_is_not_in_cache(client: AsyncClient, live_token: str) -> None:
    response = await client.get("/v1/wtta/12345678/history", headers=bearer(live_token))
    assert (response.status_code, response.json()["code"]) == (404, "not_in_cache")


async def test_lookup_needs_a_token(client: AsyncClient) -> None:
    assert (await client.get("/v1/wtta/lookup", params={"kvk": "12345678"})).status_code == 401
