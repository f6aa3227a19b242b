"""`GET /v1/wtta/lookup` and `GET /v1/wtta/{kvk}/history`: reads of the caller's environment's cache."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from compliance_api.auth.dependencies import CurrentCaller, caller_of
from compliance_api.errors import ApiError
from compliance_api.kit.environment import Environment
from compliance_api.kit.patterns import described
from compliance_api.kit.strict_query import StrictQueryRoute
from compliance_api.sessions import DbSession, transaction
from compliance_api.wtta import service, views
from compliance_api.wtta.dependencies import reader_of
from compliance_api.wtta.schemas import WttaAdmissionOut, WttaHistoryOut

router = APIRouter(prefix="/v1/wtta", tags=["wtta"], route_class=StrictQueryRoute)

KVK_PATTERN = described(r"^[0-9]{8}$", "a KvK number of 8 digits, such as 12345678")
KVK_DESCRIPTION = "KvK number, exactly 8 digits."
KVK_QUERY_PARAMETER: dict[str, Any] = {
    "name": "kvk",
    "in": "query",
    "required": True,
    "schema": {"type": "string", "pattern": KVK_PATTERN, "description": KVK_DESCRIPTION, "title": "Kvk"},
    "description": KVK_DESCRIPTION,
}
_KVK = re.compile(KVK_PATTERN)
NOT_IN_CACHE: dict[int | str, dict[str, Any]] = {
    404: {"description": "`not_in_cache`: the number is not in this environment's cache of the register."}
}


@router.get(
    "/lookup",
    summary="Look up a supplier's WTTA admission",
    operation_id="wtta-lookup",
    response_model=WttaAdmissionOut,
    responses=NOT_IN_CACHE,
    openapi_extra={"parameters": [KVK_QUERY_PARAMETER]},
)
async def lookup(request: Request) -> Response:
    """The cached admission of the supplier with this KvK number (404 `not_in_cache` when unknown)."""
    # The hot path reads the caller and `kvk` from the request itself: as FastAPI parameters they cost a seventh of
    # the lookup's CPU (bench/RESULTS.md); `KVK_QUERY_PARAMETER` documents the parameter as FastAPI would.
    caller = caller_of(request)
    kvk = _kvk_of(request)
    reader = reader_of(request)
    row = await reader.lookup(caller.environment, kvk) if reader is not None else None
    if reader is None or row is None:
        # No DbSession dependency: a found number needs no session at all (the hot path).
        async with transaction(request) as session:
            if reader is None:
                row = await service.lookup(session, environment=caller.environment, kvk_number=kvk)
            if row is None:
                raise await _not_in_cache(session, caller.environment, kvk)
    return Response(views.admission_json(row, caller.environment), media_type="application/json")


def _kvk_of(request: Request) -> str:
    """The `kvk` query parameter, validated as FastAPI would (same 400 body: field `query.kvk`)."""
    kvk = request.query_params.get("kvk")
    if kvk is None:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("query", "kvk"), "msg": "Field required", "input": None}]
        )
    if _KVK.fullmatch(kvk) is None:
        raise RequestValidationError(
            [
                {
                    "type": "string_pattern_mismatch",
                    "loc": ("query", "kvk"),
                    "msg": "String should match pattern",
                    "input": kvk,
                    "ctx": {"pattern": KVK_PATTERN},
                }
            ]
        )
    return kvk


@router.get(
    "/{kvk}/history",
    summary="Status history of a supplier's WTTA admission",
    operation_id="wtta-history",
    response_model=WttaHistoryOut,
    responses=NOT_IN_CACHE,
)
async def status_history(
    caller: CurrentCaller,
    session: DbSession,
    kvk: Annotated[str, Path(pattern=KVK_PATTERN, description=KVK_DESCRIPTION)],
) -> WttaHistoryOut:
    """Every status change the cache recorded for this number, oldest first."""
    changes = await service.history(session, environment=caller.environment, kvk_number=kvk)
    if not changes:
        raise await _not_in_cache(session, caller.environment, kvk)
    return views.history(kvk, changes, caller.environment)


async def _not_in_cache(session: AsyncSession, environment: Environment, kvk: str) -> ApiError:
    refreshed = await service.last_refreshed(session, environment=environment)
    when = f"last refreshed {refreshed.isoformat()}" if refreshed else "not yet imported"
    return ApiError(
        "not_in_cache",
        f"KvK number {kvk} is not in the {environment.label} cache of the WTTA register ({when}). "
        "The WTTA admission duty applies from 1 January 2027; before then a missing admission is not a breach.",
    )
