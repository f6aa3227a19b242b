"""Accounts: sign up, sign in and out, sessions, CSRF, throttling and password resets."""

from __future__ import annotations

import datetime as dt
from typing import Literal

import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from httpx import AsyncClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.accounts.models import UserKind
from compliance_api.config import PasswordHashProfile
from compliance_api.dashboard import passwords, throttle
from compliance_api.dashboard import service as account_service
from compliance_api.dashboard.models import AccountPassword, DashboardSession
from compliance_api.kit.clock import utcnow
from tests.dashboard.conftest import (
    PASSWORD,
    RecordingMailer,
    csrf_of,
    new_browser,
    post_form,
    sign_in,
    sign_up,
)
from tests.factories import create_user

CHEAP = passwords.hasher_for(PasswordHashProfile.cheapest)  # the suite's (tests/conftest.py)


def _set_cookie(response_headers: list[str], name: str) -> str:
    return next(value for value in response_headers if value.startswith(f"{name}="))


async def test_sign_up_signs_in_with_a_hardened_session_cookie(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    response = await sign_up(browser, "Anna@Example.com")
    assert response.status_code == 303
    assert response.headers["location"] == "/freelancer/api-tokens"
    cookie = _set_cookie(response.headers.get_list("set-cookie"), "dashboard_session")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert "Path=/freelancer" in cookie
    assert "Secure" not in cookie  # plain http: a Secure cookie would never come back
    page = await browser.get("/freelancer/api-tokens")
    assert page.status_code == 200
    assert "anna@example.com" in page.text
    async with sessionmaker() as session:
        stored = (await session.scalars(select(AccountPassword))).one()
        sessions = (await session.scalars(select(DashboardSession))).all()
    assert stored.password_hash.startswith("$argon2id$")
    assert PASSWORD not in stored.password_hash
    assert len(sessions) == 1
    assert sessions[0].token_hash != browser.cookies["dashboard_session"]


async def test_cookies_are_secure_over_https(app: FastAPI) -> None:
    async with new_browser(app, "https://api.test") as secure_browser:
        form = await secure_browser.get("/freelancer/sign-up")
        response = await sign_up(secure_browser, "secure@example.com")
    assert "Secure" in _set_cookie(form.headers.get_list("set-cookie"), "dashboard_csrf")
    assert "Secure" in _set_cookie(response.headers.get_list("set-cookie"), "dashboard_session")


@pytest.mark.parametrize(
    ("email", "password", "message"),
    [
        ("not-an-address", PASSWORD, "valid e-mail"),
        ("short@example.com", "short", "at least 10 characters"),
        ("same@example.com", "same@example.com", "e-mail address as your password"),
    ],
)
async def test_sign_up_refuses_bad_input(browser: AsyncClient, email: str, password: str, message: str) -> None:
    response = await sign_up(browser, email, password=password)
    assert response.status_code == 400
    assert message in response.text
    assert "dashboard_session" not in browser.cookies


async def test_sign_up_with_a_taken_address_does_not_take_over_the_account(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await create_user(sessionmaker, email="cli@example.com")  # made by the CLI: no password yet
    response = await sign_up(browser, "cli@example.com")
    assert response.status_code == 400
    assert "already exists" in response.text
    assert (await sign_in(other_browser, "cli@example.com")).status_code == 400


async def test_wrong_password_and_unknown_email_answer_alike_after_the_same_work(
    browser: AsyncClient, other_browser: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await sign_up(browser, "known@example.com")
    verified: list[str | bytes] = []

    class CountingHasher(PasswordHasher):
        def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
            verified.append(hash)
            return super().verify(hash, password)

    counting = CountingHasher.from_parameters(passwords.PARAMETERS[PasswordHashProfile.cheapest])
    monkeypatch.setattr(passwords, "hasher_for", lambda _: counting)
    wrong = await sign_in(other_browser, "known@example.com", "wrong password!")
    unknown = await sign_in(other_browser, "nobody@example.com", "wrong password!")
    assert wrong.status_code == unknown.status_code == 400
    assert "The e-mail address or the password is wrong." in wrong.text
    assert wrong.text.replace("known@", "X@") == unknown.text.replace("nobody@", "X@")
    assert len(verified) == 2  # the unknown e-mail was checked against a dummy argon2id hash too
    assert all(str(stored).startswith("$argon2id$") for stored in verified)


async def test_sign_in_and_out(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_up(browser, "out@example.com")
    signed_in = await sign_in(other_browser, "out@example.com")
    assert signed_in.status_code == 303
    old_cookie = other_browser.cookies["dashboard_session"]
    signed_out = await post_form(other_browser, "/freelancer/sign-out", {}, page="/freelancer/api-tokens")
    assert signed_out.status_code == 303
    assert signed_out.headers["location"] == "/freelancer/sign-in?done=signed_out"
    # the session is gone on the server, not only from the browser
    other_browser.cookies.set("dashboard_session", old_cookie, path="/freelancer")
    again = await other_browser.get("/freelancer/api-tokens")
    assert again.status_code == 303
    assert again.headers["location"] == "/freelancer/sign-in?next=/freelancer/api-tokens"
    assert (await browser.get("/freelancer/api-tokens")).status_code == 200  # other browsers stay signed in


async def test_sign_in_goes_back_to_the_page_asked_for_but_never_to_another_site(browser: AsyncClient) -> None:
    await sign_up(browser, "next@example.com")
    await post_form(browser, "/freelancer/sign-out", {}, page="/freelancer/api-tokens")
    for asked, landing in (
        ("/freelancer/passport", "/freelancer/passport"),
        ("https://evil.example/x", "/freelancer/api-tokens"),
        ("/freelancer//evil.example", "/freelancer/api-tokens"),
    ):
        form = await browser.get("/freelancer/sign-in", params={"next": asked})
        response = await browser.post(
            "/freelancer/sign-in",
            data={"email": "next@example.com", "password": PASSWORD, "next": asked, "csrf_token": csrf_of(form)},
        )
        assert response.headers["location"] == landing


async def test_a_session_expires(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    user = await create_user(sessionmaker, kind=UserKind.freelancer)
    now = utcnow()
    async with sessionmaker.begin() as session:
        cookie = await account_service.start_session(
            session, user=user, pepper=pepper, lifetime=dt.timedelta(hours=1), now=now
        )
    async with sessionmaker() as session:
        assert await account_service.session_user(session, cookie=cookie, pepper=pepper, now=now) is not None
        later = now + dt.timedelta(hours=1, seconds=1)
        assert await account_service.session_user(session, cookie=cookie, pepper=pepper, now=later) is None


async def test_forms_without_a_valid_csrf_token_are_refused(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_up(browser, "csrf@example.com")
    page = await browser.get("/freelancer/api-tokens")
    stolen = csrf_of(await other_browser.get("/freelancer/sign-in"))  # valid, but for another browser
    attempts = [
        ({"name": "x", "environment": "test"}, {}),
        ({"name": "x", "environment": "test", "csrf_token": "0" * 64}, {}),
        ({"name": "x", "environment": "test", "csrf_token": stolen}, {}),
        ({"name": "x", "environment": "test", "csrf_token": csrf_of(page)}, {"Origin": "https://evil.example"}),
    ]
    for data, headers in attempts:
        response = await browser.post("/freelancer/api-tokens", data=data, headers=headers)
        assert response.status_code == 403
        assert "This form has expired" in response.text
    signed_out = await browser.post("/freelancer/sign-out", data={})
    assert signed_out.status_code == 403
    assert "Token created" not in (await browser.get("/freelancer/api-tokens")).text
    listed = await browser.get("/freelancer/api-tokens")
    assert "No sandbox tokens yet" in listed.text


async def test_a_csrf_token_from_before_sign_in_is_useless_after_it(browser: AsyncClient) -> None:
    before = csrf_of(await browser.get("/freelancer/sign-up"))
    await sign_up(browser, "fixation@example.com")
    response = await browser.post(
        "/freelancer/api-tokens", data={"name": "x", "environment": "test", "csrf_token": before}
    )
    assert response.status_code == 403


async def test_sign_in_is_throttled_per_account_with_a_clear_message(
    browser: AsyncClient, other_browser: AsyncClient
) -> None:
    await sign_up(browser, "target@example.com")
    for _ in range(throttle.SIGN_IN_PER_ACCOUNT.burst):
        assert (await sign_in(other_browser, "target@example.com", "guess guess guess")).status_code == 400
    blocked = await sign_in(other_browser, "target@example.com", PASSWORD)  # even the right password waits
    assert blocked.status_code == 429
    assert "Too many attempts. Wait" in blocked.text
    assert int(blocked.headers["retry-after"]) >= 1
    # another account from the same address is not held up by this one
    await sign_up(other_browser, "bystander@example.com")
    assert (await sign_in(other_browser, "bystander@example.com")).status_code == 303


SPELLINGS = ("v@example.com", "V@EXAMPLE.COM", "v@ｅｘａｍｐｌｅ.ｃｏｍ", "v@example。com", "v@ＥＸＡＭＰＬＥ。ｃｏｍ")


async def test_every_spelling_of_an_address_shares_its_sign_in_throttle(
    browser: AsyncClient, other_browser: AsyncClient
) -> None:
    """Fullwidth letters and the ideographic full stop reach the same account, so they count against its bucket."""
    await sign_up(browser, "v@example.com")
    for attempt in range(throttle.SIGN_IN_PER_ACCOUNT.burst):
        wrong = await sign_in(other_browser, SPELLINGS[attempt % len(SPELLINGS)], "guess guess guess")
        assert wrong.status_code == 400
    for spelling in SPELLINGS:
        assert (await sign_in(other_browser, spelling, PASSWORD)).status_code == 429, spelling


async def test_every_spelling_of_an_address_shares_its_reset_throttle(
    browser: AsyncClient, mailer: RecordingMailer
) -> None:
    for attempt in range(throttle.RESET_PER_ACCOUNT.burst):
        email = SPELLINGS[attempt % len(SPELLINGS)]
        assert (await post_form(browser, "/freelancer/reset-password", {"email": email})).status_code == 200
    for spelling in SPELLINGS:
        blocked = await post_form(browser, "/freelancer/reset-password", {"email": spelling})
        assert blocked.status_code == 429, spelling


async def test_sign_in_is_throttled_per_address(browser: AsyncClient) -> None:
    for index in range(throttle.SIGN_IN_PER_ADDRESS.burst):
        response = await sign_in(browser, f"spray-{index}@example.com", "guess guess guess")
        assert response.status_code == 400
    blocked = await sign_in(browser, "spray-last@example.com", "guess guess guess")
    assert blocked.status_code == 429
    assert "Too many attempts" in blocked.text


async def test_password_reset_sets_a_password_for_a_cli_user_and_works_once(
    browser: AsyncClient,
    other_browser: AsyncClient,
    mailer: RecordingMailer,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    await create_user(sessionmaker, email="cli@example.com", kind=UserKind.freelancer)
    asked = await post_form(browser, "/freelancer/reset-password", {"email": "cli@example.com"})
    assert asked.status_code == 200
    assert "a link to set a new password is on its way" in asked.text
    [mail] = mailer.sent
    assert mail["to"] == "cli@example.com"
    link = next(line for line in mail["body"].splitlines() if line.startswith("http://api.test/freelancer/"))
    form = await browser.get(link.removeprefix("http://api.test"))
    assert form.status_code == 200
    token = link.split("token=")[1]
    response = await browser.post(
        "/freelancer/reset-password/confirm",
        data={"token": token, "password": "a brand new password", "csrf_token": csrf_of(form)},
    )
    assert response.status_code == 303
    assert (await sign_in(other_browser, "cli@example.com", "a brand new password")).status_code == 303
    reused = await browser.post(
        "/freelancer/reset-password/confirm",
        data={"token": token, "password": "another new password", "csrf_token": csrf_of(form)},
    )
    assert reused.status_code == 400
    assert "invalid, used or expired" in reused.text
    assert (await browser.get(link.removeprefix("http://api.test"))).status_code == 400


async def test_a_reset_for_an_unknown_address_looks_the_same_and_sends_nothing(
    browser: AsyncClient, mailer: RecordingMailer, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await create_user(sessionmaker, email="someone@example.com")
    known = await post_form(browser, "/freelancer/reset-password", {"email": "someone@example.com"})
    unknown = await post_form(browser, "/freelancer/reset-password", {"email": "nobody@example.com"})
    assert known.status_code == unknown.status_code == 200
    assert known.text == unknown.text
    assert [mail["to"] for mail in mailer.sent] == ["someone@example.com"]


async def test_a_reset_signs_out_every_browser_and_links_expire(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    await sign_up(browser, "reset@example.com")
    now = utcnow()
    async with sessionmaker.begin() as session:
        found = await account_service.request_reset(
            session, email="reset@example.com", pepper=pepper, lifetime=dt.timedelta(minutes=30), now=now
        )
        assert found is not None
        _, token = found
        late = now + dt.timedelta(minutes=30)
        with pytest.raises(account_service.AccountFormError):
            await account_service.reset_password(
                session, token=token, password="too late password", pepper=pepper, hasher=CHEAP, now=late
            )
        await account_service.reset_password(
            session, token=token, password="just in time!", pepper=pepper, hasher=CHEAP, now=now
        )
    page = await browser.get("/freelancer/api-tokens")
    assert page.status_code == 303  # the browser's session ended with the reset


async def test_password_resets_are_throttled(browser: AsyncClient, mailer: RecordingMailer) -> None:
    for _ in range(throttle.RESET_PER_ACCOUNT.burst):
        assert (await post_form(browser, "/freelancer/reset-password", {"email": "x@example.com"})).status_code == 200
    blocked = await post_form(browser, "/freelancer/reset-password", {"email": "x@example.com"})
    assert blocked.status_code == 429


async def test_a_form_with_origin_null_is_judged_by_its_token(browser: AsyncClient) -> None:
    """Browsers send `Origin: null` for our own forms, because every response says `Referrer-Policy: no-referrer`."""
    form = await browser.get("/freelancer/sign-up")
    response = await browser.post(
        "/freelancer/sign-up",
        data={"email": "null@example.com", "password": PASSWORD, "kind": "freelancer", "csrf_token": csrf_of(form)},
        headers={"Origin": "null"},
    )
    assert response.status_code == 303


async def test_a_nul_character_in_any_form_field_is_refused_naming_it(browser: AsyncClient) -> None:
    for path, data in (
        ("/freelancer/sign-in", {"email": "nul\u0000@example.com", "password": PASSWORD}),
        ("/freelancer/sign-up", {"email": "nul\u0000@example.com", "password": PASSWORD, "kind": "freelancer"}),
    ):
        refused = await post_form(browser, path, data)
        assert refused.status_code == 400, path
        assert "The field “email” contains a NUL character" in refused.text
