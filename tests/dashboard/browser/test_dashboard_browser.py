"""The dashboard as a person uses it, in Chromium: sign up, make a sandbox token, use it, revoke it; the passport,
webhooks and DAC7 pages."""

from __future__ import annotations

import datetime as dt
import re

import httpx
from playwright.sync_api import Browser, Page, expect

from compliance_api.accounts import service as accounts_service
from compliance_api.accounts.models import Plan, UserKind
from compliance_api.auth import service as auth_service
from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service as passport_service
from compliance_api.passport.catalogue import packaged_catalogue
from tests.conftest import SECRET
from tests.dashboard.browser.conftest import run_async, screenshot

PASSWORD = "correct horse battery"


def _sign_up(page: Page, email: str, *, kind: str = "freelancer") -> None:
    page.goto("/freelancer/sign-up")
    screenshot(page, "sign-up")
    page.get_by_label("E-mail address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("a business" if kind == "business" else "a freelancer").check()
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(r"/freelancer/api-tokens$"))


def _health(base_url: str, token: str) -> httpx.Response:
    return httpx.get(f"{base_url}/v1/health", headers={"Host": "sandbox.localhost", "Authorization": f"Bearer {token}"})


def test_sign_up_create_a_sandbox_token_use_it_and_revoke_it(page: Page, live_server: str) -> None:
    _sign_up(page, "browser@example.com", kind="business")
    expect(page.get_by_role("heading", name="API tokens", exact=True)).to_be_visible()
    page.get_by_role("radio", name=re.compile("^Sandbox")).check()
    page.get_by_label("Name").fill("ci pipeline")
    page.get_by_role("button", name="Create token").click()
    expect(page.get_by_role("heading", name="Token created")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("This is the only time it is shown")
    token = page.get_by_label("Your new token").input_value()
    assert token.startswith("sk_test_")
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_text("Copied.")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == token
    screenshot(page, "token-created")

    assert _health(live_server, token).status_code == 200

    page.get_by_role("link", name="Done: back to your tokens").click()
    row = page.locator("tr", has_text="ci pipeline")
    expect(row).to_contain_text(f"sk_test_…{token[-4:]}")
    expect(row).to_contain_text("active")
    assert token not in page.content()
    screenshot(page, "tokens")
    row.get_by_role("link", name="Revoke").click()
    expect(page.get_by_role("heading", name=re.compile("Revoke token"))).to_be_visible()
    screenshot(page, "token-revoke-confirm")
    page.get_by_role("button", name="Revoke token").click()
    expect(page.get_by_role("status")).to_contain_text("The token is revoked")
    expect(page.locator("tr", has_text="ci pipeline")).to_contain_text("revoked")

    after = _health(live_server, token)
    assert after.status_code == 401
    assert after.json()["code"] == "revoked_token"


def test_the_pages_work_without_javascript_and_by_keyboard(chromium: Browser, live_server: str) -> None:
    context = chromium.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    try:
        _sign_up(page, "nojs@example.com")
        page.get_by_label("Name").fill("typed by hand")
        page.get_by_label("Name").press("Enter")  # submit from the keyboard
        expect(page.get_by_role("heading", name="Token created")).to_be_visible()
        expect(page.get_by_role("button", name="Copy")).to_be_hidden()  # the one thing that needs JavaScript
        assert page.get_by_label("Your new token").input_value().startswith("sk_test_")
        page.goto("/freelancer/api-tokens")
        page.keyboard.press("Tab")
        expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("status")).to_contain_text("You are signed out")
        screenshot(page, "sign-in")
        page.get_by_role("link", name="Forgot your password, or never set one?").click()
        page.get_by_label("E-mail address of your account").fill("nojs@example.com")
        page.get_by_role("button", name="Send me a link").click()
        expect(page.get_by_role("status")).to_contain_text("a link to set a new password is on its way")
        screenshot(page, "reset-password")
    finally:
        context.close()


async def _passport_for(database_url: str, email: str) -> str:
    """Record two checks on the production passport of `email`; return a business verifier's production token."""
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    now = utcnow()
    try:
        async with create_sessionmaker(engine).begin() as session:
            user = await accounts_service.get_by_email_or_raise(session, email=email)
            await passport_service.set_sector(session, user, Environment.live, "ict", now)
            for check in ("identity", "kvk_registration", "vat_number"):
                await passport_service.record_verification(
                    session,
                    user,
                    Environment.live,
                    packaged_catalogue(),
                    check=check,
                    verified_on=now.date() - dt.timedelta(days=10),
                    expires_on=None,
                    evidence_ref=f"browser-test-{check}",
                    now=now,
                )
            verifier = await accounts_service.create(
                session, email="hr@acme.example", kind=UserKind.business, plan=Plan.free
            )
            _, token = await auth_service.create(
                session, user=verifier, environment=Environment.live, name="verifier", pepper=SECRET.encode()
            )
    finally:
        await engine.dispose()
    return token


