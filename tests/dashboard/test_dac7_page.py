"""`/freelancer/dac7`: the seller's current-year figures and read grants per environment; business accounts told off."""

from __future__ import annotations

import re

from httpx import AsyncClient, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.dac7.identity import Dac7Tin, SellerIdentity
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.dac7.conftest import give_grant, import_rows, make_seller, row
from tests.dashboard.conftest import csrf_of, post_form, section, sign_up, signed_up_user
from tests.factories import bearer, create_token, create_user

REVOKE_LINK = re.compile(r'href="(/freelancer/dac7/(?:live|test)/grants/[0-9a-f-]{36}/revoke)"')


async def _grant(browser: AsyncClient, environment: Environment, grantee_id: str) -> Response:
    return await post_form(
        browser, f"/freelancer/dac7/{environment.value}/grants", {"grantee_id": grantee_id}, page="/freelancer/dac7"
    )


async def test_the_page_shows_the_same_figures_as_the_api_per_environment(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, client: AsyncClient
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await make_seller(sessionmaker, user)
    await import_rows(sessionmaker, [row("a1", user.id, utcnow().date(), "1234.50", "34.50")])
    _, token = await create_token(sessionmaker, pepper, user=user)
    api = (await client.get(f"/v1/dac7/seller/{user.id}", headers=bearer(token))).json()
    page = (await browser.get("/freelancer/dac7")).text
    live = section(page, "dac7", Environment.live)
    assert f"EUR {api['total_consideration_eur']:,.2f}" in live  # the figures as English writes them
    assert f'data-field="activities">{api["number_of_activities"]}<' in live
    assert f'data-field="year">{api["reporting_year"]}<' in live
    assert "You are not recorded as a sandbox DAC7 seller" in section(page, "dac7", Environment.test)


async def test_a_grant_lets_the_grantee_read_until_it_is_revoked(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, client: AsyncClient
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await make_seller(sessionmaker, user)
    grantee = await create_user(sessionmaker, kind=UserKind.business)
    _, grantee_token = await create_token(sessionmaker, pepper, user=grantee)
    created = await _grant(browser, Environment.live, str(grantee.id))
    assert created.status_code == 303
    page = (await browser.get(created.headers["location"])).text
    assert str(grantee.id) in section(page, "dac7", Environment.live)
    assert (await client.get(f"/v1/dac7/seller/{user.id}", headers=bearer(grantee_token))).status_code == 200
    link = REVOKE_LINK.search(page)
    assert link is not None
    confirm = await browser.get(link.group(1))
    assert "next read of your DAC7 figures is refused" in confirm.text
    done = await browser.post(link.group(1), data={"csrf_token": csrf_of(confirm)})
    assert done.status_code == 303
    assert (await client.get(f"/v1/dac7/seller/{user.id}", headers=bearer(grantee_token))).status_code == 403


async def test_a_sandbox_grant_touches_only_the_sandbox(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    grantee = await create_user(sessionmaker, kind=UserKind.business)
    assert (await _grant(browser, Environment.test, str(grantee.id))).status_code == 303
    page = (await browser.get("/freelancer/dac7")).text
    assert str(grantee.id) in section(page, "dac7", Environment.test)
    assert str(grantee.id) not in section(page, "dac7", Environment.live)
    link = REVOKE_LINK.search(page)
    assert link is not None
    assert "/dac7/test/" in link.group(1)
    in_production = link.group(1).replace("/dac7/test/", "/dac7/live/")
    assert (await browser.get(in_production)).status_code == 404
    attempt = await post_form(browser, in_production, {}, page="/freelancer/dac7")
    assert attempt.status_code == 404
    assert "status-active" in section((await browser.get("/freelancer/dac7")).text, "dac7", Environment.test)


async def test_nobody_revokes_another_sellers_grant_and_csrf_is_required(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    grantee = await create_user(sessionmaker, kind=UserKind.business)
    await give_grant(sessionmaker, user, grantee, Environment.live)
    link = REVOKE_LINK.search((await browser.get("/freelancer/dac7")).text)
    assert link is not None
    assert (await browser.post(link.group(1), data={})).status_code == 403
    refused = await browser.post("/freelancer/dac7/live/grants", data={"grantee_id": str(grantee.id)})
    assert refused.status_code == 403
    await sign_up(other_browser, "mallory@example.com")
    assert (await other_browser.get(link.group(1))).status_code == 404
    attempt = await post_form(other_browser, link.group(1), {}, page="/freelancer/dac7")
    assert attempt.status_code == 404
    assert "status-active" in section((await browser.get("/freelancer/dac7")).text, "dac7", Environment.live)


async def test_bad_grantees_are_explained(browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    cases = (
        ("fay@example.com", 400, "user id (a UUID)"),  # e-mail addresses are not looked up
        ("6f1c1a52-4c1e-4b8e-9d3e-2f7a4f0b9c11", 404, "grantee"),
        (str(user.id), 400, "your own snapshot"),
    )
    for value, status, message in cases:
        response = await _grant(browser, Environment.live, value)
        assert response.status_code == status, value
        assert message in response.text
    assert "Nobody else yet" in section((await browser.get("/freelancer/dac7")).text, "dac7", Environment.live)


async def test_a_business_account_is_told_dac7_pages_are_for_sellers(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    someone = await create_user(sessionmaker)
    await sign_up(browser, "biz@example.com", kind="business")
    page = await browser.get("/freelancer/dac7")
    assert page.status_code == 200
    assert "DAC7 pages are for sellers" in page.text
    refused = await _grant(browser, Environment.live, str(someone.id))
    assert refused.status_code == 403


async def test_the_seller_sees_what_is_held_about_it_and_what_a_report_lacks(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await make_seller(sessionmaker, user)
    await make_seller(
        sessionmaker, user, Environment.test, identity=SellerIdentity(tins=[Dac7Tin(tin="111222333", issued_by="NL")])
    )
    page = (await browser.get("/freelancer/dac7")).text
    live = section(page, "dac7", Environment.live)
    assert 'data-field="name">Jan de Vries<' in live
    assert 'data-field="date_of_birth">1990-04-01<' in live
    assert "Damrak 1, 1012 LG Amsterdam (NL)" in live
    assert 'data-field="iban">NL91ABNA0417164300 (J. de Vries)<' in live
    assert 'data-field="lacking"' not in live
    assert f"PUT /v1/dac7/seller/{user.id}/identity" in live
    sandbox = section(page, "dac7", Environment.test)
    assert 'data-field="tins">111222333 (NL)<' in sandbox
    assert 'data-field="lacking">first_name, last_name, date_of_birth, address<' in sandbox


FORM = {
    "first_name": "Fay",
    "last_name": "Jansen",
    "date_of_birth": "1992-05-06",
    "street": "Damrak",
    "building": "2",
    "post_code": "1012 LG",
    "city": "Amsterdam",
    "country": "NL",
    "tin": "111222333",
    "tin_issued_by": "NL",
    "birth_city": "",
    "birth_country": "",
    "vat": "",
    "iban": "NL91ABNA0417164300",
    "holder": "F. Jansen",
}


async def test_the_seller_corrects_its_identity_with_the_api_s_checks(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, client: AsyncClient
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await make_seller(sessionmaker, user)
    _, token = await create_token(sessionmaker, pepper, user=user)
    url = f"/v1/dac7/seller/{user.id}/identity"
    before = (await client.get(url, headers=bearer(token))).json()
    refused = await post_form(
        browser, "/freelancer/dac7/live/identity", {**FORM, "tin": "111222334"}, page="/freelancer/dac7"
    )
    assert refused.status_code == 400
    assert "tins.0: " in refused.text
    assert (await client.get(url, headers=bearer(token))).json() == before, "nothing written"
    saved = await post_form(browser, "/freelancer/dac7/live/identity", FORM, page="/freelancer/dac7")
    assert saved.status_code == 303
    after = (await client.get(url, headers=bearer(token))).json()
    assert (after["first_name"], after["last_name"], after["date_of_birth"]) == ("Fay", "Jansen", "1992-05-06")
    assert after["financial_account"] == {"iban": "NL91ABNA0417164300", "holder": "F. Jansen"}
    assert after["complete"] is True
    page = (await browser.get(saved.headers["location"])).text
    assert "Your DAC7 identity is saved" in page
    assert 'value="Jansen"' in section(page, "dac7", Environment.live), "the form shows what is held"
