"""`/freelancer/classifications`: the signed-in user's verdicts per environment, the API's filters and pages, and a
page per verdict with its explanation (in the record's language) and re-score history."""

from __future__ import annotations

import html
import re
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.classify import rescore
from compliance_api.classify.ruleset import packaged_rulesets
from compliance_api.kit.clock import utcnow
from compliance_api.kit.environment import Environment
from tests.classify.test_rescore import THE_37_EURO_CASE, TODAY
from tests.dashboard.conftest import sign_in, signed_up_user
from tests.factories import bearer, create_token

ZW = "/v1/classify/zelfstandigenwet"
CB = "/v1/classify/cross-border"
PAGE = "/freelancer/classifications"
ROW_ID = re.compile(r'data-classification-id="([0-9a-f-]{36})"')
OLDER = re.compile(r'href="(/freelancer/classifications\?[^"]*cursor=[^"]+)" rel="next"')


@dataclass(frozen=True, slots=True)
class Integrator:
    """A dashboard user with a production and a sandbox token."""

    live: dict[str, str]
    test: dict[str, str]


async def _integrator(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes, email: str
) -> Integrator:
    user = await signed_up_user(browser, sessionmaker, email)
    _, live = await create_token(sessionmaker, pepper, user=user)
    _, test = await create_token(sessionmaker, pepper, user=user, environment=Environment.test)
    return Integrator(bearer(live), bearer(test))


async def _classify(
    api: AsyncClient, headers: dict[str, str], body: dict[str, Any], path: str = ZW, **extra: str
) -> dict[str, Any]:
    answer = await api.post(path, json=body, headers={**headers, **extra})
    assert answer.status_code == 200, answer.text
    made: dict[str, Any] = answer.json()
    return made


def _ids(page: str) -> list[str]:
    return ROW_ID.findall(page)


async def test_the_list_shows_only_your_own_verdicts_of_the_chosen_environment(
    browser: AsyncClient,
    other_browser: AsyncClient,
    client: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    mine = [await _classify(client, fay.live, {"engagement": {}, "reference": f"fay-{i}"}) for i in range(2)]
    sandbox = await _classify(sandbox_client, fay.test, {"engagement": {}, "reference": "fay-sandbox"})
    bob = await _integrator(other_browser, sessionmaker, pepper, "bob@example.com")
    theirs = await _classify(client, bob.live, {"engagement": {}, "reference": "bob-live"})

    live = (await browser.get(PAGE)).text
    assert _ids(live) == [mine[1]["id"], mine[0]["id"]], "newest first, own production verdicts only"
    assert "fay-sandbox" not in live
    assert "bob-live" not in live
    assert _ids((await browser.get(PAGE, params={"environment": "test"})).text) == [sandbox["id"]]
    assert _ids((await other_browser.get(PAGE)).text) == [theirs["id"]]
    assert _ids((await other_browser.get(PAGE, params={"environment": "test"})).text) == []


async def test_the_filters_select_what_the_api_selects(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    await _classify(client, fay.live, {"engagement": {}, "reference": "open"})
    await _classify(client, fay.live, THE_37_EURO_CASE)
    middle = utcnow()
    await _classify(client, fay.live, {"country": "DE", "criteria": {"subject_to_instructions": True}}, CB)
    await _classify(client, fay.live, {"country": "BE", "criteria": {}, "monitor": True, "reference": "be"}, CB)
    cases: list[tuple[dict[str, str], dict[str, str]]] = [
        ({"reference": "open"}, {"reference": "open"}),
        ({"verdict": "safe"}, {"verdict": "safe"}),
        ({"verdict": "risky"}, {"verdict": "risky"}),
        ({"test": "zelfstandigenwet"}, {"kind": "zelfstandigenwet"}),
        ({"test": "cross_border"}, {"kind": "cross_border"}),
        ({"test": "DE"}, {"kind": "cross_border", "country": "DE"}),
        ({"monitored": "yes"}, {"monitored": "true"}),
        ({"monitored": "no"}, {"monitored": "false"}),
        ({"created_after": middle.isoformat()}, {"created_after": middle.isoformat()}),
        ({"created_before": middle.isoformat()}, {"created_before": middle.isoformat()}),
        ({"test": "BE", "monitored": "yes", "reference": "be"}, {"country": "BE", "monitored": "true"}),
    ]
    for dashboard_filters, api_filters in cases:
        shown = await browser.get(PAGE, params=dashboard_filters)
        assert shown.status_code == 200, (dashboard_filters, shown.text)
        for chosen in ("verdict", "test", "monitored"):  # the form shows the filters it was sent
            if chosen in dashboard_filters:
                assert f'<option value="{dashboard_filters[chosen]}" selected>' in shown.text, chosen
        listed = (await client.get("/v1/classifications", params=api_filters, headers=fay.live)).json()["data"]
        assert _ids(shown.text) == [item["id"] for item in listed], dashboard_filters
    everything = _ids((await browser.get(PAGE)).text)
    assert len(everything) == 4
    assert len(_ids((await browser.get(PAGE, params={"test": "DE"})).text)) == 1


async def test_a_date_time_field_is_read_as_utc(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = await _classify(client, fay.live, {"engagement": {}})
    minute = utcnow().strftime("%Y-%m-%dT%H:%M")
    assert _ids((await browser.get(PAGE, params={"created_before": "2000-01-01T00:00"})).text) == []
    assert _ids((await browser.get(PAGE, params={"created_after": "2000-01-01"})).text) == [made["id"]]
    later = (await browser.get(PAGE, params={"created_after": minute})).text
    assert f'value="{minute}"' in later, "the field shows the filter again"


async def test_pages_follow_the_api_cursor_without_gaps_or_repeats(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = [await _classify(client, fay.live, {"engagement": {}, "reference": f"r{i}"}) for i in range(23)]
    first = (await browser.get(PAGE, params={"reference": ""})).text
    older = OLDER.search(first)
    assert older is not None
    second = (await browser.get(html.unescape(older.group(1)))).text
    assert OLDER.search(second) is None
    assert "Newest verdicts" in second
    assert _ids(first) + _ids(second) == [m["id"] for m in reversed(made)]
    filtered = (await browser.get(PAGE, params={"reference": "r3"})).text
    assert _ids(filtered) == [made[3]["id"]]
    assert OLDER.search(filtered) is None


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"verdict": "maybe"}, "“Verdict” must be one of the choices"),
        ({"test": "NL"}, "“Test” must be one of the choices"),
        ({"monitored": "true"}, "“Monitored” must be one of the choices"),
        ({"environment": "prod"}, "“Environment” must be one of the choices"),
        ({"created_after": "yesterday"}, "“Created after” must be a date and time"),
        ({"created_before": "2026-02-30T00:00"}, "“Created before” must be a date and time"),
        ({"created_after": "２０２６-01-01"}, "“Created after” must be a date and time"),
        ({"created_after": "0001-01-01T00:00:00+23:59"}, "“Created after” must lie between"),
        ({"created_before": "9999-12-31T23:59:59-23:59"}, "“Created before” must lie between"),
        ({"created_after": "2026-02-01", "created_before": "2026-01-01"}, "must be earlier than"),
        ({"reference": "x" * 201}, "“Reference” may have at most 200 characters"),
        ({"cursor": "not-a-cursor"}, "This page link belongs to another list"),
    ],
)
async def test_a_bad_filter_is_a_400_with_a_message_at_the_form(
    browser: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
    params: dict[str, str],
    message: str,
) -> None:
    await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    shown = await browser.get(PAGE, params=params)
    assert shown.status_code == 400
    alert = re.search(r'<p class="error" role="alert" id="form-error">([^<]*)</p>', shown.text)
    assert alert is not None
    assert message in html.unescape(alert.group(1))
    assert 'id="verdict"' in shown.text, "the form is there to correct it"