def test_the_passport_page_shares_and_shows_who_verified(page: Page, live_server: str, database_url: str) -> None:
    _sign_up(page, "fay@example.com")
    verifier_token = run_async(_passport_for(database_url, "fay@example.com"))
    page.get_by_role("link", name="Passport").click()
    production = page.locator("section", has=page.get_by_role("heading", name="Production passport"))
    expect(production.locator("[data-field=score]")).to_have_text("65 / 100")
    expect(production.locator("[data-field=level]")).to_have_text("medium")
    expect(page.locator("section", has=page.get_by_role("heading", name="Sandbox passport"))).to_contain_text(
        "no sandbox passport yet"
    )
    production.get_by_label("Valid for (days)").fill("14")
    production.get_by_role("button", name="Create production share link").click()
    share_token = page.get_by_label("Your share-token").input_value()
    assert share_token.startswith("pst_")
    screenshot(page, "passport-share-created")

    verified = httpx.get(
        f"{live_server}/v1/passport/{share_token}/verify", headers={"Authorization": f"Bearer {verifier_token}"}
    )
    assert verified.status_code == 200

    page.get_by_role("link", name="Done: back to your passport").click()
    share_row = page.locator("tr", has_text=f"pst_…{share_token[-4:]}")
    expect(share_row).to_contain_text("hr@acme.example")
    screenshot(page, "passport")
    share_row.get_by_role("link", name="Revoke").click()
    screenshot(page, "passport-share-revoke-confirm")
    page.get_by_role("button", name="Revoke link").click()
    expect(page.get_by_role("status")).to_contain_text("The share link is revoked")
    again = httpx.get(
        f"{live_server}/v1/passport/{share_token}/verify", headers={"Authorization": f"Bearer {verifier_token}"}
    )
    assert again.status_code == 404


def test_the_webhooks_page_adds_an_endpoint_shows_its_secret_once_and_logs_a_test_event(page: Page) -> None:
    _sign_up(page, "hooks@example.com")
    page.get_by_role("link", name="Webhooks").click()
    sandbox = page.locator("section", has=page.get_by_role("heading", name="Sandbox endpoints"))
    sandbox.get_by_label("URL").fill("https://hooks.example.com/sandbox")
    sandbox.get_by_label("Every event").check()
    sandbox.get_by_label("Description (optional)").fill("browser test")
    screenshot(page, "webhooks")
    sandbox.get_by_role("button", name="Add sandbox endpoint").click()
    expect(page.get_by_role("heading", name="Webhook endpoint added")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("shown only this once")
    secret = page.get_by_label("Signing secret").input_value()
    assert secret.startswith("whsec_")
    screenshot(page, "webhook-secret")
    page.get_by_role("link", name="Done: send a test event").click()
    page.get_by_role("button", name="Send a test event").click()
    expect(page.get_by_role("status").first).to_contain_text("A test event is queued")
    expect(page.locator("tr", has_text="webhook.test")).to_be_visible()
    screenshot(page, "webhook-deliveries")
    page.get_by_role("link", name="Back to your endpoints").click()
    assert secret not in page.content()


async def _business(database_url: str, email: str) -> str:
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    try:
        async with create_sessionmaker(engine).begin() as session:
            user = await accounts_service.create(session, email=email, kind=UserKind.business, plan=Plan.free)
    finally:
        await engine.dispose()
    return str(user.id)


def test_the_dac7_page_grants_by_user_id_and_revokes_after_confirmation(page: Page, database_url: str) -> None:
    _sign_up(page, "seller@example.com")
    grantee_id = run_async(_business(database_url, "accountant@example.com"))
    page.get_by_role("link", name="DAC7").click()
    production = page.locator("section", has=page.get_by_role("heading", name="Production DAC7"))
    expect(production).to_contain_text("not recorded as a production DAC7 seller")
    production.get_by_label("Grantee's user id").fill(grantee_id)
    production.get_by_role("button", name="Grant production read access").click()
    expect(page.get_by_role("status")).to_contain_text("The grant is active")
    grant_row = page.locator("tr", has_text=grantee_id)
    expect(grant_row).to_contain_text("active")
    expect(page.locator("section", has=page.get_by_role("heading", name="Sandbox DAC7"))).to_contain_text(
        "Nobody else yet"
    )
    screenshot(page, "dac7")
    grant_row.get_by_role("link", name="Revoke").click()
    screenshot(page, "dac7-grant-revoke-confirm")
    page.get_by_role("button", name="Revoke grant").click()
    expect(page.get_by_role("status")).to_contain_text("The grant is revoked")
    expect(page.locator("tr", has_text=grantee_id)).to_contain_text("revoked")
