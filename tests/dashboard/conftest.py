"""Dashboard test helpers: a browser-like client (cookies, no redirects followed), forms with their CSRF token,
signed-up users, and the per-environment sections of a page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import pytest
from fastapi import FastAPI
from httpx import ASGITransport, AsyncClient, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import User
from compliance_api.dashboard.web import DashboardState
from compliance_api.kit.environment import Environment
from compliance_api.ratelimit.limiter import MemoryLimiter

PASSWORD = "correct horse battery"
FROZEN_CLOCK_US = 1_800_000_000_000_000
CSRF_FIELD = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')


@dataclass
class RecordingMailer:
    sent: list[dict[str, str]] = field(default_factory=list)

    async def send(self, *, to: str, subject: str, body: str) -> None:
        self.sent.append({"to": to, "subject": subject, "body": body})


def dashboard_state(app: FastAPI) -> DashboardState:
    mounted = next(route for route in app.routes if getattr(route, "name", "") == "dashboard")
    state: DashboardState = mounted.app.state.dashboard  # type: ignore[attr-defined]
    return state


@pytest.fixture
def mailer(app: FastAPI) -> RecordingMailer:
    recording = RecordingMailer()
    dashboard_state(app).mailer = recording
    return recording


def csrf_of(page: Response) -> str:
    found = CSRF_FIELD.search(page.text)
    assert found is not None, "no CSRF field on the page"
    return found.group(1)


async def post_form(
    browser: AsyncClient, path: str, data: Mapping[str, str | list[str]], *, page: str | None = None
) -> Response:
    """GET the page holding the form (or `page`), then POST the form with that page's CSRF token."""
    shown = await browser.get(page or path)
    return await browser.post(path, data={**data, "csrf_token": csrf_of(shown)})


async def sign_up(browser: AsyncClient, email: str, *, password: str = PASSWORD, kind: str = "freelancer") -> Response:
    return await post_form(browser, "/freelancer/sign-up", {"email": email, "password": password, "kind": kind})


async def signed_up_user(browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], email: str) -> User:
    """Sign `email` up as a freelancer through the dashboard; returns the account it made."""
    await sign_up(browser, email)
    async with sessionmaker() as session:
        return await accounts_service.get_by_email_or_raise(session, email=email)


async def sign_in(browser: AsyncClient, email: str, password: str = PASSWORD) -> Response:
    return await post_form(browser, "/freelancer/sign-in", {"email": email, "password": password})


def section(page: str, area: str, environment: Environment) -> str:
    """The part of a dashboard page about one environment: from its `<area>-<environment>` id to the next section."""
    start = page.index(f'id="{area}-{environment.value}"')
    end = page.find(f'<section aria-labelledby="{area}-', start)
    return page[start : end if end > 0 else len(page)]


def new_browser(app: FastAPI, base_url: str = "http://api.test") -> AsyncClient:
    return AsyncClient(transport=ASGITransport(app=app), base_url=base_url)


@pytest.fixture
def fresh_throttles(app: FastAPI) -> None:
    """Throttle buckets of this test only: every test signs in from 127.0.0.1, often with the same addresses, and
    a shared Redis would carry their attempts from test to test and run to run (tests/dashboard/test_throttle.py
    holds the throttle to the Redis limiter). The clock stands still, so no bucket refills while a test runs."""
    dashboard_state(app).limiter = MemoryLimiter(clock=lambda: FROZEN_CLOCK_US)


@pytest.fixture
async def browser(app: FastAPI, fresh_throttles: None) -> AsyncIterator[AsyncClient]:
    async with new_browser(app) as client:
        yield client


@pytest.fixture
async def other_browser(app: FastAPI) -> AsyncIterator[AsyncClient]:
    async with new_browser(app) as client:
        yield client
