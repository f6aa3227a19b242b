"""`/freelancer/webhooks`: endpoints per environment, the secret shown once, test events, the delivery log, retries."""

from __future__ import annotations

import html
import ipaddress
import re

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts import service as accounts_service
from compliance_api.kit.environment import Environment
from compliance_api.webhooks import service as webhooks_service
from compliance_api.webhooks import ssrf
from tests.dashboard.conftest import csrf_of, post_form, section, sign_up
from tests.webhooks.addresses import SAMPLE, url_of

SECRET_IN_PAGE = re.compile(r'value="(whsec_[^"]+)"')
ENDPOINT_LINK = re.compile(r'href="(/freelancer/webhooks/(live|test)/[0-9a-f-]{36})"')


async def _add(browser: AsyncClient, environment: Environment, url: str, *events: str) -> str:
    """Add an endpoint; returns the page shown after it."""
    created = await post_form(
        browser,
        f"/freelancer/webhooks/{environment.value}/endpoints",
        {"url": url, "events": list(events), "description": "payroll"},
        page="/freelancer/webhooks",
    )
    assert created.status_code == 200, created.text
    return created.text


async def _endpoint_path(browser: AsyncClient) -> str:
    found = ENDPOINT_LINK.search((await browser.get("/freelancer/webhooks")).text)
    assert found is not None
    return found.group(1)


