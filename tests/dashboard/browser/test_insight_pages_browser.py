"""The verdicts, events and rate benchmark pages in Chromium: reached and used from the keyboard, every field labelled,
no console or CSP error (the `page` fixture fails the test on any), the charts drawn, screenshots kept."""

from __future__ import annotations

import datetime as dt
import re

import httpx
from playwright.sync_api import BrowserContext, Page, expect

from compliance_api.accounts import service as accounts_service
from compliance_api.auth import service as auth_service
from compliance_api.classify import rescore
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.config import Settings
from compliance_api.db import create_engine, create_sessionmaker
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from compliance_api.rates.fixtures import seed_synthetic
from tests.classify.test_rescore import THE_37_EURO_CASE, TODAY
from tests.conftest import SECRET
from tests.dashboard.browser.conftest import run_async, screenshot

PASSWORD = "correct horse battery"


def _sign_up(page: Page, email: str) -> None:
    page.goto("/freelancer/sign-up")
    page.get_by_label("E-mail address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("a freelancer").check()
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(r"/freelancer/api-tokens$"))


async def _token(database_url: str, email: str) -> str:
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    try:
        async with create_sessionmaker(engine).begin() as session:
            user = await accounts_service.get_by_email_or_raise(session, email=email)
            _, token = await auth_service.create(
                session, user=user, environment=Environment.live, name="payroll", pepper=SECRET.encode()
            )
    finally:
        await engine.dispose()
    return token


async def _rescore(database_url: str) -> None:
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    try:
        async with create_sessionmaker(engine).begin() as session:
            since = utcnow() - dt.timedelta(days=1)
            await rescore.rescore(
                session, packaged_rulesets(), Environment.live, as_of=TODAY, now=utcnow(), since=since
            )
    finally:
        await engine.dispose()


async def _synthetic_rates(database_url: str) -> None:
    engine = create_engine(Settings(database_url=database_url).resolved_database_url)
    try:
        async with create_sessionmaker(engine).begin() as session:
            await seed_synthetic(session, Environment.live, seed=7, as_of=dt.date(2026, 6, 30), window_months=24)
    finally:
        await engine.dispose()


def _classify(base_url: str, token: str, body: dict[str, object], path: str = "zelfstandigenwet", **extra: str) -> None:
    answer = httpx.post(
        f"{base_url}/v1/classify/{path}", json=body, headers={"Authorization": f"Bearer {token}", **extra}
    )
    assert answer.status_code == 200, answer.text


def _tab_to(page: Page, name: str, *, limit: int = 60) -> None:
    """Press Tab until the element with this accessible name has the focus (as a keyboard user reaches it)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement;"
            " return (e.labels && e.labels.length ? e.labels[0].textContent : e.textContent || '').trim(); }"
        )
        if focused.startswith(name):
            return
    raise AssertionError(f"{name!r} was not reached with Tab")


def test_verdicts_are_filtered_and_opened_from_the_keyboard(page: Page, live_server: str, database_url: str) -> None:
    _sign_up(page, "verdicts@example.com")
    token = run_async(_token(database_url, "verdicts@example.com"))
    _classify(live_server, token, THE_37_EURO_CASE, **{"Accept-Language": "nl"})
    _classify(live_server, token, {"engagement": {"own_tools": True}, "reference": "contract-other"})
    _classify(live_server, token, {"country": "DE", "criteria": {}, "reference": "berlin-1"}, "cross-border")
    run_async(_rescore(database_url))

    page.get_by_role("link", name="Verdicts").click()
    expect(page.get_by_role("heading", name="Production verdicts")).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(3)
    screenshot(page, "verdicts")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    _tab_to(page, "Reference")
    page.keyboard.type("contract-37")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"reference=contract-37"))
    expect(page.locator("tbody tr")).to_have_count(1)
    row = page.locator("tr", has_text="contract-37")
    expect(row).to_contain_text("(was safe)")
    _tab_to(page, "contract-37")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Verdict contract-37")).to_be_visible()
    expect(page.locator("[data-field=language]")).to_have_text("nl")
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    expect(page.locator(".history > li")).to_have_count(1)
    page.get_by_text("The re-scored explanation").click()
    screenshot(page, "verdict")


def test_a_bad_filter_is_shown_at_the_form(context: BrowserContext) -> None:
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    _sign_up(page, "filters@example.com")
    page.goto("/freelancer/classifications?created_after=not-a-date")
    expect(page.get_by_role("alert")).to_contain_text("“Created after” must be a date and time")
    expect(page.get_by_label("Created after (UTC)")).to_be_visible()
    screenshot(page, "verdicts-bad-filter")
    assert problems == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]


def test_events_are_listed_and_opened(page: Page, live_server: str, database_url: str) -> None:
    _sign_up(page, "events@example.com")
    token = run_async(_token(database_url, "events@example.com"))
    _classify(live_server, token, {"engagement": {}, "reference": "evented"})
    page.get_by_role("link", name="Events").click()
    expect(page.get_by_role("heading", name="Production events")).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(2)  # the token's creation, the classification
    _tab_to(page, "classification.created")
    page.keyboard.press("Space")
    expect(page.get_by_label("classification.created")).to_be_checked()
    page.get_by_role("button", name="Show events").press("Enter")
    expect(page.locator("tbody tr")).to_have_count(1)
    screenshot(page, "events")
    page.locator("tbody tr").get_by_role("link").click()
    expect(page.get_by_role("heading", name="Event classification.created")).to_be_visible()
    expect(page.locator("pre.json")).to_contain_text('"kind": "zelfstandigenwet"')
    expect(page.get_by_text("No delivery: none of your production webhook endpoints")).to_be_visible()
    screenshot(page, "event")


def test_the_rate_benchmark_is_drawn_with_its_quartiles_and_regions(page: Page, database_url: str) -> None:
    _sign_up(page, "rates@example.com")
    run_async(_synthetic_rates(database_url))
    page.get_by_role("link", name="Rates").click()
    page.get_by_label("Sector", exact=True).select_option(label="ICT consultants")
    page.get_by_label("Region", exact=True).select_option(label="Utrecht")
    page.get_by_role("button", name="Show benchmark").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"sector=ict-consulting&region=NL-UT"))
    expect(page.get_by_role("heading", name="ICT consultants, Utrecht")).to_be_visible()
    expect(page.locator("[data-field=synthetic]")).to_contain_text("Synthetic")
    chart = page.get_by_role("img", name=re.compile(r"^Histogram of \d+ hourly rates, ICT consultants, Utrecht$"))
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None
    assert box["width"] > 600
    assert box["height"] > 200
    sample = int(page.locator("[data-field=sample_size]").inner_text().split()[0])
    bars = page.locator("svg.histogram rect.bar")
    assert sum(int(t.rsplit(": ", 1)[1]) for t in bars.locator("title").all_text_contents()) == sample
    for name in ("p25", "p50", "p75"):
        expect(page.locator(f"svg.histogram .marker-{name}")).to_have_count(1)
    expect(page.locator("table.regions svg.range")).not_to_have_count(0)
    screenshot(page, "rates")

    _tab_to(page, "The histogram as a table")
    page.keyboard.press("Enter")
    fallback = page.get_by_role("table", name="Observations per rate band")
    expect(fallback).to_be_visible()
    screenshot(page, "rates-table")
    page.get_by_role("link", name="Netherlands (all regions)").click()
    expect(page.get_by_role("heading", name="ICT consultants, Netherlands (all regions)")).to_be_visible()
