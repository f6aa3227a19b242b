"""`GET /v1/rates/benchmark` and `GET /v1/rates/sectors`: reads of precomputed benchmarks."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from compliance_api.auth.dependencies import CurrentCaller
from compliance_api.config import settings_of
from compliance_api.errors import ApiError
from compliance_api.kit.patterns import described
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.rates import service, views
from compliance_api.rates.cache import Entry, Key
from compliance_api.rates.catalogue import NATIONAL, REGIONS, SECTORS
from compliance_api.rates.dependencies import benchmarks_of
from compliance_api.rates.schemas import RateBenchmarkOut, RateSectorsOut
from compliance_api.sessions import DbSession, transaction

router = APIRouter(prefix="/v1/rates", tags=["rates"], route_class=StrictQueryRoute)

REGION_PATTERN = described("^(" + "|".join(REGIONS) + ")$", "`NL` or a province code such as `NL-UT`")
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "`unknown_sector`, or `insufficient_data` below the minimum sample."}
}


@router.get(
    "/benchmark",
    summary="Hourly-rate benchmark of a sector",
    operation_id="rates-benchmark-get",
    response_model=RateBenchmarkOut,
    responses=NOT_FOUND,
)
async def get_benchmark(
    request: Request,
    caller: CurrentCaller,
    sector: Annotated[str, Query(min_length=1, max_length=40, description="Sector slug.", examples=["ict"])],
    region: Annotated[
        str,
        Query(pattern=REGION_PATTERN, description="`NL` or an ISO 3166-2:NL province code.", examples=["NL-UT"]),
    ] = NATIONAL,
) -> Response:
    """p25, p50 and p75 of observed hourly rates (EUR, excl. VAT) for a sector and region, from the newest window."""
    if sector not in SECTORS:
        raise ApiError("unknown_sector", f"{sector!r} is not a sector; GET /v1/rates/sectors lists them")
    entry = await _lookup(request, (caller.environment, sector, region))
    min_sample = settings_of(request).rates_min_sample
    if entry.benchmark is None or not service.is_published(entry.sample_size, min_sample):
        raise service.insufficient_data(sector, region, entry.sample_size, min_sample)
    # Serialised here: returning the model would make FastAPI validate it again (hot path).
    return Response(entry.benchmark.model_dump_json(), media_type="application/json")


async def _lookup(request: Request, key: Key) -> Entry:
    """From this worker's cache, else one indexed read of the precomputed row (no session unless needed)."""
    cache = benchmarks_of(request)

    async def read() -> Entry:
        environment, sector, region = key
        async with transaction(request) as session:
            row = await service.get_benchmark(session, environment=environment, sector=sector, region=region)
        return Entry(views.benchmark(row), row.sample_size) if row else Entry(None, 0)

    return await cache.get_or_load(key, read)


@router.get(
    "/sectors",
    summary="Sectors and the regions with a benchmark",
    operation_id="rates-sectors-get",
    response_model=RateSectorsOut,
)
async def get_sectors(request: Request, caller: CurrentCaller, session: DbSession) -> RateSectorsOut:
    """Every sector slug of the catalogue, with the regions whose benchmark can be published now."""
    min_sample = settings_of(request).rates_min_sample
    published = await service.publishable_regions(session, environment=caller.environment, min_sample=min_sample)
    return views.sectors(published, min_sample, caller.environment)
