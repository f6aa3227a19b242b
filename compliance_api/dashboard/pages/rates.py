"""`/freelancer/rates`: the rate benchmark of a sector and region as `GET /v1/rates/benchmark` answers it (the same
precomputed row, the same answer and publication rule, through the rates service), a histogram of the observations
in its window with p25, p50 and p75 marked, and the sector's other regions side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from compliance_api.dashboard import query
from compliance_api.dashboard.i18n import N_, Translator
from compliance_api.dashboard.nav import DashboardPage, NavItem
from compliance_api.dashboard.rate_chart import histogram_chart, range_bars
from compliance_api.dashboard.web import CurrentAccount, render, state_of, translator_of
from compliance_api.kit.environment import Environment
from compliance_api.rates import service as rates_service
from compliance_api.rates import views as rates_views
from compliance_api.rates.catalogue import NATIONAL, PROVINCES, REGIONS, SECTORS
from compliance_api.rates.schemas import RateBenchmarkOut
from compliance_api.sessions import DbSession

router = APIRouter()
PATH = "/rates"
DEFAULT_SECTOR = "ict"
REGION_NAMES = {NATIONAL: N_("Netherlands (all regions)"), **PROVINCES}
SECTOR_CHOICES = {slug: slug for slug in SECTORS}
SECTOR, REGION = N_("Sector"), N_("Region")
REGION_CHOICES = {code: code for code in REGIONS}


@dataclass(frozen=True, slots=True)
class RegionRow:
    """A region of the sector: its published answer, else how many observations it has (below the minimum)."""

    code: str
    name: str
    answer: RateBenchmarkOut | None
    sample_size: int


def _region_names(translator: Translator) -> dict[str, str]:
    """The national region in the reader's language; the provinces by their own names."""
    return {**REGION_NAMES, NATIONAL: translator.text(REGION_NAMES[NATIONAL])}


def _unpublished(translator: Translator, sector: str, region: str, sample_size: int, min_sample: int) -> str:
    """Why a benchmark is not published, in the words of the API's `insufficient_data` problem."""
    return translator.gettext(
        "%(count)s observations for %(sector)s in %(region)s; at least %(minimum)s are needed to publish a benchmark",
        count=sample_size,
        sector=sector,
        region=region,
        minimum=min_sample,
    )


def _form_page(request: Request, account: CurrentAccount, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    translator = translator_of(request)
    return render(
        request,
        "rates/page.html",
        account=account,
        status_code=status_code,
        sectors={slug: translator.text(name) for slug, name in SECTORS.items()},
        region_names=_region_names(translator),
        environments=list(Environment),
        **{
            "environment": Environment.live,
            "sector": DEFAULT_SECTOR,
            "region": NATIONAL,
            "answer": None,
            "chart": None,
            "regions": [],
            **context,
        },
    )


@router.get(PATH, include_in_schema=False)
async def rates_page(request: Request, account: CurrentAccount, session: DbSession) -> HTMLResponse:
    params = request.query_params
    try:
        environment = query.environment(params)
        sector = query.choice(query.text(params, "sector", SECTOR), SECTOR_CHOICES, SECTOR) or DEFAULT_SECTOR
        region = query.choice(query.text(params, "region", REGION), REGION_CHOICES, REGION) or NATIONAL
    except query.FilterError as exc:
        return _form_page(request, account, status_code=400, error=exc.message)
    min_sample = state_of(request).settings.rates_min_sample
    translator = translator_of(request)
    rows = await rates_service.sector_benchmarks(session, environment=environment, sector=sector)
    published = {
        row.region: rates_views.benchmark(row)
        for row in rows
        if rates_service.is_published(row.sample_size, min_sample)
    }
    sizes = {row.region: row.sample_size for row in rows}
    chosen = next((row for row in rows if row.region == region and row.region in published), None)
    answer = published.get(region)
    chart = None
    if chosen is not None and answer is not None:
        chart = histogram_chart(await rates_service.window_histogram(session, chosen), answer)
    return _form_page(
        request,
        account,
        environment=environment,
        sector=sector,
        region=region,
        answer=answer,
        chart=chart,
        unpublished=None if answer else _unpublished(translator, sector, region, sizes.get(region, 0), min_sample),
        regions=[
            RegionRow(code, _region_names(translator)[code], published.get(code), sizes.get(code, 0))
            for code in REGIONS
            if code in sizes
        ],
        bars=range_bars(list(published.values())),
        min_sample=min_sample,
    )


PAGE = DashboardPage(router, NavItem(N_("Rates"), PATH, order=70))
