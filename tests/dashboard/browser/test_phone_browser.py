"""The dashboard on a phone and by keyboard alone, in Chromium: at 390 px wide no page scrolls sideways (signed out,
signed in, every list, detail and confirmation page), and the questionnaire shows its questions in small groups with
progress, its legal sources out of the way of the answers."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from compliance_api.accounts import service as accounts_service
from compliance_api.classify.language import Language
from compliance_api.classify.questions import Test as Questions
from compliance_api.classify.questions import questionnaire
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.config import Settings
from compliance_api.dashboard import service as dashboard_service
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.passport import service as passport_service
from tests.conftest import SECRET
from tests.dashboard.browser.conftest import run_async, screenshot

PASSWORD = "correct horse battery"
PHONE: ViewportSize = {"width": 390, "height": 844}
SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
WIDEST = """() => Array.from(document.querySelectorAll("body *"))
    .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .filter((element) => !element.parentElement.closest("table, .scroll, pre"))
    .slice(0, 12)
    .map((element) => `${element.tagName}.${element.className} ${element.getBoundingClientRect().right}`)"""


@pytest.fixture
def phone(chromium: Browser, live_server: str) -> Iterator[Page]:
    context = chromium.new_context(base_url=live_server, viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    yield page
    context.close()


def _sign_up(page: Page, email: str, kind: str) -> None:
    page.goto("/freelancer/sign-up")
    page.get_by_label("E-mail address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label(kind).check()
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(r"/freelancer/api-tokens$"))


def _no_sideways_scroll(page: Page, name: str) -> None:
    page.wait_for_load_state("load")  # after a click, its stylesheets too
    assert page.evaluate(SIDEWAYS) <= 0, (name, page.evaluate(WIDEST))
    screenshot(page, f"phone-{name}")


def _visit(page: Page, path: str) -> None:
    page.goto(path)
    _no_sideways_scroll(page, re.sub(r"[^a-z0-9]+", "-", path.removeprefix("/freelancer/")).strip("-"))


def _follow(page: Page, link: str, name: str) -> None:
    """Follow the first link whose address matches `link` (a CSS attribute selector's value) and check the page."""
    page.locator(f"main a[href*='{link}']").first.click()
    _no_sideways_scroll(page, name)


async def _reset_link_token(database_url: str, email: str) -> str:
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    try:
        async with create_sessionmaker(engine).begin() as session:
            found = await dashboard_service.request_reset(
                session, email=email, pepper=SECRET.encode(), lifetime=dt.timedelta(minutes=30), now=utcnow()
            )
    finally:
        await engine.dispose()
    assert found is not None
    return found[1]


async def _passport_and_user_id(database_url: str, freelancer: str, grantee: str) -> str:
    """Give `freelancer` a production passport; return the user id of `grantee`."""
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    try:
        async with create_sessionmaker(engine).begin() as session:
            user = await accounts_service.get_by_email_or_raise(session, email=freelancer)
            await passport_service.set_sector(session, user, Environment.live, "ict", utcnow())
            return str((await accounts_service.get_by_email_or_raise(session, email=grantee)).id)
    finally:
        await engine.dispose()


def test_no_signed_out_page_scrolls_sideways_at_390_px(phone: Page, database_url: str) -> None:
    for path in ("/freelancer/sign-in", "/freelancer/sign-up", "/freelancer/reset-password"):
        _visit(phone, path)
    phone.get_by_label("E-mail address of your account").fill("phone-reset@example.com")
    phone.get_by_role("button", name="Send me a link").click()
    expect(phone.get_by_role("status")).to_contain_text("a link to set a new password is on its way")
    _no_sideways_scroll(phone, "reset-password-sent")
    _visit(phone, "/freelancer/reset-password/confirm?token=not-a-link")
    _sign_up(phone, "phone-reset@example.com", "a business")
    phone.get_by_role("button", name="Sign out").click()
    _no_sideways_scroll(phone, "signed-out")
    token = run_async(_reset_link_token(database_url, "phone-reset@example.com"))
    phone.goto(f"/freelancer/reset-password/confirm?token={token}")
    expect(phone.get_by_label("New password", exact=False).first).to_be_visible()
    _no_sideways_scroll(phone, "reset-password-confirm")
    phone.goto("/freelancer/sign-in")
    phone.get_by_label("E-mail address").fill("phone-reset@example.com")
    phone.get_by_label("Password").fill("not the password")
    phone.get_by_role("button", name="Sign in").click()
    _no_sideways_scroll(phone, "sign-in-refused")


def test_no_page_scrolls_sideways_at_390_px(phone: Page) -> None:
    _sign_up(phone, "phone-business@example.com", "a business")
    phone.get_by_role("radio", name=re.compile("^Production")).check()
    phone.get_by_label("Name").fill("payroll integration on a phone")
    phone.get_by_role("button", name="Create token").click()
    expect(phone.get_by_role("heading", name="Token created")).to_be_visible()
    _no_sideways_scroll(phone, "token-created")
    phone.goto("/freelancer/assessments/new?questionnaire=zelfstandigenwet&environment=live")
    phone.get_by_role("button", name="Check the verdict").click()
    expect(phone.locator("[data-field=dry-run]")).to_be_visible()
    _no_sideways_scroll(phone, "assessment-checked")
    phone.get_by_role("button", name="Save the assessment").click()
    expect(phone).to_have_url(re.compile(r"/freelancer/assessments/live/[0-9a-f-]{36}$"))
    _no_sideways_scroll(phone, "assessment-verdict")
    phone.get_by_role("link", name=re.compile("The full verdict")).click()
    _no_sideways_scroll(phone, "verdict-record")
    pages = [
        "/freelancer/",
        "/freelancer/api-tokens",
        "/freelancer/webhooks",
        "/freelancer/dac7",
        "/freelancer/assessments",
        "/freelancer/assessments/new",
        "/freelancer/assessments/new?questionnaire=zelfstandigenwet&environment=live",
        "/freelancer/assessments/new?questionnaire=DE&environment=test",
        "/freelancer/classifications",
        "/freelancer/events",
        "/freelancer/rates",
        "/freelancer/logs",
        "/freelancer/usage",
        f"/freelancer/webhooks/test/{uuid.uuid4()}",  # the not-found page
    ]
    for path in pages:
        _visit(phone, path)
    _visit(phone, "/freelancer/classifications")
    _follow(phone, "/classifications/live/", "classification")
    _visit(phone, "/freelancer/api-tokens")
    _follow(phone, "/revoke", "token-revoke-confirm")
    _webhook_pages(phone)
    _log_entry_page(phone)


def _webhook_pages(phone: Page) -> None:
    """An endpoint added (its secret shown once), its deliveries and its deletion; an event of the account's."""
    phone.goto("/freelancer/webhooks")
    sandbox = phone.locator("section", has=phone.get_by_role("heading", name="Sandbox endpoints"))
    sandbox.get_by_label("URL").fill("https://hooks.example.com/a-rather-long-path/for-a-phone/receiver?tenant=42")
    sandbox.get_by_label("Every event").check()
    sandbox.get_by_role("button", name="Add sandbox endpoint").click()
    expect(phone.get_by_role("heading", name="Webhook endpoint added")).to_be_visible()
    _no_sideways_scroll(phone, "webhook-created")
    phone.get_by_role("link", name="Done: send a test event").click()
    phone.get_by_role("button", name="Send a test event").click()
    expect(phone.get_by_role("status").first).to_contain_text("A test event is queued")
    _no_sideways_scroll(phone, "webhook-endpoint")
    _follow(phone, "/delete", "webhook-delete-confirm")
    _visit(phone, "/freelancer/events?environment=live")
    _follow(phone, "/events/live/", "event")


def _log_entry_page(phone: Page) -> None:
    """The assessment saved above, once the server's background flush (every second) has logged its request."""
    entries = phone.locator("main a[href*='/logs/live/']")
    for _ in range(75):
        phone.goto("/freelancer/logs")
        if entries.count():
            break
        phone.wait_for_timeout(200)
    _follow(phone, "/logs/live/", "log-entry")


def test_no_freelancer_page_scrolls_sideways_at_390_px(phone: Page, database_url: str) -> None:
    _sign_up(phone, "phone-grantee@example.com", "a business")
    phone.get_by_role("button", name="Sign out").click()
    _sign_up(phone, "phone-freelancer@example.com", "a freelancer")
    grantee = run_async(
        _passport_and_user_id(database_url, "phone-freelancer@example.com", "phone-grantee@example.com")
    )
    _visit(phone, "/freelancer/passport")
    production = phone.locator("section", has=phone.get_by_role("heading", name="Production passport"))
    production.get_by_role("button", name="Create production share link").click()
    _no_sideways_scroll(phone, "passport-share-created")
    phone.get_by_role("link", name="Done: back to your passport").click()
    _no_sideways_scroll(phone, "passport-with-share")
    _follow(phone, "/revoke", "passport-share-revoke-confirm")
    _visit(phone, "/freelancer/dac7")
    dac7 = phone.locator("section", has=phone.get_by_role("heading", name="Production DAC7"))
    dac7.get_by_label("Grantee's user id").fill(grantee)
    dac7.get_by_role("button", name="Grant production read access").click()
    expect(phone.get_by_role("status")).to_contain_text("The grant is active")
    _no_sideways_scroll(phone, "dac7-with-grant")
    _follow(phone, "/revoke", "dac7-grant-revoke-confirm")


def test_the_questionnaire_comes_in_small_groups_with_progress_and_sources_after_the_answers(phone: Page) -> None:
    _sign_up(phone, "phone-groups@example.com", "a business")
    phone.goto("/freelancer/assessments/new?questionnaire=zelfstandigenwet&environment=live")
    questions = questionnaire(packaged_rulesets(), Questions.NL, Language.en).questions
    groups = phone.locator("fieldset.group")
    count = groups.count()
    assert count >= 3
    for index in range(count):
        group = groups.nth(index)
        expect(group.locator("legend").first).to_contain_text(f"Part {index + 1} of {count}")
        assert group.locator(".question").count() <= 5
    assert sum(groups.nth(i).locator(".question").count() for i in range(count)) == len(questions)
    expect(phone.locator("progress").first).to_have_attribute("max", str(count))

    phone.get_by_label(questions[0].text).focus()
    stops = []
    for _ in range(len(questions) + count + 2):
        phone.keyboard.press("Tab")
        stops.append(phone.evaluate("() => document.activeElement.tagName + ':' + (document.activeElement.name || '')"))
    between = [
        stop
        for before, stop, after in zip(stops, stops[1:], stops[2:], strict=False)
        if stop.startswith("A:") and before.startswith("INPUT") and after.startswith("INPUT")
    ]
    assert between == [], stops
    assert stops.count("SUMMARY:") >= 2, "each part's sources come after its answers, one Tab stop"
    screenshot(phone, "phone-questionnaire-parts")


def test_the_german_form_reaches_its_check_button_in_one_tab_stop_per_question_and_part(phone: Page) -> None:
    """The tracker counted 51 Tab presses to "submit" on the German form: from the first answer, now one stop per
    further question (a radio group or a number), one per part's sources, and the reference field."""
    _sign_up(phone, "phone-tabs@example.com", "a business")
    phone.goto("/freelancer/assessments/new?questionnaire=DE&environment=test")
    questions = questionnaire(packaged_rulesets(), Questions.DE, Language.en).questions
    parts = phone.locator("fieldset.group").count()
    phone.locator("fieldset.group input:checked").first.focus()  # the first question's answer
    presses = 0
    while phone.evaluate("() => document.activeElement.textContent") != "Check the verdict":
        phone.keyboard.press("Tab")
        presses += 1
        assert presses <= 100
    assert presses <= len(questions) + parts + 2, presses
