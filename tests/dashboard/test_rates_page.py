"""`/freelancer/rates`: the benchmark as the API answers it, its histogram drawn on the server, the other regions."""

from __future__ import annotations

import html
import re

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from compliance_api.dashboard.app import CONTENT_SECURITY_POLICY
from compliance_api.kit.environment import Environment
from tests.dashboard.conftest import signed_up_user
from tests.factories import bearer, create_token
from tests.rates.helpers import observations, seed

PAGE = "/freelancer/rates"
UTRECHT = list(range(6000, 12000, 400))  # 15
HOLLAND = [7000, 7250, 7500, 8000, 9500, 9900, 10400, 11000, 12000, 8800, 9100]  # 11
GRONINGEN = [5000, 5500, 6000]  # 3: below the minimum of 10


@pytest.fixture
async def api(sessionmaker: async_sessionmaker[AsyncSession], pepper: bytes) -> dict[str, dict[str, str]]:
    await seed(
        sessionmaker,
        observations("ict", "NL-UT", UTRECHT)
        + observations("ict", "NL-NH", HOLLAND)
        # the demo's generator marks its rows synthetic; these say what a sandbox benchmark looks like
        + observations("ict", "NL-GR", GRONINGEN),
    )
    await seed(sessionmaker, observations("ict", "NL-UT", [4000] * 12), environment=Environment.test, synthetic=True)
    _, live = await create_token(sessionmaker, pepper)
    _, test = await create_token(sessionmaker, pepper, environment=Environment.test)
    return {"live": bearer(live), "test": bearer(test)}


def _field(page: str, name: str) -> str:
    found = re.search(rf'data-field="{name}">([^<]*)<', page)
    assert found is not None, name
    return html.unescape(found.group(1))