async def test_a_nul_in_a_filter_is_refused_before_the_page(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    assert (await browser.get(PAGE, params={"reference": "a\x00b"})).status_code == 400


async def test_a_cursor_of_the_other_environment_is_refused(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    for i in range(21):
        await _classify(client, fay.live, {"engagement": {}, "reference": f"r{i}"})
    older = OLDER.search((await browser.get(PAGE)).text)
    assert older is not None
    crossed = html.unescape(older.group(1)).replace("environment=live", "environment=test")
    refused = await browser.get(crossed)
    assert refused.status_code == 400
    assert _ids(refused.text) == []


async def test_a_verdict_page_explains_it_in_its_language_with_its_history(
    browser: AsyncClient, client: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = await _classify(client, fay.live, THE_37_EURO_CASE, **{"Accept-Language": "nl"})
    async with sessionmaker.begin() as session:
        report = await rescore.rescore(
            session, packaged_rulesets(), Environment.live, as_of=TODAY, now=utcnow(), since=utcnow().replace(year=2000)
        )
    assert len(report.changes) == 1
    listed = (await browser.get(PAGE)).text
    link = f'href="/freelancer/classifications/live/{made["id"]}"'
    assert link in listed
    assert "contract-37" in listed
    assert "(was safe)" in listed
    page = await browser.get(f"{PAGE}/live/{made['id']}")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert 'data-field="language">nl<' in text
    assert 'lang="nl"' in text
    assert made["advice"] in text, "the advice as stored, in Dutch"
    for criterion in made["criteria"]:
        assert criterion["legal_basis"]["text"] in text
        assert criterion["legal_basis"]["source_url"] in text
    history = text[text.index('id="history"') :]
    assert "safe</span> → <span" in history
    threshold = "<td>threshold</td><td>the hourly-rate threshold</td><td>36.00</td><td>38.00</td>"
    assert threshold in history, "what changed: the threshold"
    record = (await client.get(f"/v1/classifications/{made['id']}", headers=fay.live)).json()
    [later] = record["history"]
    assert f'data-rescore-id="{later["id"]}"' in text
    assert later["result"]["advice"] in text


async def test_nobody_else_and_no_other_environment_reaches_a_verdict(
    browser: AsyncClient,
    other_browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    pepper: bytes,
) -> None:
    fay = await _integrator(browser, sessionmaker, pepper, "fay@example.com")
    made = await _classify(client, fay.live, {"engagement": {}, "reference": "private-ref"})
    await _integrator(other_browser, sessionmaker, pepper, "bob@example.com")
    assert (await browser.get(f"{PAGE}/live/{made['id']}")).status_code == 200
    for path in (f"{PAGE}/live/{made['id']}", f"{PAGE}/test/{made['id']}", f"{PAGE}/live/{uuid.uuid4()}"):
        seen = await other_browser.get(path)
        assert seen.status_code == 404
        assert "private-ref" not in seen.text
    assert (await browser.get(f"{PAGE}/test/{made['id']}")).status_code == 404
    assert (await browser.get(f"{PAGE}/live/not-an-id")).status_code == 404
    assert (await browser.get(f"{PAGE}/staging/{made['id']}")).status_code == 404


async def test_signing_in_is_required(
    browser: AsyncClient, other_browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    anonymous = await other_browser.get(PAGE)
    assert anonymous.status_code == 303
    assert anonymous.headers["location"].startswith("/freelancer/sign-in?next=/freelancer/classifications")
    await sign_in(other_browser, "fay@example.com")
    assert (await other_browser.get(PAGE)).status_code == 200