async def test_the_secret_is_shown_once_and_the_endpoint_is_listed_with_its_events(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_up(browser, "fay@example.com")
    created = await _add(browser, Environment.live, "https://hooks.example.com/in", "passport.updated")
    secret = SECRET_IN_PAGE.search(created)
    assert secret is not None
    assert "shown only this once" in created
    page = (await browser.get("/freelancer/webhooks")).text
    assert secret.group(1) not in page
    live = section(page, "webhooks", Environment.live)
    assert "https://hooks.example.com/in" in live
    assert "passport.updated" in live
    assert "No sandbox endpoints yet" in section(page, "webhooks", Environment.test)
    async with sessionmaker() as session:
        user = await accounts_service.get_by_email_or_raise(session, email="fay@example.com")
        rows = await webhooks_service.list_endpoints(session, webhooks_service.EndpointOwner(user.id, Environment.live))
    assert [r.url for r in rows] == ["https://hooks.example.com/in"]


async def test_a_test_event_appears_in_the_delivery_log_and_can_be_retried(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_up(browser, "fay@example.com")
    await _add(browser, Environment.test, "https://hooks.example.com/sandbox", "*")
    path = await _endpoint_path(browser)
    assert "No deliveries yet" in (await browser.get(path)).text
    sent = await post_form(browser, f"{path}/test", {}, page=path)
    assert sent.status_code == 303
    log = await browser.get(sent.headers["location"])
    assert "A test event is queued" in log.text
    assert "webhook.test" in log.text
    retry = re.search(rf'action="({path}/deliveries/[0-9a-f-]+/retry)"', log.text)
    assert retry is not None
    retried = await browser.post(retry.group(1), data={"csrf_token": csrf_of(log)})
    assert retried.status_code == 303
    assert "queued again" in (await browser.get(retried.headers["location"])).text


async def test_forms_without_the_csrf_token_are_refused(browser: AsyncClient) -> None:
    await sign_up(browser, "fay@example.com")
    await _add(browser, Environment.live, "https://hooks.example.com/in", "*")
    path = await _endpoint_path(browser)
    for action in (f"{path}/test", f"{path}/delete", "/freelancer/webhooks/live/endpoints"):
        refused = await browser.post(action, data={"url": "https://x.example.com", "events": "*"})
        assert refused.status_code == 403, action
    assert "https://hooks.example.com/in" in (await browser.get("/freelancer/webhooks")).text
    assert "No deliveries yet" in (await browser.get(path)).text


async def test_nobody_sees_tests_or_deletes_another_users_endpoint(
    browser: AsyncClient, other_browser: AsyncClient
) -> None:
    await sign_up(browser, "fay@example.com")
    await _add(browser, Environment.live, "https://hooks.example.com/in", "*")
    path = await _endpoint_path(browser)
    await sign_up(other_browser, "mallory@example.com")
    assert (await other_browser.get(path)).status_code == 404
    assert (await other_browser.get(f"{path}/delete")).status_code == 404
    for action in (f"{path}/test", f"{path}/delete"):
        attempt = await post_form(other_browser, action, {}, page="/freelancer/webhooks")
        assert attempt.status_code == 404
    assert "No deliveries yet" in (await browser.get(path)).text


async def test_an_endpoint_is_reached_only_in_its_own_environment(browser: AsyncClient) -> None:
    await sign_up(browser, "fay@example.com")
    await _add(browser, Environment.test, "https://hooks.example.com/sandbox", "*")
    path = await _endpoint_path(browser)
    assert "/webhooks/test/" in path
    in_production = path.replace("/webhooks/test/", "/webhooks/live/")
    assert (await browser.get(in_production)).status_code == 404
    attempt = await post_form(browser, f"{in_production}/delete", {}, page="/freelancer/webhooks")
    assert attempt.status_code == 404
    page = (await browser.get("/freelancer/webhooks")).text
    assert "https://hooks.example.com/sandbox" in section(page, "webhooks", Environment.test)
    assert "No production endpoints yet" in section(page, "webhooks", Environment.live)


async def test_delete_asks_first_then_removes_the_endpoint(browser: AsyncClient) -> None:
    await sign_up(browser, "fay@example.com")
    await _add(browser, Environment.live, "https://hooks.example.com/in", "*")
    path = await _endpoint_path(browser)
    confirm = await browser.get(f"{path}/delete")
    assert "This cannot be undone" in confirm.text
    done = await browser.post(f"{path}/delete", data={"csrf_token": csrf_of(confirm)})
    assert done.status_code == 303
    assert "No production endpoints yet" in (await browser.get(done.headers["location"])).text
    assert (await browser.get(path)).status_code == 404


async def test_the_services_rules_apply_and_bad_input_is_explained(browser: AsyncClient) -> None:
    await sign_up(browser, "fay@example.com")
    cases = (
        ({"url": "http://hooks.example.com/in", "events": "*"}, 403, "not allowed"),  # production needs https
        ({"url": "https://10.0.0.1/in", "events": "*"}, 403, "not allowed"),  # SSRF policy
        ({"url": "not a url", "events": "*"}, 400, "Enter the URL"),
        ({"url": "https://hooks.example.com/in"}, 400, "Choose at least one event"),
        ({"url": "https://hooks.example.com/in", "events": "no.such.event"}, 400, "Choose at least one event"),
    )
    for data, status, message in cases:
        response = await post_form(browser, "/freelancer/webhooks/live/endpoints", data, page="/freelancer/webhooks")
        assert response.status_code == status, data
        assert message in response.text
    assert "No production endpoints yet" in (await browser.get("/freelancer/webhooks")).text


async def test_a_nul_character_in_a_field_is_explained_on_the_form(browser: AsyncClient) -> None:
    await sign_up(browser, "nul-hooks@example.com")
    for data in (
        {"url": "https://hooks.example.com/in", "events": "*", "description": "pay\u0000roll"},
        {"url": "https://hooks.example.com/in\u0000", "events": "*"},
    ):
        response = await post_form(browser, "/freelancer/webhooks/live/endpoints", data, page="/freelancer/webhooks")
        assert response.status_code == 400
        assert "contains a NUL character" in response.text
        assert 'name="description"' in response.text, "the endpoint form is shown again"
    assert "No production endpoints yet" in (await browser.get("/freelancer/webhooks")).text


@pytest.mark.parametrize("address", SAMPLE)
async def test_a_non_public_address_is_refused_on_the_form_naming_the_range(browser: AsyncClient, address: str) -> None:
    await sign_up(browser, "ssrf@example.com")
    data = {"url": url_of(address), "events": "*"}
    response = await post_form(browser, "/freelancer/webhooks/live/endpoints", data, page="/freelancer/webhooks")
    assert response.status_code == 403
    refused = ssrf.refusal(ipaddress.ip_address(address))
    assert refused is not None
    assert html.escape(refused.detail, quote=True) in response.text
    assert "No production endpoints yet" in (await browser.get("/freelancer/webhooks")).text
