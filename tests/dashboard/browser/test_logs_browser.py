"""The request log and usage pages in Chromium: reached from the navigation, filtered and opened by keyboard, charts
that are images with a name and a table behind them; no console or CSP error (the `page` fixture), every field
labelled (`screenshot`), and no token on any page."""

from __future__ import annotations

import re
import time

import httpx
from playwright.sync_api import Page, expect

from tests.dashboard.browser.conftest import screenshot

PASSWORD = "correct horse battery"
SANDBOX = {"Host": "sandbox.localhost"}


def _sandbox_token(page: Page, email: str) -> str:
    page.goto("/freelancer/sign-up")
    page.get_by_label("E-mail address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("a business").check()
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("radio", name=re.compile("^Sandbox")).check()
    page.get_by_label("Name").fill("nightly payroll")
    page.get_by_role("button", name="Create token").click()
    token = page.get_by_label("Your new token").input_value()
    assert token.startswith("sk_test_")
    return token


def _call(base_url: str, token: str, path: str, request_id: str) -> httpx.Response:
    headers = {**SANDBOX, "Authorization": f"Bearer {token}", "X-Request-Id": request_id}
    return httpx.get(f"{base_url}{path}", headers=headers)


def _until_logged(base_url: str, token: str, count: int) -> None:
    """Wait for the server's background flush (every second) to have written `count` requests under `/v1/rates`."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        listed = httpx.get(
            f"{base_url}/v1/requests",
            params={"path": "/v1/rates", "limit": 100},
            headers={**SANDBOX, "Authorization": f"Bearer {token}"},
        )
        if len(listed.json()["data"]) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} requests were logged within 15 s")


def test_the_request_log_finds_a_failed_request_by_its_id_from_the_keyboard(page: Page, live_server: str) -> None:
    token = _sandbox_token(page, "logs@example.com")
    assert _call(live_server, token, "/v1/rates/sectors", "payroll-ok").status_code == 200
    failed = _call(live_server, token, "/v1/rates/benchmark?sector=nope&region=NL", "payroll-0200")
    assert failed.status_code == 404
    _until_logged(live_server, token, 2)

    page.get_by_role("link", name="Logs").click()
    expect(page.get_by_role("heading", name="Request log")).to_be_visible()
    page.get_by_role("navigation", name="Environment").get_by_role("link", name="Sandbox").click()
    rows = page.locator("tr[data-request-id]")
    ours = rows.filter(has_text="/v1/rates/")  # the waiting above read the log through the API: logged too
    expect(ours).to_have_count(2)
    expect(ours.first).to_contain_text("/v1/rates/benchmark")
    expect(ours.first).to_contain_text("404")
    expect(ours.first).to_contain_text(f"nightly payroll …{token[-4:]}")
    screenshot(page, "logs")

    page.get_by_label("Request id").fill("payroll-0200")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Filter")).to_be_focused()
    page.keyboard.press("Enter")
    expect(rows).to_have_count(1)
    expect(page.get_by_label("Request id")).to_have_value("payroll-0200")
    link = page.get_by_role("link", name="payroll-0200")
    link.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Request payroll-0200")).to_be_visible()
    expect(page.get_by_label("Problem body")).to_contain_text('"unknown_sector"')
    screenshot(page, "log-request")
    assert token not in page.content()
    page.get_by_role("link", name="Back to the request log").click()
    assert token not in page.content()


def test_the_usage_page_draws_named_charts_with_a_table_behind_them(page: Page, live_server: str) -> None:
    token = _sandbox_token(page, "usage@example.com")
    for number in range(3):
        assert _call(live_server, token, "/v1/rates/sectors", f"use-{number}").status_code == 200
    _until_logged(live_server, token, 3)

    page.get_by_role("link", name="Usage").click()
    expect(page.get_by_role("heading", name="Usage", exact=True)).to_be_visible()
    sandbox = page.locator("section", has=page.get_by_role("heading", name="Sandbox", exact=True))
    chart = sandbox.get_by_role("img", name=re.compile("^Sandbox requests per day"))
    expect(chart).to_be_visible()
    expect(sandbox.locator("[data-field=total]")).to_have_text(re.compile(r"^[3-9]$"))
    expect(sandbox.get_by_role("img", name=re.compile(r"^nightly payroll \(…" + token[-4:]))).to_be_visible()
    summary = sandbox.locator("summary", has_text="Sandbox requests per day: data table")
    summary.focus()
    page.keyboard.press("Enter")
    today = sandbox.get_by_role("table", name="Sandbox requests per day").locator("tbody tr").last
    expect(today).to_be_visible()
    expect(today.locator("td").first).to_have_text(re.compile(r"^[3-9]$"))
    expect(page.locator("section", has=page.get_by_role("heading", name="Production", exact=True))).to_contain_text(
        "No production requests in the last 30 days."
    )
    screenshot(page, "usage")
    assert token not in page.content()
