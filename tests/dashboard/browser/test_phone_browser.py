"""The dashboard on a phone and by keyboard alone, in Chromium: at 390 px wide no page scrolls sideways, and the
questionnaire shows its questions in small groups with progress, its legal sources out of the way of the answers."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from compliance_api.classify.language import Language
from compliance_api.classify.questions import Test as Questions
from compliance_api.classify.questions import questionnaire
from compliance_api.classify.ruleset import packaged_rulesets
from tests.dashboard.browser.conftest import screenshot

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


def test_no_page_scrolls_sideways_at_390_px(phone: Page) -> None:
    _sign_up(phone, "phone-business@example.com", "a business")
    phone.get_by_role("button", name="Create token").click()
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
        "/freelancer/api-tokens",
        "/freelancer/webhooks",
        "/freelancer/dac7",
        "/freelancer/assessments",
        "/freelancer/assessments/new?questionnaire=zelfstandigenwet&environment=live",
        "/freelancer/assessments/new?questionnaire=DE&environment=test",
        "/freelancer/classifications",
        "/freelancer/events",
        "/freelancer/rates",
        "/freelancer/logs",
        "/freelancer/usage",
    ]
    for path in pages:
        phone.goto(path)
        _no_sideways_scroll(phone, re.sub(r"[^a-z0-9]+", "-", path.removeprefix("/freelancer/")))
    phone.get_by_role("button", name="Sign out").click()
    _sign_up(phone, "phone-freelancer@example.com", "a freelancer")
    phone.goto("/freelancer/passport")
    _no_sideways_scroll(phone, "passport")


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
