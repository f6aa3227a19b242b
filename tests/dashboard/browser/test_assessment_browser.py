"""The assessment as a person takes it, in Chromium: in English from the navigation, checked (a dry run: nothing kept),
saved, changed, checked and saved again; in German after the header's language switch (and without JavaScript); the
verdict page offers its signed dossier.

Question texts and rule reasons come from the rulesets (`classify.questions`), the page's own words from the
catalogues, so the test follows the law's wording instead of repeating it."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from compliance_api.classify.language import Language
from compliance_api.classify.questions import Test as Questions
from compliance_api.classify.questions import questionnaire
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.dashboard.i18n import translations
from tests.dashboard.browser.conftest import screenshot

PASSWORD = "correct horse battery"
VERDICT_PAGE = re.compile(r"/freelancer/assessments/(live|test)/([0-9a-f-]{36})$")
RULESETS = packaged_rulesets()


def _question(test: Questions, field: str, language: Language = Language.en) -> str:
    return next(q.text for q in questionnaire(RULESETS, test, language).questions if q.field == field)


def _reason(test: Questions, rule: str, language: Language = Language.en) -> str:
    return next(r.reason[language] for r in questionnaire(RULESETS, test, language).decisive if r.id == rule)


def _sign_up_business(page: Page, email: str) -> None:
    page.goto("/freelancer/sign-up")
    page.get_by_label("E-mail address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("a business").check()
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(r"/freelancer/api-tokens$"))


def _answer(page: Page, question: str, answer: str) -> None:
    """Pick yes, no or don't know in the group of radios the question names."""
    page.get_by_role("group", name=question, exact=True).get_by_role("radio", name=answer, exact=True).check()


def _verdict_id(page: Page) -> str:
    found = VERDICT_PAGE.search(page.url)
    assert found is not None, page.url
    return found.group(2)


def test_a_dutch_assessment_in_english_answered_changed_and_sent_again(page: Page) -> None:
    nl = Questions.NL
    rate, days = _question(nl, "hourly_rate_eur"), _question(nl, "days_per_week")
    hours, tools = _question(nl, "sets_own_hours"), _question(nl, "own_tools")
    instructions, risk = _question(nl, "works_under_instructions"), _question(nl, "profit_risk")
    _sign_up_business(page, "hr-en@example.com")
    page.get_by_role("link", name="New assessment").first.click()
    expect(page.get_by_role("heading", name="New assessment")).to_be_visible()
    page.get_by_label("Dutch test (Zelfstandigenwet)").check()
    page.get_by_label("Production: a real engagement").check()
    screenshot(page, "assessment-start")
    page.get_by_role("button", name="Start").click()

    expect(page.get_by_role("heading", name="Dutch test (Zelfstandigenwet)")).to_be_visible()
    expect(page.get_by_label(rate)).to_have_accessible_description(re.compile("tariefgrens"))
    page.get_by_label(rate).fill("31.50")
    page.get_by_label(days).fill("5")
    _answer(page, hours, "No")
    page.get_by_label("Your reference (optional)").fill("contract-2026-14")
    screenshot(page, "assessment-questions")
    page.get_by_role("button", name="Check the verdict").click()

    expect(page.locator("[data-field=dry-run]")).to_contain_text("Not saved")
    expect(page.locator("[data-field=verdict]")).to_have_text("risky")
    expect(page.get_by_label(rate)).to_have_value("31.50")
    screenshot(page, "assessment-checked")
    page.get_by_role("button", name="Save the assessment").click()

    first = _verdict_id(page)
    expect(page.get_by_role("heading", name="Assessment contract-2026-14")).to_be_visible()
    expect(page.locator("[data-field=dry-run]")).to_have_count(0)
    expect(page.locator("[data-field=verdict]")).to_have_text("risky")
    upcoming = page.get_by_role("list", name="Answer next")
    expect(upcoming.get_by_role("link").first).to_be_visible()
    screenshot(page, "assessment-verdict")

    upcoming.get_by_role("link").first.click()
    expect(page).to_have_url(re.compile(r"#q-[a-z_]+$"))
    expect(page.get_by_label(rate)).to_have_value("31.50")
    _answer(page, tools, "No")
    _answer(page, instructions, "Yes")
    _answer(page, risk, "No")
    page.get_by_role("button", name="Check the verdict").click()
    expect(page.locator("[data-field=verdict]")).to_have_text("unsafe")
    expect(page.locator("[data-field=dry-run]")).to_be_visible()
    page.get_by_role("button", name="Save the assessment").click()

    second = _verdict_id(page)
    assert second != first
    expect(page.locator("[data-field=verdict]")).to_have_text("unsafe")
    decided = page.get_by_role("list", name="What decided it")
    expect(decided).to_contain_text(instructions)
    page.get_by_role("link", name="Verdicts", exact=True).click()
    expect(page.locator("tbody tr", has_text="contract-2026-14")).to_have_count(2)


def test_a_cross_border_assessment_in_german_without_javascript(chromium: Browser, live_server: str) -> None:
    german = translations(Language.de)
    instructions = _question(Questions.DE, "subject_to_instructions", Language.de)
    integrated = _question(Questions.DE, "integrated_in_client_organisation", Language.de)
    hours = _question(Questions.DE, "fixed_working_hours", Language.de)
    premises = _question(Questions.DE, "works_at_client_premises", Language.de)
    context = chromium.new_context(base_url=live_server, java_script_enabled=False, locale="en-GB")
    page = context.new_page()
    try:
        _sign_up_business(page, "hr-de@example.com")
        page.get_by_role("button", name="Deutsch").click()
        expect(page.locator("html")).to_have_attribute("lang", "de")
        expect(page.get_by_role("heading", name=german.gettext("API tokens"))).to_be_visible()
        page.get_by_role("link", name=german.gettext("New assessment")).first.click()
        page.get_by_label(german.gettext("Cross-border: Germany")).check()
        page.get_by_role("button", name=german.gettext("Start")).click()

        for question in (instructions, integrated, hours, premises):
            _answer(page, question, "Ja")
        if_so = german.gettext("If so: %(advice)s") % {"advice": ""}
        expect(page.get_by_role("group", name=instructions)).to_have_accessible_description(
            re.compile("^" + re.escape(if_so))
        )
        screenshot(page, "assessment-questions-de")
        page.get_by_role("button", name=german.gettext("Check the verdict")).click()

        expect(page.locator("[data-field=verdict]")).to_have_text(german.gettext("unsafe"))
        decided = page.get_by_role("list", name=german.gettext("What decided it"))
        expect(decided).to_contain_text(instructions)
        expect(page.get_by_role("group", name=instructions).get_by_role("radio", name="Ja")).to_be_checked()
        screenshot(page, "assessment-verdict-de")
    finally:
        context.close()


def test_the_verdict_page_offers_its_signed_dossier(page: Page) -> None:
    _sign_up_business(page, "hr-dossier@example.com")
    page.goto("/freelancer/assessments/new?questionnaire=FR&environment=test")
    _answer(page, _question(Questions.FR, "client_gives_orders"), "Yes")
    page.get_by_role("button", name="Save the assessment").click()
    made = _verdict_id(page)
    link = page.get_by_role("link", name="Download the signed dossier (PDF)")
    expect(link).to_have_attribute("href", f"/freelancer/classifications/test/{made}/dossier.pdf")
    expect(link).to_have_attribute("download", "")
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename.endswith(".pdf")
    saved = download.value.path()
    assert saved.read_bytes().startswith(b"%PDF-")
