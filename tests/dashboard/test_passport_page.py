"""`/freelancer/passport`: score, level, verifications, share links and their verifiers, per environment."""

from __future__ import annotations

import re

from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.kit.environment import Environment
from tests.conftest import commits
from tests.dashboard.conftest import csrf_of, post_form, section, sign_up, signed_up_user
from tests.factories import bearer, create_token, create_user
from tests.passport.conftest import give_passport

SHARE_IN_PAGE = re.compile(r'value="(pst_[0-9A-Za-z]{32})"')


async def _share(browser: AsyncClient, environment: Environment, ttl_days: str = "7") -> str:
    created = await post_form(
        browser,
        "/freelancer/passport/shares",
        {"environment": environment.value, "ttl_days": ttl_days},
        page="/freelancer/passport",
    )
    assert created.status_code == 200, created.text
    found = SHARE_IN_PAGE.search(created.text)
    assert found is not None
    return found.group(1)


async def test_the_page_shows_each_environments_passport_clearly_labelled(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await give_passport(sessionmaker, user, Environment.live)
    await give_passport(sessionmaker, user, Environment.test, checks={"identity": None})
    page = (await browser.get("/freelancer/passport")).text
    live, sandbox = section(page, "passport", Environment.live), section(page, "passport", Environment.test)
    assert "Production</span> passport" in live
    assert "50 / 100" in live  # identity 25 + KvK registration 25
    assert "medium" in live
    assert "Identity" in live
    assert "Sandbox</span> passport" in sandbox
    assert "25 / 100" in sandbox
    assert "low" in sandbox


@commits
async def test_share_links_are_shown_once_list_their_verifiers_and_can_be_revoked(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, client: AsyncClient
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await give_passport(sessionmaker, user, Environment.live)
    share_token = await _share(browser, Environment.live)
    verifier = await create_user(sessionmaker, email="hr@acme.example")
    _, verifier_token = await create_token(sessionmaker, pepper, user=verifier)
    verified = await client.get(f"/v1/passport/{share_token}/verify", headers=bearer(verifier_token))
    assert verified.status_code == 200
    page = await browser.get("/freelancer/passport")
    assert share_token not in page.text
    assert f"pst_…{share_token[-4:]}" in page.text
    assert "hr@acme.example" in section(page.text, "passport", Environment.live)
    revoke_path = re.search(r'href="(/freelancer/passport/shares/live/[0-9a-f-]+/revoke)"', page.text)
    assert revoke_path is not None
    confirm = await browser.get(revoke_path.group(1))
    assert "This cannot be undone" in confirm.text
    done = await browser.post(revoke_path.group(1), data={"csrf_token": csrf_of(confirm)})
    assert done.status_code == 303
    again = await client.get(f"/v1/passport/{share_token}/verify", headers=bearer(verifier_token))
    assert again.status_code == 404


async def test_a_sandbox_action_touches_only_the_sandbox(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, client: AsyncClient
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await give_passport(sessionmaker, user, Environment.live)
    refused = await post_form(
        browser,
        "/freelancer/passport/shares",
        {"environment": "test", "ttl_days": "7"},
        page="/freelancer/passport",
    )
    assert refused.status_code == 404
    assert "no passport in sandbox" in refused.text
    assert "No share links yet" in section(
        (await browser.get("/freelancer/passport")).text, "passport", Environment.live
    )
    await give_passport(sessionmaker, user, Environment.test)
    sandbox_share = await _share(browser, Environment.test)
    verifier = await create_user(sessionmaker)
    _, live_token = await create_token(sessionmaker, pepper, user=verifier)
    assert (await client.get(f"/v1/passport/{sandbox_share}/verify", headers=bearer(live_token))).status_code == 404


async def test_nobody_revokes_another_freelancers_share(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await give_passport(sessionmaker, user, Environment.live)
    await _share(browser, Environment.live)
    share_path = re.search(
        r'href="(/freelancer/passport/shares/live/[0-9a-f-]+/revoke)"', (await browser.get("/freelancer/passport")).text
    )
    assert share_path is not None
    await sign_up(other_browser, "mallory@example.com")
    assert (await other_browser.get(share_path.group(1))).status_code == 404
    page = await other_browser.get("/freelancer/passport")
    attempt = await other_browser.post(share_path.group(1), data={"csrf_token": csrf_of(page)})
    assert attempt.status_code == 404
    assert "status-active" in (await browser.get("/freelancer/passport")).text


async def test_bad_share_input_is_explained(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    user = await signed_up_user(browser, sessionmaker, "fay@example.com")
    await give_passport(sessionmaker, user, Environment.live)
    for ttl in ("0", "366", "soon", "²", "٣", "１", "+7", "-1", "7.0", "1e2", "9" * 1000):
        response = await post_form(
            browser,
            "/freelancer/passport/shares",
            {"environment": "live", "ttl_days": ttl},
            page="/freelancer/passport",
        )
        assert response.status_code == 400, ttl
        assert "Choose a lifetime of 1 to 365 days" in response.text
    assert await _share(browser, Environment.live, " 30 ")


async def test_a_business_account_is_told_passports_are_for_freelancers(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await create_user(sessionmaker, kind=UserKind.freelancer)
    await sign_up(browser, "biz@example.com", kind="business")
    page = await browser.get("/freelancer/passport")
    assert page.status_code == 200
    assert "Passports belong to freelancer accounts" in page.text
    refused = await post_form(
        browser, "/freelancer/passport/shares", {"environment": "live", "ttl_days": "7"}, page="/freelancer/passport"
    )
    assert refused.status_code == 403
