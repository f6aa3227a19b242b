"""`/freelancer/usage`: requests per day per environment and per token, the share answered 429, as inline SVG with
a title, a description and a data table, beside the plan's limits; nothing loaded from elsewhere."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.config import Settings
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.tiers import FREE, SANDBOX
from tests.dashboard.conftest import section, signed_up_user
from tests.factories import bearer, create_token
from tests.requestlog.conftest import flush, until_rate_limited

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"request_log_flush_seconds": 3600.0})


async def test_the_usage_page_draws_each_environment_and_token_beside_the_limits(
    app: FastAPI,
    browser: AsyncClient,
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: Maker,
    pepper: bytes,
) -> None:
    user = await signed_up_user(browser, sessionmaker, "uma@example.com")
    _, live = await create_token(sessionmaker, pepper, user=user, name="payroll")
    _, test = await create_token(sessionmaker, pepper, user=user, name="ci", environment=Environment.test)
    answers = [answer.status_code for answer in await until_rate_limited(client, bearer(live))]
    await sandbox_client.get("/v1/rates/sectors", headers=bearer(test))
    await flush(app)
    limited = answers.count(429)
    assert limited > 0

    page = await browser.get("/freelancer/usage")
    assert page.status_code == 200
    production = section(page.text, "usage", Environment.live)
    sandbox = section(page.text, "usage", Environment.test)
    assert f'<dd data-field="total">{len(answers)}</dd>' in production
    share = f"{100 * limited / len(answers):.1f}%"
    assert f'<dd data-field="rate-limited">{limited} ({share})</dd>' in production
    assert f"{FREE.per_minute} requests a minute" in production
    assert f"{FREE.burst} requests" in production
    assert f"{SANDBOX.per_minute} requests a minute" in sandbox
    assert '<dd data-field="total">1</dd>' in sandbox
    assert "payroll" in production
    assert "ci" in sandbox
    # one chart for the environment and one per token, each labelled, described and with its data table
    assert production.count("<svg ") == 2
    assert production.count('role="img"') == 2
    assert len(re.findall(r"<title id=\"usage-live[^\"]*-title\">", production)) == 2
    assert len(re.findall(r"<desc id=\"usage-live[^\"]*-desc\">", production)) == 2
    assert production.count("data table</summary>") == 2
    assert f"{len(answers)} requests in the last 30 days, {limited} of them answered 429" in production
    assert "<script" not in page.text
    assert "style=" not in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'; script-src 'self'")
    assert live not in page.text
    assert test not in page.text


async def test_without_requests_the_page_says_so(browser: AsyncClient, sessionmaker: Maker) -> None:
    await signed_up_user(browser, sessionmaker, "new@example.com")
    page = await browser.get("/freelancer/usage")
    assert page.status_code == 200
    assert "No production requests in the last 30 days." in page.text
    assert "no requests in the last 30 days" in page.text
