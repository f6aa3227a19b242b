"""`GET /v1/rates/benchmark` and `GET /v1/rates/sectors`: reads of precomputed benchmarks."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import StringConstraints, TypeAdapter, ValidationError

from compliance_api.auth.dependencies import CurrentCaller, caller_of
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


SECTOR_DESCRIPTION = "Sector slug."
REGION_DESCRIPTION = "`NL` or an ISO 3166-2:NL province code."
BENCHMARK_QUERY_PARAMETERS: list[dict[str, Any]] = [
    {
        "name": "sector",
        "in": "query",
        "required": True,
        "schema": {
            "type": "string",
            "minLength": 1,
            "maxLength": 40,
            "description": SECTOR_DESCRIPTION,
            "examples": ["ict"],
            "title": "Sector",
        },
        "description": SECTOR_DESCRIPTION,
    },
    {
        "name": "region",
        "in": "query",
        "required": False,
        "schema": {
            "type": "string",
            "pattern": REGION_PATTERN,
            "description": REGION_DESCRIPTION,
            "examples": ["NL-UT"],
            "default": NATIONAL,
            "title": "Region",
        },
        "description": REGION_DESCRIPTION,
    },
]
"""The parameters as FastAPI would document them from `Query(...)` declarations, which the route reads itself."""
SECTOR = TypeAdapter(Annotated[str, StringConstraints(min_length=1, max_length=40)])


@router.get(
    "/benchmark",
    summary="Hourly-rate benchmark of a sector",
    operation_id="rates-benchmark-get",
    response_model=RateBenchmarkOut,
    responses=NOT_FOUND,
    openapi_extra={"parameters": BENCHMARK_QUERY_PARAMETERS},
)
async def get_benchmark(request: Request) -> Response:
    """p25, p50 and p75 of observed hourly rates (EUR, excl. VAT) for a sector and region, from the newest window."""
    # The hot path reads the caller and the query from the request itself, as the WTTA lookup does: as FastAPI
    # parameters they cost a sixth of the route's rate (bench/RESULTS.md).
    caller = caller_of(request)
    sector, region = _query_of(request)
    if sector not in SECTORS:
        raise ApiError("unknown_sector", f"{sector!r} is not a sector; GET /v1/rates/sectors lists them")
    entry = await _lookup(request, (caller.environment, sector, region))
    min_sample = settings_of(request).rates_min_sample
    if entry.body is None or not service.is_published(entry.sample_size, min_sample):
        raise service.insufficient_data(sector, region, entry.sample_size, min_sample)
    return Response(entry.body, media_type="application/json")


def _query_of(request: Request) -> tuple[str, str]:
    """`sector` and `region` (`NL` when absent), validated as FastAPI would: the same 400 body, naming `query.sector`
    and `query.region`, each error listed."""
    query = request.query_params
    sector, region = query.get("sector"), query.get("region", NATIONAL)
    if sector is not None and sector in SECTORS and region in REGIONS:  # the usual request: nothing to validate
        return sector, region
    errors = [*_sector_errors(sector), *_region_errors(region)]
    if errors or sector is None:  # a missing sector is among the errors
        raise RequestValidationError(errors)
    return sector, region


def _sector_errors(sector: str | None) -> list[dict[str, Any]]:
    if sector is None:
        return [{"type": "missing", "loc": ("query", "sector"), "msg": "Field required", "input": None}]
    try:
        SECTOR.validate_python(sector)
    except ValidationError as invalid:
        return [{**error, "loc": ("query", "sector", *error["loc"])} for error in invalid.errors()]
    return []


def _region_errors(region: str) -> list[dict[str, Any]]:
    if region in REGIONS:
        return []
    return [
        {
            "type": "string_pattern_mismatch",
            "loc": ("query", "region"),
            "msg": "String should match pattern",
            "input": region,
            "ctx": {"pattern": REGION_PATTERN},
        }
    ]


async def _lookup(request: Request, key: Key) -> Entry:
    """From this worker's cache, else one indexed read of the precomputed row (no session unless needed)."""
    cache = benchmarks_of(request)

    async def read() -> Entry:
        environment, sector, region = key
        async with transaction(request) as session:
            row = await service.get_benchmark(session, environment=environment, sector=sector, region=region)
        # Serialised once per read: returning the model would make FastAPI validate it again on every answer.
        return Entry(views.benchmark(row).model_dump_json().encode(), row.sample_size) if row else Entry(None, 0)

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