async def test_the_page_shows_the_api_s_answer_and_its_histogram(
    browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    api: dict[str, dict[str, str]],
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    answer = (
        await client.get("/v1/rates/benchmark", params={"sector": "ict", "region": "NL-UT"}, headers=api["live"])
    ).json()
    shown = await browser.get(PAGE, params={"sector": "ict", "region": "NL-UT"})
    assert shown.status_code == 200
    page = shown.text
    assert shown.headers["content-security-policy"] == CONTENT_SECURITY_POLICY.decode()
    assert "<script" not in page
    assert _field(page, "p25") == f"€{answer['p25_eur']:.2f}"
    assert _field(page, "p50") == f"€{answer['p50_eur']:.2f}"
    assert _field(page, "p75") == f"€{answer['p75_eur']:.2f}"
    assert _field(page, "sample_size") == "15 observations"
    assert _field(page, "window") == f"{answer['window_months']} months up to {answer['as_of']}"
    assert html.escape(answer["source"], quote=False) in page
    assert 'data-field="synthetic"' not in page

    svg = page[page.index('<svg viewBox="0 0 720 320"') : page.index("</svg>")]
    assert '<title id="histogram-title">Histogram of 15 hourly rates, ICT, Utrecht</title>' in svg
    assert "<desc" in svg
    assert 'role="img" aria-labelledby="histogram-title" aria-describedby="histogram-desc"' in svg
    for name in ("p25", "p50", "p75"):
        assert f'class="marker marker-{name}"' in svg
    bars = re.findall(r'<rect class="bar"[^>]*><title>[^<]*: (\d+)</title>', svg)
    fallback = page[page.index("The histogram as a table") :]
    rows = re.findall(r"<tr><td>[^<]*</td><td>[^<]*</td><td>(\d+)</td></tr>", fallback)
    assert sum(map(int, bars)) == sum(map(int, rows)) == 15
    assert bars == rows


async def test_the_other_regions_of_the_sector_stand_side_by_side(
    browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    api: dict[str, dict[str, str]],
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    page = (await browser.get(PAGE, params={"sector": "ict", "region": "NL-UT"})).text
    regions = page[page.index('id="regions"') :]
    names = re.findall(r'<th scope="row">(?:<a [^>]*>)?([^<]+)', regions)
    assert [name.strip() for name in names] == ["Netherlands (all regions)", "Groningen", "Noord-Holland", "Utrecht"]
    for region in ("NL", "NL-NH", "NL-UT"):
        answer = (
            await client.get("/v1/rates/benchmark", params={"sector": "ict", "region": region}, headers=api["live"])
        ).json()
        assert f"€{answer['p25_eur']:.2f} to €{answer['p75_eur']:.2f}, median €{answer['p50_eur']:.2f}" in regions
    assert regions.count('<svg class="range"') == 3
    assert "not published: fewer than 10 observations" in regions
    assert 'href="/freelancer/rates?environment=live&amp;sector=ict&amp;region=NL-GR"' in regions


async def test_an_unpublished_benchmark_says_why_and_draws_nothing(
    browser: AsyncClient,
    client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    api: dict[str, dict[str, str]],
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    refused = await client.get("/v1/rates/benchmark", params={"sector": "ict", "region": "NL-GR"}, headers=api["live"])
    assert refused.status_code == 404
    page = (await browser.get(PAGE, params={"sector": "ict", "region": "NL-GR"})).text
    assert _field(page, "unpublished") == f"Not published: {refused.json()['detail']}."
    assert "histogram" not in page
    for missing in ({"sector": "legal"}, {"sector": "ict", "region": "NL-ZE"}):
        empty = (await browser.get(PAGE, params=missing)).text
        assert "Not published: 0 observations" in _field(empty, "unpublished")


async def test_each_environment_shows_its_own_benchmarks_and_the_synthetic_flag(
    browser: AsyncClient,
    sandbox_client: AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    api: dict[str, dict[str, str]],
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    sandbox = (await browser.get(PAGE, params={"environment": "test", "sector": "ict", "region": "NL-UT"})).text
    answer = (
        await sandbox_client.get(
            "/v1/rates/benchmark", params={"sector": "ict", "region": "NL-UT"}, headers=api["test"]
        )
    ).json()
    assert answer["synthetic"] is True
    assert _field(sandbox, "p50") == "€40.00" == f"€{answer['p50_eur']:.2f}"
    assert _field(sandbox, "sample_size") == "12 observations"
    assert "Synthetic: these figures come from observations generated" in _field(sandbox, "synthetic")
    assert "(synthetic)" in sandbox, "the chart's description says so too"
    assert "Noord-Holland" not in sandbox[sandbox.index('id="regions"') :], "production regions stay out"
    live = (await browser.get(PAGE, params={"sector": "ict", "region": "NL-UT"})).text
    assert _field(live, "sample_size") == "15 observations"


async def test_the_default_is_the_national_ict_benchmark(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], api: dict[str, dict[str, str]]
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    page = (await browser.get(PAGE)).text
    assert '<option value="ict" selected>' in page
    assert '<option value="NL" selected>' in page
    assert _field(page, "sample_size") == f"{len(UTRECHT) + len(HOLLAND) + len(GRONINGEN)} observations"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sector": "astrology"}, "“Sector” must be one of the choices"),
        ({"region": "NL-XX"}, "“Region” must be one of the choices"),
        ({"region": "nl-ut"}, "“Region” must be one of the choices"),
        ({"environment": "both"}, "“Environment” must be one of the choices"),
        ({"sector": "x" * 500}, "“Sector” may have at most 200 characters"),
    ],
)
async def test_a_bad_choice_is_a_400_with_a_message_at_the_form(
    browser: AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], params: dict[str, str], message: str
) -> None:
    await signed_up_user(browser, sessionmaker, "fay@example.com")
    shown = await browser.get(PAGE, params=params)
    assert shown.status_code == 400
    alert = re.search(r'<p class="error" role="alert" id="form-error">([^<]*)</p>', shown.text)
    assert alert is not None
    assert message in html.unescape(alert.group(1))
    assert '<select id="sector" name="sector">' in shown.text
