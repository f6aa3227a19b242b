"""`/freelancer/logs`: the signed-in user's requests per environment, filtered and paged like `GET /v1/requests`, a
page per request with the problem body of an error; nobody sees another account's requests; no token, query string
or success body on any of its pages."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from tests.dashboard.conftest import signed_up_user
from tests.factories import bearer, create_token
from tests.passport.conftest import make_account
from tests.requestlog.conftest import flush

Maker = async_sessionmaker[AsyncSession]
ENTRY_LINK = re.compile(r'href="(/freelancer/logs/(?:live|test)/[0-9a-f-]{36})"')


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"request_log_flush_seconds": 3600.0})


def _request_ids(page: str) -> list[str]:
    return re.findall(r'data-request-id="([^"]+)"', page)


async def _user_with_tokens(browser: AsyncClient, sessionmaker: Maker, pepper: bytes) -> tuple[str, str]:
    user = await signed_up_user(browser, sessionmaker, "lou@example.com")
    _, live = await create_token(sessionmaker, pepper, user=user, name="payroll")
    _, test = await create_token(sessionmaker, pepper, user=user, name="ci", environment=Environment.test)
    return live, test


async def test_the_log_lists_requests_per_environment_newest_first_with_their_facts(
    app: FastAPI,
    browser: AsyncClient,
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: Maker,
    pepper: bytes,
) -> None:
    live, test = await _user_with_tokens(browser, sessionmaker, pepper)
    await client.get("/v1/rates/sectors", headers={**bearer(live), "X-Request-Id": "first"})
    await client.get("/v1/wtta/lookup", params={"kvk": "12345678"}, headers={**bearer(live), "X-Request-Id": "second"})
    await sandbox_client.get("/v1/rates/sectors", headers={**bearer(test), "X-Request-Id": "in-sandbox"})
    await flush(app)

    page = await browser.get("/freelancer/logs")
    assert page.status_code == 200
    assert _request_ids(page.text) == ["second", "first"]
    assert "payroll" in page.text
    assert f"…{live[-4:]}" in page.text
    assert "/v1/wtta/lookup" in page.text
    assert '<td class="http-4xx">404</td>' in page.text
    sandbox = await browser.get("/freelancer/logs", params={"environment": "test"})
    assert _request_ids(sandbox.text) == ["in-sandbox"]
    for shown in (page.text, sandbox.text):
        assert live not in shown
        assert test not in shown
        assert "kvk=" not in shown
        assert "12345678" not in shown


async def test_filters_narrow_the_list_and_an_error_page_shows_its_problem(
    app: FastAPI, browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    live, _ = await _user_with_tokens(browser, sessionmaker, pepper)
    await client.get("/v1/rates/sectors", headers={**bearer(live), "X-Request-Id": "ok"})
    missing = await client.get(
        "/v1/wtta/lookup", params={"kvk": "12345678"}, headers={**bearer(live), "X-Request-Id": "missing"}
    )
    await flush(app)

    for params, expected in (
        ({"status_class": "4xx"}, ["missing"]),
        ({"status_class": "2xx"}, ["ok"]),
        ({"path": "/v1/rates"}, ["ok"]),
        ({"request_id": "missing"}, ["missing"]),
        ({"status_class": "9xx"}, ["missing", "ok"]),  # not a choice: no filter
    ):
        page = await browser.get("/freelancer/logs", params=params)
        assert _request_ids(page.text) == expected, params

    filtered = await browser.get("/freelancer/logs", params={"request_id": "missing"})
    [entry] = ENTRY_LINK.findall(filtered.text)
    detail = await browser.get(entry)
    assert detail.status_code == 200
    assert missing.json()["code"] in detail.text
    assert "The problem body the API answered" in detail.text
    successful = ENTRY_LINK.findall((await browser.get("/freelancer/logs", params={"request_id": "ok"})).text)
    shown = await browser.get(successful[0])
    assert "its body is never kept" in shown.text


async def test_pages_of_50_and_an_out_of_date_link_starts_again(
    app: FastAPI, browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    live, _ = await _user_with_tokens(browser, sessionmaker, pepper)
    for number in range(55):
        await client.get("/v1/rates/sectors", headers={**bearer(live), "X-Request-Id": f"r{number:02d}"})
    await flush(app)
    first = await browser.get("/freelancer/logs")
    assert _request_ids(first.text) == [f"r{n:02d}" for n in range(54, 4, -1)]
    older = re.search(r'href="(/freelancer/logs\?[^"]+)" rel="next"', first.text)
    assert older is not None
    second = await browser.get(older.group(1).replace("&amp;", "&"))
    assert _request_ids(second.text) == ["r04", "r03", "r02", "r01", "r00"]
    stale = await browser.get("/freelancer/logs", params={"cursor": "not-a-cursor"})
    assert stale.status_code == 400
    assert "out of date" in stale.text


async def test_nobody_sees_another_accounts_requests(
    app: FastAPI, browser: AsyncClient, client: AsyncClient, sessionmaker: Maker, pepper: bytes
) -> None:
    await signed_up_user(browser, sessionmaker, "nosy@example.com")
    other = await make_account(sessionmaker, pepper)
    await client.get("/v1/rates/sectors", headers={**other.live, "X-Request-Id": "theirs"})
    await flush(app)
    assert _request_ids((await browser.get("/freelancer/logs")).text) == []
    assert _request_ids((await browser.get("/freelancer/logs", params={"request_id": "theirs"})).text) == []
    listed = (await client.get("/v1/requests", headers=other.live)).json()["data"]
    [theirs] = [e for e in listed if e["request_id"] == "theirs"]
    for environment in ("live", "test"):
        page = await browser.get(f"/freelancer/logs/{environment}/{theirs['id']}")
        assert page.status_code == 404
    assert (await browser.get("/freelancer/logs/live/not-an-id")).status_code == 404


async def test_the_log_needs_a_signed_in_account(browser: AsyncClient) -> None:
    answer = await browser.get("/freelancer/logs")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/freelancer/sign-in?next=/freelancer/logs"
