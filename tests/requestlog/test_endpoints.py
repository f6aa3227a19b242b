"""`GET /v1/requests`: the calling account's requests in the token's environment, newest first, filtered, paged;
what the middleware hands to the log (status, latency, token, rate limit, problem bodies of errors only)."""

from __future__ import annotations

import orjson
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.auth.tokens import TOKEN_LENGTH
from compliance_api.config import Settings
from tests.conftest import commits, running_app
from tests.factories import bearer, create_token, create_user
from tests.passport.conftest import make_account
from tests.requestlog.conftest import flush, request_log, stored_rows, until_rate_limited

Maker = async_sessionmaker[AsyncSession]
LOOKUP = "/v1/wtta/lookup"


async def test_a_request_is_listed_with_what_was_asked_and_answered(
    app: FastAPI, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    user = await create_user(sessionmaker)
    row, token = await create_token(sessionmaker, pepper, user=user, name="payroll")
    missing = await client.get(LOOKUP, params={"kvk": "12345678"}, headers={**bearer(token), "X-Request-Id": "run-42"})
    assert missing.status_code == 404
    assert await flush(app) == 1

    listed = (await client.get("/v1/requests", headers=bearer(token))).json()
    assert (listed["has_more"], listed["next_cursor"]) == (False, None)
    [entry] = listed["data"]
    assert entry["request_id"] == "run-42"
    assert (entry["method"], entry["path"], entry["status"], entry["environment"]) == ("GET", LOOKUP, 404, "live")
    assert entry["token"] == {"id": str(row.id), "name": "payroll", "last4": token[-4:]}
    assert entry["rate_limit_remaining"] == int(missing.headers["X-RateLimit-Remaining"])
    assert entry["latency_ms"] > 0
    assert entry["problem"] == missing.json()


async def test_a_successful_answer_keeps_no_body_and_health_checks_are_not_logged(
    app: FastAPI, client: AsyncClient, auth: dict[str, str]
) -> None:
    assert (await client.get("/v1/health", headers=auth)).status_code == 200
    assert (await client.get("/v1/rates/sectors", headers=auth)).status_code == 200
    assert await flush(app) == 1
    [entry] = (await client.get("/v1/requests", headers=auth)).json()["data"]
    assert (entry["path"], entry["status"], entry["problem"]) == ("/v1/rates/sectors", 200, None)


async def test_unauthenticated_requests_are_not_logged(app: FastAPI, client: AsyncClient) -> None:
    assert (await client.get("/v1/rates/sectors")).status_code == 401
    assert (await client.get("/v1/rates/sectors", headers=bearer("sk_live_" + "0" * 38))).status_code == 401
    assert len(request_log(app)) == 0


async def test_a_429_row_says_nothing_remained(
    app: FastAPI, client: AsyncClient, auth: dict[str, str], sessionmaker: Maker
) -> None:
    answers = await until_rate_limited(client, auth)
    await flush(app)
    limited = [row for row in await stored_rows(sessionmaker) if row["status"] == 429]
    assert len(limited) == sum(1 for a in answers if a.status_code == 429) > 0
    assert {row["rate_limit_remaining"] for row in limited} == {0}
    assert all(orjson.loads(row["problem"])["code"] == "rate_limited" for row in limited)


async def test_filters_by_status_class_path_and_request_id(
    app: FastAPI, client: AsyncClient, auth: dict[str, str]
) -> None:
    await client.get("/v1/rates/sectors", headers={**auth, "X-Request-Id": "ok-1"})
    await client.get(LOOKUP, params={"kvk": "12345678"}, headers={**auth, "X-Request-Id": "missing-1"})
    await client.get(LOOKUP, params={"kvk": "1"}, headers={**auth, "X-Request-Id": "invalid-1"})
    await flush(app)

    async def ids(**params: str) -> list[str]:
        answer = await client.get("/v1/requests", params=params, headers=auth)
        assert answer.status_code == 200, answer.text
        return [entry["request_id"] for entry in answer.json()["data"]]

    assert await ids() == ["invalid-1", "missing-1", "ok-1"]
    assert await ids(status_class="4xx") == ["invalid-1", "missing-1"]
    assert await ids(status_class="2xx") == ["ok-1"]
    assert await ids(status_class="5xx") == []
    assert await ids(path="/v1/wtta") == ["invalid-1", "missing-1"]
    assert await ids(path="/v1/wtta%") == []  # a prefix, not a pattern
    assert await ids(request_id="missing-1") == ["missing-1"]
    assert await ids(request_id="missing") == []
    refused = await client.get("/v1/requests", params={"status_class": "6xx"}, headers=auth)
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["query.status_class"]


async def test_pages_newest_first_and_a_cursor_keeps_its_filters(
    app: FastAPI, client: AsyncClient, auth: dict[str, str]
) -> None:
    for number in range(5):
        await client.get("/v1/rates/sectors", headers={**auth, "X-Request-Id": f"r{number}"})
    await flush(app)
    first = (await client.get("/v1/requests", params={"limit": 2, "path": "/v1/rates"}, headers=auth)).json()
    assert [e["request_id"] for e in first["data"]] == ["r4", "r3"]
    params = {"limit": 2, "path": "/v1/rates", "cursor": first["next_cursor"]}
    second = (await client.get("/v1/requests", params=params, headers=auth)).json()
    assert [e["request_id"] for e in second["data"]] == ["r2", "r1"]
    other_filter = await client.get(
        "/v1/requests", params={"cursor": first["next_cursor"], "status_class": "2xx"}, headers=auth
    )
    assert other_filter.status_code == 400
    assert [e["field"] for e in other_filter.json()["errors"]] == ["query.path", "query.status_class"]


async def test_a_sandbox_token_sees_only_sandbox_requests_and_another_account_nothing(
    app: FastAPI, client: AsyncClient, sandbox_client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    owner = await make_account(sessionmaker, pepper)
    stranger = await make_account(sessionmaker, pepper)
    await client.get("/v1/rates/sectors", headers={**owner.live, "X-Request-Id": "live-1"})
    await sandbox_client.get("/v1/rates/sectors", headers={**owner.test, "X-Request-Id": "test-1"})
    await flush(app)

    live = (await client.get("/v1/requests", headers=owner.live)).json()["data"]
    test = (await sandbox_client.get("/v1/requests", headers=owner.test)).json()["data"]
    assert [(e["request_id"], e["environment"]) for e in live] == [("live-1", "live")]
    assert [(e["request_id"], e["environment"]) for e in test] == [("test-1", "test")]
    for headers, http in ((stranger.live, client), (stranger.test, sandbox_client)):
        for request_id in ("live-1", "test-1"):
            found = await http.get("/v1/requests", params={"request_id": request_id}, headers=headers)
            assert found.json()["data"] == []
    await flush(app)  # the owner's list requests above are now in the log too
    owners_cursor = (await client.get("/v1/requests", params={"limit": 1}, headers=owner.live)).json()["next_cursor"]
    assert owners_cursor is not None
    stolen = await client.get("/v1/requests", params={"cursor": owners_cursor}, headers=stranger.live)
    assert stolen.status_code == 400


async def test_a_token_is_never_listed_whole(app: FastAPI, client: AsyncClient, auth: dict[str, str]) -> None:
    await client.get("/v1/rates/sectors", headers=auth)
    await flush(app)
    answer = await client.get("/v1/requests", headers=auth)
    token = auth["Authorization"].removeprefix("Bearer ")
    assert len(token) == TOKEN_LENGTH
    assert token not in answer.text


async def test_the_contract_example_has_the_shape_of_an_answer(
    app: FastAPI, client: AsyncClient, auth: dict[str, str]
) -> None:
    await client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers=auth)
    await flush(app)
    answered = (await client.get("/v1/requests", headers=auth)).json()
    operation = (await client.get("/openapi.json")).json()["paths"]["/v1/requests"]["get"]
    example = operation["responses"]["200"]["content"]["application/json"]["example"]
    assert example.keys() == answered.keys()
    assert example["data"][0].keys() == answered["data"][0].keys()
    assert example["data"][0]["token"].keys() == answered["data"][0]["token"].keys()
    assert example["data"][0]["problem"].keys() == answered["data"][0]["problem"].keys()


@commits
async def test_shutdown_writes_the_buffered_requests(settings: Settings, sessionmaker: Maker, pepper: bytes) -> None:
    _, token = await create_token(sessionmaker, pepper)
    async with running_app(settings) as application:
        async with AsyncClient(transport=ASGITransport(app=application), base_url="http://api.test") as http:
            assert (await http.get("/v1/rates/sectors", headers=bearer(token))).status_code == 200
        assert len(request_log(application)) == 1
    assert [row["path"] for row in await stored_rows(sessionmaker)] == ["/v1/rates/sectors"]
