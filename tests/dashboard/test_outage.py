"""The dashboard while PostgreSQL is out of reach (the proxy in front of it closed): a 503 HTML page with
`Retry-After`, not a plain-text 500."""

from __future__ import annotations

from httpx import ASGITransport, AsyncClient

from compliance_api.config import Settings
from tests.conftest import ProxiedPostgres, running_app
from tests.dashboard.conftest import sign_in, sign_up


async def test_sign_in_answers_a_503_page_while_the_database_is_unreachable(
    settings: Settings, proxied_postgres: ProxiedPostgres
) -> None:
    proxied = settings.model_copy(update={"database_url": proxied_postgres.url, "redis_url": ""})
    async with running_app(proxied) as application:
        async with AsyncClient(transport=ASGITransport(app=application), base_url="http://api.test") as browser:
            assert (await sign_up(browser, "outage@example.com")).status_code == 303

            proxied_postgres.proxy.close()
            page = await sign_in(browser, "outage@example.com")
            assert page.status_code == 503
            assert page.headers["content-type"].startswith("text/html")
            assert page.headers["retry-after"] == "5"
            assert "Temporarily unavailable" in page.text

            proxied_postgres.proxy.reopen()
            assert (await sign_in(browser, "outage@example.com")).status_code == 303
